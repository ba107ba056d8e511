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
// held while the readers live. And settleStorage: a storage whose memory
// is handed out has no pending reader of its home buffer left.
//
//===----------------------------------------------------------------------===//
#include "Eval.h"

#include "Impl.h"
#include "TraceLock.h"

#include "strata/Runtime/CudaDriver.h"

using namespace strata;
using namespace strata::detail;

void Slice::visitStaleReaders(StorageRoot &root, bool mayKeep) {
  for (const std::weak_ptr<Node> &w : root.readers) {
    NodePtr r = w.lock();
    if (!r || r->buffer || r->mark == epoch)
      continue;
    // Only a read of the version in the home buffer is stale: a pending
    // version this program computes is returned to a pending reader (it
    // refers to it), an older pending one it does not compute never takes
    // the home buffer (runSlice), and an older version with a buffer of its
    // own is copied before a program writes over it.
    auto readsHome = [&root](const Operand &in) {
      return in.node->buffer && in.node->buffer == root.home &&
             in.node != root.current && in.node->root.lock().get() == &root;
    };
    bool stale = false, inHome = mayKeep && root.home;
    for (const Operand &in : r->inputs)
      if (readsHome(in)) {
        stale = true;
        // (Read by this slice: an argument, which runSlice copies.)
        inHome &= in.node->mark == epoch;
      }
    if (!stale)
      continue;
    if (inHome) {
      for (const Operand &in : r->inputs)
        if (readsHome(in))
          in.node->keepData = true;
      continue;
    }
    keepAlive.push_back(r);
    visit(r.get());
  }
}

void strata::detail::settleStorage(StorageRoot &root, const SourceLoc &loc) {
  TraceLock lock; // (held throughout: nothing is added meanwhile)
  // The current version, and every pending reader of a version that is
  // or may become the one in the home buffer (pruneReaders: pending
  // writes of other storages that read this one included): afterwards
  // nothing pending reads the home buffer, so a write through the pointer
  // handed out reaches only what is recorded after it, as in eager
  // PyTorch.
  pruneReaders(root);
  std::vector<NodePtr> roots;
  if (!root.current->buffer)
    roots.push_back(root.current);
  for (const std::weak_ptr<Node> &w : root.readers)
    if (NodePtr r = w.lock(); r && !r->buffer)
      roots.push_back(std::move(r));
  evaluateNodes(roots, loc);
  // The evaluated readers are dropped from the list now, not at its next
  // prune: a loop that takes a pointer per step keeps it short.
  pruneReaders(root);
  if (root.home && root.home->device() == runtime::DeviceKind::CUDA) {
    // A device address (as PyTorch's) is valid once the stream is done.
    // Without a driver strata never ran anything on it (memory wrapped
    // through DLPack): there is nothing to wait for.
    std::string error;
    if (runtime::cuda::Driver *driver = runtime::cuda::Driver::get(error))
      if (error = driver->synchronize(); !error.empty())
        fail(error, "", loc);
  }
}
