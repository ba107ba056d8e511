//===- GradientReads.cpp - how the gradient program reads a value ---------===//
//
// A read of a recorded edge in the gradient program: the value it reads (a
// leaf's data, a constant, a recomputed op, a detach() of one, another
// identity's write seen as its history), with the perturbations of the
// targets it passes, through its layout (a window's offset taken off), or
// as a dense replay of its views over a target whose elements overlap, or
// masked where an as_strided passes no gradient. GradientRun.h.
//
//===----------------------------------------------------------------------===//
#include "GradientRun.h"

#include <algorithm>
#include <numeric>

using namespace strata;
using namespace strata::detail;

namespace strata::detail::engine {

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
  if (!perturbChain.empty() && in.view && (!in.noGrad || in.cutView))
    if (std::optional<PV> dense = readPerturbed(in, v, afterMask))
      return *dense;
  const Node *n = v.shape;
  if (auto m = readMask.find(&in); m != readMask.end())
    return readMasked(in, v, m->second, afterMask);
  if (const auto *w = windowOf(in)) {
    layout::Layout l = in.layout;
    l.offset = l.numel() ? l.offset - w->first : 0;
    return viewOf(v.name, true, n, l);
  }
  return viewOf(v.name, v.storage, n, in.layout);
}

std::optional<GradientRun::PV>
GradientRun::readPerturbed(const Operand &in, Value &v,
                           std::vector<size_t> &afterMask) {
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
    auto [it, first] = perturbedReads.emplace(std::make_pair(v.name, list), -1);
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
    return emitDense(in, dense, it->second.first, it->second.second, n->dtype);
  }
  return std::nullopt;
}

GradientRun::PV GradientRun::readMasked(const Operand &in, const Value &v,
                                        const std::vector<int64_t> &allowedAt,
                                        const std::vector<size_t> &afterMask) {
  const Node *n = v.shape;
  // (see readMask) The value whole, its gradient masked.
  int64_t size =
      v.storage ? n->rootNumel : layout::requiredStorageSize(n->resultLayout());
  std::vector<double> allowed(size, 0.0);
  for (int64_t i : allowedAt)
    if (i >= 0 && i < size)
      allowed[i] = 1.0;
  Shape flatSizes{size};
  ir::ValueType flatType = tensorType(layout::contiguous(flatSizes), n->dtype);
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

} // namespace strata::detail::engine
