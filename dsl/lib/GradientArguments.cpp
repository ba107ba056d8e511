//===- GradientArguments.cpp - the gradient program's arguments -----------===//
//
// What a gradient program reads, in order: the leaves' data (differentiated;
// each as the window its reads reach), the zero perturbations of non-leaf
// targets (differentiated too), then the constants and the values the
// forward computed (recorded); and where it runs (where the forward did).
// With create_graph, what the replay reads for each (CreateGraph.h).
// GradientRun.h.
//
//===----------------------------------------------------------------------===//
#include "GradientRun.h"

#include <algorithm>
#include <cstring>

using namespace strata;
using namespace strata::detail;

namespace strata::detail::engine {

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

void GradientRun::placeArguments() {
  // Arguments: leaves and perturbations (differentiated), then recorded
  // values and constants. The program, built op by op (ProgramBuilder.h):
  // its key is what was built.
  chooseDevice();
  windowConstants();
  windowLeaves();
  for (size_t k = 0; k < g.leafArgs.size(); ++k)
    addLeafArgument(k);
  for (size_t p = 0; p < perturbs.size(); ++p)
    addPerturbArgument(p);
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

void GradientRun::chooseDevice() {
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
}

void GradientRun::windowConstants() {
  // A constant the program only reads is passed as the window its reads
  // reach (as the evaluator does, Slice::placeArgs), its reads' offsets
  // relative to it: a mini-batch's offset is not in the program's text.
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

void GradientRun::windowLeaves() {
  // A leaf's data is passed as the window its reads reach too, its
  // gradient being the window's, made storage-sized after the run
  // (widenGradient): a mini-batch of a leaf's rows, `w.narrow(0, k, B)`
  // (an embedding's lookup), writes its gradient at a run-time offset and
  // is one program for every k. A leaf perturbed for a non-leaf target (a
  // view of it) is passed whole. Size -1: whole.
  leafWindow.assign(g.leafArgs.size(), {0, -1});
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
  // boundary of a segment that the segment writes over.)
  std::unordered_set<const Node *> written;
  for (const NodePtr &n : g.ops)
    if (const auto &ins = n->requiresGrad ? n->gradIn() : n->inputs;
        tBoundaries && n->op == Op::Write && ins.size() > 1)
      written.insert(ins[1].node.get()); // (the version written over)
  for (size_t k = 0; k < g.leafArgs.size(); ++k)
    if (reach[k].second >= 0 && !perturbLeaf.count(k) && !createGraph &&
        perturbChain.empty() && readMask.empty() &&
        !denseLeaves.count(g.leafArgs[k].leaf.get()) &&
        !(tBoundaries && tBoundaries->count(g.leafArgs[k].node.get()) &&
          written.count(g.leafArgs[k].node.get())))
      leafWindow[k] = readWindow(reach[k].first, reach[k].second,
                                 g.leafArgs[k].node->rootNumel, onCuda);
}

GradientRun::PV GradientRun::storageArg(const Node *n,
                                        const runtime::StoragePtr &buffer,
                                        const std::pair<int64_t, int64_t> *w) {
  bool windowed = w && w->second >= 0;
  PV name = prog.argument(windowType(n, windowed ? w->second : n->rootNumel));
  storageValue(n, buffer, w);
  return name;
}

void GradientRun::storageValue(const Node *n, const runtime::StoragePtr &buffer,
                               const std::pair<int64_t, int64_t> *w) {
  bool windowed = w && w->second >= 0;
  int64_t size = windowed ? w->second : n->rootNumel;
  jit::JitValue v;
  v.dtype = toJitDType(n->dtype);
  v.buffer = onCuda ? buffer : hostBuffer(buffer, loc);
  if (windowed)
    v.buffer = storageWindow(v.buffer, n->dtype, w->first, size);
  v.sizes = {size};
  v.strides = {1};
  v.isStorage = true;
  args.push_back(std::move(v));
  if (auto root = n->root.lock())
    argRoots.push_back({root, root->version});
}

void GradientRun::replayConstant() {
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
}

void GradientRun::addLeafArgument(size_t k) {
  wrt.push_back(static_cast<int64_t>(args.size()));
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
    return;
  }
  leafName.push_back(storageArg(a.node.get(), a.node->buffer, &leafWindow[k]));
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

void GradientRun::addPerturbArgument(size_t p) {
  wrt.push_back(static_cast<int64_t>(args.size()));
  const Perturb &pt = perturbs[p];
  perturbValue.push_back(
      prog.argument(tensorType(layout::contiguous(pt.layout.sizes), pt.dtype)));
  args.push_back(jit::JitValue::fresh(
      toJitDType(pt.dtype),
      std::vector<int64_t>(pt.layout.sizes.begin(), pt.layout.sizes.end()),
      std::vector<double>(pt.layout.numel(), 0.0)));
  if (createGraph)
    replayArgs.push_back(
        {false, zeros(pt.layout.sizes, TensorOptions(pt.dtype), loc), 0});
}

} // namespace strata::detail::engine
