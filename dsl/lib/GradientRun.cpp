//===- GradientRun.cpp - one backward as one differentiated program -------===//
//
// The autograd engine's run() (AutogradEngine.h), phase by phase
// (GradientRun.h): the program emitted as an ir::Program over the
// arguments placed, prepared (cached by its key) and run, or replayed as
// DSL ops for create_graph, and its results made the targets' gradients.
// AutogradEngine.cpp has the algorithm's account and the public entry
// points.
//
//===----------------------------------------------------------------------===//
#include "GradientRun.h"
#include "Eval.h"
#include "ProgramCache.h"
#include "strata/Runtime/Settings.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace strata;
using namespace strata::detail;

namespace strata::detail::engine {

bool GradientRun::emit() {
  for (auto &[k, list] : perturbLeaf) {
    bool storage = true;
    leafName[k] =
        applyPerturbs(leafName[k], storage, g.leafArgs[k].node.get(), list);
  }
  numberArguments();
  const NodeSet &scalars = scalarNodes;
  // The scalar arguments' values (sized first: their addresses are taken;
  // an arange has two, its start and step).
  size_t slots = 0;
  for (const Node *n : scalars)
    slots += n->op == Op::Arange ? 2 : 1;
  scalarData.assign(slots, 0);
  size_t used = 0;
  for (const NodePtr &n : g.ops) {
    if (scalars.count(n.get()))
      used += emitScalarArgument(n.get(), &scalarData[used]);
    else
      emitNode(n.get());
  }
  std::vector<PV> rets = emitResults();
  // Every edge leads to nothing (views without a grad_fn, leaves since
  // destroyed): as PyTorch's engine, nothing to accumulate.
  if (wrt.empty())
    return false;
  prog.returns(std::move(rets));
  prog.functionAttribute(ir::Attribute::array("strata.wrt", std::move(wrt)));
  return true;
}

namespace {

/// How pow node `n`'s exponent enters a gradient program.
enum class GradExponent {
  Tensor,   ///< not a C++ number: a tensor operand
  Constant, ///< its value, or the VJP's `exponent - 1`, selects the code
  Argument, ///< a number in the tensor's dtype, any value one program
  Wide,     ///< a number of an f32 base that f32 cannot hold (nor e - 1)
};

GradExponent gradExponentOf(const Node &n) {
  if (n.op != Op::Binary || std::strcmp(n.name, "pow") != 0)
    return GradExponent::Tensor;
  const std::vector<Operand> &ins = n.requiresGrad ? n.gradIn() : n.inputs;
  if (ins.size() != 2)
    return GradExponent::Tensor;
  const Node &e = *ins[1].node;
  if (e.op != Op::Fill || e.buffer || e.device != kDevAny || !e.sizes.empty())
    return GradExponent::Tensor;
  if (n.dtype != DType::F32 && n.dtype != DType::F64)
    return GradExponent::Argument; // integers: always ipowi, no gradient
  // The forward's specializations (Slice::exponentOf) and those of the
  // base's gradient, `exponent * x^(exponent - 1)` with `exponent - 1` in
  // double as PyTorch's Scalar (1.5 is a sqrt there, 3 a product).
  double v = e.exact ? static_cast<double>(e.ia) : e.a;
  for (double special : {0.5, -0.5, 2.0, 3.0, -1.0, -2.0})
    if (v == special || v - 1 == special)
      return GradExponent::Constant;
  if (n.dtype == DType::F64)
    return GradExponent::Argument;
  // An f32 base computes in f32 by an exponent f32 holds, else in f64: the
  // exponent and `exponent - 1` must agree (one argument's type for both).
  auto fits = [](double x) {
    return static_cast<double>(static_cast<float>(x)) == x; // (NaN: no)
  };
  if (fits(v) != fits(v - 1))
    return GradExponent::Constant;
  return fits(v) ? GradExponent::Argument : GradExponent::Wide;
}

} // namespace

void GradientRun::numberArguments() {
  if (numbered)
    return;
  numbered = true;
  // Fill values (C++ numbers, `full` of any shape) and arange bounds are
  // arguments, as in the evaluator's programs ("Scalars are arguments"): a
  // schedule of them is one gradient program. A pow's number exponent too
  // where neither its value nor the VJP's `exponent - 1` selects the code
  // (gradExponentOf), passed in f64 where f32 cannot hold it; not its
  // other operand, nor a bool, nor an output; nor with create_graph (the
  // replay reads constants, then evaluated with arguments). On CUDA as on
  // the CPU: the executor uploads the host scalars with the other
  // arguments.
  NodeSet constantScalars, exponentArgs;
  for (const NodePtr &n : g.ops) {
    if (n->op != Op::Binary || std::strcmp(n->name, "pow") != 0)
      continue;
    const std::vector<Operand> &ins = n->requiresGrad ? n->gradIn() : n->inputs;
    GradExponent c = gradExponentOf(*n);
    for (size_t i = 0; i < ins.size(); ++i) {
      const Node *in = ins[i].node.get();
      if (i == 1 && (c == GradExponent::Argument || c == GradExponent::Wide)) {
        exponentArgs.insert(in);
        if (c == GradExponent::Wide)
          wideExponents.insert(in);
      } else {
        constantScalars.insert(in);
      }
    }
  }
  for (const Operand &e : outEdges)
    constantScalars.insert(e.node.get());
  // An exponent passed in f64 is read by pows alone: one that a replayed
  // gradient also reads in eq or mul (one fill shared) stays a constant.
  for (const NodePtr &n : g.ops) {
    const std::vector<Operand> &ins = n->requiresGrad ? n->gradIn() : n->inputs;
    bool widePow = gradExponentOf(*n) == GradExponent::Wide;
    for (size_t i = 0; i < ins.size(); ++i)
      if (wideExponents.count(ins[i].node.get()) && !(widePow && i == 1)) {
        wideExponents.erase(ins[i].node.get());
        constantScalars.insert(ins[i].node.get());
      }
  }
  NodeSet &scalars = scalarNodes;
  if (createGraph)
    return;
  for (const NodePtr &np : g.ops) {
    const Node *n = np.get();
    bool fill = n->op == Op::Fill &&
                (n->dtype == DType::F32 || n->dtype == DType::F64 ||
                 n->dtype == DType::I32 || n->dtype == DType::I64) &&
                (n->sizes.empty() || Slice::fillTakesArgument(*n));
    if ((fill || n->op == Op::Arange) && !n->requiresGrad && !n->buffer &&
        !constantScalars.count(n))
      scalars.insert(n);
  }
  // (An exponent read by one pow as an argument and elsewhere as a
  // constant is a constant; one passed in f64 is read by its pows alone.)
  for (const NodePtr &n : g.ops)
    if (GradExponent c = gradExponentOf(*n);
        c == GradExponent::Argument || c == GradExponent::Wide) {
      const std::vector<Operand> &ins =
          n->requiresGrad ? n->gradIn() : n->inputs;
      if (scalars.count(ins[1].node.get()))
        powByArgument.insert(n.get());
    }
  for (auto it = wideExponents.begin(); it != wideExponents.end();)
    it = scalars.count(*it) ? std::next(it) : wideExponents.erase(it);
}

size_t GradientRun::emitScalarArgument(const Node *n, int64_t *data) {
  size_t count = n->op == Op::Arange ? 2 : 1;
  bool wide = wideExponents.count(n) > 0;
  DType t = scalarArgDType(*n, wide);
  llvm::SmallVector<PV, 2> names;
  for (size_t i = 0; i < count; ++i) {
    names.push_back(prog.argument(storageType(1, t)));
    jit::JitValue v;
    v.dtype = toJitDType(t);
    // (Wrapped, not allocated: the values live in `scalarData` while the
    // program runs, as the evaluator's do.)
    void *p = data + i;
    writeScalarArg(*n, static_cast<int>(i), wide, p);
    v.buffer = runtime::Storage::wrapExternal(p, elementSize(t),
                                              runtime::DeviceKind::CPU, [] {});
    v.sizes = {1};
    v.strides = {1};
    v.isStorage = true;
    args.push_back(std::move(v));
  }
  opValue[n] = {
      emitFromArguments(prog, *n, names, t, false, positionOf(n->loc)), false,
      n};
  return count;
}

void GradientRun::emitNode(const Node *n) {
  const auto &inputs = n->requiresGrad ? n->gradIn() : n->inputs;
  // (On the stack for a few inputs: a segment emits each of its ops.)
  llvm::SmallVector<PV, 4> ins;
  llvm::SmallVector<layout::Layout, 3> readLayouts;
  bool anyDense = false;
  for (const Operand &in : inputs) {
    denseRead.reset();
    ins.push_back(read(in));
    anyDense |= denseRead.has_value();
    readLayouts.push_back(denseRead ? *denseRead : in.layout);
  }
  ir::ValueType result = typeOf(n);
  auto rec = recordedName.find(n);
  // pow(Tensor, Scalar) by an argument: `scalar_exponent`.
  auto emit = [&](const ir::ValueType &type) {
    if (!powByArgument.count(n))
      return emitOp(prog, *n, ins, type);
    return prog.op("pow", ins, type, {ir::Attribute::unit("scalar_exponent")},
                   positionOf(n->loc));
  };
  // The op recomputed (laid out as recorded).
  std::optional<PV> def;
  if (anyDense && !n->isStorageValue() && !n->passHistory) {
    // A dense read's layout is not the recorded one: where the result's
    // layout follows its inputs', compute it from what is read, then
    // lay it out as recorded (its readers' layouts address that).
    layout::Layout inferred{n->sizes, resultStrides(*n, readLayouts), 0};
    if (inferred != n->resultLayout()) {
      PV made = emit(tensorType(inferred, n->dtype));
      if (createGraph)
        computedBy[n] = made;
      def = relayout(made, inferred, n->resultLayout(), n->dtype);
    }
  }
  if (n->passHistory) {
    // An untracked write: its value (recorded, or the write again
    // without grad) read as the old version, whose history it continues.
    PV value = rec != recordedName.end() ? rec->second : emit(result);
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
    return;
  }
  // An in-place op's write (not copy_'s): PyTorch's CopySlices replaces
  // the written elements' gradient with that op's gradient for the view it
  // read (Differentiate.cpp, kInplaceOpAttr), where copy_'s reads add.
  if (!def && n->op == Op::Write && n->inplaceOp &&
      std::strcmp(n->inplaceOp, "copy_") != 0)
    def =
        prog.op("write", ins, result,
                {ir::Attribute::unit("strata.inplace_op")}, positionOf(n->loc));
  if (!def)
    def = emit(result);
  if (createGraph)
    computedBy.try_emplace(n, *def);
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

std::vector<GradientRun::PV> GradientRun::emitResults() {
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
  return rets;
}

std::vector<Tensor> GradientRun::execute() {
  // PyTorch's engine runs in grad mode exactly when it creates a graph.
  std::optional<AutoGradMode> mode;
  if (createGraph)
    mode.emplace(true);
  std::vector<Tensor> wrtGrads = createGraph ? replay() : compileAndRun();
  std::vector<Tensor> out;
  // (With create_graph, what is made of the gradients below is recorded.)
  std::optional<NoGradGuard> guard;
  if (!createGraph)
    guard.emplace();
  for (size_t ti = 0; ti < targets.size(); ++ti)
    out.push_back(ti < accumulatedEarly.size() && accumulatedEarly[ti]
                      ? Tensor()
                      : gradientOf(ti, wrtGrads));
  return out;
}

std::vector<Tensor> GradientRun::replay() {
  for (size_t i = 0; i < numOutputs; ++i) {
    Tensor seed = gradOutputs[i].defined()
                      ? gradOutputs[i].to(outTypes[i], loc)
                      : ones(outSizes[i], TensorOptions(outTypes[i]), loc);
    replayArgs.push_back({false, seed, 0});
  }
  // The ops PyTorch's gradient graph would reach: those of the forward.
  std::unordered_map<PV, NodePtr> origins;
  for (const NodePtr &n : g.ops)
    if (auto it = computedBy.find(n.get());
        it != computedBy.end() && n->requiresGrad)
      origins.emplace(it->second, n);
  std::vector<Tensor> values =
      replayGradientProgram(prog, replayArgs, origins, loc);
  return std::vector<Tensor>(values.begin() + numOutputs, values.end());
}

std::vector<Tensor> GradientRun::compileAndRun() {
  std::vector<Tensor> wrtGrads;
  bool hit = false;
  // Compiled with the trace lock released: what the program runs on (the
  // arguments' buffers, the graph's nodes) is held by `args` and `g`.
  std::shared_ptr<jit::PreparedFunction> program = foundProgram;
  hit = program != nullptr;
  if (!program)
    program = lock.unlocked([&] {
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
  if (!foundProgram && !templateKey.empty())
    keepTemplate(program);
  bool compiled = !hit;
  for (size_t i = 0; i < numOutputs; ++i)
    args.push_back(
        seedValue(gradOutputs[i], outTypes[i], outSizes[i], onCuda, loc));
  double prepared = secondsSince(start);
  auto runStart = std::chrono::steady_clock::now();
  jit::RunOptions options;
  wrtGrads.assign(g.leafArgs.size() + perturbs.size(), Tensor());
  options.onReturnReady = earlyHooks(wrtGrads);
  jit::RunResult r = runPrepared(*program, args, onCuda, options);
  if (hookError)
    std::rethrow_exception(hookError);
  if (runtime::settings::debugLevel() >= 1)
    fprintf(stderr,
            "[strata] backward at %s: %zu ops, %s in %.3f ms, ran %d kernels "
            "in %.3f ms\n",
            formatLoc(loc).c_str(), g.ops.size(),
            compiled ? "compiled" : "found prepared", prepared * 1e3,
            program->numKernels(), secondsSince(runStart) * 1e3);
  if (runtime::settings::debugLevel() >= 3 && !foundProgram)
    fprintf(stderr, "%s", prog.print().c_str());
  if (!r.ok)
    fail("strata could not run the gradient program: " + r.error, "", loc);
  countProgramRun(program->numKernels(), compiled);
  // The program computed each output on the way: keep the value of an
  // output not evaluated yet (loss.item() after backward() runs nothing).
  for (size_t i = 0; i < outputs.size() && !seeds; ++i)
    keepOutput(*outputs[i].impl(), r.values[i]);
  // Gradients of the wrt arguments, in order (some made while it ran).
  wrtGrads.resize(r.values.size() - numOutputs);
  for (size_t k = numOutputs; k < r.values.size(); ++k)
    if (!wrtGrads[k - numOutputs].defined())
      wrtGrads[k - numOutputs] =
          wrtGradient(k - numOutputs, std::move(r.values[k]));
  return wrtGrads;
}

Tensor GradientRun::gradientOf(size_t ti, const std::vector<Tensor> &wrtGrads) {
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
  // through it runs, and gives an empty gradient. So does one whose path
  // runs through an empty op whose formula reads a saved operand
  // requiring grad: PyTorch's double backward keeps that operand, strata
  // folds the empty op's gradient away.)
  auto savedThroughEmpty = [&] {
    for (const NodePtr &n : g.ops)
      if (n->resultLayout().numel() == 0)
        for (const Node::Saved &sv : n->saved)
          if (sv.input >= 0 &&
              static_cast<size_t>(sv.input) < n->gradIn().size() &&
              !n->gradIn()[sv.input].noGrad &&
              (n->gradIn()[sv.input].node->requiresGrad ||
               leafOfEdge(n->gradIn()[sv.input])))
            return true;
    return false;
  };
  if (createGraph && sum.defined() && !sum.requires_grad() &&
      isFloatingPoint(sum.dtype()) && (sum.numel() == 0 || savedThroughEmpty()))
    sum = where(scalarTensor(Scalar(false), DType::Bool, loc),
                Tensor(t.impl).sum(loc).to(sum.dtype(), loc), sum, loc);
  return sum;
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
                        const std::vector<Operand> *seeds, bool hooks) {
  return GradientRun(lock, outputs, std::move(gradOutputs), targets, all,
                     retain, createGraph, loc, seeds, hooks)
      .run();
}

} // namespace strata::detail::engine
