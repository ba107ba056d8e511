//===- Views.cpp - view ops: metadata from the layout algebra only
//---------===//
//
// A view shares its input's storage root and takes the layout the algebra
// computes; nothing is recorded in the trace and nothing runs. Ops that are
// a view or a copy (reshape, flatten, contiguous) record a copy only when
// the algebra says strides cannot express the result.
//
//===----------------------------------------------------------------------===//
#include "AutogradGraph.h"

using namespace strata;
using namespace strata::detail;

namespace {

Tensor makeView(const Tensor &in, layout::Layout l, const char *op, Shape args,
                const SourceLoc &loc) {
  const TensorImpl &src = *in.impl();
  // The source's root (its version) and autograd caches are shared with
  // threads writing or reading it: read them under the trace lock.
  TraceLock lock;
  if (std::string_view(op) != "detach")
    checkViewRead(src, loc); // (PyTorch reads the base's grad_fn here)
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = src.dtype;
  impl->layout = std::move(l);
  impl->root = src.root;
  // A view's requires_grad follows its base (`gradBase`); its own flag is
  // set only by requires_grad_() on it, which makes it a leaf of its own.
  impl->requiresGrad = false;
  bool gradMode = gradEnabled();
  // PyTorch's CreationMeta::NO_GRAD_MODE, inherited by views of the view.
  impl->noGradView = !gradMode || (src.gradBase && src.noGradView);
  // MULTI_OUTPUT_NODE, inherited as well (a view in no-grad mode is
  // NO_GRAD_MODE instead).
  if (gradMode && src.gradBase && src.multiOutput)
    impl->multiOutput = kMultiOutputViewOf;
  impl->isLeaf = true;
  impl->gradBase = src.gradBase ? src.gradBase : in.impl().get();
  impl->viewVersion = src.root->version;
  // PyTorch gives the view a grad_fn only when the op is recorded: grad
  // mode on and the input requiring grad. A view made in no-grad mode, or
  // before its base required grad, has none (a leaf through which no
  // gradient flows) until the root is written in place.
  impl->viewGradFn = gradMode && requiresGradOf(src);
  // Recording the view reads its input's grad_fn (PyTorch's
  // collect_next_edges): a view whose base was written since gets its
  // regenerated grad_fn now, and is no leaf for in-place checks after.
  // (detach() reads no grad_fn: PyTorch's detach records nothing.)
  bool detach = std::string_view(op) == "detach";
  if (impl->viewGradFn && src.gradBase && !detach)
    (void)viewChainOf(src);
  impl->viewOp = op;
  impl->viewArgs = std::move(args);
  impl->base = in.impl();
  impl->origin = src.origin;
  impl->loc = loc;
  // Its grad_fn (view chain) is made now, as PyTorch's: its edge to the
  // base is what the base was then (a base view that gets requires_grad_()
  // later, or a leaf that stops requiring grad, does not change it).
  if (impl->viewGradFn && !detach)
    (void)viewChainOf(*impl);
  return Tensor(std::move(impl));
}

/// `copy` (a fresh copy) seen with `sizes`: PyTorch's _unsafe_view, not a
/// view (no base; in-place writes into it rebase nothing).
Tensor unsafeView(const Tensor &copy, const Shape &sizes,
                  const SourceLoc &loc) {
  // PyTorch's _unsafe_view of the clone: its grad_fn shows as such.
  if (Node &n = *copy.impl()->root->current; n.requiresGrad && n.op == Op::Copy)
    n.rareFields().compositeName = "UnsafeViewBackward0";
  Tensor v = copy.view(sizes, loc);
  TensorImpl &t = *v.impl();
  t.requiresGrad = requiresGradOf(*copy.impl());
  t.isLeaf = copy.impl()->isLeaf;
  t.gradBase = nullptr;
  t.viewGradFn = false;
  return v;
}

const layout::Layout &lay(const Tensor &t, const SourceLoc &loc) {
  return implOf(t, loc).layout;
}

} // namespace

Tensor Tensor::view(const Shape &shape, SourceLoc loc) const {
  return makeView(*this,
                  check(layout::view(lay(*this, loc), shape), loc,
                        "strides cannot express this view (e.g. after t() or "
                        "a slice): call .reshape(...) (copies) or "
                        ".contiguous().view(...)"),
                  "view", shape, loc);
}

Tensor Tensor::reshape(const Shape &shape, SourceLoc loc) const {
  auto mv = check(layout::reshape(lay(*this, loc), shape), loc);
  if (!mv.needsCopy)
    return makeView(*this, mv.layout, "reshape", shape, loc);
  return unsafeView(contiguousCopy(*this, loc), shape, loc);
}

Tensor Tensor::t(SourceLoc loc) const {
  return makeView(*this, check(layout::t(lay(*this, loc)), loc), "t", {}, loc);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1, SourceLoc loc) const {
  return makeView(*this, check(layout::transpose(lay(*this, loc), d0, d1), loc),
                  "transpose", {d0, d1}, loc);
}

Tensor Tensor::permute(const Shape &dims, SourceLoc loc) const {
  return makeView(*this, check(layout::permute(lay(*this, loc), dims), loc),
                  "permute", dims, loc);
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length,
                      SourceLoc loc) const {
  return makeView(
      *this, check(layout::narrow(lay(*this, loc), dim, start, length), loc),
      "narrow", {dim, start, length}, loc);
}

Tensor Tensor::select(int64_t dim, int64_t index, SourceLoc loc) const {
  return makeView(*this,
                  check(layout::select(lay(*this, loc), dim, index), loc),
                  "select", {dim, index}, loc);
}

Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step,
                     SourceLoc loc) const {
  return makeView(
      *this, check(layout::slice(lay(*this, loc), dim, start, end, step), loc),
      "slice", {dim, start.value_or(0), end.value_or(INT64_MAX), step}, loc);
}

Tensor Tensor::operator[](Index index) const {
  return select(0, index.value, index.loc);
}

Tensor Tensor::expand(const Shape &shape, SourceLoc loc) const {
  return makeView(*this, check(layout::expand(lay(*this, loc), shape), loc),
                  "expand", shape, loc);
}

Tensor Tensor::expand_as(const Tensor &other, SourceLoc loc) const {
  return expand(implOf(other, loc).layout.sizes, loc);
}

Tensor Tensor::squeeze(SourceLoc loc) const {
  return makeView(*this, check(layout::squeeze(lay(*this, loc)), loc),
                  "squeeze", {}, loc);
}

Tensor Tensor::squeeze(int64_t dim, SourceLoc loc) const {
  Shape dims{dim};
  return makeView(*this, check(layout::squeeze(lay(*this, loc), dims), loc),
                  "squeeze", dims, loc);
}

Tensor Tensor::unsqueeze(int64_t dim, SourceLoc loc) const {
  return makeView(*this, check(layout::unsqueeze(lay(*this, loc), dim), loc),
                  "unsqueeze", {dim}, loc);
}

Tensor Tensor::flatten(int64_t s, int64_t e, SourceLoc loc) const {
  auto mv = check(layout::flatten(lay(*this, loc), s, e), loc);
  // PyTorch returns the tensor itself when nothing is merged.
  const layout::Layout &l = impl_->layout;
  if (l.dim() > 0 && mv.layout.sizes == l.sizes &&
      mv.layout.strides == l.strides)
    return *this;
  if (!mv.needsCopy)
    return makeView(*this, mv.layout, "flatten", {s, e}, loc);
  return unsafeView(contiguousCopy(*this, loc), mv.layout.sizes, loc);
}

Tensor Tensor::as_strided(const Shape &sizes, const Shape &strides,
                          std::optional<int64_t> offset, SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  int64_t off = offset.value_or(t.layout.offset);
  return makeView(*this,
                  check(layout::asStrided(sizes, strides, off, t.root->numel),
                        loc,
                        "as_strided may only address elements of the "
                        "tensor's storage (storage().size() elements)"),
                  "as_strided", {off}, loc);
}

Tensor Tensor::diagonal(int64_t offset, int64_t d1, int64_t d2,
                        SourceLoc loc) const {
  return makeView(*this,
                  check(layout::diagonal(lay(*this, loc), offset, d1, d2), loc),
                  "diagonal", {offset, d1, d2}, loc);
}

Tensor Tensor::unfold(int64_t dim, int64_t size, int64_t step,
                      SourceLoc loc) const {
  return makeView(*this,
                  check(layout::unfold(lay(*this, loc), dim, size, step), loc),
                  "unfold", {dim, size, step}, loc);
}

Tensor Tensor::flip(const Shape &dims, SourceLoc loc) const {
  return makeView(*this, check(layout::flip(lay(*this, loc), dims), loc),
                  "flip", dims, loc);
}

Tensor Tensor::contiguous(SourceLoc loc) const {
  if (layout::isContiguous(lay(*this, loc)))
    return *this; // PyTorch returns self: same storage, no copy
  return contiguousCopy(*this, loc);
}

Tensor Tensor::detach(SourceLoc loc) const {
  Tensor d = makeView(*this, lay(*this, loc), "detach", {}, loc);
  d.impl()->requiresGrad = false;
  d.impl()->isLeaf = true;
  d.impl()->detached = true;
  d.impl()->gradBase = nullptr;
  d.impl()->viewGradFn = false; // no view's grad_fn: a history of its own
  return d;
}

Tensor Tensor::to(Device d, SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  checkDevice(d, loc);
  if (device() == deviceOf(d.is_cuda() ? kDevCUDA : kDevCPU))
    return *this; // PyTorch returns self on the same device
  // A contiguous copy of the logical tensor (views copy only what they
  // see), made on the source device, then one host<->device transfer of
  // its buffer. The result is a new leaf: autograd does not flow through
  // device moves yet.
  Tensor src = layout::isContiguous(t.layout) && t.layout.offset == 0 &&
                       t.layout.numel() == t.root->numel
                   ? *this
                   : contiguousCopy(detach(loc), loc);
  src.eval(loc);
  const TensorImpl &s = *src.impl();
  runtime::StoragePtr buffer = copyBuffer(
      s.root->home,
      d.is_cuda() ? runtime::DeviceKind::CUDA : runtime::DeviceKind::CPU, loc);
  return makeLeaf(std::move(buffer), t.dtype, t.layout.sizes,
                  TensorOptions(t.dtype).device(d), "to", loc);
}

std::optional<layout::Layout>
strata::detail::replayView(const ViewChain &c, const layout::Layout &in) {
  using R = layout::Result<layout::Layout>;
  auto value = [](R &&r) -> std::optional<layout::Layout> {
    if (!r.ok())
      return std::nullopt;
    return std::move(r.value());
  };
  auto view = [](layout::Result<layout::MaybeView> &&r)
      -> std::optional<layout::Layout> {
    if (!r.ok() || r.value().needsCopy)
      return std::nullopt;
    return std::move(r.value().layout);
  };
  std::string_view op = c.op;
  const Shape &a = c.args;
  auto arg = [&](size_t i) { return i < a.size() ? a[i] : 0; };
  if (op == "view")
    return value(layout::view(in, a));
  if (op == "reshape")
    return view(layout::reshape(in, a));
  if (op == "flatten" && a.size() == 2)
    return view(layout::flatten(in, a[0], a[1]));
  if (op == "t")
    return value(layout::t(in));
  if (op == "transpose" && a.size() == 2)
    return value(layout::transpose(in, a[0], a[1]));
  if (op == "permute")
    return value(layout::permute(in, a));
  if (op == "narrow" && a.size() == 3)
    return value(layout::narrow(in, a[0], a[1], a[2]));
  if (op == "select" && a.size() == 2)
    return value(layout::select(in, a[0], a[1]));
  if (op == "slice" && a.size() == 4)
    return value(layout::slice(
        in, a[0], a[1], a[2] == INT64_MAX ? std::nullopt : std::optional(a[2]),
        a[3]));
  if (op == "expand")
    return value(layout::expand(in, a));
  if (op == "squeeze")
    return value(layout::squeeze(in, a));
  if (op == "unsqueeze" && a.size() == 1)
    return value(layout::unsqueeze(in, arg(0)));
  if (op == "diagonal" && a.size() == 3)
    return value(layout::diagonal(in, a[0], a[1], a[2]));
  if (op == "unfold" && a.size() == 3)
    return value(layout::unfold(in, a[0], a[1], a[2]));
  if (op == "flip")
    return value(layout::flip(in, a));
  return std::nullopt; // as_strided (and a regenerated view's chain)
}
