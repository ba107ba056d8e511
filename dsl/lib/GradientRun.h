//===- GradientRun.h - one backward as one gradient program -----*- C++ -*-===//
//
// The autograd engine's run() (AutogradEngine.h) as a class whose phases
// live in one file each: the graph from the outputs back to the leaves and
// PyTorch's checks of it (BackwardGraph.cpp), the targets and the reads
// they change (GradientTargets.cpp), the program's arguments
// (GradientArguments.cpp), the reads of values in the program
// (GradientReads.cpp), the program emitted, run and turned into
// gradients (GradientRun.cpp), and hooked leaves accumulated while it runs
// (GradientHooks.cpp). Internal to the autograd engine.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_GRADIENTRUN_H
#define STRATA_DSL_LIB_GRADIENTRUN_H

#include "AutogradEngine.h"
#include "CreateGraph.h"
#include "Emit.h"

#include "strata/JIT/Jit.h"
#include "llvm/ADT/DenseSet.h"

#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace strata::detail::engine {

/// A set of nodes a gradient run keeps per op of its graph: open
/// addressing, no allocation per insert (order never read).
using NodeSet = llvm::DenseSet<const Node *>;

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
  NodeSet isConst;
  /// Ops re-emitted, each after its inputs (sorted by creation later).
  std::vector<NodePtr> ops;
  /// (Room for a segment's ops from the start: growing by doubling
  /// rehashed each set four times a segment.)
  NodeSet isOp{256}, checked{256};
  /// Ops the gradient flows through, to check() once the targets are known.
  std::vector<NodePtr> toCheck;
  const SourceLoc &loc;
  explicit Graph(const SourceLoc &l) : loc(l) {}

  /// PyTorch's checks of an op the gradient flows through: its saved
  /// tensors were not freed by an earlier backward, nor modified since.
  void check(const NodePtr &n);
  /// The data of `leaf`, version `n`, as an argument.
  void addLeaf(const NodePtr &n, const std::shared_ptr<TensorImpl> &leaf);
  /// Adds the graph reaching edge `start`: iterative (a 10^5-deep chain
  /// must not overflow the stack); each op is appended after its inputs.
  /// A constant edge to a materialized version is an argument; to a pending
  /// one, its ops are emitted too (the reader detaches the value).
  void visit(const Operand &start);

private:
  /// `viewRead`: the op saved a differentiable view, whose grad_fn
  /// PyTorch regenerates as AsStridedBackward0 once its base is written.
  [[noreturn]] void versionError(const VersionRecord &root, int64_t expected,
                                 const Shape &sizes, const Node *op,
                                 NodePtr saved, bool viewRead);
};

/// The incoming gradient `g` (undefined: ones) of an output of type
/// `dtype` and sizes `sizes`, as the program's argument: its buffer itself
/// where it is one dense CPU tensor of that type (a segment's seed of any
/// size, without a copy), else its elements.
jit::JitValue seedValue(const Tensor &g, DType dtype, const Shape &sizes,
                        bool onCuda, const SourceLoc &loc);

/// What a gradient program of one structure needs to run again without
/// being built (GradientTemplate.cpp): where each argument comes from.
struct GradientTemplate;

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
              const std::vector<Operand> *seeds, bool hooks)
      : lock(lock), outputs(outputs), gradOutputs(std::move(gradOutputs)),
        targets(targets), all(all), retain(retain), createGraph(createGraph),
        hooks(hooks), loc(loc), seeds(seeds), g(loc) {}

  std::vector<Tensor> run() {
    collect();
    findTargets();
    perturbTargets();
    checkSaved();
    checkDense();
    findMasks();
    if (keyTemplate() && argumentsFromTemplate())
      return execute();
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
  /// False when every edge leads to nothing. (A field of the graph that
  /// placeArguments() or emit() comes to read must enter keyTemplate()'s
  /// key too: a template is taken for every graph of an equal key.)
  bool emit();
  std::vector<Tensor> execute();

  // A program of a structure seen before, from its template
  // (GradientTemplate.cpp).
  /// The run's structure as `templateKey`; false (empty) where templates
  /// do not apply (create_graph, CUDA, perturbed or dense targets, masks).
  bool keyTemplate();
  /// The arguments and program from the template of `templateKey`; false
  /// where there is none (the program is then built, and its template
  /// kept by keepTemplate).
  bool argumentsFromTemplate();
  void keepTemplate(const std::shared_ptr<jit::PreparedFunction> &program);
  /// STRATA_CHECK_TEMPLATES: the program built the long way, compared with
  /// the template's (a strata bug where they differ).
  void checkTemplate();
  std::vector<uint64_t> templateKey;
  std::shared_ptr<const GradientTemplate> found;
  std::shared_ptr<jit::PreparedFunction> foundProgram;

  // The phases' steps (BackwardGraph.cpp).
  /// Output `i`'s edge, checked as PyTorch checks it, and its graph.
  void visitOutput(size_t i);
  /// The ops in creation order, constants evaluated since as arguments.
  void sortOps();
  /// The edges a gradient reaches from the outputs.
  void findReached();
  // (GradientTargets.cpp)
  void checkSavedOfBackward();
  void checkSavedOfGrad();
  /// grad(): the retained tensors whose grad_fn runs become targets too.
  void addRetainedOfGrad(const std::set<const TensorImpl *> &targetImpls,
                         const std::unordered_set<const Node *> &needed);
  // (GradientArguments.cpp)
  /// Where the program runs: where the forward did.
  void chooseDevice();
  /// The windows of constants and leaves passed (window, leafWindow).
  void windowConstants();
  void windowLeaves();
  /// A storage argument of `n`'s type over `buffer` (`w`: the window
  /// passed, {start, size}; null or size -1: whole).
  PV storageArg(const Node *n, const runtime::StoragePtr &buffer,
                const std::pair<int64_t, int64_t> *w = nullptr);
  /// storageArg's value, appended to `args` (no program argument).
  void storageValue(const Node *n, const runtime::StoragePtr &buffer,
                    const std::pair<int64_t, int64_t> *w);
  /// create_graph: the last argument, copied, as what the replay reads.
  void replayConstant();
  void addLeafArgument(size_t k);
  void addPerturbArgument(size_t p);
  // (GradientRun.cpp)
  /// The pending fills and aranges whose values are scalar arguments
  /// (sets powByArgument and wideExponents), into `scalarNodes` once.
  void numberArguments();
  NodeSet scalarNodes;
  bool numbered = false;
  /// Pow nodes whose number exponent is an argument (emitted with
  /// `scalar_exponent`), and those exponents passed in f64.
  std::unordered_set<const Node *> powByArgument, wideExponents;
  /// Emits `n` from its arguments, their values written from `data` on;
  /// returns how many it took (an arange two: its start and step).
  size_t emitScalarArgument(const Node *n, int64_t *data);
  /// Op `n` recomputed over its reads (or its recorded value).
  void emitNode(const Node *n);
  /// Each output read as a contiguous tensor.
  std::vector<PV> emitResults();
  /// The gradients of the wrt arguments: replayed (create_graph), or
  /// computed by the program prepared and run.
  std::vector<Tensor> replay();
  std::vector<Tensor> compileAndRun();
  /// Target `ti`'s gradient of the wrt arguments' gradients.
  Tensor gradientOf(size_t ti, const std::vector<Tensor> &wrtGrads);
  // (GradientHooks.cpp)
  /// The gradient of wrt argument `j` from its returned value `v`.
  Tensor wrtGradient(size_t j, jit::JitValue v);
  /// The run's RunOptions::onReturnReady when a leaf target has
  /// post-accumulate-grad hooks (else empty): each such leaf's gradient,
  /// once the program has made all of it, accumulated and hooked; the wrt
  /// gradients made go into `wrtGrads`.
  std::function<bool(size_t, const jit::JitValue &)>
  earlyHooks(std::vector<Tensor> &wrtGrads);
  /// Whether a storage the program reads was written since it started.
  bool argumentWritten() const;

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
  const bool all, retain, createGraph, hooks;
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
  NodeSet reached{256};
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
  /// The storages of the arguments that are versions of one, with their
  /// version counters when placed (a hook run while the program runs must
  /// not write them: argumentWritten()).
  std::vector<std::pair<std::weak_ptr<StorageRoot>, int64_t>> argRoots;
  /// Targets accumulated and hooked while the program ran (earlyHooks), and
  /// what a hook threw (the run stopped then).
  std::vector<bool> accumulatedEarly;
  std::exception_ptr hookError;
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
  /// The op that computes each op of the graph (create_graph: the replay's
  /// copy of it stands for it, replayGradientProgram's `origins`).
  std::unordered_map<const Node *, PV> computedBy;
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
  /// A read through views that targets perturb (their perturbations
  /// applied to `v`; those of the read's own view, when masked, left in
  /// `afterMask`); its value when a dense chain replays it.
  std::optional<PV> readPerturbed(const Operand &in, Value &v,
                                  std::vector<size_t> &afterMask);
  /// A read through an as_strided passing gradient only to `allowedAt`.
  PV readMasked(const Operand &in, const Value &v,
                const std::vector<int64_t> &allowedAt,
                const std::vector<size_t> &afterMask);
  PV relayout(PV v, const layout::Layout &from, const layout::Layout &to,
              DType dtype);
};

} // namespace strata::detail::engine

#endif // STRATA_DSL_LIB_GRADIENTRUN_H
