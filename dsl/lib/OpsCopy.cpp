//===- OpsCopy.cpp - copies and writes ------------------------------------===//
//
// clone, the contiguous copies of contiguous() and reshape, to(dtype),
// copy_, fill_ and zero_, and the write every in-place op records
// (recordWrite, inPlace): a new version of the view's storage root.
//
//===----------------------------------------------------------------------===//
#include "CompositeNode.h"
#include "OpBuilders.h"

#include <algorithm>

using namespace strata;
using namespace strata::detail;

void strata::detail::refuseOverlappingWrite(const layout::Layout &l,
                                            const char *op,
                                            const SourceLoc &loc) {
  if (layout::overlaps(l))
    fail(std::string(op) +
             ": unsupported operation: more than one element of the "
             "written-to tensor refers to a single memory location. Please "
             "clone() the tensor before performing the operation.",
         "expanded (stride-0) and overlapping (unfold, as_strided) tensors "
         "cannot be written: clone() first",
         loc);
}

namespace {
/// The write of the value `read` reads (of dest's dtype and a shape that
/// broadcasts to dest's, `valueGrad`: whether it requires grad) into
/// `dest`: a new version of dest's root. recordWrite's and inPlaceNumber's.
void writeValue(const TensorImpl &dest, Operand read, bool valueGrad,
                const SourceLoc &loc, const char *op) {
  int8_t device =
      joinDevices(dest.root->current->device, read.node->device, loc);
  auto node = std::make_shared<Node>();
  node->device = device;
  node->op = Op::Write;
  node->name = "write";
  node->dtype = dest.dtype;
  node->rootNumel = dest.root->numel;
  // A leaf's data still pending (a requires_grad_() over a computed value)
  // is computed before it is overwritten: backward() reads it.
  if (!dest.root->current->buffer && !dest.root->current->gradLeaf().expired())
    evaluate({&dest}, loc);
  // (Not a braced list: its elements would be copied, layouts and all.)
  node->inputs.reserve(2);
  node->inputs.push_back(std::move(read));
  node->inputs.push_back(operandOf(dest));
  node->root = dest.root;
  node->loc = loc;
  // Only the value read is a reader; the dest is this chain's own history.
  if (auto r = node->inputs[0].node->root.lock()) {
    if (r->readers.size() >= r->readersPruneAt)
      pruneReaders(*r);
    r->readers.push_back(node);
  }
  Node &write = *node;
  dest.root->current = std::move(node);
  ++dest.root->version;
  dest.root->writeLocs.push(loc);
  if (VersionRecord *r = dest.root->record.get()) {
    r->version = dest.root->version;
    r->current = dest.root->current;
    r->writeLocs.push(loc);
  }
  recordGradWrite(dest, *write.inputs[0].node, valueGrad, write, op, loc);
  if (dest.root->home)
    dest.root->home->bumpVersion();
  setDepth(write);
  cutDeepChain(dest, loc);
}

/// PyTorch's refusal of a write into a destination with an element at two
/// positions.
void refuseOverlap(const TensorImpl &dest, const char *op,
                   const SourceLoc &loc) {
  // PyTorch refuses stride-0 destinations and computes the rest in its
  // loop order, an element shared by two positions being written twice
  // (an overlapping unfold's add_ adds twice there): strata's writes are
  // functional, so no loop order gives that answer. Every destination
  // with an element at two positions is refused (exactly: as_strided
  // layouts the quick test cannot prove disjoint are checked index by
  // index).
  // (fill_ and zero_ write one value: any order gives it.)
  if (std::string_view(op) != "fill_" && std::string_view(op) != "zero_")
    refuseOverlappingWrite(dest.layout, op, loc);
}
} // namespace

void strata::detail::recordWrite(const TensorImpl &dest, const Tensor &src,
                                 const SourceLoc &loc, const char *op) {
  TraceLock lock;
  if (isFloatingPoint(dest.dtype)) // (checkViewRead: a write with autograd)
    checkViewRead(*src.impl(), loc);
  checkInplace(dest, requiresGradOf(*src.impl()), op, loc);
  refuseOverlap(dest, op, loc);
  const TensorImpl &s = *src.impl();
  // (Equal shapes broadcast to themselves: no shape is built.)
  if (s.layout.sizes != dest.layout.sizes)
    if (Shape shape = check(
            layout::broadcastShapes(s.layout.sizes, dest.layout.sizes, op),
            loc);
        shape != dest.layout.sizes)
      fail(std::string(op) + ": output with shape " +
               layout::formatList(dest.layout.sizes) +
               " doesn't match the broadcast shape " +
               layout::formatList(shape),
           "the value written must broadcast to the destination's shape", loc);
  joinDevices(dest.root->current->device, s.root->current->device, loc);
  Tensor converted = castTo(src, dest.dtype, loc);
  markGradLeaf(converted.impl());
  writeValue(dest, operandOf(*converted.impl()),
             requiresGradOf(*converted.impl()), loc, op);
}

Tensor &strata::detail::inPlaceNumber(Tensor &self, const char *name,
                                      const Scalar &s, const char *op,
                                      const SourceLoc &loc, Kind kind) {
  // `h.mul_(c)` in a loop: the product's node is written at once, without
  // the tensor and storage root that recording it as `h * c` makes only to
  // free them when the op returns (a third of recording an in-place op).
  NodePtr value;
  Tensor result =
      binary(name, Arg{&self, {}}, Arg{nullptr, s}, loc, kind, &value);
  if (!value)
    return inPlace(self, result, op, loc);
  TraceLock lock;
  const TensorImpl &t = *self.impl();
  bool valueGrad = value->requiresGrad;
  checkInplace(t, valueGrad, op, loc);
  refuseOverlap(t, op, loc);
  // (The read operandOf makes of a fresh result: its whole root, with its
  // history as the edge.)
  Operand read;
  read.layout = value->resultLayout();
  read.noGrad = !valueGrad || !gradEnabled();
  read.node = std::move(value);
  writeValue(t, std::move(read), valueGrad, loc, op);
  return self;
}

void strata::detail::checkNoPartialOverlap(const TensorImpl &dest,
                                           const TensorImpl &in, const char *op,
                                           const SourceLoc &loc) {
  if (&dest == &in || dest.root != in.root)
    return;
  const layout::Layout &a = dest.layout, &b = in.layout;
  if (a.numel() == 0 || b.numel() == 0 ||
      !layout::isNonOverlappingAndDense(a) ||
      !layout::isNonOverlappingAndDense(b))
    return;
  int64_t aEnd = a.offset + a.numel(), bEnd = b.offset + b.numel();
  bool full = a.offset == b.offset && aEnd == bEnd && a.strides == b.strides;
  if (!full && a.offset < bEnd && b.offset < aEnd)
    fail(std::string(op) +
             ": unsupported operation: some elements of the input tensor and "
             "the written-to tensor refer to a single memory location. "
             "Please clone() the tensor before performing the operation.",
         "clone() the input: the op would read elements it already wrote", loc);
}

Tensor &strata::detail::inPlace(Tensor &self, const Tensor &result,
                                const char *op, const SourceLoc &loc,
                                const Tensor *other) {
  const TensorImpl &t = *self.impl();
  if (other)
    checkNoPartialOverlap(t, *other->impl(), op, loc);
  DType rt = result.impl()->dtype;
  if (rt != t.dtype && !canCast(rt, t.dtype))
    fail(std::string(op) + ": result type " + toString(rt) +
             " can't be cast to the desired output type " + toString(t.dtype),
         "convert the destination first (x = x.to(...)) or use the "
         "out-of-place op",
         loc);
  recordWrite(t, result, loc, op);
  return self;
}

void strata::detail::checkInplaceFirst(const Tensor &self, const Tensor *other,
                                       const char *op, const SourceLoc &loc) {
  const TensorImpl &t = implOf(self, loc);
  TraceLock lock;
  checkInplace(t, requiresGradOf(other ? implOf(*other, loc) : t), op, loc);
}

namespace {
/// fill_ and zero_ (named apart: their grad_fns are FillBackward0 and
/// ZeroBackward0).
Tensor &fillWith(Tensor &self, Scalar s, const char *op, const SourceLoc &loc) {
  const TensorImpl &t = implOf(self, loc);
  checkScalarFits(s, t.dtype, op, loc);
  if (layout::hasInternalOverlap(t.layout)) {
    // PyTorch fills an expanded view (each element gets the one value):
    // write through the view with its stride-0 dims collapsed to size 1.
    TensorImpl collapsed = t;
    // (Written as t: the copy has t's autograd identity.)
    if (!collapsed.gradBase)
      collapsed.gradBase = const_cast<TensorImpl *>(&t);
    for (size_t d = 0; d < collapsed.layout.sizes.size(); ++d)
      if (collapsed.layout.strides[d] == 0)
        collapsed.layout.sizes[d] = 1;
    recordWrite(collapsed, scalarTensor(s, t.dtype, loc), loc, op);
    t.root->current->overlapWrite = true;
    return self;
  }
  recordWrite(t, scalarTensor(s, t.dtype, loc), loc, op);
  return self;
}
} // namespace

Tensor &Tensor::zero_(SourceLoc loc) {
  return fillWith(*this, 0, "zero_", loc);
}

Tensor &Tensor::fill_(Scalar s, SourceLoc loc) {
  return fillWith(*this, s, "fill_", loc);
}

Tensor &Tensor::copy_(const Tensor &src, SourceLoc loc) {
  const TensorImpl &t = implOf(*this, loc);
  checkNoPartialOverlap(t, implOf(src, loc), "copy_", loc);
  recordWrite(t, src, loc, "copy_");
  return *this;
}

Tensor Tensor::clone(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  Tensor c = record(Op::Copy, "copy", t.dtype, t.layout.sizes, {this}, loc);
  // explain() follows the chain through the copy.
  c.impl()->base = impl_;
  c.impl()->viewOp = "copy into new storage: clone/contiguous/reshape";
  return c;
}

Tensor strata::detail::contiguousCopy(const Tensor &t, const SourceLoc &loc) {
  const TensorImpl &impl = implOf(t, loc);
  // strata.contiguous: the row-major copy of contiguous() and reshape (clone
  // keeps the input's layout).
  const char *op = layout::isContiguous(impl.layout) ? "copy" : "contiguous";
  Tensor c = record(Op::Copy, op, impl.dtype, impl.layout.sizes, {&t}, loc);
  c.impl()->base = t.impl();
  c.impl()->viewOp = "copy into new storage: clone/contiguous/reshape";
  return c;
}

Tensor Tensor::to(DType dtype, SourceLoc loc) const {
  implOf(*this, loc);
  Tensor r = castTo(*this, dtype, loc);
  if (r.impl() != impl()) {
    TraceLock lock;
    r.impl()->root->current->userCast = true; // a node of PyTorch's graph
  }
  return r;
}

Tensor strata::detail::rowMajorResult(const Tensor &r, const SourceLoc &loc) {
  Tensor c = r.contiguous(loc);
  layout::Layout want = layout::contiguous(c.impl()->layout.sizes);
  return sizeOneStrides(std::move(c), want);
}
