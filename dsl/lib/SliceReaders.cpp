//===- SliceReaders.cpp - pending readers of versions a slice overwrites --===//
//
// Eval.cpp's Slice (Eval.h): before a program writes a storage, every
// pending reader of an older version of it must still see that version.
// Such a reader is evaluated in the same program, unless the versions it
// reads are the one in the home buffer, which then keeps its data (copied
// before the write): what an optimizer's in-place step does to a
// parameter that the forward of a loss still alive read. Evaluating those
// readers recomputed the forward every step (a matmul and its activations
// in the optimizer's program, and a program per offset where the forward
// read rows of the parameter); the copy is one memcpy of the parameter,
// held while the readers live.
//
//===----------------------------------------------------------------------===//
#include "Eval.h"

#include "Impl.h"

using namespace strata;
using namespace strata::detail;

void Slice::visitStaleReaders(StorageRoot &root, bool mayKeep) {
  for (const std::weak_ptr<Node> &w : root.readers) {
    NodePtr r = w.lock();
    if (!r || r->buffer || r->mark == epoch)
      continue;
    bool stale = false, inHome = mayKeep && root.home;
    for (const Operand &in : r->inputs)
      if (in.node->root.lock().get() == &root && in.node != root.current) {
        stale = true;
        // (Read by this slice: an argument, which runSlice copies.)
        inHome &= in.node->buffer == root.home && in.node->mark == epoch;
      }
    if (!stale)
      continue;
    if (inHome) {
      for (const Operand &in : r->inputs)
        if (in.node->root.lock().get() == &root && in.node != root.current)
          in.node->keepData = true;
      continue;
    }
    keepAlive.push_back(r);
    visit(r.get());
  }
}
