//===- OpsAlpha.cpp - add/sub with alpha and addcmul: one rounding --------===//
//
// PyTorch 1.13's CPU kernel of add(self, other, alpha) is
// `vec::fmadd(other, alpha, self)` and its scalar loop `self + alpha *
// other` is compiled with contraction, so every float element is one fused
// multiply-add (sub is add by -alpha); addcmul is `self + value * t1 * t2`,
// contracted to fma(value * t1, t2, self). A separate product and sum
// differ by an ulp in about one element of five. These forms record
// `strata.fma` (alpha a 0-d fill in the result's type, as PyTorch converts
// the Scalar to scalar_t), which every backend computes with one rounding.
// alpha == 1 is the plain add; integer and bool results keep the product
// and sum (exact, wrapping).
//
//===----------------------------------------------------------------------===//
#include "CompositeNode.h"
#include "OpBuilders.h"

#include <array>
#include <cstdint>

using namespace strata;
using namespace strata::detail;

namespace {
/// PyTorch's alpha_check on the result type `t` of add or sub (after
/// sub's bool checks, as PyTorch): alpha must not be a float for an integer
/// or bool result, nor a bool for a non-bool one.
void checkAlpha(DType t, const Scalar &alpha, const SourceLoc &loc) {
  if (alpha.kind() == Scalar::Kind::Bool && t != DType::Bool)
    fail("Boolean alpha only supported for Boolean results.",
         "pass a number as alpha", loc);
  if (alpha.kind() == Scalar::Kind::Float && !isFloatingPoint(t))
    fail("For integral input tensors, argument alpha must not be a floating "
         "point number.",
         "pass an integer alpha, or convert the operands to a float type", loc);
}

/// -alpha as PyTorch's Scalar negates it (an integer wraps).
Scalar negated(const Scalar &alpha) {
  if (alpha.isIntegral())
    return Scalar(
        static_cast<int64_t>(0 - static_cast<uint64_t>(alpha.toLong())));
  return Scalar(-alpha.toDouble());
}

/// self + alpha * other (sub: minus).
Tensor addAlpha(const Tensor &self, const Tensor &other, const Scalar &alpha,
                bool subtract, const SourceLoc &loc) {
  Tensor plain = subtract ? self.sub(other, loc) : self.add(other, loc);
  DType t = plain.impl()->dtype;
  checkAlpha(t, alpha, loc);
  if (alpha.isIntegral() ? alpha.toLong() == 1 : alpha.toDouble() == 1.0)
    return plain;
  if (isFloatingPoint(t)) {
    Tensor r = addScaled(castTo(self, t, loc), castTo(other, t, loc),
                         subtract ? negated(alpha) : alpha, loc);
    return composite(r, subtract ? "SubBackward0" : "AddBackward0",
                     {&self, &other});
  }
  // (PyTorch converts alpha to the result type: 2 is true for bools.)
  Tensor scaled = t == DType::Bool ? other.to(t, loc) * (alpha.toDouble() != 0)
                                   : other.to(t, loc) * alpha;
  return subtract ? self.sub(scaled, loc) : self.add(scaled, loc);
}
} // namespace

Tensor detail::fusedMultiplyAdd(const Tensor &a, const Tensor &b,
                                const Tensor &c, const SourceLoc &loc) {
  const TensorImpl &ai = implOf(a, loc), &bi = implOf(b, loc),
                   &ci = implOf(c, loc);
  Shape shape = check(
      layout::broadcastShapes(ai.layout.sizes, bi.layout.sizes, "fma"), loc);
  shape = check(layout::broadcastShapes(shape, ci.layout.sizes, "fma"), loc);
  return record(Op::Where, "fma", ai.dtype, std::move(shape), {&a, &b, &c},
                loc);
}

Tensor detail::addScaled(const Tensor &self, const Tensor &other,
                         const Scalar &alpha, const SourceLoc &loc) {
  DType t = implOf(self, loc).dtype;
  Tensor w = scalarTensor(alpha, t, loc);
  Tensor r = fusedMultiplyAdd(other, w, self, loc);
  // Laid out as PyTorch's iterator over self and other (alpha is no
  // operand there).
  std::array<layout::Layout, 2> xs{self.impl()->layout, other.impl()->layout};
  return iteratorLayout(std::move(r), xs);
}

Tensor detail::addProduct(const Tensor &self, const Tensor &t1,
                          const Tensor &t2, const Scalar &value,
                          const SourceLoc &loc) {
  DType t = implOf(self, loc).dtype;
  Tensor scaled = t1.mul(scalarTensor(value, t, loc), loc);
  Tensor r = fusedMultiplyAdd(scaled, t2, self, loc);
  std::array<layout::Layout, 3> xs{self.impl()->layout, t1.impl()->layout,
                                   t2.impl()->layout};
  return iteratorLayout(std::move(r), xs);
}

Tensor Tensor::add(const Tensor &o, Scalar alpha, SourceLoc loc) const {
  implOf(*this, loc);
  return addAlpha(*this, o, alpha, false, loc);
}

Tensor Tensor::sub(const Tensor &o, Scalar alpha, SourceLoc loc) const {
  implOf(*this, loc);
  return addAlpha(*this, o, alpha, true, loc);
}

Tensor &Tensor::add_(const Tensor &o, Scalar alpha, SourceLoc loc) {
  checkInplaceFirst(*this, &o, "add_", loc);
  return inPlace(*this, addAlpha(*this, o, alpha, false, loc), "add_", loc, &o);
}

Tensor &Tensor::sub_(const Tensor &o, Scalar alpha, SourceLoc loc) {
  checkInplaceFirst(*this, &o, "sub_", loc);
  return inPlace(*this, addAlpha(*this, o, alpha, true, loc), "sub_", loc, &o);
}
