//===- SegmentedBackward.cpp - a long backward as segments of programs ----===//
//
// backward() of a long graph of small tensors (issue 17: cost linear in the
// work), cut into segments whose gradient programs the engine
// (AutogradEngine.cpp, run()) prepares once per structure; docs/design.md
// "Long backwards run in segments".
//
//===----------------------------------------------------------------------===//
#include "AutogradEngine.h"
#include "Eval.h"
#include "SegmentRun.h"
#include "strata/Runtime/Settings.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_set>

using namespace strata;
using namespace strata::detail;

namespace strata::detail::engine {

namespace {

/// Ops requiring grad per segment of a long backward (128; a small
/// `STRATA_SEGMENT_OPS` cuts every program: the fuzzers' segmented runs).
size_t segmentOps() {
  return static_cast<size_t>(runtime::settings::segmentOps());
}
/// The most elements of a storage a graph run in segments computes or
/// writes. Segments pay where the MLIR pipeline (~50 µs an op) outweighs
/// the kernels: past this size the one program's fusion wins (a 1,000-step
/// tanh chain over 10^6 elements: 7.5 s in segments, whose boundaries the
/// evaluator computes with its scalars as arguments, 1.1 s as one program).
constexpr int64_t kSegmentElements = 1 << 14;
/// The most ops requiring grad of a graph run as one program when its
/// structure was seen before. Past it, always segments: the one program's
/// compile grows with the graph (~100 µs an op; a prepared program that
/// large breaks the cache's memory bound), and the segments, found
/// prepared, ran faster anyway on small tensors (design.md, "Tiers").
constexpr size_t kOneProgramOps = 4096;

/// The graph run() would take from an output's edge, walked once as
/// Graph::visit walks it (without its arguments): its ops requiring grad,
/// whether its leaves are all on the CPU, and a hash of its structure (what
/// the one program's text depends on: ops, attributes and scalars, types,
/// layouts, edges). Its per-node state is in the nodes (Node::mark for this
/// walk's epoch; `index`: the node's id, `refsInSlice`: reached), not in
/// hash maps: the walk evaluates nothing, so no slice takes them meanwhile.
/// With the hash, also the ops requiring grad read through a part of
/// their result (`viewed`: their offsets are in the program's text, where
/// a leaf's or a constant's are its window's), and the ops so reading
/// (`readers`).
struct Walk {
  std::vector<Node *> ops, viewed, readers;
  uint64_t structure = 0xcbf29ce484222325ull;
  bool onCpu = true;

  /// `hash`: whether to compute `structure` (only a graph that may run
  /// as one program needs it).
  Walk(const Operand &edge, bool hash);

private:
  void mix(uint64_t v) { mixHash(structure, v); }
  void mixShape(const Shape &v) { mixHash(structure, v); }
  /// Mixes node `n`, whose inputs were reached, into the structure.
  void mixNode(Node &n, const std::vector<Operand> &inputs);
  /// `n`'s state in this walk, reset when first touched.
  void touch(Node *n) {
    if (n->mark != epoch) {
      n->mark = epoch;
      n->index = -1;
      n->refsInSlice = 0;
    }
  }
  /// Whether `n` is reached for the first time (marks it reached).
  bool firstReach(Node *n) {
    touch(n);
    if (n->refsInSlice)
      return false;
    n->refsInSlice = 1;
    return true;
  }
  /// Nodes by order of first naming (the structure's names for them).
  uint64_t idOf(Node *n) {
    touch(n);
    if (n->index < 0)
      n->index = static_cast<int32_t>(nextId++);
    return static_cast<uint64_t>(n->index);
  }
  const uint64_t epoch = nextEpoch();
  uint64_t nextId = 0;
};

Walk::Walk(const Operand &edge, bool hash) {
  std::vector<std::pair<Node *, size_t>> stack; // (op, next input)
  auto reachNode = [&](Node *n, bool constant) {
    if (!(constant && n->buffer) && firstReach(n))
      stack.push_back({n, 0});
  };
  auto reach = [&](const Operand &in) {
    if (leafOfEdge(in)) {
      onCpu = onCpu && in.node->device == kDevCPU;
      return;
    }
    bool constant = constantEdgeToNoLeaf(in);
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
    if (hash)
      mixNode(*n, inputs);
    stack.pop_back();
  }
}

void Walk::mixNode(Node &n, const std::vector<Operand> &inputs) {
  mix(static_cast<uint64_t>(n.op));
  mix(std::hash<std::string_view>()(n.name));
  mix(static_cast<uint64_t>(n.dtype) | uint64_t(n.requiresGrad) << 8 |
      uint64_t(n.keepdim) << 9 | uint64_t(n.exact) << 10);
  // (A C++ number is an argument of the gradient programs: not its
  // value. A pow exponent's would be, a rare difference of tiering.)
  if (n.op != Op::Fill || !n.sizes.empty() || n.dtype == DType::Bool) {
    mix(std::bit_cast<uint64_t>(n.a));
    mix(std::bit_cast<uint64_t>(n.b));
    mix(static_cast<uint64_t>(n.ia));
    mix(static_cast<uint64_t>(n.ib));
  }
  mix(static_cast<uint64_t>(n.rootNumel));
  mixShape(n.sizes);
  mixShape(n.strides);
  mixShape(n.dims());
  for (const Operand &in : inputs) {
    bool leaf = leafOfEdge(in) != nullptr, constant = constantEdge(in);
    mix(idOf(leaf || constant ? in.node.get() : historyOf(in).get()));
    mix(uint64_t(leaf) | uint64_t(constant) << 1 |
        uint64_t(in.view != nullptr) << 2 | uint64_t(in.noGrad) << 3);
    mixShape(in.layout.sizes);
    mixShape(in.layout.strides);
    mix(static_cast<uint64_t>(in.layout.offset));
    // (A part of a result at offset 0 too: `k = 0` is one of the offsets.)
    if (!leaf && !constant &&
        (in.layout.offset || in.layout.numel() < historyOf(in)->rootNumel)) {
      viewed.push_back(historyOf(in).get());
      readers.push_back(&n);
    }
  }
  idOf(&n);
}

/// Whether a graph of this structure was seen before: it is then run as
/// one program, prepared once and then found prepared (a training loop's
/// graph, step after step, fused across the segments' boundaries), if it
/// has at most kOneProgramOps ops; a new one runs in segments.
bool seenBefore(uint64_t structure) {
  static std::mutex mutex;
  static std::unordered_set<uint64_t> seenStructures;
  std::lock_guard<std::mutex> guard(mutex);
  if (seenStructures.size() >= 4096)
    seenStructures.clear();
  return !seenStructures.insert(structure).second;
}

/// Whether the graphs of structure `shape` (Node::gradShape) were seen with
/// other offsets of the reads of ops requiring grad than `offsets`
/// (Node::gradOffsets), for good (OffsetHistory).
bool offsetsVary(uint64_t shape, uint64_t offsets) {
  static OffsetHistory history;
  return history.vary(shape, offsets);
}

/// Segments of segmentOps() counted from the output, so that a loop whose
/// step's ops divide segmentOps() gives segments of one structure (only
/// the first one, at the leaves, is shorter). Null where an op is one
/// segments do not handle. Marks the ops (Node::mark for a fresh epoch,
/// `index`: the segment, `refsInSlice`: 1 + the position among the
/// boundaries, 0 if none): it evaluates nothing, so no slice takes them
/// meanwhile; the plan keeps what the segments need after. With `starts`
/// (0 first, increasing): segments starting there, of any size.
std::optional<Plan> planSegments(std::vector<Node *> ops,
                                 std::vector<size_t> starts = {}) {
  Plan p;
  p.ops = std::move(ops);
  p.perSegment = segmentOps();
  p.numSeg = (p.ops.size() + p.perSegment - 1) / p.perSegment;
  if (!starts.empty())
    p.numSeg = (p.starts = std::move(starts)).size();
  const uint64_t epoch = nextEpoch();
  for (size_t i = 0; i < p.ops.size(); ++i) {
    p.ops[i]->mark = epoch;
    p.ops[i]->index = static_cast<int32_t>(p.segAt(i));
    p.ops[i]->refsInSlice = 0;
  }
  // Boundaries: versions read by a later segment (their gradient edges
  // make them leaves there; a read without gradient only needs the value).
  for (Node *n : p.ops) {
    // (A write of a large storage: the evaluator runs a chain of pending
    // writes as a few kernels per write, each over the whole storage,
    // where the one gradient program fuses the chain: 500 write pairs of
    // 10^6 elements took 2.2 s in segments, 0.05 s as one program.)
    // (And a cumsum/cumprod to another dtype, whose backward runs in its
    // input's: cut after it, an f32 cumprod of f64 values overflowed
    // where the one program's did not — fuzz-torch-regressions-segmented.)
    if (n->device != kDevCPU ||
        (n->rootNumel > kSegmentElements && p.starts.empty()) ||
        n->scanGradInSource)
      return std::nullopt;
    // (An untracked write continues its old version's history: same run.)
    if (n->passHistory && n->gradIn().size() == 2)
      for (const Node *h :
           {n->gradIn()[1].node.get(), historyOf(n->gradIn()[1]).get()})
        if (h && h->mark == epoch && h->index != n->index)
          return std::nullopt;
    for (const Operand &in : n->gradIn()) {
      if (in.history || in.cutView || (in.view && in.view->anyAsStrided))
        return std::nullopt;
      Node *b = in.node.get();
      if (b->mark != epoch || b->index == n->index)
        continue;
      bool withGrad = !in.noGrad && !leafRead(in);
      if (b->refsInSlice == 0) {
        p.boundaries.push_back({b, static_cast<size_t>(b->index), withGrad});
        b->refsInSlice = static_cast<int32_t>(p.boundaries.size());
      } else {
        bool &w = p.boundaries[b->refsInSlice - 1].withGrad;
        w = w || withGrad;
      }
    }
  }
  std::sort(p.boundaries.begin(), p.boundaries.end(),
            [](const Plan::Boundary &a, const Plan::Boundary &b) {
              return a.node->seq < b.node->seq;
            });
  return p;
}

} // namespace

/// backward() (or grad()) of a long graph (issue 17) as segments of about
/// segmentOps() ops in recording order, run from the last: a segment's
/// boundaries (the versions it reads from below) are evaluated first, in
/// order; its gradient program reads each as a leaf holding its value
/// (tBoundaries) and seeds the segment that computed it, so a chain of
/// repeated structure is a few programs prepared once (docs/design.md,
/// "Long backwards run in segments"). False, having changed nothing run()
/// would not, where the graph is small or holds what segments do not
/// handle (retained tensors, reads across a detach() of a written tensor,
/// as_strided views, CUDA).
bool backwardInSegments(TraceLock &lock, const Tensor &output,
                        const Tensor &gradient, bool retain,
                        std::vector<Target> &targets,
                        std::vector<Tensor> &grads, const SourceLoc &loc,
                        const std::unordered_set<const TensorImpl *> *only) {
  const bool hooks = !only;
  const TensorImpl *o = output.impl().get();
  if (!o || !requiresGradOf(*o))
    return false;
  Operand edge = operandOf(*o);
  edge.noGrad = false;
  if (edge.history || leafOfEdge(edge) || !edge.node->requiresGrad)
    return false;
  bool isLong = edge.node->gradWeight >= static_cast<int64_t>(2 * segmentOps());
  // Run as one program: unless reads of ops requiring grad at offsets that
  // change from run to run would put each run's offsets in its text
  // (`h.narrow(0, k, B)`, whose gradient scatters at `k`): then cut after
  // each op so read, which the ops above read as a leaf holding its value,
  // passed as the window they reach. Told by the graph's hashes as
  // recorded (Node::gradShape): no walk for a structure that keeps its
  // offsets. (A STRATA_SEGMENT_OPS below 128, as the fuzzers' segment runs
  // set, cuts there on the first run too: every program then tests it.)
  std::optional<bool> cutIt;
  auto cut = [&] {
    if (!cutIt) {
      uint64_t offsets = edge.node->gradOffsets;
      cutIt = offsets && (segmentOps() < 128 ||
                          offsetsVary(edge.node->gradShape, offsets));
    }
    return *cutIt;
  };
  if (!isLong && !cut())
    return false;
  {
    std::lock_guard<std::mutex> guard(gRetainedMutex);
    for (const auto &w : gRetained)
      if (!w.expired())
        return false;
  }
  // (The output keeps every node alive; the walk's references go before
  // the evaluations below, which count a node's references.)
  std::vector<Node *> ops, viewed, readers;
  bool cutting = false;
  {
    Walk walk(edge, /*hash=*/false);
    if (!walk.onCpu)
      return false;
    // (The structure is hashed only for a graph short enough to run as
    // one program: a second walk, short; a long one's hash was a tenth of
    // its segmented backward.)
    bool longRun = walk.ops.size() >= 2 * segmentOps() &&
                   !(walk.ops.size() <= kOneProgramOps &&
                     seenBefore(Walk(edge, /*hash=*/true).structure));
    if (!longRun && !cut())
      return false;
    if ((cutting = !longRun)) {
      Walk hashed(edge, /*hash=*/true);
      viewed = std::move(hashed.viewed);
      readers = std::move(hashed.readers);
    }
    ops = std::move(walk.ops);
  }
  // (In recording order already for a chain, as the walk leaves it: a
  // sort of 10^5 nodes by a field of each was 3% of a long backward.)
  auto bySeq = [](const Node *a, const Node *b) { return a->seq < b->seq; };
  if (!std::is_sorted(ops.begin(), ops.end(), bySeq))
    std::sort(ops.begin(), ops.end(), bySeq);
  std::vector<size_t> starts;
  if (cutting) {
    // Cut after each viewed op, and around each op reading it through a
    // part (in a segment of its own: it reads the viewed op as a leaf
    // through its own window, whatever else reads that op elsewhere).
    starts.push_back(0);
    auto cutAt = [&](const Node *v, size_t after) {
      auto at = std::lower_bound(
          ops.begin(), ops.end(), v,
          [](const Node *a, const Node *b) { return a->seq < b->seq; });
      if (at != ops.end() && *at == v && at + after != ops.end())
        starts.push_back(at - ops.begin() + after);
    };
    for (const Node *v : viewed)
      cutAt(v, 1);
    for (const Node *r : readers) {
      cutAt(r, 0);
      cutAt(r, 1);
    }
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    if (starts.size() < 2)
      return false;
  }
  std::optional<Plan> plan = planSegments(std::move(ops), std::move(starts));
  if (!plan)
    return false;
  // The forward, one segment at a time (what only a segment's own ops
  // read is recomputed by its gradient program). Only these evaluations:
  // what the segments evaluate later (a leaf's pending data, a seed) is
  // evaluated as anywhere else.
  // (A segment's boundaries in one program: a cut between a loop step's
  // ops makes two, which took two programs.)
  {
    BoundaryEvaluation evaluation;
    std::vector<NodePtr> ofSegment;
    for (size_t i = 0; i < plan->boundaries.size(); ++i) {
      Node *b = plan->boundaries[i].node;
      plan->boundaries[i].saved = b->keepData;
      b->keepData = true;
      ofSegment.push_back(b->shared_from_this());
      if (i + 1 == plan->boundaries.size() ||
          plan->boundaries[i + 1].seg != plan->boundaries[i].seg) {
        evaluateNodes(ofSegment, loc);
        ofSegment.clear();
      }
    }
  }
  SegmentRun segments(lock, *plan, retain, only, loc);
  if (!segments.makeLeaves())
    return false;
  segments.run(output, gradient, targets, grads);
  if (runtime::settings::debugLevel() >= 1)
    fprintf(stderr,
            "[strata] %s at %s ran in %zu segments: %zu ops, %zu "
            "boundaries\n",
            hooks ? "backward" : "grad", formatLoc(loc).c_str(), plan->numSeg,
            plan->ops.size(), plan->boundaries.size());
  return true;
}

} // namespace strata::detail::engine
