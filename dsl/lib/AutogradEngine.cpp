//===- AutogradEngine.cpp - backward as one differentiated program --------===//
//
// Algorithm. (1) Walk the graph from the outputs: a version computed from a
// tensor requiring grad is re-emitted from its kept inputs; a leaf's data
// and other materialized versions become storage arguments; pending
// constants are emitted too. Saved tensors are checked against their
// version counters here. (2) Print one func.func marked `strata.wrt` over
// the leaf arguments (and, for a non-leaf target, a zero tensor added to its
// value: its gradient is the target's). (3) Prepare it through the JIT (cached
// by text: same structure, same program), run it with the incoming gradients,
// (4) view each storage gradient through the target's layout.
//
//===----------------------------------------------------------------------===//
#include "Impl.h"
#include "ProgramCache.h"
#include "strata/Autograd.h"

#include "strata/JIT/Jit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

using namespace strata;
using namespace strata::detail;

namespace {

std::atomic<int64_t> gCompiles{0};

/// STRATA_DEBUG (docs/environment.md): >= 1 prints one line per backward.
int debugLevel() {
  static int level = [] {
    const char *v = getenv("STRATA_DEBUG");
    return v ? atoi(v) : 0;
  }();
  return level;
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}
/// Non-leaves with retain_grad(), from every thread (guarded by
/// gRetainedMutex).
std::vector<std::weak_ptr<TensorImpl>> gRetained;
std::mutex gRetainedMutex;
/// Gradient programs by source (bounded, least recently used out;
/// ProgramCache.h): each is prepared once while it stays cached; running
/// one needs no lock (a PreparedFunction runs from several threads).
strata::detail::ProgramCache<jit::PreparedFunction> &cache() {
  static auto *c = new strata::detail::ProgramCache<jit::PreparedFunction>;
  return *c;
}

std::string torchType(DType t) {
  return t == DType::F64 ? "torch.DoubleTensor" : "torch.FloatTensor";
}

const char *kSecondTime =
    "Trying to backward through the graph a second time (or directly access "
    "saved tensors after they have already been freed). Saved intermediate "
    "values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors "
    "after calling backward.";

/// The recorded program from the outputs back to the leaves.
struct Graph {
  std::vector<NodePtr> leafArgs, constArgs, ops;
  std::set<const Node *> seen;
  const SourceLoc &loc;
  explicit Graph(const SourceLoc &l) : loc(l) {}

  [[noreturn]] void versionError(const StorageRoot &root, int64_t expected,
                                 const Shape &sizes, const Node *op) {
    std::string msg =
        "one of the variables needed for gradient computation has been "
        "modified by an inplace operation: [" +
        torchType(root.dtype) + " " + layout::formatList(sizes) + "]";
    std::string fn = gradFnName(root.current);
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

  void checkFresh(const Node &n) {
    auto root = n.root.lock();
    if (root && root->homeSeq && root->homeSeq != n.seq)
      versionError(*root, root->version - 1, {n.rootNumel}, nullptr);
  }

  /// Checks `n` when first reached; true when its inputs are walked too
  /// (false: a leaf's data or a materialized constant, an argument).
  bool enter(const NodePtr &n) {
    if (!n->requiresGrad) {
      auto leaf = n->gradLeaf.lock();
      if (leaf && leaf->requiresGrad) {
        if (!n->buffer) {
          if (leaf->root->current != n)
            fail("strata: a leaf's data was never computed before it was "
                 "modified",
                 "evaluate the leaf (strata::eval) before writing into it",
                 loc);
          evaluate({leaf.get()}, loc);
        }
        checkFresh(*n);
        leafArgs.push_back(n);
        return false;
      }
      if (n->buffer) {
        checkFresh(*n);
        constArgs.push_back(n);
        return false;
      }
      return true;
    }
    if (n->gradFreed && !n->saved.empty())
      fail(kSecondTime, "pass retain_graph=true to the first backward()", loc);
    for (const Node::Saved &s : n->saved)
      if (auto r = s.root.lock(); r && r->version != s.version)
        versionError(*r, s.version, s.sizes, n.get());
    return true;
  }

  /// Adds the graph reaching `start`: iterative (a 10^5-deep chain must not
  /// overflow the stack); each op is appended after its inputs.
  void visit(const NodePtr &start) {
    std::vector<std::pair<NodePtr, size_t>> stack; // (op, next input)
    auto reach = [&](const NodePtr &n) {
      if (seen.insert(n.get()).second && enter(n))
        stack.push_back({n, 0});
    };
    reach(start);
    while (!stack.empty()) {
      auto &[n, next] = stack.back();
      const auto &inputs = n->requiresGrad ? n->gradInputs : n->inputs;
      if (next < inputs.size()) {
        NodePtr in = inputs[next++].node;
        reach(in);
        continue;
      }
      ops.push_back(std::move(n));
      stack.pop_back();
    }
  }
};

/// A target of differentiation: a leaf, or a non-leaf's version.
struct Target {
  std::shared_ptr<TensorImpl> impl;
  /// For a non-leaf: the version perturbed by a zero argument.
  NodePtr node;
};

/// A gradient program's result as a leaf, on the device its buffer is on.
Tensor fromJit(jit::JitValue &v, DType dtype, const SourceLoc &loc) {
  Shape sizes(v.sizes.begin(), v.sizes.end());
  int64_t n = layout::contiguous(sizes).numel();
  if (v.offset == 0 && v.strides == layout::contiguous(sizes).strides &&
      static_cast<int64_t>(v.buffer->nbytes()) == n * elementSize(dtype))
    return makeLeaf(v.buffer, dtype, sizes, TensorOptions(dtype), "grad", loc);
  bool onCuda = v.buffer->device() == runtime::DeviceKind::CUDA;
  v.buffer = hostBuffer(v.buffer, loc); // elements() reads host memory
  Tensor t =
      from_vector<double>(v.elements(), sizes, TensorOptions(DType::F64), loc)
          .to(dtype, loc);
  return onCuda ? t.to(Device::cuda(), loc) : t;
}

/// Makes `v`, the value of output `o` computed by a gradient program, the
/// contents of o's pending version when o reads all of it in order.
void keepOutput(const TensorImpl &o, jit::JitValue &v) {
  NodePtr n = o.root->current;
  int64_t numel = o.layout.numel();
  if (n->buffer || n->isStorageValue() || o.root->home ||
      n->device != kDevCPU || o.layout.offset != 0 || numel != o.root->numel ||
      !layout::isContiguous(o.layout) || v.offset != 0 || !v.buffer ||
      static_cast<int64_t>(v.buffer->nbytes()) != numel * elementSize(o.dtype))
    return;
  o.root->home = v.buffer;
  o.root->homeSeq = n->seq;
  n->buffer = v.buffer;
  n->inputs.clear();
}

/// Storage- or node-shaped gradient `g` seen through `l` (a fresh tensor).
Tensor project(const Tensor &g, const layout::Layout &l, const SourceLoc &loc) {
  Tensor flat = g.reshape({-1}, loc);
  if (l.offset == 0 && l.numel() == flat.numel() &&
      l == layout::contiguous(l.sizes))
    return flat.view(l.sizes, loc);
  return flat.as_strided(l.sizes, l.strides, l.offset, loc).clone(loc);
}

/// PyTorch's AccumulateGrad for a leaf's first gradient `g`: kept when it
/// obeys the gradient layout contract, else copied into the leaf's strides
/// (a non-overlapping and dense leaf) or a contiguous tensor
/// (layout::gradientLayout).
Tensor obeyLayoutContract(const Tensor &g, const layout::Layout &leaf,
                          const SourceLoc &loc) {
  const layout::Layout &have = g.impl()->layout;
  layout::Layout want = layout::gradientLayout(leaf, have);
  if (have.strides == want.strides)
    return g;
  if (want == layout::contiguous(want.sizes))
    return g.contiguous(loc);
  Tensor out = empty({layout::requiredStorageSize(want)},
                     TensorOptions(g.dtype(loc)).device(g.device(loc)), loc)
                   .as_strided(want.sizes, want.strides, 0, loc);
  out.copy_(g, loc);
  return out;
}

} // namespace

int64_t strata::backward_compiles() { return gCompiles; }

int64_t strata::detail::trimGradientPrograms() {
  cache().trim();
  return cache().size();
}

void Tensor::retain_grad(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  if (t.isLeaf)
    return;
  auto &impl = const_cast<TensorImpl &>(t);
  TraceLock lock;
  if (!impl.autograd)
    impl.autograd = std::make_shared<AutogradMeta>();
  impl.autograd->retainGrad = true;
  std::lock_guard<std::mutex> retained(gRetainedMutex);
  gRetained.push_back(impl_);
}

namespace {

/// Runs backward; returns one gradient per target (all leaves reached and
/// retained tensors when `targets` is empty, then also filled in).
std::vector<Tensor> run(TraceLock &lock, const std::vector<Tensor> &outputs,
                        std::vector<Tensor> gradOutputs,
                        std::vector<Target> &targets, bool all, bool retain,
                        const SourceLoc &loc) {
  auto start = std::chrono::steady_clock::now();
  if (gradOutputs.empty())
    gradOutputs.resize(outputs.size());
  if (gradOutputs.size() != outputs.size())
    fail("grad_outputs must have the same length as outputs", "", loc);
  Graph g(loc);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorImpl &o = implOf(outputs[i], loc);
    if (!o.requiresGrad)
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
    g.visit(o.root->current);
  }
  auto bySeq = [](const NodePtr &a, const NodePtr &b) {
    return a->seq < b->seq;
  };
  std::sort(g.leafArgs.begin(), g.leafArgs.end(), bySeq);
  std::sort(g.constArgs.begin(), g.constArgs.end(), bySeq);
  std::sort(g.ops.begin(), g.ops.end(), bySeq);
  std::set<const Node *> emitted;
  for (const NodePtr &n : g.ops)
    emitted.insert(n.get());
  if (all) {
    // Leaves a gradient can reach: through ops that require grad only (a
    // leaf read only through `x > 0` or `x.to(kInt64)` gets none, as in
    // PyTorch, though its data still feeds the recomputed forward).
    std::set<const Node *> reached;
    for (const Tensor &o : outputs)
      reached.insert(o.impl()->root->current.get());
    for (auto it = g.ops.rbegin(); it != g.ops.rend(); ++it)
      if ((*it)->requiresGrad && reached.count(it->get()))
        for (const Operand &in : (*it)->gradInputs)
          reached.insert(in.node.get());
    std::set<const TensorImpl *> have;
    for (const NodePtr &n : g.leafArgs)
      if (auto l = n->gradLeaf.lock();
          l && reached.count(n.get()) && have.insert(l.get()).second)
        targets.push_back({l, nullptr});
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
    for (const auto &t : retained)
      if (emitted.count(t->root->current.get()) &&
          emitted.count(t->root->current.get()) &&
          !t->root->current->isStorageValue())
        targets.push_back({t, t->root->current});
  }
  // Perturbed versions (non-leaf targets).
  std::map<const Node *, int> perturb;
  for (Target &t : targets) {
    if (t.impl->isLeaf)
      continue;
    t.node = t.impl->root->current;
    if (!emitted.count(t.node.get()) || t.node->isStorageValue())
      fail("strata: the gradient of this non-leaf tensor is not supported "
           "(it was written in place, or the outputs do not depend on it)",
           "differentiate with respect to a tensor computed out of place", loc);
    perturb.emplace(t.node.get(), static_cast<int>(perturb.size()));
  }
  // Names and argument order: leaves, perturbations, constants.
  std::map<const Node *, std::string> names;
  std::string sig, body;
  std::vector<jit::JitValue> args;
  // The gradient program runs where the forward one did: on the GPU when
  // some leaf, constant or op is there (devices never mix: the forward
  // refused that), with the leaves' device buffers used in place.
  bool onCuda = false;
  for (const auto *list : {&g.leafArgs, &g.constArgs})
    for (const NodePtr &n : *list)
      onCuda |= n->buffer && n->buffer->device() == runtime::DeviceKind::CUDA;
  for (const NodePtr &n : g.ops)
    onCuda |= n->device == kDevCUDA;
  auto storageArg = [&](const NodePtr &n) {
    std::string name = "%a" + std::to_string(args.size());
    names[n.get()] = name;
    sig += (sig.empty() ? "" : ", ") + name + ": !strata.storage<" +
           std::to_string(n->rootNumel) + "x" + irType(n->dtype) + ">";
    jit::JitValue v;
    v.dtype = toJitDType(n->dtype);
    v.buffer = onCuda ? n->buffer : hostBuffer(n->buffer, loc);
    v.sizes = {n->rootNumel};
    v.strides = {1};
    v.isStorage = true;
    args.push_back(std::move(v));
  };
  std::string wrt;
  for (const NodePtr &n : g.leafArgs) {
    wrt += (wrt.empty() ? "" : ", ") + std::to_string(args.size());
    storageArg(n);
  }
  std::vector<const Node *> perturbed(perturb.size());
  for (auto &[n, i] : perturb)
    perturbed[i] = n;
  for (const Node *n : perturbed) {
    wrt += (wrt.empty() ? "" : ", ") + std::to_string(args.size());
    std::string type = tensorTypeText(n->resultLayout(), n->dtype);
    sig += (sig.empty() ? "" : ", ") + std::string("%p") +
           std::to_string(perturb[n]) + ": " + type;
    args.push_back(jit::JitValue::fresh(
        toJitDType(n->dtype),
        std::vector<int64_t>(n->sizes.begin(), n->sizes.end()),
        std::vector<double>(layout::contiguous(n->sizes).numel(), 0.0)));
  }
  for (const NodePtr &n : g.constArgs)
    storageArg(n);
  auto isArg = [&](const Node *n) {
    return names.count(n) && names[n][1] == 'a';
  };
  auto typeOf = [&](const Node *n) {
    return isArg(n) || n->isStorageValue()
               ? "!strata.storage<" + std::to_string(n->rootNumel) + "x" +
                     irType(n->dtype) + ">"
               : tensorTypeText(n->resultLayout(), n->dtype);
  };
  int tmp = 0;
  auto read = [&](const Operand &in) {
    const Node *src = in.node.get();
    bool storage = isArg(src) || src->isStorageValue();
    if (!storage && in.layout == src->resultLayout())
      return std::make_pair(names[src], typeOf(src));
    std::string t = "%t" + std::to_string(tmp++);
    std::string type = tensorTypeText(in.layout, src->dtype);
    body += "    " + t + " = strata.strided_view " + names[src] + " : " +
            typeOf(src) + " -> " + type + "\n";
    return std::make_pair(t, type);
  };
  int vi = 0;
  for (const NodePtr &np : g.ops) {
    const Node *n = np.get();
    std::string name = "%v" + std::to_string(vi++);
    auto pit = perturb.find(n);
    std::string def = pit == perturb.end() ? name : name + "r";
    const auto &inputs = n->requiresGrad ? n->gradInputs : n->inputs;
    OperandTexts ins;
    for (const Operand &in : inputs)
      ins.push_back(read(in));
    std::string result = typeOf(n);
    body += "    " + def + " = " + opText(*n, ins, result) + "\n";
    if (pit != perturb.end())
      body += "    " + name + " = strata.add " + def + ", %p" +
              std::to_string(pit->second) + " : " + result + ", " + result +
              " -> " + result + "\n";
    names[n] = name;
  }
  // Results: each output as a contiguous tensor.
  std::string rets, retTypes;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorImpl &o = *outputs[i].impl();
    auto [v, type] = read(operandOf(o));
    std::string want =
        tensorTypeText(layout::contiguous(o.layout.sizes), o.dtype);
    if (type != want) {
      // A row-major copy: strata.copy keeps a dense input's layout (and the
      // strides of its size-1 dims, which a view then makes row-major).
      std::string c = "%o" + std::to_string(i);
      const layout::Layout &in = operandOf(o).layout;
      std::string kept = tensorTypeText(layout::preserveFormat(in), o.dtype);
      if (!layout::isContiguous(in))
        body += "    " + c + " = strata.contiguous " + v + " : " + type +
                " -> " + want + "\n";
      else if (kept == want)
        body += "    " + c + " = strata.copy " + v + " : " + type + " -> " +
                want + "\n";
      else
        body += "    " + c + "k = strata.copy " + v + " : " + type + " -> " +
                kept + "\n    " + c + " = strata.strided_view " + c +
                "k : " + kept + " -> " + want + "\n";
      v = c;
    }
    rets += (i ? ", " : "") + v;
    retTypes += (i ? ", " : "") + want;
  }
  if (wrt.empty())
    fail("element 0 of tensors does not require grad and does not have a "
         "grad_fn",
         "the leaves it was computed from no longer exist", loc);
  std::string source =
      "module {\n  func.func @main(" + sig + ") -> (" + retTypes +
      ") attributes {strata.wrt = array<i64: " + wrt + ">} {\n" + body +
      "    return " + rets + " : " + retTypes + "\n  }\n}\n";
  bool hit = false;
  // Compiled with the trace lock released: what the program runs on (the
  // arguments' buffers, the graph's nodes) is held by `args` and `g`.
  std::shared_ptr<jit::PreparedFunction> program = lock.unlocked([&] {
    return cache().get(
        source,
        [&] {
          std::string error;
          auto fn = jit::PreparedFunction::fromSource(source, "main", error);
          if (!fn)
            fail("strata could not compile the gradient program: " + error,
                 "this is a strata bug; the program was:\n" + source, loc);
          ++gCompiles;
          return fn;
        },
        hit);
  });
  bool compiled = !hit;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorImpl &o = *outputs[i].impl();
    std::vector<double> gv = gradOutputs[i].defined()
                                 ? gradOutputs[i].to_vector<double>(loc)
                                 : std::vector<double>{1.0};
    args.push_back(jit::JitValue::fresh(
        toJitDType(o.dtype),
        std::vector<int64_t>(o.layout.sizes.begin(), o.layout.sizes.end()),
        gv));
  }
  double prepared = secondsSince(start);
  auto runStart = std::chrono::steady_clock::now();
  jit::RunResult r = runPrepared(*program, args, onCuda);
  if (debugLevel() >= 1)
    fprintf(stderr,
            "[strata] backward at %s: %zu ops, %s in %.3f ms, ran %d kernels "
            "in %.3f ms\n",
            formatLoc(loc).c_str(), g.ops.size(),
            compiled ? "compiled" : "found prepared", prepared * 1e3,
            program->numKernels(), secondsSince(runStart) * 1e3);
  if (debugLevel() >= 3)
    fprintf(stderr, "%s", source.c_str());
  if (!r.ok)
    fail("strata could not run the gradient program: " + r.error, "", loc);
  countProgramRun(program->numKernels(), compiled);
  // The program computed each output on the way: keep the value of an
  // output not evaluated yet (loss.item() after backward() runs nothing).
  for (size_t i = 0; i < outputs.size(); ++i)
    keepOutput(*outputs[i].impl(), r.values[i]);
  if (!retain)
    for (const NodePtr &n : g.ops)
      if (n->requiresGrad)
        n->gradFreed = true;
  // Gradients of the wrt arguments, in order.
  std::vector<Tensor> wrtGrads;
  for (size_t k = outputs.size(); k < r.values.size(); ++k)
    wrtGrads.push_back(
        fromJit(r.values[k], static_cast<DType>(r.values[k].dtype), loc));
  std::vector<Tensor> out;
  NoGradGuard guard;
  for (const Target &t : targets) {
    Tensor sum;
    if (t.node) {
      sum = project(wrtGrads[g.leafArgs.size() + perturb[t.node.get()]],
                    t.impl->layout, loc);
    } else {
      for (size_t k = 0; k < g.leafArgs.size(); ++k)
        if (g.leafArgs[k]->gradLeaf.lock() == t.impl) {
          Tensor p = project(wrtGrads[k], t.impl->layout, loc);
          sum = sum.defined() ? sum + p : p;
        }
    }
    // A 0-d CPU leaf of a CUDA program (a CPU scalar) keeps its gradient
    // on the CPU, as PyTorch's does.
    if (onCuda && sum.defined() && t.impl->root->current->device == kDevCPU)
      sum = sum.to(Device::cpu(), loc);
    out.push_back(sum);
  }
  return out;
}

} // namespace

void Tensor::backward(const Tensor &gradient, bool retain_graph,
                      SourceLoc loc) const {
  TraceLock lock; // accumulation into a shared leaf's grad loses nothing
  std::vector<Target> targets;
  std::vector<Tensor> grads =
      run(lock, {*this}, {gradient}, targets, true, retain_graph, loc);
  NoGradGuard guard;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!grads[i].defined())
      continue;
    auto &impl = *targets[i].impl;
    if (!impl.autograd)
      impl.autograd = std::make_shared<AutogradMeta>();
    Tensor &slot = impl.autograd->grad;
    if (slot.defined())
      slot.add_(grads[i], loc);
    else if (impl.isLeaf)
      slot = obeyLayoutContract(grads[i], impl.layout, loc);
    else
      slot = grads[i];
  }
}

std::vector<Tensor> strata::grad(const std::vector<Tensor> &outputs,
                                 const std::vector<Tensor> &inputs,
                                 const std::vector<Tensor> &grad_outputs,
                                 bool retain_graph, SourceLoc loc) {
  TraceLock lock;
  std::vector<Target> targets;
  for (const Tensor &t : inputs) {
    const TensorImpl &impl = implOf(t, loc);
    if (!impl.requiresGrad)
      fail("One of the differentiated Tensors does not require grad",
           "call requires_grad_() on it before computing the outputs", loc);
    targets.push_back({t.impl(), nullptr});
  }
  std::vector<Tensor> grads =
      run(lock, outputs, grad_outputs, targets, false, retain_graph, loc);
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined())
      fail("One of the differentiated Tensors appears to not have been used "
           "in the graph. Set allow_unused=True if this is the desired "
           "behavior.",
           "input " + std::to_string(i) + " is not reached from the outputs",
           loc);
  return grads;
}
