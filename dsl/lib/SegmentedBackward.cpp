//===- SegmentedBackward.cpp - a long backward as segments of programs ----===//
//
// backward() of a long graph of small tensors (issue 17: cost linear in the
// work), cut into segments whose gradient programs the engine
// (AutogradEngine.cpp, run()) prepares once per structure; docs/design.md
// "Long backwards run in segments".
//
//===----------------------------------------------------------------------===//
#include "AutogradEngine.h"
#include "strata/Runtime/Settings.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_set>

using namespace strata;
using namespace strata::detail;

namespace strata::detail::engine {

namespace {

/// Ops requiring grad per segment of a long backward (128).
/// `STRATA_SEGMENT_OPS` (docs/environment.md) sets it: a small value
/// makes short graphs run in segments, which the fuzzers use to compare
/// segments with PyTorch on every program.
size_t segmentOps() {
  return static_cast<size_t>(runtime::settings::segmentOps());
}
/// The most elements of a storage a graph run in segments computes or
/// writes. Segments pay where the MLIR pipeline (~50 µs an op) outweighs
/// the kernels: past this size the one program's fusion wins (a 1,000-step
/// tanh chain over 10^6 elements: 7.5 s in segments, whose boundaries the
/// evaluator computes with its scalars as arguments, 1.1 s as one program).
constexpr int64_t kSegmentElements = 1 << 14;

} // namespace

/// backward() of a long graph (issue 17: cost linear in the work) as
/// segments of about segmentOps() ops, taken in recording order, run from
/// the last. The versions a segment reads from the segments below (its
/// boundaries) are evaluated first, in order, so each forward program
/// covers one segment; a segment's gradient program reads each boundary
/// as a leaf holding its value (tBoundaries), and its gradient seeds the
/// segment that computed it. A chain of repeated structure is then a few
/// gradient programs prepared once and run per segment, instead of one
/// program whose MLIR pipeline costs ~50 µs per op (docs/design.md, "Deep
/// programs"). Each segment runs PyTorch's checks on its own ops; the
/// leaves' gradients are summed over the segments and returned once.
/// Returns false, having changed nothing that run() would not, where the
/// graph is small or holds what segments do not handle (retained
/// tensors, reads across a detach() of a written tensor, as_strided
/// views, untracked writes, CUDA): run() then takes the whole graph.
bool backwardInSegments(TraceLock &lock, const Tensor &output,
                        const Tensor &gradient, bool retain,
                        std::vector<Target> &targets,
                        std::vector<Tensor> &grads, const SourceLoc &loc) {
  const TensorImpl *o = output.impl().get();
  if (!o || !requiresGradOf(*o))
    return false;
  Operand edge = operandOf(*o);
  edge.noGrad = false;
  if (edge.history || leafOfEdge(edge) || !edge.node->requiresGrad ||
      edge.node->gradWeight < static_cast<int64_t>(2 * segmentOps()))
    return false;
  {
    std::lock_guard<std::mutex> guard(gRetainedMutex);
    for (const auto &w : gRetained)
      if (!w.expired())
        return false;
  }
  // (The output keeps every node alive; the walk's references go before
  // the evaluations below, which count a node's references.)
  // The ops requiring grad that run() would emit (Graph::visit's walk,
  // without its arguments).
  std::vector<Node *> ops;
  // The graph's structure (what the one program's text depends on: ops,
  // attributes and scalars, types, layouts, edges), hashed on the way.
  uint64_t structure = 0xcbf29ce484222325ull;
  {
    auto mix = [&](uint64_t v) {
      structure = (structure ^ v) * 0x100000001b3ull;
      structure ^= structure >> 29;
    };
    auto mixShape = [&](const Shape &v) {
      mix(v.size());
      for (int64_t x : v)
        mix(static_cast<uint64_t>(x));
    };
    std::unordered_map<const Node *, uint64_t> id; // in order of reaching
    auto idOf = [&](const Node *n) {
      return id.emplace(n, id.size()).first->second;
    };
    std::unordered_set<const Node *> seen;
    std::vector<std::pair<Node *, size_t>> stack; // (op, next input)
    bool onCpu = true;
    auto reachNode = [&](Node *n, bool constant) {
      if (!(constant && n->buffer) && seen.insert(n).second)
        stack.push_back({n, 0});
    };
    auto reach = [&](const Operand &in) {
      if (leafOfEdge(in)) {
        onCpu = onCpu && in.node->device == kDevCPU;
        return;
      }
      bool constant = constantEdge(in);
      if (in.history && !constant)
        reachNode(in.node.get(), true);
      reachNode(constant ? in.node.get() : historyOf(in).get(), constant);
    };
    reach(edge);
    while (!stack.empty()) {
      auto &[n, next] = stack.back();
      const auto &inputs = n->requiresGrad ? n->gradIn() : n->inputs;
      if (next < inputs.size()) {
        const Operand &in = inputs[next++];
        reach(in);
        continue;
      }
      if (n->requiresGrad)
        ops.push_back(n);
      mix(static_cast<uint64_t>(n->op));
      mix(std::hash<std::string_view>()(n->name));
      mix(static_cast<uint64_t>(n->dtype) | uint64_t(n->requiresGrad) << 8 |
          uint64_t(n->keepdim) << 9 | uint64_t(n->exact) << 10);
      // (A C++ number is an argument of the gradient programs: not its
      // value. A pow exponent's would be, a rare difference of tiering.)
      if (n->op != Op::Fill || !n->sizes.empty() || n->dtype == DType::Bool) {
        mix(std::bit_cast<uint64_t>(n->a));
        mix(std::bit_cast<uint64_t>(n->b));
        mix(static_cast<uint64_t>(n->ia));
        mix(static_cast<uint64_t>(n->ib));
      }
      mix(static_cast<uint64_t>(n->rootNumel));
      mixShape(n->sizes);
      mixShape(n->strides);
      mixShape(n->dims);
      for (const Operand &in : inputs) {
        bool leaf = leafOfEdge(in) != nullptr, constant = constantEdge(in);
        mix(idOf(leaf || constant ? in.node.get() : historyOf(in).get()));
        mix(uint64_t(leaf) | uint64_t(constant) << 1 |
            uint64_t(in.view != nullptr) << 2 | uint64_t(in.noGrad) << 3);
        mixShape(in.layout.sizes);
        mixShape(in.layout.strides);
        mix(static_cast<uint64_t>(in.layout.offset));
      }
      idOf(n);
      stack.pop_back();
    }
    if (ops.size() < 2 * segmentOps() || !onCpu)
      return false;
  }
  // A structure seen before is run as one program, prepared once and then
  // found prepared (a training loop's long graph, step after step: ~2 µs
  // an op then, against ~5 in segments); a new one runs in segments.
  {
    static std::mutex mutex;
    static std::unordered_set<uint64_t> seenStructures;
    std::lock_guard<std::mutex> guard(mutex);
    if (seenStructures.size() >= 4096)
      seenStructures.clear();
    if (!seenStructures.insert(structure).second)
      return false;
  }
  std::sort(ops.begin(), ops.end(),
            [](const Node *a, const Node *b) { return a->seq < b->seq; });
  // Segments of segmentOps() counted from the output, so that a loop whose
  // step's ops divide segmentOps() gives segments of one structure (only the
  // first one, at the leaves, is shorter).
  const size_t numSeg = (ops.size() + segmentOps() - 1) / segmentOps();
  std::unordered_map<const Node *, size_t> segOf;
  for (size_t i = 0; i < ops.size(); ++i)
    segOf[ops[i]] = numSeg - 1 - (ops.size() - 1 - i) / segmentOps();
  // Boundaries: versions read by a later segment (their gradient edges
  // make them leaves there; a read without gradient only needs the value).
  std::vector<Node *> boundaries;
  std::unordered_map<const Node *, bool> isBoundary; // -> read with grad
  for (Node *n : ops) {
    // (A write of a large storage: the evaluator runs a chain of pending
    // writes as a few kernels per write, each over the whole storage,
    // where the one gradient program fuses the chain: 500 write pairs of
    // 10^6 elements took 2.2 s in segments, 0.05 s as one program.)
    // (And a cumsum/cumprod to another dtype, whose backward runs in its
    // input's: cut after it, an f32 cumprod of f64 values overflowed
    // where the one program's did not — fuzz-torch-regressions-segmented.)
    if (n->passHistory || n->device != kDevCPU ||
        n->rootNumel > kSegmentElements || n->scanGradInSource)
      return false;
    size_t s = segOf.at(n);
    for (const Operand &in : n->gradIn()) {
      if (in.history || in.cutView || (in.view && in.view->anyAsStrided))
        return false;
      auto it = segOf.find(in.node.get());
      if (it == segOf.end() || it->second == s)
        continue;
      bool withGrad = !in.noGrad && !leafRead(in);
      auto [b, first] = isBoundary.emplace(in.node.get(), withGrad);
      b->second = b->second || withGrad;
      if (first)
        boundaries.push_back(in.node.get());
    }
  }
  std::sort(boundaries.begin(), boundaries.end(),
            [](const Node *a, const Node *b) { return a->seq < b->seq; });
  // The forward, one segment at a time (what only a segment's own ops
  // read is recomputed by its gradient program). Only these evaluations:
  // what the segments evaluate later (a leaf's pending data, a seed) is
  // evaluated as anywhere else.
  {
    BoundaryEvaluation evaluation;
    for (Node *b : boundaries) {
      b->keepData = true;
      if (!b->buffer)
        evaluateNode(b->shared_from_this(), loc);
    }
  }
  Boundaries leaves;
  std::unordered_map<const TensorImpl *, Node *> boundaryOf;
  for (Node *b : boundaries) {
    if (!freshBuffer(*b))
      return false; // (evaluated, which changes nothing run() relies on)
    if (!isBoundary.at(b))
      continue;
    Tensor leaf =
        makeLeaf(b->buffer, b->dtype, {b->rootNumel},
                 TensorOptions(b->dtype).requires_grad(true), "backward", loc);
    boundaryOf[leaf.impl().get()] = b;
    leaves[b] = leaf.impl();
  }
  std::unordered_map<const Node *, Tensor> seedGrad;
  std::map<const TensorImpl *, size_t> leafIndex;
  NoGradGuard noGrad;
  struct Restore {
    ~Restore() { tBoundaries = nullptr; }
  } restore;
  // Each segment's boundaries (the versions it computes), in order: one
  // pass over them in all, not one per segment.
  std::vector<std::vector<Node *>> boundariesOf(numSeg);
  for (Node *b : boundaries)
    boundariesOf[segOf.at(b)].push_back(b);
  for (size_t s = numSeg; s-- > 0;) {
    // A boundary of this segment is a version computed here, not a leaf.
    std::vector<Operand> seeds;
    std::vector<Tensor> seedGrads;
    for (Node *b : boundariesOf[s]) {
      leaves.erase(b);
      auto it = seedGrad.find(b);
      if (it == seedGrad.end())
        continue;
      Operand e;
      e.node = b->shared_from_this();
      e.layout = layout::contiguous(Shape{b->rootNumel});
      e.noGrad = false;
      seeds.push_back(std::move(e));
      seedGrads.push_back(it->second);
      seedGrad.erase(it);
    }
    bool top = s + 1 == numSeg;
    if (!top && seeds.empty())
      continue;
    tBoundaries = &leaves;
    std::vector<Target> segTargets;
    std::vector<Tensor> segGrads =
        top ? run(lock, {output}, {gradient}, segTargets, true, retain, false,
                  loc)
            : run(lock, {}, seedGrads, segTargets, true, retain, false, loc,
                  &seeds);
    tBoundaries = nullptr;
    ++gSegments;
    for (size_t i = 0; i < segTargets.size(); ++i) {
      if (!segGrads[i].defined())
        continue;
      const TensorImpl *t = segTargets[i].impl.get();
      if (auto b = boundaryOf.find(t); b != boundaryOf.end()) {
        auto [it, first] = seedGrad.emplace(b->second, segGrads[i]);
        if (!first)
          it->second = it->second + segGrads[i];
        continue;
      }
      auto [it, first] = leafIndex.emplace(t, targets.size());
      if (first) {
        targets.push_back(segTargets[i]);
        grads.push_back(segGrads[i]);
      } else {
        grads[it->second] = grads[it->second] + segGrads[i];
      }
    }
  }
  if (runtime::settings::debugLevel() >= 1)
    fprintf(stderr,
            "[strata] backward at %s ran in %zu segments: %zu ops, %zu "
            "boundaries\n",
            formatLoc(loc).c_str(), numSeg, ops.size(), boundaries.size());
  return true;
}

} // namespace strata::detail::engine
