//===- AutogradEngine.cpp - backward as one differentiated program --------===//
//
// Algorithm. (1) Walk the graph from the outputs: a version computed from a
// tensor requiring grad is re-emitted from its kept inputs; a leaf's data
// and other materialized versions become storage arguments; pending
// constants are emitted too. Saved tensors are checked against their
// version counters here (BackwardGraph.cpp). (2) Build one func.func marked
// `strata.wrt` over the leaf arguments (and, for a non-leaf target, a zero
// tensor added to its value: its gradient is the target's), built as an
// ir::Program. (3) Prepare it through the JIT (cached by the program's key:
// same structure, same program), run it with the incoming gradients, (4) view
// each storage gradient through the target's layout, (5) accumulate it into
// .grad and run the leaf's post-accumulate-grad hooks: for a hooked leaf as
// soon as the program has made its gradient, between its kernels
// (AutogradHooks.cpp; docs/design.md "Hooks after accumulation"). A long
// graph of small tensors runs as segments of such programs
// (backwardInSegments, SegmentedBackward.cpp; docs/design.md "Long
// backwards run in segments"). The steps live in the files GradientRun.h
// lists.
//
//===----------------------------------------------------------------------===//
#include "AutogradEngine.h"
#include "CreateGraph.h"
#include "Impl.h"
#include "ProgramCache.h"
#include "strata/Autograd.h"

#include "strata/JIT/Jit.h"
#include "strata/Runtime/CudaDriver.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

using namespace strata;
using namespace strata::detail;
using namespace strata::detail::engine;

namespace strata::detail::engine {

std::atomic<int64_t> gCompiles{0}, gSegments{0}, gTemplates{0};

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

std::string torchType(DType t, const Node *on) {
  // (PyTorch names a CUDA tensor's type torch.cuda.FloatTensor.)
  std::string type = runtime::dtypeInfo(t).torchTensor;
  if (on && on->device == kDevCUDA && type.rfind("torch.", 0) == 0)
    type.insert(6, "cuda.");
  return type;
}

const char *kSecondTime =
    "Trying to backward through the graph a second time (or directly access "
    "saved tensors after they have already been freed). Saved intermediate "
    "values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors "
    "after calling backward.";

/// Whether `n`'s buffer still holds its value (no in-place write of its
/// root overwrote the home buffer since).
bool freshBuffer(const Node &n) {
  if (!n.buffer)
    return false;
  auto root = n.root.lock();
  return !root || n.buffer != root->home || root->homeSeq == n.seq;
}

thread_local const Boundaries *tBoundaries = nullptr;

/// Whether `in` records a read of a leaf (AccumulateGrad), live or not.
bool leafRead(const Operand &in) {
  const std::weak_ptr<TensorImpl> none;
  return in.leaf.owner_before(none) || none.owner_before(in.leaf);
}

/// The leaf an edge feeds (null: a history or a constant).
std::shared_ptr<TensorImpl> leafOfEdge(const Operand &in) {
  if (in.noGrad)
    return nullptr;
  // (A boundary is kept: keepData first, the map only then.)
  if (tBoundaries && in.node->keepData && !in.history && !leafRead(in))
    if (auto it = tBoundaries->find(in.node.get()); it != tBoundaries->end())
      return it->second;
  auto leaf = in.leaf.lock();
  return leaf && leaf->requiresGrad ? leaf : nullptr;
}

/// The version whose history edge `in` passes its gradient to.
const NodePtr &historyOf(const Operand &in) {
  return in.history ? in.history : in.node;
}

/// An edge recorded to a leaf (AccumulateGrad) that since stopped requiring
/// grad, or is gone: PyTorch's AccumulateGrad then accumulates nothing. It
/// never becomes an edge to the history of the version the leaf read (a
/// `d = s.detach().requires_grad_()` shares `s`'s version).
bool deadLeafEdge(const Operand &in) {
  return !in.noGrad && leafRead(in) && !leafOfEdge(in);
}

/// Whether no gradient flows through edge `in` (detach(), no-grad mode, a
/// constant, a dead leaf edge, or a version no tensor requiring grad
/// computed).
bool constantEdge(const Operand &in) {
  return in.noGrad || deadLeafEdge(in) ||
         (!leafOfEdge(in) && !historyOf(in)->requiresGrad);
}

bool constantEdgeToNoLeaf(const Operand &in) {
  // (deadLeafEdge without its leafOfEdge, which gave none.)
  return in.noGrad || leafRead(in) || !historyOf(in)->requiresGrad;
}

/// The version a retained non-view tensor retains the gradient of (null:
/// its current one).
NodePtr retainedNode(const TensorImpl &t) {
  if (t.gradBase || !t.autograd)
    return nullptr;
  NodePtr n = t.autograd->retainedAt.lock();
  return n && n->requiresGrad ? n : nullptr;
}

/// The edge through which target `t`'s gradient is read: its operand; for
/// a retained view, through the grad_fn it was last given (PyTorch's hook
/// sits on the view's grad_fn and moves when an access regenerates it after
/// a write to its storage; one not accessed since keeps the hook, so reads
/// made before such a write still retain).
Operand targetEdge(const TensorImpl &t) {
  std::shared_ptr<const ViewChain> last;
  if (t.gradBase && t.autograd && t.autograd->retainGrad)
    last = t.regenChain ? t.regenChain : t.viewChain;
  // (Reading the operand would regenerate the grad_fn: not an access.)
  auto keptChain = t.regenChain;
  int64_t keptVersion = t.regenVersion;
  Operand e = operandOf(t);
  e.noGrad = false;
  if (last) {
    e.view = std::move(last);
    t.regenChain = std::move(keptChain);
    t.regenVersion = keptVersion;
  }
  return e;
}

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

/// Makes `v`, the gradient of a storage window at element `start` (a
/// leaf passed as the window its reads reach), the gradient of the whole
/// storage of `numel` elements: zero outside the window.
void widenGradient(jit::JitValue &v, int64_t start, int64_t numel,
                   const SourceLoc &loc) {
  const int64_t es = jit::elementSize(v.dtype);
  const int64_t size = static_cast<int64_t>(v.buffer->nbytes()) / es;
  const bool wasCuda = v.buffer->device() == runtime::DeviceKind::CUDA;
  bool onCuda = wasCuda;
  if (v.offset != 0 || v.sizes != std::vector<int64_t>{size} ||
      v.strides != std::vector<int64_t>{1}) {
    // Not the window's storage as it is (no such result seen so far): its
    // elements, in a host buffer of their own.
    if (wasCuda)
      v.buffer = hostBuffer(v.buffer, loc);
    v = jit::JitValue::storage(v.dtype, v.elements());
    onCuda = false;
  }
  std::string error;
  runtime::StoragePtr whole = runtime::Storage::tryCreate(
      static_cast<size_t>(numel * es), error, v.buffer->device());
  if (!whole)
    fail(error, "free tensors you no longer need or call empty_cache()", loc);
  error = runtime::Storage::fill(*whole, 0, 0, whole->nbytes());
  if (error.empty())
    error = runtime::Storage::copy(*whole, start * es, *v.buffer, 0,
                                   v.buffer->nbytes());
  if (!error.empty())
    fail(error, "", loc);
  v.buffer = wasCuda && !onCuda
                 ? copyBuffer(whole, runtime::DeviceKind::CUDA, loc)
                 : std::move(whole);
  v.sizes = {numel};
  v.strides = {1};
  v.offset = 0;
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
  n->releaseInputs();
}

Tensor stridedView(const Tensor &t, const layout::Layout &l, int64_t base,
                   const SourceLoc &loc) {
  // as_strided takes no negative stride: those dims are taken with the
  // stride's magnitude from their lowest address, then flipped.
  Shape strides = l.strides, flips;
  int64_t offset = base + l.offset;
  for (size_t k = 0; k < strides.size(); ++k)
    if (strides[k] < 0) {
      offset += (l.sizes[k] - 1) * strides[k];
      strides[k] = -strides[k];
      flips.push_back(static_cast<int64_t>(k));
    }
  if (l.numel() == 0)
    offset = base + l.offset;
  Tensor v = t.as_strided(l.sizes, strides, offset, loc);
  return flips.empty() || l.numel() == 0 ? v : v.flip(flips, loc);
}

/// Storage- or node-shaped gradient `g` seen through `l` (a fresh tensor).
Tensor project(const Tensor &g, const layout::Layout &l, const SourceLoc &loc) {
  Tensor flat = g.reshape({-1}, loc);
  if (l.offset == 0 && l.numel() == flat.numel() &&
      l == layout::contiguous(l.sizes))
    return flat.view(l.sizes, loc);
  return stridedView(flat, l, 0, loc).clone(loc);
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

} // namespace strata::detail::engine

int64_t strata::backward_compiles() { return gCompiles; }
int64_t strata::backward_segments() { return gSegments; }
int64_t strata::backward_templates() { return gTemplates; }

int64_t strata::detail::trimGradientPrograms() {
  cache().trim();
  return cache().size();
}

void Tensor::retain_grad(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  TraceLock lock;
  if (!requiresGradOf(t))
    fail("can't retain_grad on Tensor that has requires_grad=False",
         "call retain_grad() on a tensor computed from one requiring grad",
         loc);
  if (isLeafOf(t))
    return;
  auto &impl = const_cast<TensorImpl &>(t);
  if (!impl.autograd)
    impl.autograd = std::make_shared<AutogradMeta>();
  if (impl.autograd->retainGrad)
    return; // once: a second call must not accumulate twice
  impl.autograd->retainGrad = true;
  if (!t.gradBase) {
    // (An untracked write keeps the old grad_fn, which PyTorch hooks.)
    Operand e = operandOf(t);
    NodePtr h = historyOf(e);
    while (h->passHistory && h->gradIn().size() == 2)
      h = h->gradIn()[1].node;
    impl.autograd->retainedAt = h;
  } else {
    (void)viewChainOf(t); // PyTorch hooks the grad_fn it has now
  }
  std::lock_guard<std::mutex> retained(gRetainedMutex);
  gRetained.push_back(impl_);
}

void strata::detail::engine::accumulateGrad(const Target &target,
                                            const Tensor &grad,
                                            bool createGraph,
                                            const SourceLoc &loc) {
  // With create_graph, PyTorch's AccumulateGrad records the sum (out of
  // place: the .grad a graph was made of is not overwritten).
  std::optional<NoGradGuard> guard;
  std::optional<AutoGradMode> mode;
  if (createGraph)
    mode.emplace(true);
  else
    guard.emplace();
  auto &impl = *target.impl;
  if (!impl.autograd)
    impl.autograd = std::make_shared<AutogradMeta>();
  Tensor &slot = impl.autograd->grad;
  if (slot.defined() && createGraph)
    slot = slot + grad;
  else if (slot.defined())
    slot.add_(grad, loc);
  else if (isLeafOf(impl))
    slot = obeyLayoutContract(grad, impl.layout, loc);
  else
    slot = grad;
  // .grad is no view (PyTorch's `_base` is None): one made here, under
  // no-grad mode, must not refuse a later in-place op in grad mode.
  if (slot.impl()->gradBase && !createGraph)
    slot = slot.detach(loc);
}

namespace {
/// Adds each gradient `grads[i]`, i >= from, into targets[i]'s .grad (a
/// leaf's first one obeys the layout contract), then runs the leaf's
/// post-accumulate-grad hooks (those of leaves whose gradient was made,
/// accumulated and hooked earlier, while backward ran, are undefined here).
void accumulate(const std::vector<Target> &targets,
                const std::vector<Tensor> &grads, size_t from, bool createGraph,
                const SourceLoc &loc) {
  for (size_t i = from; i < targets.size(); ++i)
    if (grads[i].defined())
      accumulateGrad(targets[i], grads[i], createGraph, loc);
  for (size_t i = from; i < targets.size(); ++i)
    if (grads[i].defined())
      runPostAccumulateHooks(targets[i].impl, loc);
}
} // namespace

void Tensor::backward(const Tensor &gradient, std::optional<bool> retain_graph,
                      bool create_graph, SourceLoc loc) const {
  TraceLock lock; // accumulation into a shared leaf's grad loses nothing
  std::vector<Target> targets;
  std::vector<Tensor> grads;
  bool retain = retain_graph.value_or(create_graph);
  // A root that is itself a part of a result requiring grad (`h.narrow(0,
  // k, B).backward(g)`) is differentiated as `root * 1`, whose read of the
  // part backwardInSegments sees (and cuts after, when `k` changes).
  Tensor root = *this;
  if (const TensorImpl *t = impl().get(); t && !create_graph) {
    Operand e = operandOf(*t);
    if (!e.history && e.node->requiresGrad && e.node->op != Op::Leaf &&
        !leafOfEdge(e) && isFloatingPoint(t->dtype) &&
        (e.layout.offset != 0 || e.layout.numel() < e.node->rootNumel)) {
      AutoGradMode mode(true);
      root = *this * 1;
    }
  }
  if (create_graph ||
      !backwardInSegments(lock, root, gradient, retain, targets, grads, loc))
    grads = run(lock, {*this}, {gradient}, targets, true, retain, create_graph,
                loc, nullptr, /*hooks=*/true);
  accumulate(targets, grads, 0, create_graph, loc);
}

std::vector<Tensor> strata::grad(const std::vector<Tensor> &outputs,
                                 const std::vector<Tensor> &inputs,
                                 const std::vector<Tensor> &grad_outputs,
                                 std::optional<bool> retain_graph,
                                 bool create_graph, SourceLoc loc) {
  TraceLock lock;
  if (inputs.empty())
    fail("grad requires non-empty inputs.",
         "pass the tensors to differentiate with respect to", loc);
  std::vector<Target> targets;
  for (const Tensor &t : inputs) {
    const TensorImpl &impl = implOf(t, loc);
    if (!requiresGradOf(impl))
      fail("One of the differentiated Tensors does not require grad",
           "call requires_grad_() on it before computing the outputs", loc);
    targets.push_back({t.impl(), nullptr});
  }
  bool retain = retain_graph.value_or(create_graph);
  // A long graph of one output, with respect to leaves: in segments, as
  // backward() (SegmentedBackward.cpp), which return every leaf's gradient.
  std::vector<Target> reached;
  std::vector<Tensor> grads, sums;
  std::unordered_set<const TensorImpl *> only;
  for (const Tensor &t : inputs)
    only.insert(t.impl().get());
  if (!create_graph && outputs.size() == 1 && grad_outputs.size() <= 1 &&
      std::all_of(inputs.begin(), inputs.end(),
                  [&](const Tensor &t) { return t.is_leaf(loc); }) &&
      backwardInSegments(lock, outputs[0],
                         grad_outputs.empty() ? Tensor() : grad_outputs[0],
                         retain, reached, sums, loc, &only)) {
    std::unordered_map<const TensorImpl *, size_t> at;
    for (size_t k = 0; k < reached.size(); ++k)
      at.emplace(reached[k].impl.get(), k);
    grads.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      if (auto k = at.find(inputs[i].impl().get()); k != at.end())
        grads[i] = sums[k->second];
  } else {
    grads = run(lock, outputs, grad_outputs, targets, false, retain,
                create_graph, loc);
    accumulate(targets, grads, inputs.size(), create_graph,
               loc); // retained tensors
  }
  grads.resize(inputs.size());
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined())
      fail("One of the differentiated Tensors appears to not have been used "
           "in the graph. Set allow_unused=True if this is the desired "
           "behavior.",
           "input " + std::to_string(i) + " is not reached from the outputs",
           loc);
  return grads;
}
