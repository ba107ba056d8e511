//===- SliceWindows.cpp - the windows of storage a slice's program gets ---===//
//
// Eval.cpp's Slice (Eval.h): the order of its storage arguments and, per
// argument, the window of its storage the program is given (from the
// first to the last element it reads or writes), so that a view's storage
// offset is an argument, not part of the key (docs/design.md, "Offsets are
// arguments").
//
//===----------------------------------------------------------------------===//
#include "Eval.h"

#include "Impl.h"

#include <algorithm>
#include <climits>
#include <unordered_set>

using namespace strata;
using namespace strata::detail;

void strata::detail::evaluateNode(const NodePtr &n, const SourceLoc &loc) {
  evaluateNodes({&n, 1}, loc);
}

bool strata::detail::evaluateDeepInPieces(const Slice &slice,
                                          const SourceLoc &loc) {
  // A pending chain requiring grad is not cut when recorded (cutDeepChain):
  // reading `h` after 10^5 `h.add_(1)` with grad would be one program of
  // 10^5 ops (~30 µs an op to compile). It is evaluated in pieces first,
  // in recording order, as a segmented backward's boundaries are (each
  // into a buffer of its own): the cuts are the nodes at each multiple of
  // kMaxPendingDepth deep along a longest path to the deepest node, and
  // each piece evaluates what it computes that a later piece reads. A
  // loop's cuts are one step apart, so the pieces are one structure; two
  // chains growing at different depths per step (`a.mul_(c); b.add_(a)`)
  // are cut at the same steps (by depth alone, one chain's levels each
  // took in much of the other's, returning a version per step).
  // (Not called within a boundary evaluation, a piece's own included,
  // evaluateProgram: a piece is of bounded depth already, and computes
  // older versions, so its program takes in no pending reader: it copies
  // the version it writes over, runSlice.)
  Node *deepest = nullptr;
  for (Node *n : slice.pending)
    if (!deepest || n->depth > deepest->depth)
      deepest = n;
  if (!deepest || deepest->depth <= 2 * kMaxPendingDepth)
    return false;
  std::vector<uint64_t> cuts; // (seqs, increasing once reversed)
  for (Node *n = deepest; n;) {
    if (n != deepest && n->depth % kMaxPendingDepth == 0)
      cuts.push_back(n->seq);
    Node *next = nullptr;
    for (const Operand &in : n->inputs)
      if (!in.node->buffer && in.node->depth == n->depth - 1) {
        next = in.node.get();
        break;
      }
    n = next;
  }
  std::reverse(cuts.begin(), cuts.end());
  auto pieceOf = [&](const Node *n) {
    return static_cast<size_t>(
        std::lower_bound(cuts.begin(), cuts.end(), n->seq) - cuts.begin());
  };
  // (Not a root, and not a number: a number stays pending, a constant of
  // each program that reads it.)
  std::vector<std::vector<NodePtr>> pieces(cuts.size());
  std::unordered_set<const Node *> taken;
  for (Node *n : slice.pending)
    for (const Operand &in : n->inputs) {
      Node *m = in.node.get();
      size_t p = pieceOf(m);
      if (m->buffer || m->device == kDevAny || p >= pieceOf(n) ||
          p >= cuts.size() ||
          std::find(slice.roots.begin(), slice.roots.end(), m) !=
              slice.roots.end() ||
          !taken.insert(m).second)
        continue;
      pieces[p].push_back(m->shared_from_this());
    }
  bool any = false;
  BoundaryEvaluation evaluation;
  for (const std::vector<NodePtr> &piece : pieces)
    if (!piece.empty()) {
      evaluateNodes(piece, loc);
      any = true;
    }
  return any;
}

void Slice::placeArgs(bool onCuda) {
  // Order of first use: the same program whichever input was created
  // first (`w = w - lr * g` makes `w` newer than `g` after one step).
  std::vector<Node *> ordered;
  ordered.reserve(args.size());
  for (Node *a : args)
    a->index = -1;
  auto place = [&](Node *a) {
    if (a->index >= 0)
      return;
    a->index = static_cast<int32_t>(ordered.size());
    ordered.push_back(a);
  };
  for (Node *n : pending)
    for (const Operand &in : n->inputs)
      if (in.node->buffer)
        place(in.node.get());
  for (Node *a : args)
    place(a);
  args = std::move(ordered);
  donated.assign(args.size(), false);
  for (const Node *n : pending)
    if (n->op == Op::Write && n->inputs[1].node->buffer)
      donated[n->inputs[1].node->index] = true;
  // The versions this program makes of a written argument's storage: its
  // window is theirs too, so `x.narrow(0, k, n).add_(1)` is one program
  // for every k (the write's offset is relative to the window, as a read's).
  writeWindow.assign(pending.size(), -1);
  for (const Node *n : pending)
    if (n->op == Op::Write) {
      const Node *old = n->inputs[1].node.get();
      writeWindow[n->index] = old->buffer
                                  ? (donated[old->index] ? old->index : -1)
                                  : writeWindow[old->index];
    }
  // A window serves a written storage when the program's result can be
  // put back into the home buffer at the window's start: the argument is
  // the home buffer, and only the storage's current version is returned.
  std::vector<bool> whole(args.size(), false);
  for (size_t i = 0; i < args.size(); ++i)
    if (donated[i]) {
      auto root = args[i]->root.lock();
      whole[i] = !root || root->home != args[i]->buffer;
    }
  for (const Node *n : pending)
    if (int32_t w = writeWindow[n->index]; w >= 0 && n->output) {
      auto root = n->root.lock();
      whole[w] = whole[w] || !root || root->current.get() != n;
    }
  // The elements each argument's reads and writes reach (empty views
  // reach none).
  std::vector<int64_t> lo(args.size(), INT64_MAX), hi(args.size(), -1);
  for (const Node *n : pending)
    for (const Operand &in : n->inputs) {
      int32_t w = windowOf(in.node.get());
      if (w < 0 || in.layout.numel() == 0)
        continue;
      auto [l, h] = layout::indexRange(in.layout);
      lo[w] = std::min(lo[w], l);
      hi[w] = std::max(hi[w], h);
    }
  windowStart.assign(args.size(), 0);
  windowSize.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    windowSize[i] = args[i]->rootNumel;
    if (!whole[i] && hi[i] >= 0)
      std::tie(windowStart[i], windowSize[i]) =
          readWindow(lo[i], hi[i], args[i]->rootNumel, onCuda);
  }
}

std::pair<int64_t, int64_t>
strata::detail::readWindow(int64_t lo, int64_t hi, int64_t numel, bool onCuda) {
  // CUDA's vectorized kernels load 4 elements at once from an offset they
  // see as a multiple of 4 (StrataVec4, aligned to 4 elements): such an
  // offset must stay one in memory, so the start keeps its alignment.
  const int64_t align = onCuda ? 4 : 1;
  int64_t start = lo - lo % align;
  int64_t size = (hi + 1 - start + align - 1) / align * align;
  return {start, std::min(size, numel - start)};
}

runtime::StoragePtr
strata::detail::storageWindow(const runtime::StoragePtr &buffer, DType t,
                              int64_t start, int64_t size) {
  size_t bytes = static_cast<size_t>(elementSize(t));
  return runtime::Storage::wrapExternal(
      buffer->data() + start * bytes, size * bytes, buffer->device(),
      [keep = buffer]() mutable { keep.reset(); });
}

void Slice::takeHomes(const std::vector<NodePtr> &sources) {
  for (const NodePtr &s : sources)
    if (auto root = s->root.lock(); root && s->buffer && !root->home) {
      root->home = s->buffer;
      root->homeSeq = s->seq;
    }
}
