//===- OutOps.cpp - LibTorch's _out forms: add_out, matmul_out, ... -------===//
//
// `add_out(out, a, b)` is PyTorch 1.13's `torch.add(a, b, out=out)`: the
// op's value, recorded as a pending write of `out`'s storage (what
// `out.copy_(a + b)` records), after PyTorch's checks for out= arguments:
// autograd refuses them, the result must be castable to out's dtype
// (can_cast; matmul and mm want out's dtype to be the result's), an
// elementwise input may share memory with out only exactly (add_out(a, a,
// b) is fine, a shifted view of it is not). Where PyTorch resizes an out of
// another shape, strata resizes only an empty one (numel 0, not a view) and
// otherwise raises (docs/ops.md "Out forms").
//
// Cost: the same trace as `out.copy_(a + b)` (the op's node, its tensor,
// the write), so the same ~1.2 µs of recording; what a leaner path would
// skip is measured in docs/performance.md ("The _out forms").
//
//===----------------------------------------------------------------------===//
#include "Impl.h"

#include <string>

using namespace strata;
using namespace strata::detail;

namespace {

/// PyTorch's VariableType check: no out= form in grad mode when any
/// argument requires grad.
void checkNoGrad(const char *torchOp, const Tensor &out, const Tensor &a,
                 const Tensor &b, const SourceLoc &loc) {
  if (!gradEnabled())
    return;
  TraceLock lock;
  if (requiresGradOf(*out.impl()) || requiresGradOf(*a.impl()) ||
      requiresGradOf(*b.impl()))
    fail(std::string(torchOp) +
             "(): functions with out=... arguments don't support automatic "
             "differentiation, but one of the arguments requires grad.",
         "compute out of place (a + b) to differentiate, or write into out "
         "under a NoGradGuard with inputs detach()ed",
         loc);
}

/// Gives an empty, non-view `out` the result's shape (PyTorch's
/// resize_output of a fresh out tensor); any other out must already have it.
void fitOut(Tensor &out, const Shape &shape, const char *op,
            const SourceLoc &loc) {
  TensorImpl &o = *out.impl();
  if (o.layout.sizes == shape)
    return;
  // (A view shares its base's root; clone() keeps a base for explain().)
  bool view = o.base && o.base->root == o.root;
  bool resizable = o.layout.numel() == 0 && !view;
  if (!resizable)
    fail(std::string(op) + ": out has shape " +
             layout::formatList(o.layout.sizes) +
             ", but the result has shape " + layout::formatList(shape) +
             " (strata resizes only an empty out; PyTorch resizes any, with a "
             "warning)",
         "pass an out of the result's shape, or an empty one (empty({0})) to "
         "be resized",
         loc);
  Tensor fresh = empty(shape, TensorOptions(o.dtype).device(out.device()), loc);
  TraceLock lock;
  o.layout = fresh.impl()->layout;
  o.root = fresh.impl()->root;
}

/// The checks of a write of `value` into out and the write itself.
Tensor &writeOut(Tensor &out, const Tensor &value, const char *op,
                 bool exactDtype, const SourceLoc &loc) {
  DType rt = value.impl()->dtype, ot = out.impl()->dtype;
  if (exactDtype && rt != ot)
    fail(std::string(op) + ": Expected out tensor to have dtype " +
             cppTypeName(rt) + ", but got " + cppTypeName(ot) + " instead",
         "pass an out of the operands' dtype (" + toString(rt) + ")", loc);
  if (!canCast(rt, ot))
    fail(std::string(op) + ": result type " + torchTypeName(rt) +
             " can't be cast to the desired output type " + torchTypeName(ot),
         "pass an out of dtype " + toString(rt) +
             " (or a wider one), or convert the operands first",
         loc);
  fitOut(out, value.impl()->layout.sizes, op, loc);
  const TensorImpl &o = *out.impl();
  refuseOverlappingWrite(o.layout, op, loc);
  // (A copy_: the value read out's old contents only through an input.)
  recordWrite(o, value, loc, "copy_");
  return out;
}

/// An elementwise _out form: `value` computed from `a` and `b`.
template <typename F>
Tensor &elementwiseOut(Tensor &out, const Tensor &a, const Tensor &b,
                       const char *op, const char *torchOp, F &&compute,
                       const SourceLoc &loc) {
  implOf(out, loc);
  implOf(a, loc);
  implOf(b, loc);
  checkNoGrad(torchOp, out, a, b, loc);
  checkNoPartialOverlap(*out.impl(), *a.impl(), op, loc);
  checkNoPartialOverlap(*out.impl(), *b.impl(), op, loc);
  Tensor value = compute();
  return writeOut(out, value, op, false, loc);
}

/// PyTorch's mm checks (matmul_out of two matrices is mm_out).
void checkMatrices(const Tensor &a, const Tensor &b, const SourceLoc &loc) {
  if (implOf(a, loc).layout.dim() != 2)
    fail("self must be a matrix",
         "mm multiplies two 2-d tensors; use "
         "matmul_out for other ranks",
         loc);
  if (implOf(b, loc).layout.dim() != 2)
    fail("mat2 must be a matrix",
         "mm multiplies two 2-d tensors; use "
         "matmul_out for other ranks",
         loc);
  if (a.impl()->dtype != b.impl()->dtype)
    fail("expected scalar type " + std::string(torchTypeName(a.impl()->dtype)) +
             " but found " + torchTypeName(b.impl()->dtype),
         "convert one operand with .to(dtype)", loc);
}

} // namespace

Tensor &strata::add_out(Tensor &out, const Tensor &self, const Tensor &other,
                        Scalar alpha, SourceLoc loc) {
  return elementwiseOut(
      out, self, other, "add_out", "add",
      [&] { return self.add(other, alpha, loc); }, loc);
}

Tensor &strata::sub_out(Tensor &out, const Tensor &self, const Tensor &other,
                        Scalar alpha, SourceLoc loc) {
  return elementwiseOut(
      out, self, other, "sub_out", "sub",
      [&] { return self.sub(other, alpha, loc); }, loc);
}

Tensor &strata::mul_out(Tensor &out, const Tensor &self, const Tensor &other,
                        SourceLoc loc) {
  return elementwiseOut(
      out, self, other, "mul_out", "mul", [&] { return self.mul(other, loc); },
      loc);
}

Tensor &strata::div_out(Tensor &out, const Tensor &self, const Tensor &other,
                        SourceLoc loc) {
  return elementwiseOut(
      out, self, other, "div_out", "div", [&] { return self.div(other, loc); },
      loc);
}

Tensor &strata::matmul_out(Tensor &out, const Tensor &self, const Tensor &other,
                           SourceLoc loc) {
  implOf(out, loc);
  implOf(self, loc);
  implOf(other, loc);
  // PyTorch names the op matmul dispatches to (mm for two matrices).
  checkNoGrad("matmul", out, self, other, loc);
  // (No overlap check: PyTorch's mm/bmm/mv do not make one; strata computes
  // the product before writing it, so an aliased out reads the old values.)
  return writeOut(out, self.matmul(other, loc), "matmul_out", true, loc);
}

Tensor &strata::mm_out(Tensor &out, const Tensor &self, const Tensor &mat2,
                       SourceLoc loc) {
  implOf(out, loc);
  checkNoGrad("mm", out, self, mat2, loc);
  checkMatrices(self, mat2, loc);
  return writeOut(out, self.matmul(mat2, loc), "mm_out", true, loc);
}
