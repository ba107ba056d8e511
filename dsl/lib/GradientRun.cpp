//===- GradientRun.cpp - one backward as one differentiated program -------===//
//
// The autograd engine's run() (AutogradEngine.h): the graph from the
// outputs back to the leaves (Graph), the targets and PyTorch's checks, and
// the gradient program built as an ir::Program, prepared (cached by its
// key), run and turned into the targets' gradients (GradientRun's phases).
// AutogradEngine.cpp has the algorithm's account and the public entry
// points.
//
//===----------------------------------------------------------------------===//
#include "AutogradEngine.h"
#include "CreateGraph.h"
#include "Emit.h"
#include "ProgramCache.h"

#include "strata/JIT/Jit.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

using namespace strata;
using namespace strata::detail;

namespace strata::detail::engine {

namespace {

/// The recorded program from the outputs back to the leaves.
struct Graph {
  /// Storage arguments: the data of a leaf (one per version and leaf: a
  /// leaf and w.detach().requires_grad_() share a version), a value the
  /// forward computed (recorded), a constant.
  struct LeafArg {
    NodePtr node;
    std::shared_ptr<TensorImpl> leaf;
  };
  std::vector<LeafArg> leafArgs;
  std::map<std::pair<const Node *, const TensorImpl *>, size_t> leafIndex;
  std::vector<NodePtr> constArgs;
  std::unordered_set<const Node *> isConst;
  /// Ops re-emitted, each after its inputs (sorted by creation later).
  std::vector<NodePtr> ops;
  std::unordered_set<const Node *> isOp, checked;
  /// Ops the gradient flows through, to check() once the targets are known.
  std::vector<NodePtr> toCheck;
  const SourceLoc &loc;
  explicit Graph(const SourceLoc &l) : loc(l) {}

  [[noreturn]] void versionError(const VersionRecord &root, int64_t expected,
                                 const Shape &sizes, const Node *op,
                                 NodePtr saved) {
    std::string msg = "one of the variables needed for gradient computation "
                      "has been modified by an inplace operation: [" +
                      torchType(root.dtype, saved ? saved.get() : op) + " " +
                      layout::formatList(sizes) + "]";
    std::string fn = gradFnName(saved);
    if (!fn.empty())
      msg += ", which is output 0 of " + fn;
    msg += ", is at version " + std::to_string(root.version) +
           "; expected version " + std::to_string(expected) +
           " instead. Hint: enable anomaly detection to find the operation "
           "that failed to compute its gradient, with "
           "torch.autograd.set_detect_anomaly(True).";
    if (op && is_anomaly_enabled())
      msg += "\n  the forward op that saved it was recorded at " +
             formatLoc(op->loc);
    std::string hint = "compute out of place instead (a = a + 1 rather than "
                       "a.add_(1))";
    if (expected < static_cast<int64_t>(root.writeLocs.size()))
      hint = "it was modified in place at " +
             formatLoc(root.writeLocs[expected]) + "; " + hint;
    fail(msg, hint, loc);
  }

  /// PyTorch's checks of an op the gradient flows through: its saved
  /// tensors were not freed by an earlier backward, nor modified since.
  void check(const NodePtr &n) {
    // Backward formulas PyTorch refuses on a bool operand (a cast by
    // promotion here, found when recorded): pow's `exponent - 1` for the
    // base's gradient, atan2's `-self` for `other`'s.
    struct BoolOperandRule {
      const char *op;
      size_t gradOf;         // the input whose gradient needs the formula
      bool Node::*boolInput; // the flag recorded for the bool operand
      const char *message, *hint;
    };
    static const BoolOperandRule boolRules[] = {
        {"pow", 0, &Node::boolExponent,
         "Subtraction, the `-` operator, with a bool tensor is not "
         "supported. If you are trying to invert a mask, use the `~` or "
         "`logical_not()` operator instead.",
         "convert the exponent to a floating dtype before pow"},
        {"atan2", 1, &Node::boolSelf,
         "Negation, the `-` operator, on a bool tensor is not supported. "
         "If you are trying to invert a mask, use the `~` or "
         "`logical_not()` operator instead.",
         "convert the first operand to a floating dtype before atan2"}};
    for (const BoolOperandRule &r : boolRules)
      if (std::string_view(n->name) == r.op && n->gradIn().size() == 2 &&
          !n->gradIn()[r.gradOf].noGrad && (*n).*r.boolInput)
        fail(r.message, r.hint, loc);
    // CopySlices of a write through a view with an element at two positions
    // (fill_ and zero_ take one): PyTorch's backward refuses it.
    if (n->op == Op::Write && n->viewWrite && n->overlapWrite)
      fail("unsupported operation: more than one element of the written-to "
           "tensor refers to a single memory location. Please clone() the "
           "tensor before performing the operation.",
           "write through a view whose elements are distinct (clone() the "
           "expanded view first)",
           loc);
    // PyTorch 1.13 records floor_divide's result as requiring grad but has
    // no derivative for it.
    if (std::string_view(n->name) == "floor_divide")
      fail("derivative for aten::floor_divide is not implemented",
           "floor_divide is piecewise constant: detach() its operands, or "
           "compute it under a NoGradGuard",
           loc);
    // (CopySlices releases the op it wraps: a second pass always fails.)
    if (n->gradFreed &&
        (!n->saved.empty() ||
         (n->op == Op::Write && n->viewWrite && !n->passHistory)))
      fail(kSecondTime, "pass retain_graph=true to the first backward()", loc);
    for (const Node::Saved &s : n->saved) {
      // (The root's record when no tensor refers to the root any more.)
      const VersionRecord *r = s.record.get();
      auto root = s.root.lock();
      int64_t now = root ? root->version : r ? r->version : s.version;
      if (s.version == Node::kSavedCopy || now == s.version || !r)
        continue;
      versionError(*r, s.version, s.sizes, n.get(),
                   !s.node.expired() ? s.node.lock()
                   : root            ? root->current
                                     : r->current.lock());
    }
  }

  /// The data of `leaf`, version `n`, as an argument.
  void addLeaf(const NodePtr &n, const std::shared_ptr<TensorImpl> &leaf) {
    if (!leafIndex.emplace(std::make_pair(n.get(), leaf.get()), leafArgs.size())
             .second)
      return;
    if (!n->buffer) {
      // The version the leaf's readers read, computed now (an older one
      // than the storage's current version gets a buffer of its own).
      if (leaf->root->current != n)
        evaluateNode(n, loc);
      else
        evaluate({leaf.get()}, loc);
    }
    leafArgs.push_back({n, leaf});
  }

  /// Adds the graph reaching edge `start`: iterative (a 10^5-deep chain
  /// must not overflow the stack); each op is appended after its inputs.
  /// A constant edge to a materialized version is an argument; to a pending
  /// one, its ops are emitted too (the reader detaches the value).
  void visit(const Operand &start) {
    std::vector<std::pair<NodePtr, size_t>> stack; // (op, next input)
    auto reachNode = [&](const NodePtr &n, bool constant) {
      if (constant && n->buffer) {
        if (isConst.insert(n.get()).second)
          constArgs.push_back(n);
        return;
      }
      if (!constant && checked.insert(n.get()).second)
        toCheck.push_back(n);
      if (isOp.insert(n.get()).second)
        stack.push_back({n, 0});
    };
    auto reach = [&](const Operand &in) {
      if (auto leaf = leafOfEdge(in)) {
        addLeaf(in.node, leaf);
        return;
      }
      bool constant = constantEdge(in);
      if (in.history && !constant) // the value, then the history
        reachNode(in.node, true);
      // (A constant edge reads the value: a dead leaf edge with a history
      // too.)
      reachNode(constant ? in.node : historyOf(in), constant);
    };
    reach(start);
    while (!stack.empty()) {
      auto &[n, next] = stack.back();
      const auto &inputs = n->requiresGrad ? n->gradIn() : n->inputs;
      if (next < inputs.size()) {
        Operand in = inputs[next++];
        reach(in);
        continue;
      }
      ops.push_back(std::move(n));
      stack.pop_back();
    }
  }
};

} // namespace

/// The incoming gradient `g` (undefined: ones) of an output of type
/// `dtype` and sizes `sizes`, as the program's argument: its buffer itself
/// where it is one dense CPU tensor of that type (a segment's seed of any
/// size, without a copy), else its elements.
jit::JitValue seedValue(const Tensor &g, DType dtype, const Shape &sizes,
                        bool onCuda, const SourceLoc &loc) {
  std::vector<int64_t> shape(sizes.begin(), sizes.end());
  if (!g.defined())
    return jit::JitValue::fresh(toJitDType(dtype), shape, {1.0});
  if (!onCuda && g.numel() > 1) {
    Tensor c = g.to(dtype, loc).contiguous(loc);
    const TensorImpl &t = implOf(c, loc);
    evaluate({&t}, loc);
    const NodePtr &n = t.root->current;
    if (n->buffer && n->buffer->device() == runtime::DeviceKind::CPU &&
        t.layout.offset == 0 && t.root->numel == t.layout.numel()) {
      jit::JitValue v;
      v.dtype = toJitDType(dtype);
      v.buffer = n->buffer;
      v.sizes = shape;
      Shape strides = layout::contiguous(sizes).strides;
      v.strides.assign(strides.begin(), strides.end());
      return v;
    }
  }
  return jit::JitValue::fresh(toJitDType(dtype), shape,
                              g.to_vector<double>(loc));
}

/// One backward() or grad() as one gradient program (run() below), phase
/// by phase: collect the graph from the outputs, choose and perturb the
/// targets, run PyTorch's checks, plan dense and masked reads, place the
/// program's arguments, emit it (an ir::Program), prepare and run it, and
/// make the targets' gradients of its results. Each phase reads what the
/// earlier ones left in the members.
class GradientRun {
public:
  GradientRun(TraceLock &lock, const std::vector<Tensor> &outputs,
              std::vector<Tensor> gradOutputs, std::vector<Target> &targets,
              bool all, bool retain, bool createGraph, const SourceLoc &loc,
              const std::vector<Operand> *seeds)
      : lock(lock), outputs(outputs), gradOutputs(std::move(gradOutputs)),
        targets(targets), all(all), retain(retain), createGraph(createGraph),
        loc(loc), seeds(seeds), g(loc) {}

  std::vector<Tensor> run() {
    collect();
    findTargets();
    perturbTargets();
    checkSaved();
    checkDense();
    findMasks();
    placeArguments();
    if (!emit())
      return std::vector<Tensor>(targets.size());
    return execute();
  }

private:
  using PV = ir::Program::Value;
  // Non-leaf targets (and views of leaves): a zero tensor added to their
  // value where they read it. A whole compute result gets `v + p`; a
  // version written in place `write(view + p)` into the version, so every
  // later read sees the perturbed value. A view (its grad_fn is its view
  // chain) perturbs only the reads through it: those whose chain holds its
  // own, as PyTorch's gradient reaches a view's node only through it.
  struct Perturb {
    layout::Layout layout;
    DType dtype;
    bool whole;
  };
  // The reads of dense targets (see denseLeaves), step by step: each view
  // of the chain above `stop` replayed on layout `l` (-1), each perturbed
  // one followed by its perturbations (`view + p`: a fresh dense tensor).
  struct DenseStep {
    layout::Layout at;
    int64_t perturb;
  };

  // Phases, in order.
  void collect();
  void findTargets();
  void perturbTargets();
  void checkSaved();
  void checkDense();
  void findMasks();
  void placeArguments();
  /// False when every edge leads to nothing.
  bool emit();
  std::vector<Tensor> execute();

  // What several phases use.
  [[noreturn]] void overlapError(const TensorImpl &t, const std::string &why);
  void checkOverlap(const TensorImpl &t);
  void perturbTarget(size_t ti);
  static layout::Layout afterAdd(const layout::Layout &l);
  std::optional<std::vector<DenseStep>>
  denseSteps(const Operand &in, const ViewChain *stop, layout::Layout l);
  const ViewChain *firstDense(const Operand &in);
  static ir::ValueType rootType(const Node *n);
  const std::pair<int64_t, int64_t> *windowOf(const Operand &in);
  ir::ValueType windowType(const Node *n, int64_t size);

  // The call.
  TraceLock &lock;
  const std::vector<Tensor> &outputs;
  std::vector<Tensor> gradOutputs;
  std::vector<Target> &targets;
  const bool all, retain, createGraph;
  const SourceLoc &loc;
  const std::vector<Operand> *seeds;

  // collect(): the graph, the outputs' edges, what the gradient reaches.
  std::chrono::steady_clock::time_point start;
  size_t numOutputs = 0;
  Graph g;
  std::vector<Operand> outEdges;
  /// Each output's sizes and dtype.
  std::vector<Shape> outSizes;
  std::vector<DType> outTypes;
  std::unordered_set<const Node *> reached;
  std::unordered_set<const TensorImpl *> reachedLeaves;
  std::unordered_set<const ViewChain *> reachedChains;
  // findTargets(), perturbTargets(), checkSaved().
  const TensorImpl *movedLeaf = nullptr;
  std::vector<Perturb> perturbs;
  /// Keys: an op node, or a leaf argument (its index, tagged).
  std::map<const Node *, std::vector<size_t>> perturbOp;
  std::map<size_t, std::vector<size_t>> perturbLeaf;
  std::map<const ViewChain *, std::vector<size_t>> perturbChain;
  std::vector<int64_t> targetPerturb;
  // A tensor whose elements share memory (expand, overlapping unfold or
  // as_strided) has a gradient per element, not per storage element: its
  // elements are made dense and the views read through it are replayed
  // over them (replayView). A leaf: passed as a dense tensor of its
  // elements (denseLeaves). A view with a grad_fn: its read through the
  // chain is `view + p`, a fresh dense tensor, and the views above it are
  // replayed on that (denseChains). Checked before anything runs
  // (checkDense): where a view above cannot be replayed (an as_strided),
  // or a write goes through it, the error says so.
  std::set<const TensorImpl *> denseLeaves;
  std::set<const ViewChain *> denseChains;
  std::vector<std::pair<const TensorImpl *, const ViewChain *>> denseTargets;
  std::vector<Node *> executed;
  // findMasks().
  std::map<const Operand *, std::vector<int64_t>> readMask;
  // placeArguments(), emit(): the program and its arguments.
  ir::Program prog;
  std::vector<jit::JitValue> args;
  bool onCuda = false;
  std::unordered_map<const Node *, std::pair<int64_t, int64_t>> window;
  std::vector<std::pair<int64_t, int64_t>> leafWindow;
  /// create_graph: what the replay reads for each argument (CreateGraph.h).
  std::vector<ReplayArg> replayArgs;
  std::vector<int64_t> wrt;
  std::vector<PV> leafName;
  std::vector<PV> perturbValue;
  std::unordered_map<const Node *, PV> constName, recordedName;
  /// The scalar arguments' values (wrapped, not copied: they live here
  /// while the program runs).
  std::vector<int64_t> scalarData;
  // emit()'s values.
  struct Value {
    PV name;
    bool storage;
    /// The version whose type the value has (an untracked write's value
    /// has its old version's).
    const Node *shape;
  };
  std::unordered_map<const Node *, Value> opValue;
  std::unordered_map<const Node *, PV> detachedName;
  /// The value edge `in` reads, before its layout.
  std::map<std::pair<const Node *, const Node *>, Value> historyValue;
  // Values with the perturbations of the views a read goes through, by
  // (source value, perturbations): reads through one view share one.
  std::map<std::pair<PV, std::vector<size_t>>, PV> perturbedReads;
  /// The layout of the last read when it was made dense (its consumer's
  /// result layout follows it: see relayout).
  std::optional<layout::Layout> denseRead;
  // The dense value of a dense chain's target read from `v` (its view
  // plus its perturbations), by (value, chain).
  std::map<std::pair<PV, const ViewChain *>, std::pair<PV, layout::Layout>>
      denseStarts;
  ir::ValueType typeOf(const Node *n);
  PV viewOf(PV src, bool storage, const Node *n, const layout::Layout &l);
  PV applyPerturbs(PV name, bool &storage, const Node *n,
                   const std::vector<size_t> &list);
  Value sourceOf(const Operand &in);
  PV emitDense(const Operand &in, const ViewChain *stop, PV name,
               layout::Layout l, DType dtype);
  PV read(const Operand &in);
  PV relayout(PV v, const layout::Layout &from, const layout::Layout &to,
              DType dtype);
};

[[noreturn]] void GradientRun::overlapError(const TensorImpl &t,
                                            const std::string &why) {
  fail("strata cannot differentiate with respect to a tensor whose "
       "elements overlap in memory (sizes " +
           layout::formatList(t.layout.sizes) + ", strides " +
           layout::formatList(t.layout.strides) + ") when " + why,
       "differentiate with respect to a clone() of it (the clone is "
       "dense), or to the tensor it was expanded from",
       loc);
}

void GradientRun::checkOverlap(const TensorImpl &t) {
  if (!layout::mayOverlap(t.layout))
    return;
  if (isLeafOf(t)) {
    denseLeaves.insert(&t);
    denseTargets.push_back({&t, nullptr});
    return;
  }
  Operand e = targetEdge(t);
  if (!e.view)
    overlapError(t, "it is no view of a tensor requiring grad");
  denseChains.insert(e.view.get());
  denseTargets.push_back({&t, e.view.get()});
}

void GradientRun::perturbTarget(size_t ti) {
  Target &t = targets[ti];
  if (isLeafOf(*t.impl))
    return;
  Operand e = targetEdge(*t.impl);
  const Node *n = t.node ? t.node.get() : historyOf(e).get();
  // An untracked write (no-grad mode) keeps the old grad_fn: the reads
  // before it and after it (through its strata.recorded) reach the old
  // version, which is perturbed.
  while (!t.node && n->passHistory && n->gradIn().size() == 2 &&
         g.isOp.count(n->gradIn()[1].node.get()))
    n = n->gradIn()[1].node.get();
  bool whole = !n->isStorageValue() && e.layout == n->resultLayout();
  size_t p = perturbs.size();
  if (e.view) {
    if (!reachedChains.count(e.view.get()))
      fail("One of the differentiated Tensors appears to not have been used "
           "in the graph. Set allow_unused=True if this is the desired "
           "behavior.",
           "the outputs do not read this view", loc);
    perturbChain[e.view.get()].push_back(p);
    whole = false;
  } else if (auto leaf = leafOfEdge(e)) {
    auto it = g.leafIndex.find({n, leaf.get()});
    if (it == g.leafIndex.end())
      fail("One of the differentiated Tensors appears to not have been used "
           "in the graph. Set allow_unused=True if this is the desired "
           "behavior.",
           "the outputs do not depend on this view", loc);
    perturbLeaf[it->second].push_back(p);
    whole = false;
  } else if (g.isOp.count(n) && reached.count(n)) {
    perturbOp[n].push_back(p);
  } else {
    fail("One of the differentiated Tensors appears to not have been used "
         "in the graph. Set allow_unused=True if this is the desired "
         "behavior.",
         "the outputs do not depend on this tensor", loc);
  }
  perturbs.push_back({e.layout, t.impl->dtype, whole});
  targetPerturb[ti] = static_cast<int64_t>(p);
}

layout::Layout GradientRun::afterAdd(const layout::Layout &l) {
  std::vector<layout::Layout> ins{l, layout::contiguous(l.sizes)};
  return layout::elementwiseResult(ins, l.sizes);
}

std::optional<std::vector<GradientRun::DenseStep>>
GradientRun::denseSteps(const Operand &in, const ViewChain *stop,
                        layout::Layout l) {
  std::vector<const ViewChain *> chain;
  const ViewChain *c = in.view.get();
  for (; c && c != stop; c = c->next.get())
    chain.push_back(c);
  if (c != stop)
    return std::nullopt;
  std::vector<DenseStep> steps;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    auto r = replayView(**it, l);
    if (!r)
      return std::nullopt;
    l = std::move(*r);
    steps.push_back({l, -1});
    if (auto f = perturbChain.find(*it); f != perturbChain.end())
      for (size_t p : f->second) {
        l = afterAdd(l);
        steps.push_back({l, static_cast<int64_t>(p)});
      }
  }
  if (l.sizes != in.layout.sizes)
    return std::nullopt;
  return steps;
}

// The dense chain a read goes through first (from its base), if any.
const ViewChain *GradientRun::firstDense(const Operand &in) {
  const ViewChain *first = nullptr;
  for (const ViewChain *c = in.view.get(); c; c = c->next.get())
    if (denseChains.count(c))
      first = c;
  return first;
}

ir::ValueType GradientRun::rootType(const Node *n) {
  return storageType(n->rootNumel, n->dtype);
}

const std::pair<int64_t, int64_t> *GradientRun::windowOf(const Operand &in) {
  if (auto leaf = leafOfEdge(in)) {
    const auto &w = leafWindow[g.leafIndex.at({in.node.get(), leaf.get()})];
    return w.second >= 0 ? &w : nullptr;
  }
  auto it = window.find(in.node.get());
  return it == window.end() || !constantEdge(in) ? nullptr : &it->second;
}

ir::ValueType GradientRun::windowType(const Node *n, int64_t size) {
  return storageType(size, n->dtype);
}

void GradientRun::collect() {
  start = std::chrono::steady_clock::now();
  numOutputs = seeds ? seeds->size() : outputs.size();
  if (gradOutputs.empty())
    gradOutputs.resize(numOutputs);
  if (gradOutputs.size() != numOutputs)
    fail("grad_outputs must have the same length as outputs", "", loc);
  // Each output's sizes and dtype.
  if (seeds)
    for (const Operand &e : *seeds) {
      g.visit(e);
      outEdges.push_back(e);
      outSizes.push_back(e.layout.sizes);
      outTypes.push_back(e.node->dtype);
    }
  for (size_t i = 0; i < outputs.size() && !seeds; ++i) {
    const TensorImpl &o = implOf(outputs[i], loc);
    outSizes.push_back(o.layout.sizes);
    outTypes.push_back(o.dtype);
    // PyTorch reads the output's grad_fn first: a view made in no-grad
    // mode whose base was written since is refused, whatever the mode.
    checkViewRead(o, loc, true);
    if (!requiresGradOf(o))
      fail("element " + std::to_string(i) +
               " of tensors does not require grad and does not have a "
               "grad_fn",
           "call requires_grad_() on the leaves before computing it", loc);
    if (!gradOutputs[i].defined()) {
      // Implicitly 1 (passed below without evaluating a ones() program).
      if (o.layout.numel() != 1)
        fail("grad can be implicitly created only for scalar outputs",
             "pass the gradient: y.backward(strata::ones_like(y))", loc);
    } else if (gradOutputs[i].sizes() != o.layout.sizes) {
      fail("Mismatch in shape: grad_output[" + std::to_string(i) +
               "] has a shape of " +
               layout::formatList(gradOutputs[i].sizes()) + " and output[" +
               std::to_string(i) + "] has a shape of " +
               layout::formatList(o.layout.sizes) + ".",
           "", loc);
    }
    Operand edge = operandOf(o);
    edge.noGrad = false; // (backward in no-grad mode differentiates too)
    // (A view keeps the grad_fn it was given when its base stops requiring
    // grad, or when a view below it has none (made in no-grad mode):
    // PyTorch runs it, accumulating nothing.)
    if ((!edge.leaf.lock() && !edge.node->requiresGrad && !edge.view) ||
        (!edge.view && gradGoesNowhere(o, nullptr)))
      fail("element " + std::to_string(i) +
               " of tensors does not require grad and does not have a "
               "grad_fn",
           "its value was last written in no-grad mode", loc);
    g.visit(edge);
    outEdges.push_back(std::move(edge));
  }
  // A constant op the walk queued may have been evaluated since (a leaf's
  // data computed by addLeaf), its inputs dropped: its value is an argument.
  std::erase_if(g.ops, [&](const NodePtr &n) {
    if (n->requiresGrad || !n->buffer)
      return false;
    g.isOp.erase(n.get());
    if (g.isConst.insert(n.get()).second)
      g.constArgs.push_back(n);
    return true;
  });
  auto bySeq = [](const NodePtr &a, const NodePtr &b) {
    return a->seq < b->seq;
  };
  std::sort(g.constArgs.begin(), g.constArgs.end(), bySeq);
  std::sort(g.ops.begin(), g.ops.end(), bySeq);

  // The edges a gradient reaches from the outputs: through the history of
  // ops requiring grad only (a leaf read only through `x > 0`, a detach()
  // or a no-grad op gets none, as in PyTorch, though its data may still
  // feed the recomputed forward).
  // A view's grad_fn is its view chain (one per view and version): the
  // chains the gradient passes through are reached too.
  auto reachEdge = [&](const Operand &in) {
    if (in.noGrad) {
      // A view whose grad_fn leads nowhere (a view of a no-grad view):
      // PyTorch runs that grad_fn (a retain_grad() hook on it fires),
      // though nothing flows on.
      if (in.cutView)
        for (const ViewChain *c = in.view.get(); c; c = c->next.get())
          if (!reachedChains.insert(c).second)
            break;
      return;
    }
    if (auto leaf = leafOfEdge(in))
      reachedLeaves.insert(leaf.get());
    else if (!constantEdge(in))
      reached.insert(historyOf(in).get());
    // A view's grad_fn gets its gradient even when nothing below it does
    // (its base stopped requiring grad): grad() with respect to it works.
    for (const ViewChain *c = in.view.get(); c; c = c->next.get())
      if (!reachedChains.insert(c).second)
        break; // (its tail is in already)
  };
  for (const Operand &e : outEdges)
    reachEdge(e);
  for (auto it = g.ops.rbegin(); it != g.ops.rend(); ++it)
    if ((*it)->requiresGrad && reached.count(it->get()))
      for (const Operand &in : (*it)->gradIn())
        reachEdge(in);
}

void GradientRun::findTargets() {
  if (all) {
    std::set<const TensorImpl *> have;
    for (const Graph::LeafArg &a : g.leafArgs)
      if (reachedLeaves.count(a.leaf.get()) &&
          have.insert(a.leaf.get()).second) {
        // A leaf when read that got a grad_fn since (written in place with
        // history after requires_grad_(false), or a view whose base was):
        // PyTorch's AccumulateGrad refuses it (after the ops' checks).
        if (!isLeafOf(*a.leaf)) {
          movedLeaf = a.leaf.get();
          continue;
        }
        targets.push_back({a.leaf, nullptr});
      }
    std::vector<std::shared_ptr<TensorImpl>> retained;
    {
      std::lock_guard<std::mutex> lock(gRetainedMutex);
      std::erase_if(gRetained, [](const std::weak_ptr<TensorImpl> &w) {
        return w.expired();
      });
      for (const auto &w : gRetained)
        if (auto t = w.lock())
          retained.push_back(std::move(t));
    }
    for (const auto &t : retained) {
      Operand e = targetEdge(*t);
      NodePtr at = retainedNode(*t);
      if (e.view          ? reachedChains.count(e.view.get()) > 0
          : leafOfEdge(e) ? reachedLeaves.count(leafOfEdge(e).get()) > 0
          : at            ? reached.count(at.get()) > 0
                          : reached.count(historyOf(e).get()) > 0)
        targets.push_back({t, at});
    }
  }
}

void GradientRun::perturbTargets() {
  targetPerturb.assign(targets.size(), -1);
  for (const Target &t : targets)
    checkOverlap(*t.impl);
  for (size_t ti = 0; ti < targets.size(); ++ti)
    perturbTarget(ti);
}

void GradientRun::checkSaved() {
  // PyTorch's checks of saved tensors, on the ops its engine would run:
  // for backward() every op reached, for grad() those between the outputs
  // and the inputs asked for.
  if (all) {
    // (Ops walked only for the value an edge without gradient reads are
    // not run by PyTorch's engine: not reached.)
    for (const NodePtr &n : g.toCheck)
      if (reached.count(n.get()))
        g.check(n);
    if (movedLeaf)
      fail("leaf variable has been moved into the graph interior",
           "take the view after the in-place write to its base, or "
           "clone() it before requires_grad_()",
           loc);
    for (const NodePtr &n : g.ops)
      if (n->requiresGrad && reached.count(n.get()))
        executed.push_back(n.get());
  } else {
    std::set<const TensorImpl *> targetImpls;
    for (const Target &t : targets)
      targetImpls.insert(t.impl.get());
    std::unordered_set<const Node *> needed;
    auto leads = [&](const Operand &in) {
      if (in.noGrad)
        return false;
      for (const ViewChain *c = in.view.get(); c; c = c->next.get())
        if (perturbChain.count(c))
          return true;
      if (constantEdge(in) && !leafOfEdge(in))
        return false;
      if (auto leaf = leafOfEdge(in); leaf && targetImpls.count(leaf.get()))
        return true;
      return perturbOp.count(historyOf(in).get()) > 0 ||
             needed.count(historyOf(in).get()) > 0;
    };
    for (const NodePtr &n : g.ops)
      if (n->requiresGrad)
        for (const Operand &in : n->gradIn())
          if (leads(in)) {
            needed.insert(n.get());
            break;
          }
    for (const NodePtr &n : g.toCheck)
      if (needed.count(n.get()))
        g.check(n);
    for (const NodePtr &n : g.ops)
      if (needed.count(n.get()))
        executed.push_back(n.get());
    // Retained tensors whose grad_fn runs (it is reached and leads on to
    // an input) get their .grad too, as PyTorch's retain_grad hooks do in
    // grad(): appended as targets past the inputs.
    std::vector<std::shared_ptr<TensorImpl>> retained;
    {
      std::lock_guard<std::mutex> lock(gRetainedMutex);
      for (const auto &w : gRetained)
        if (auto t = w.lock())
          retained.push_back(std::move(t));
    }
    for (const auto &t : retained) {
      if (isLeafOf(*t)) // (an input that retains its grad gets it too)
        continue;
      Operand e = targetEdge(*t);
      NodePtr at = retainedNode(*t);
      const Node *h = at ? at.get() : historyOf(e).get();
      bool runs;
      if (e.view) {
        runs = reachedChains.count(e.view.get()) > 0;
        bool below = false;
        for (const ViewChain *c = e.view->next.get(); c && !below;
             c = c->next.get())
          below = perturbChain.count(c) > 0;
        auto leaf = leafOfEdge(e);
        runs = runs && (below ||
                        (leaf ? targetImpls.count(leaf.get()) > 0
                              : needed.count(h) > 0 || perturbOp.count(h) > 0));
      } else {
        runs = reached.count(h) && needed.count(h);
      }
      if (!runs)
        continue;
      checkOverlap(*t);
      targets.push_back({t, at});
      targetPerturb.push_back(-1);
      perturbTarget(targets.size() - 1);
    }
  }
}

void GradientRun::checkDense() {
  if (!denseLeaves.empty() || !denseChains.empty()) {
    auto targetOf = [&](const ViewChain *c) -> const TensorImpl & {
      for (const auto &[t, chain] : denseTargets)
        if (chain == c)
          return *t;
      return *denseTargets.front().first;
    };
    auto checkRead = [&](const Operand &in, bool written) {
      if (in.noGrad)
        return;
      if (auto leaf = leafOfEdge(in); leaf && denseLeaves.count(leaf.get())) {
        const TensorImpl &t = *leaf;
        if (written)
          overlapError(t, "it is written in place");
        if (!in.view
                ? in.layout != t.layout
                : !denseSteps(in, nullptr, layout::contiguous(t.layout.sizes)))
          overlapError(t, "a view of it cannot be replayed over its elements "
                          "(an as_strided of it, or a view strides cannot "
                          "express on them)");
        return;
      }
      const ViewChain *dc = firstDense(in);
      if (!dc)
        return;
      const TensorImpl &t = targetOf(dc);
      if (written)
        overlapError(t, "a view of it is written in place");
      layout::Layout l = t.layout;
      for (size_t k = 0; k < perturbChain.at(dc).size(); ++k)
        l = afterAdd(l);
      if (!denseSteps(in, dc, l))
        overlapError(t, "a view of it cannot be replayed over its elements "
                        "(an as_strided of it, or a view strides cannot "
                        "express on them)");
    };
    for (const Operand &e : outEdges)
      checkRead(e, false);
    for (const NodePtr &n : g.ops) {
      const auto &inputs = n->requiresGrad ? n->gradIn() : n->inputs;
      for (size_t i = 0; i < inputs.size(); ++i)
        checkRead(inputs[i], n->op == Op::Write && i == 1);
    }
  }
}

void GradientRun::findMasks() {
  // Reads through an as_strided whose elements its input does not all
  // address: PyTorch's as_strided backward passes the gradient only to the
  // storage elements of its input's geometry (as_strided_backward), so
  // `x.narrow(0, 4, 0).as_strided(...)` gives x no gradient. Such a read
  // takes its value whole and its gradient through `where(mask, v,
  // detach(v))`, the mask being the intersection of the inputs' elements.
  // (Every other read, the common case, costs nothing.)
  auto maskOf = [&](const Operand &in) {
    if (in.noGrad || !in.view || !in.view->anyAsStrided ||
        in.layout.numel() == 0)
      return;
    std::vector<int64_t> allowed;
    bool any = false;
    for (const ViewChain *c = in.view.get(); c; c = c->next.get()) {
      if (!c->asStridedInput)
        continue;
      std::vector<int64_t> at = layout::storageIndices(*c->asStridedInput);
      std::sort(at.begin(), at.end());
      at.erase(std::unique(at.begin(), at.end()), at.end());
      if (!any)
        allowed = std::move(at);
      else {
        std::vector<int64_t> both;
        std::set_intersection(allowed.begin(), allowed.end(), at.begin(),
                              at.end(), std::back_inserter(both));
        allowed = std::move(both);
      }
      any = true;
    }
    if (!any)
      return;
    std::vector<int64_t> read = layout::storageIndices(in.layout);
    bool covered = std::all_of(read.begin(), read.end(), [&](int64_t i) {
      return std::binary_search(allowed.begin(), allowed.end(), i);
    });
    if (covered)
      return;
    readMask[&in] = std::move(allowed);
  };
  for (const Operand &e : outEdges)
    maskOf(e);
  for (const NodePtr &n : g.ops)
    for (const Operand &in : n->requiresGrad ? n->gradIn() : n->inputs)
      maskOf(in);
  // Without retain_graph the ops run free what they saved (PyTorch frees
  // the nodes its engine ran; grad() runs none below its inputs).
  if (!retain)
    for (Node *n : executed)
      n->gradFreed = true;
}

void GradientRun::placeArguments() {
  // Arguments: leaves and perturbations (differentiated), then recorded
  // values and constants.
  // The program, built op by op (ProgramBuilder.h): its key is what was
  // built.
  // The gradient program runs where the forward one did: on the GPU when
  // some leaf, constant or op is there (devices never mix: the forward
  // refused that), with the leaves' device buffers used in place.
  onCuda = false;
  for (const Graph::LeafArg &a : g.leafArgs)
    onCuda |= a.node->buffer->device() == runtime::DeviceKind::CUDA;
  for (const NodePtr &n : g.constArgs)
    onCuda |= n->buffer->device() == runtime::DeviceKind::CUDA;
  for (const NodePtr &n : g.ops)
    onCuda |= n->device == kDevCUDA;
  if (createGraph && onCuda)
    fail("create_graph is not supported on CUDA yet",
         "compute the gradients on the CPU, or without create_graph", loc);
  // A constant the program only reads is passed as the window its reads
  // reach (as the evaluator does, Slice::placeArgs), its reads' offsets
  // relative to it: a mini-batch's offset is not in the program's text.
  {
    std::unordered_map<const Node *, std::pair<int64_t, int64_t>> reach;
    std::unordered_set<const Node *> written;
    for (const NodePtr &n : g.ops) {
      const auto &inputs = n->requiresGrad ? n->gradIn() : n->inputs;
      if (n->op == Op::Write && inputs.size() > 1)
        written.insert(inputs[1].node.get());
      for (const Operand &in : inputs) {
        // (A perturbed read writes it; a read through a view of a no-grad
        // view, cut off from the history, is perturbed too.)
        if ((!in.noGrad || in.cutView) && in.view &&
            (!perturbChain.empty() || readMask.count(&in)))
          written.insert(in.node.get());
        if (!g.isConst.count(in.node.get()) || leafOfEdge(in) ||
            !constantEdge(in) || in.layout.numel() == 0)
          continue;
        auto [lo, hi] = layout::indexRange(in.layout);
        auto [it, first] = reach.emplace(in.node.get(), std::make_pair(lo, hi));
        it->second = {std::min(it->second.first, lo),
                      std::max(it->second.second, hi)};
      }
    }
    for (auto &[n, r] : reach)
      if (!written.count(n))
        window[n] = readWindow(r.first, r.second, n->rootNumel, onCuda);
  }
  // A leaf's data is passed as the window its reads reach too, its
  // gradient being the window's, made storage-sized after the run
  // (widenGradient): a mini-batch of a leaf's rows, `w.narrow(0, k, B)`
  // (an embedding's lookup), writes its gradient at a run-time offset and
  // is one program for every k. A leaf perturbed for a non-leaf target (a
  // view of it) is passed whole. Size -1: whole.
  leafWindow.assign(g.leafArgs.size(), {0, -1});
  {
    std::vector<std::pair<int64_t, int64_t>> reach(g.leafArgs.size(),
                                                   {INT64_MAX, -1});
    auto reachLeaf = [&](const Operand &in) {
      auto leaf = leafOfEdge(in);
      if (!leaf || in.layout.numel() == 0)
        return;
      auto [lo, hi] = layout::indexRange(in.layout);
      auto &r = reach[g.leafIndex.at({in.node.get(), leaf.get()})];
      r = {std::min(r.first, lo), std::max(r.second, hi)};
    };
    for (const NodePtr &n : g.ops)
      for (const Operand &in : n->requiresGrad ? n->gradIn() : n->inputs)
        reachLeaf(in);
    for (const Operand &e : outEdges)
      reachLeaf(e);
    // (Not a leaf whose reads a view target perturbs: the perturbation is
    // written into the whole storage; nor one passed dense; nor the
    // boundary of a segment, which the segment may write over.)
    for (size_t k = 0; k < g.leafArgs.size(); ++k)
      if (reach[k].second >= 0 && !perturbLeaf.count(k) && !createGraph &&
          perturbChain.empty() && readMask.empty() &&
          !denseLeaves.count(g.leafArgs[k].leaf.get()) &&
          !(tBoundaries && tBoundaries->count(g.leafArgs[k].node.get())))
        leafWindow[k] = readWindow(reach[k].first, reach[k].second,
                                   g.leafArgs[k].node->rootNumel, onCuda);
  }
  // `w`: the window passed ({start, size}; null or size -1: whole).
  auto storageArg = [&](const Node *n, const runtime::StoragePtr &buffer,
                        const std::pair<int64_t, int64_t> *w = nullptr) {
    bool windowed = w && w->second >= 0;
    int64_t size = windowed ? w->second : n->rootNumel;
    PV name = prog.argument(windowType(n, size));
    jit::JitValue v;
    v.dtype = toJitDType(n->dtype);
    v.buffer = onCuda ? buffer : hostBuffer(buffer, loc);
    if (windowed)
      v.buffer = storageWindow(v.buffer, n->dtype, w->first, size);
    v.sizes = {size};
    v.strides = {1};
    v.isStorage = true;
    args.push_back(std::move(v));
    return name;
  };
  // create_graph: what the replay reads for each argument (CreateGraph.h).
  auto replayConstant = [&] {
    // (A copy: the gradient graph is evaluated later, after the writes
    // the storage may see meanwhile.)
    const jit::JitValue &v = args.back();
    runtime::StoragePtr copy = allocate(v.buffer->nbytes(), loc);
    if (v.buffer->nbytes())
      memcpy(copy->data(), v.buffer->data(), v.buffer->nbytes());
    DType dtype = static_cast<DType>(v.dtype);
    replayArgs.push_back(
        {true,
         makeLeaf(copy, dtype, {v.sizes[0]}, TensorOptions(dtype), "grad", loc),
         0});
  };
  auto addWrt = [&] { wrt.push_back(static_cast<int64_t>(args.size())); };
  for (size_t k = 0; k < g.leafArgs.size(); ++k) {
    addWrt();
    const Graph::LeafArg &a = g.leafArgs[k];
    if (denseLeaves.count(a.leaf.get())) {
      // Its elements, dense (see denseLeaves).
      NoGradGuard noGrad;
      Tensor dense = Tensor(a.leaf).detach(loc).contiguous(loc);
      PV name = prog.argument(
          tensorType(layout::contiguous(a.leaf->layout.sizes), a.leaf->dtype));
      const Shape &sz = a.leaf->layout.sizes;
      args.push_back(jit::JitValue::fresh(
          toJitDType(a.leaf->dtype), std::vector<int64_t>(sz.begin(), sz.end()),
          dense.to_vector<double>(loc)));
      leafName.push_back(name);
      if (createGraph)
        replayArgs.push_back({false, Tensor(a.leaf).contiguous(loc), 0});
      continue;
    }
    leafName.push_back(
        storageArg(a.node.get(), a.node->buffer, &leafWindow[k]));
    if (createGraph) { // (passed whole: see leafWindow)
      Tensor leaf(a.leaf);
      if (a.leaf->root->current != a.node) {
        // Written in place since it was read: the values read (a copy),
        // differentiated as the leaf.
        replayConstant();
        int64_t n = a.node->rootNumel;
        Tensor flat = leaf.as_strided({n}, {1}, 0, loc);
        leaf = straightThrough(flat, replayArgs.back().tensor, loc);
        replayArgs.pop_back();
      }
      replayArgs.push_back({true, leaf, 0});
    }
  }
  for (size_t p = 0; p < perturbs.size(); ++p) {
    addWrt();
    const Perturb &pt = perturbs[p];
    perturbValue.push_back(prog.argument(
        tensorType(layout::contiguous(pt.layout.sizes), pt.dtype)));
    args.push_back(jit::JitValue::fresh(
        toJitDType(pt.dtype),
        std::vector<int64_t>(pt.layout.sizes.begin(), pt.layout.sizes.end()),
        std::vector<double>(pt.layout.numel(), 0.0)));
    if (createGraph)
      replayArgs.push_back(
          {false, zeros(pt.layout.sizes, TensorOptions(pt.dtype), loc), 0});
  }
  for (const NodePtr &n : g.constArgs) {
    auto w = window.find(n.get());
    constName[n.get()] = storageArg(n.get(), n->buffer,
                                    w == window.end() ? nullptr : &w->second);
    if (createGraph)
      replayConstant();
  }
  // (create_graph recomputes them: a recorded value has no history.)
  for (const NodePtr &n : g.ops)
    if (n->requiresGrad && freshBuffer(*n) && !createGraph)
      recordedName[n.get()] = storageArg(n.get(), n->buffer);
}

ir::ValueType GradientRun::typeOf(const Node *n) {
  return n->isStorageValue() ? rootType(n)
                             : tensorType(n->resultLayout(), n->dtype);
}

/// A view of value `src` (storage or not) through `l`.
GradientRun::PV GradientRun::viewOf(PV src, bool storage, const Node *n,
                                    const layout::Layout &l) {
  if (!storage && l == n->resultLayout())
    return src;
  return prog.stridedView(src, l);
}

/// Applies the perturbations `list` to value (name, storage?) of `n`.
GradientRun::PV GradientRun::applyPerturbs(PV name, bool &storage,
                                           const Node *n,
                                           const std::vector<size_t> &list) {
  for (size_t p : list) {
    const Perturb &pt = perturbs[p];
    ir::ValueType type = storage ? rootType(n) : typeOf(n);
    layout::Layout pl = layout::contiguous(pt.layout.sizes);
    // The sum's layout follows the value read (TensorIterator).
    std::vector<layout::Layout> ins{pt.layout, pl};
    ir::ValueType sType =
        tensorType(layout::elementwiseResult(ins, pt.layout.sizes), pt.dtype);
    if (pt.whole && !storage && sType == type) {
      name = prog.op("add", {name, perturbValue[p]}, type);
      continue;
    }
    PV view = viewOf(name, storage, n, pt.layout);
    PV sum = prog.op("add", {view, perturbValue[p]}, sType);
    name = prog.op("write", {sum, view}, rootType(n));
    storage = true;
  }
  return name;
}

GradientRun::Value GradientRun::sourceOf(const Operand &in) {
  const Node *n = in.node.get();
  if (auto leaf = leafOfEdge(in))
    return {leafName[g.leafIndex.at({n, leaf.get()})], true, n};
  if (in.history && !constantEdge(in)) {
    // A write of another autograd identity: its value, differentiated as
    // the version before it (PyTorch's detached writer keeps the
    // history).
    const Node *h = in.history.get();
    auto [it, first] = historyValue.emplace(std::make_pair(n, h), Value{});
    if (first) {
      Value value =
          constName.count(n) ? Value{constName[n], true, n} : opValue.at(n);
      Value hist = opValue.at(h);
      ir::ValueType type =
          hist.storage ? rootType(hist.shape) : typeOf(hist.shape);
      PV v = value.name;
      // (The value is a storage, or a tensor: an untracked write's value
      // has its old version's type.)
      ir::ValueType valueType =
          value.storage ? rootType(n) : typeOf(value.shape);
      if (!hist.storage && valueType != type)
        v = prog.stridedView(value.name, type.layout);
      PV r = prog.op("recorded", {hist.name, v}, type,
                     {ir::Attribute::unit("value_only")});
      it->second = {r, hist.storage, hist.shape};
    }
    return it->second;
  }
  if (constantEdge(in) && constName.count(n))
    return {constName[n], true, n};
  Value v = opValue.at(n);
  if ((in.noGrad || deadLeafEdge(in)) && n->requiresGrad) { // detach()
    auto [it, fresh_] = detachedName.emplace(n, -1);
    if (fresh_)
      it->second = prog.op("detach", {v.name},
                           v.storage ? rootType(v.shape) : typeOf(v.shape));
    v.name = it->second;
  }
  return v;
}

/// Emits the steps (denseSteps) reading `in` from dense value `name` of
/// layout `l` (its buffer's); returns the read.
GradientRun::PV GradientRun::emitDense(const Operand &in, const ViewChain *stop,
                                       PV name, layout::Layout l, DType dtype) {
  auto steps = denseSteps(in, stop, l);
  if (!steps) // (checked before: see checkDense)
    fail("strata cannot replay a view over a dense copy",
         "this is a strata bug", loc);
  layout::Layout at = l; // the value read so far, in name's buffer
  for (const DenseStep &s : *steps) {
    if (s.perturb < 0) {
      at = s.at;
      continue;
    }
    if (at != l)
      name = prog.stridedView(name, at);
    name = prog.op("add", {name, perturbValue[s.perturb]},
                   tensorType(s.at, dtype));
    l = at = s.at;
  }
  if (at != l)
    name = prog.stridedView(name, at);
  denseRead = at;
  return name;
}

GradientRun::PV GradientRun::read(const Operand &in) {
  if (auto leaf = leafOfEdge(in); leaf && denseLeaves.count(leaf.get())) {
    PV name = leafName[g.leafIndex.at({in.node.get(), leaf.get()})];
    layout::Layout dense = layout::contiguous(leaf->layout.sizes);
    if (!in.view) {
      denseRead = dense;
      return name;
    }
    return emitDense(in, nullptr, name, dense, leaf->dtype);
  }
  Value v = sourceOf(in);
  // (A read through a view whose grad_fn leads nowhere still passes its
  // chain's perturbations: the targets there get their gradient, as
  // PyTorch runs that grad_fn.)
  // The perturbations of the view read itself, when the read is masked
  // (readMask): added after the mask, as the view's gradient is the
  // read's, unmasked (only what flows below an as_strided is masked).
  std::vector<size_t> afterMask;
  if (!perturbChain.empty() && in.view && (!in.noGrad || in.cutView)) {
    std::vector<const ViewChain *> chain;
    for (const ViewChain *c = in.view.get(); c; c = c->next.get())
      chain.push_back(c);
    std::vector<size_t> list; // the base's view first
    const ViewChain *dense = nullptr;
    for (auto it = chain.rbegin(); it != chain.rend() && !dense; ++it) {
      if (denseChains.count(*it))
        dense = *it;
      else if (auto f = perturbChain.find(*it); f != perturbChain.end()) {
        auto &into =
            *it == in.view.get() && readMask.count(&in) ? afterMask : list;
        into.insert(into.end(), f->second.begin(), f->second.end());
      }
    }
    if (!list.empty()) {
      auto [it, first] =
          perturbedReads.emplace(std::make_pair(v.name, list), -1);
      if (first) {
        bool storage = v.storage;
        it->second = applyPerturbs(v.name, storage, v.shape, list);
      }
      v.name = it->second;
      v.storage = true;
    }
    if (dense) {
      const Node *n = v.shape;
      auto [it, first] =
          denseStarts.emplace(std::make_pair(v.name, dense),
                              std::make_pair(PV(-1), layout::Layout{}));
      if (first) {
        const std::vector<size_t> &ps = perturbChain.at(dense);
        layout::Layout l = perturbs[ps.front()].layout;
        PV name = viewOf(v.name, v.storage, n, l);
        for (size_t p : ps) {
          layout::Layout sl = afterAdd(l);
          name =
              prog.op("add", {name, perturbValue[p]}, tensorType(sl, n->dtype));
          l = sl;
        }
        it->second = {name, l};
      }
      return emitDense(in, dense, it->second.first, it->second.second,
                       n->dtype);
    }
  }
  const Node *n = v.shape;
  if (auto m = readMask.find(&in); m != readMask.end()) {
    // (see readMask) The value whole, its gradient masked.
    int64_t size = v.storage ? n->rootNumel
                             : layout::requiredStorageSize(n->resultLayout());
    std::vector<double> allowed(size, 0.0);
    for (int64_t i : m->second)
      if (i >= 0 && i < size)
        allowed[i] = 1.0;
    Shape flatSizes{size};
    ir::ValueType flatType =
        tensorType(layout::contiguous(flatSizes), n->dtype);
    PV mask =
        prog.argument(tensorType(layout::contiguous(flatSizes), DType::Bool));
    args.push_back(jit::JitValue::fresh(jit::DType::Bool, {size}, allowed));
    if (createGraph)
      replayArgs.push_back(
          {false,
           from_vector<double>(allowed, {size}, TensorOptions(DType::F64), loc)
               .to(DType::Bool, loc),
           0});
    PV flat = prog.stridedView(v.name, flatType.layout);
    PV d = prog.op("detach", {flat}, flatType);
    PV w = prog.op("where", {mask, flat, d}, flatType);
    PV r = prog.stridedView(w, in.layout);
    layout::Layout at = in.layout;
    for (size_t p : afterMask) {
      layout::Layout pl = layout::contiguous(perturbs[p].layout.sizes);
      std::vector<layout::Layout> both{at, pl};
      layout::Layout sum = layout::elementwiseResult(both, at.sizes);
      r = prog.op("add", {r, perturbValue[p]}, tensorType(sum, n->dtype));
      at = sum;
    }
    if (!afterMask.empty())
      denseRead = at; // (its consumer's layout follows what is read)
    return r;
  }
  if (const auto *w = windowOf(in)) {
    layout::Layout l = in.layout;
    l.offset = l.numel() ? l.offset - w->first : 0;
    return viewOf(v.name, true, n, l);
  }
  return viewOf(v.name, v.storage, n, in.layout);
}

/// Value `v` of dense layout `from` laid out as dense layout `to` (same
/// sizes, both offset 0): its dims permuted into `to`'s order, made
/// row-major, seen as `to`.
GradientRun::PV GradientRun::relayout(PV v, const layout::Layout &from,
                                      const layout::Layout &to, DType dtype) {
  Shape perm(to.sizes.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    return to.strides[a] > to.strides[b];
  });
  layout::Layout permuted =
      check(layout::permute(from, perm), loc, "this is a strata bug");
  layout::Layout rowMajor = layout::contiguous(permuted.sizes);
  PV p = prog.stridedView(v, permuted);
  PV c = prog.op("contiguous", {p}, tensorType(rowMajor, dtype));
  return prog.stridedView(c, to);
}

bool GradientRun::emit() {
  for (auto &[k, list] : perturbLeaf) {
    bool storage = true;
    leafName[k] =
        applyPerturbs(leafName[k], storage, g.leafArgs[k].node.get(), list);
  }
  // C++ numbers (pending 0-d fills) are arguments, as in the evaluator's
  // programs ("Scalars are arguments"): a schedule of them is one gradient
  // program. Not a pow exponent, whose value selects the code, nor a bool,
  // nor an output; nor with create_graph (the replay reads constants) or
  // on CUDA.
  std::unordered_set<const Node *> constantScalars;
  for (const NodePtr &n : g.ops)
    if (n->op == Op::Binary && std::strcmp(n->name, "pow") == 0)
      for (const Operand &in : n->requiresGrad ? n->gradIn() : n->inputs)
        constantScalars.insert(in.node.get());
  for (const Operand &e : outEdges)
    constantScalars.insert(e.node.get());
  auto scalarArgument = [&](const Node *n) {
    return !createGraph && !onCuda && n->op == Op::Fill && n->sizes.empty() &&
           !n->requiresGrad && !n->buffer &&
           (n->dtype == DType::F32 || n->dtype == DType::F64 ||
            n->dtype == DType::I32 || n->dtype == DType::I64) &&
           !constantScalars.count(n);
  };
  // The scalar arguments' values (sized first: their addresses are taken).
  size_t numScalars = 0;
  scalarData.assign(
      std::count_if(g.ops.begin(), g.ops.end(),
                    [&](const NodePtr &n) { return scalarArgument(n.get()); }),
      0);
  for (const NodePtr &np : g.ops) {
    const Node *n = np.get();
    if (scalarArgument(n)) {
      PV a = prog.argument(storageType(1, n->dtype));
      jit::JitValue v;
      v.dtype = toJitDType(n->dtype);
      // (Wrapped, not allocated: the values live in `scalarData` while the
      // program runs, as the evaluator's do.)
      void *p = &scalarData[numScalars++];
      writeScalar(*n, p);
      v.buffer = runtime::Storage::wrapExternal(
          p, elementSize(n->dtype), runtime::DeviceKind::CPU, [] {});
      v.sizes = {1};
      v.strides = {1};
      v.isStorage = true;
      args.push_back(std::move(v));
      opValue[n] = {prog.stridedView(a, n->resultLayout()), false, n};
      continue;
    }
    const auto &inputs = n->requiresGrad ? n->gradIn() : n->inputs;
    std::vector<PV> ins;
    std::vector<layout::Layout> readLayouts;
    bool anyDense = false;
    for (const Operand &in : inputs) {
      denseRead.reset();
      ins.push_back(read(in));
      anyDense |= denseRead.has_value();
      readLayouts.push_back(denseRead ? *denseRead : in.layout);
    }
    ir::ValueType result = typeOf(n);
    auto rec = recordedName.find(n);
    // The op recomputed (laid out as recorded).
    std::optional<PV> def;
    if (anyDense && !n->isStorageValue() && !n->passHistory) {
      // A dense read's layout is not the recorded one: where the result's
      // layout follows its inputs', compute it from what is read, then
      // lay it out as recorded (its readers' layouts address that).
      layout::Layout inferred{n->sizes, resultStrides(*n, readLayouts), 0};
      if (inferred != n->resultLayout()) {
        PV made = emitOp(prog, *n, ins, tensorType(inferred, n->dtype));
        def = relayout(made, inferred, n->resultLayout(), n->dtype);
      }
    }
    if (n->passHistory) {
      // An untracked write: its value (recorded, or the write again
      // without grad) read as the old version, whose history it continues.
      PV value = rec != recordedName.end() ? rec->second
                                           : emitOp(prog, *n, ins, result);
      // (The old version's history: the version itself, or the history
      // its read continues when writes of another identity came between.)
      auto oldIt = opValue.find(inputs[1].node.get());
      if (oldIt == opValue.end())
        oldIt = opValue.find(historyOf(inputs[1]).get());
      if (oldIt == opValue.end())
        fail("strata could not find the history an untracked write continues",
             "this is a strata bug", loc);
      Value old = oldIt->second;
      ir::ValueType oldType =
          old.storage ? rootType(old.shape) : typeOf(old.shape);
      if (!old.storage)
        value = prog.stridedView(value, oldType.layout);
      PV name = prog.op("recorded", {old.name, value}, oldType,
                        {ir::Attribute::unit("value_only")});
      bool storage = old.storage;
      auto pit = perturbOp.find(n);
      if (pit != perturbOp.end())
        name = applyPerturbs(name, storage, old.shape, pit->second);
      opValue[n] = {name, storage, storage ? n : old.shape};
      continue;
    }
    if (!def)
      def = emitOp(prog, *n, ins, result);
    PV name = *def;
    bool storage = n->isStorageValue();
    if (rec != recordedName.end()) {
      // Its value is the one the forward computed (a strata.recorded).
      PV value = rec->second;
      if (!storage)
        value = prog.stridedView(rec->second, result.layout);
      name = prog.op("recorded", {*def, value}, result);
    }
    auto pit = perturbOp.find(n);
    if (pit != perturbOp.end())
      name = applyPerturbs(name, storage, n, pit->second);
    opValue[n] = {name, storage, n};
  }
  // Results: each output as a contiguous tensor.
  std::vector<PV> rets;
  for (size_t i = 0; i < numOutputs; ++i) {
    PV v = read(outEdges[i]);
    const ir::ValueType &type = prog.type(v);
    ir::ValueType want =
        tensorType(layout::contiguous(outSizes[i]), outTypes[i]);
    if (type != want) {
      // A row-major copy: strata.copy keeps a dense input's layout (and the
      // strides of its size-1 dims, which a view then makes row-major).
      // The layout read (a perturbation or a dense read may have laid the
      // value out otherwise than the edge): its strides from its type.
      layout::Layout in = outEdges[i].layout;
      if (!type.storage && type.layout.strides.size() == in.sizes.size())
        in = {in.sizes, type.layout.strides, 0};
      ir::ValueType kept = tensorType(layout::preserveFormat(in), outTypes[i]);
      if (!layout::isContiguous(in))
        v = prog.op("contiguous", {v}, want);
      else if (kept == want)
        v = prog.op("copy", {v}, want);
      else
        v = prog.stridedView(prog.op("copy", {v}, kept), want.layout);
    }
    rets.push_back(v);
  }
  // Every edge leads to nothing (views without a grad_fn, leaves since
  // destroyed): as PyTorch's engine, nothing to accumulate.
  if (wrt.empty())
    return false;
  prog.returns(std::move(rets));
  prog.functionAttribute(ir::Attribute::array("strata.wrt", std::move(wrt)));
  return true;
}

std::vector<Tensor> GradientRun::execute() {
  std::vector<Tensor> wrtGrads;
  // PyTorch's engine runs in grad mode exactly when it creates a graph.
  std::optional<AutoGradMode> mode;
  if (createGraph)
    mode.emplace(true);
  if (createGraph) {
    for (size_t i = 0; i < numOutputs; ++i) {
      Tensor seed = gradOutputs[i].defined()
                        ? gradOutputs[i].to(outTypes[i], loc)
                        : ones(outSizes[i], TensorOptions(outTypes[i]), loc);
      replayArgs.push_back({false, seed, 0});
    }
    std::vector<Tensor> values = replayGradientProgram(prog, replayArgs, loc);
    wrtGrads.assign(values.begin() + numOutputs, values.end());
  } else {
    bool hit = false;
    // Compiled with the trace lock released: what the program runs on (the
    // arguments' buffers, the graph's nodes) is held by `args` and `g`.
    std::shared_ptr<jit::PreparedFunction> program = lock.unlocked([&] {
      return cache().get(
          prog.key(),
          [&] {
            std::string error;
            auto fn = jit::PreparedFunction::fromProgram(
                prog, error, onCuda ? jit::Backend::CUDA : jit::Backend::CPU);
            if (!fn && runtime::settings::debugLevel() >= 1)
              fprintf(stderr, "%s", prog.print().c_str());
            if (!fn)
              fail("strata could not compile the gradient program: " + error,
                   "this is a strata bug; the program was:\n" + prog.print(),
                   loc);
            ++gCompiles;
            return fn;
          },
          hit);
    });
    bool compiled = !hit;
    for (size_t i = 0; i < numOutputs; ++i)
      args.push_back(
          seedValue(gradOutputs[i], outTypes[i], outSizes[i], onCuda, loc));
    double prepared = secondsSince(start);
    auto runStart = std::chrono::steady_clock::now();
    jit::RunResult r = runPrepared(*program, args, onCuda);
    if (runtime::settings::debugLevel() >= 1)
      fprintf(stderr,
              "[strata] backward at %s: %zu ops, %s in %.3f ms, ran %d kernels "
              "in %.3f ms\n",
              formatLoc(loc).c_str(), g.ops.size(),
              compiled ? "compiled" : "found prepared", prepared * 1e3,
              program->numKernels(), secondsSince(runStart) * 1e3);
    if (runtime::settings::debugLevel() >= 3)
      fprintf(stderr, "%s", prog.print().c_str());
    if (!r.ok)
      fail("strata could not run the gradient program: " + r.error, "", loc);
    countProgramRun(program->numKernels(), compiled);
    // The program computed each output on the way: keep the value of an
    // output not evaluated yet (loss.item() after backward() runs nothing).
    for (size_t i = 0; i < outputs.size() && !seeds; ++i)
      keepOutput(*outputs[i].impl(), r.values[i]);
    // Gradients of the wrt arguments, in order.
    for (size_t k = numOutputs; k < r.values.size(); ++k) {
      size_t leaf = k - numOutputs;
      if (leaf < g.leafArgs.size() && leafWindow[leaf].second >= 0)
        widenGradient(r.values[k], leafWindow[leaf].first,
                      g.leafArgs[leaf].node->rootNumel, loc);
      wrtGrads.push_back(
          fromJit(r.values[k], static_cast<DType>(r.values[k].dtype), loc));
    }
  }
  std::vector<Tensor> out;
  // (With create_graph, what is made of the gradients below is recorded.)
  std::optional<NoGradGuard> guard;
  if (!createGraph)
    guard.emplace();
  for (size_t ti = 0; ti < targets.size(); ++ti) {
    const Target &t = targets[ti];
    Tensor sum;
    if (targetPerturb[ti] >= 0) {
      sum = wrtGrads[g.leafArgs.size() + targetPerturb[ti]];
    } else if (reachedLeaves.count(t.impl.get())) {
      // (A leaf the program reads only for a value, through a detach()
      // or a no-grad op, gets no gradient: grad() says it is unused.)
      for (size_t k = 0; k < g.leafArgs.size(); ++k)
        if (g.leafArgs[k].leaf == t.impl) {
          Tensor p = denseLeaves.count(t.impl.get())
                         ? wrtGrads[k].reshape(t.impl->layout.sizes, loc)
                         : project(wrtGrads[k], t.impl->layout, loc);
          sum = sum.defined() ? sum + p : p;
        }
    }
    // A 0-d CPU leaf of a CUDA program (a CPU scalar) keeps its gradient
    // on the CPU, as PyTorch's does.
    if (onCuda && sum.defined() && t.impl->root->current->device == kDevCPU)
      sum = sum.to(Device::cpu(), loc);
    // (create_graph: an empty input's gradient is a fill after folding;
    // it requires grad, as PyTorch's mostly does, so a second backward
    // through it runs, and gives an empty gradient.)
    if (createGraph && sum.defined() && !sum.requires_grad() &&
        sum.numel() == 0 && isFloatingPoint(sum.dtype()))
      sum = where(scalarTensor(Scalar(false), DType::Bool, loc),
                  Tensor(t.impl).sum(loc).to(sum.dtype(), loc), sum, loc);
    out.push_back(sum);
  }
  return out;
}

/// Runs backward; returns one gradient per target (all leaves reached and
/// retained tensors when `targets` is empty, then also filled in).
/// `seeds` (a segment of a long backward, backwardInSegments): the outputs
/// are these reads of versions instead of `outputs`, each given its
/// gradient.
std::vector<Tensor> run(TraceLock &lock, const std::vector<Tensor> &outputs,
                        std::vector<Tensor> gradOutputs,
                        std::vector<Target> &targets, bool all, bool retain,
                        bool createGraph, const SourceLoc &loc,
                        const std::vector<Operand> *seeds) {
  return GradientRun(lock, outputs, std::move(gradOutputs), targets, all,
                     retain, createGraph, loc, seeds)
      .run();
}

} // namespace strata::detail::engine
