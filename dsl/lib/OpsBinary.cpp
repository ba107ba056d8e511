//===- OpsBinary.cpp - the elementwise binary ops and lerp ----------------===//
//
// Arithmetic, comparisons, logical and bitwise ops, maximum/minimum,
// atan2, the division family, lerp and isclose, their operators and
// in-place forms: each records one strata binary op (StrataOps.td) through
// binary() (OpBuilders.h), which applies PyTorch's type promotion.
//
//===----------------------------------------------------------------------===//
#include "OpBuilders.h"

#include <array>
#include <cmath>
#include <sstream>

using namespace strata;
using namespace strata::detail;

#define STRATA_BINARY(method, name, kind)                                      \
  Tensor Tensor::method(const Tensor &o, SourceLoc loc) const {                \
    implOf(*this, loc);                                                        \
    return binary(name, Arg{this, {}}, Arg{&o, {}}, loc, kind);                \
  }
STRATA_BINARY(add, "add", Kind::Plain)
STRATA_BINARY(sub, "sub", Kind::Plain)
STRATA_BINARY(mul, "mul", Kind::Plain)
STRATA_BINARY(div, "div", Kind::Plain)
STRATA_BINARY(pow, "pow", Kind::Pow)
STRATA_BINARY(eq, "eq", Kind::Plain)
STRATA_BINARY(ne, "ne", Kind::Plain)
STRATA_BINARY(lt, "lt", Kind::Plain)
STRATA_BINARY(le, "le", Kind::Plain)
STRATA_BINARY(gt, "gt", Kind::Plain)
STRATA_BINARY(ge, "ge", Kind::Plain)
#undef STRATA_BINARY

Tensor Tensor::pow(Scalar s, SourceLoc loc) const {
  implOf(*this, loc);
  return binary("pow", Arg{this, {}}, Arg{nullptr, s}, loc, Kind::Pow);
}

namespace {
/// x's truth values laid out as a unary TensorIterator lays out its result
/// (PyTorch's logical ops take x itself): a cast (preserve_format) keeps a
/// dense input's strides as the iterator's fast path does; a non-dense
/// input's order (size-1 dims included) comes from the general path, which
/// `x != 0` takes (its 0-d operand orders nothing). NaN is true either way.
Tensor truthOf(const Tensor &x, const SourceLoc &loc) {
  const layout::Layout &l = x.impl()->layout;
  if (layout::isContiguous(l) || layout::isNonOverlappingAndDense(l))
    return castTo(x, DType::Bool, loc);
  return binary("ne", Arg{&x, {}}, Arg{nullptr, Scalar(0)}, loc);
}
} // namespace

// (PyTorch's logical ops are one iterator over both tensors: strata's
// truth values may be dense where the tensors are not, so the result takes
// that iterator's strides on size-1 dims.)
#define STRATA_LOGICAL(method, name)                                           \
  Tensor Tensor::method(const Tensor &o, SourceLoc loc) const {                \
    implOf(*this, loc);                                                        \
    implOf(o, loc);                                                            \
    /* (Truth of each in the common dtype: an int64 0-d -2^63 is 0 as */       \
    /* int32, PyTorch's kernel casting to iter.common_dtype() first.) */       \
    DType common = resultType({Arg{this, {}}, Arg{&o, {}}});                   \
    Tensor a = truthOf(castTo(*this, common, loc), loc),                       \
           b = truthOf(castTo(o, common, loc), loc);                           \
    std::array<layout::Layout, 2> ins{impl()->layout, o.impl()->layout};       \
    return iteratorLayout(binary(name, Arg{&a, {}}, Arg{&b, {}}, loc), ins);   \
  }
STRATA_LOGICAL(logical_and, "bitwise_and")
STRATA_LOGICAL(logical_or, "bitwise_or")
STRATA_LOGICAL(logical_xor, "bitwise_xor")
#undef STRATA_LOGICAL

#define STRATA_BITWISE(method)                                                 \
  Tensor Tensor::method(const Tensor &o, SourceLoc loc) const {                \
    implOf(*this, loc);                                                        \
    return binary(#method, Arg{this, {}}, Arg{&o, {}}, loc);                   \
  }                                                                            \
  Tensor Tensor::method(Scalar s, SourceLoc loc) const {                       \
    implOf(*this, loc);                                                        \
    return binary(#method, Arg{this, {}}, Arg{nullptr, s}, loc);               \
  }
STRATA_BITWISE(bitwise_and)
STRATA_BITWISE(bitwise_or)
STRATA_BITWISE(bitwise_xor)
#undef STRATA_BITWISE

Tensor strata::maximum(const Tensor &a, const Tensor &b, SourceLoc loc) {
  return binary("maximum", Arg{&a, {}}, Arg{&b, {}}, loc);
}
Tensor strata::minimum(const Tensor &a, const Tensor &b, SourceLoc loc) {
  return binary("minimum", Arg{&a, {}}, Arg{&b, {}}, loc);
}

//===--- atan2, the division family, lerp, isclose (issue 20) -------------===//

// An op of two tensors whose dtype rule is its ODS entry's alone: the
// method, torch's free function and the in-place form.
#define STRATA_TENSOR_PAIR_OP(op)                                              \
  Tensor Tensor::op(const Tensor &o, SourceLoc loc) const {                    \
    implOf(*this, loc);                                                        \
    return binary(#op, Arg{this, {}}, Arg{&o, {}}, loc);                       \
  }                                                                            \
  Tensor strata::op(const Tensor &a, const Tensor &b, SourceLoc loc) {         \
    return a.op(b, loc);                                                       \
  }                                                                            \
  Tensor &Tensor::op##_(const Tensor &o, SourceLoc loc) {                      \
    checkInplaceFirst(*this, &o, #op "_", loc);                                \
    return inPlace(*this, op(o, loc), #op "_", loc, &o);                       \
  }
STRATA_TENSOR_PAIR_OP(atan2)
STRATA_TENSOR_PAIR_OP(hypot)
#undef STRATA_TENSOR_PAIR_OP

// logaddexp: the method and torch's free function (PyTorch 1.13 has no
// logaddexp_, so no in-place form).
Tensor Tensor::logaddexp(const Tensor &o, SourceLoc loc) const {
  implOf(*this, loc);
  return binary("logaddexp", Arg{this, {}}, Arg{&o, {}}, loc);
}
Tensor strata::logaddexp(const Tensor &a, const Tensor &b, SourceLoc loc) {
  return a.logaddexp(b, loc);
}

#define STRATA_MOD(method)                                                     \
  Tensor Tensor::method(const Tensor &o, SourceLoc loc) const {                \
    implOf(*this, loc);                                                        \
    return binary(#method, Arg{this, {}}, Arg{&o, {}}, loc, Kind::Mod);        \
  }                                                                            \
  Tensor Tensor::method(Scalar s, SourceLoc loc) const {                       \
    implOf(*this, loc);                                                        \
    return binary(#method, Arg{this, {}}, Arg{nullptr, s}, loc, Kind::Mod);    \
  }                                                                            \
  Tensor strata::method(const Tensor &a, const Tensor &b, SourceLoc loc) {     \
    return a.method(b, loc);                                                   \
  }                                                                            \
  Tensor strata::method(const Tensor &a, Scalar b, SourceLoc loc) {            \
    return a.method(b, loc);                                                   \
  }
STRATA_MOD(fmod)
STRATA_MOD(remainder)
STRATA_MOD(floor_divide)
#undef STRATA_MOD

Tensor strata::remainder(Scalar a, const Tensor &b, SourceLoc loc) {
  implOf(b, loc);
  return binary("remainder", Arg{nullptr, a}, Arg{&b, {}}, loc, Kind::Mod);
}

namespace {

/// lerp.Scalar (`weight` null) and lerp.Tensor: PyTorch's checks in its
/// order (one dtype for all three, then a float kernel).
Tensor lerpImpl(const Tensor &start, const Tensor &end, const Tensor *weight,
                const Scalar &number, const SourceLoc &loc) {
  const TensorImpl &s = implOf(start, loc), &e = implOf(end, loc);
  auto sameDtype = [&](const TensorImpl &t, const char *what) {
    if (t.dtype != s.dtype)
      fail(std::string("expected dtype ") + cppTypeName(s.dtype) + " for `" +
               what + "` but got dtype " + cppTypeName(t.dtype),
           "convert it with .to(start.dtype())", loc);
  };
  sameDtype(e, "end");
  if (weight)
    sameDtype(implOf(*weight, loc), "weight");
  if (!isFloatingPoint(s.dtype))
    notImplementedFor(weight ? "lerp_kernel_tensor" : "lerp_kernel_scalar",
                      s.dtype, "convert the tensors to a float type first",
                      loc);
  Shape shape = check(
      layout::broadcastShapes(s.layout.sizes, e.layout.sizes, "lerp"), loc);
  if (!weight)
    checkScalarFits(number, s.dtype, "lerp", loc);
  Tensor w = weight ? *weight : scalarTensor(number, s.dtype, loc);
  // lerp.Scalar's weight is PyTorch's Scalar: the kernel converts it to
  // the tensors' type (weight.to<float>()), start's gradient takes
  // 1 - weight in double (1 - weight.toDouble()), rounded once. An f64
  // number cast to f32, whose gradient rule subtracts before the cast; an
  // integer one an int64 cast to f32 (rounded once, as static_cast<float>:
  // through a double, 2^60 + 2^36 + 1 would round twice), whose gradient
  // rule takes its double.
  if (!weight && s.dtype == DType::F32)
    w = castTo(scalarTensor(number,
                            number.isIntegral() ? DType::I64 : DType::F64, loc),
               s.dtype, loc);
  shape = check(layout::broadcastShapes(shape, w.impl()->layout.sizes, "lerp"),
                loc);
  Tensor r = record(Op::Where, "lerp", s.dtype, std::move(shape),
                    {&start, &end, &w}, loc);
  if (weight)
    return r;
  std::array<layout::Layout, 2> se{s.layout, e.layout};
  return iteratorLayout(std::move(r), se);
}
} // namespace

Tensor Tensor::lerp(const Tensor &end, Scalar weight, SourceLoc loc) const {
  return lerpImpl(*this, end, nullptr, weight, loc);
}
Tensor Tensor::lerp(const Tensor &end, const Tensor &weight,
                    SourceLoc loc) const {
  return lerpImpl(*this, end, &weight, 0, loc);
}
Tensor strata::lerp(const Tensor &start, const Tensor &end, Scalar weight,
                    SourceLoc loc) {
  return start.lerp(end, weight, loc);
}
Tensor strata::lerp(const Tensor &start, const Tensor &end,
                    const Tensor &weight, SourceLoc loc) {
  return start.lerp(end, weight, loc);
}

/// PyTorch 1.13's isclose, op for op (TensorCompare.cpp): equal, or NaNs
/// with equal_nan, or a finite |a - b| <= atol + |rtol * b| (integers and
/// bool converted to f32 first).
Tensor Tensor::isclose(const Tensor &o, double rtol, double atol,
                       bool equal_nan, SourceLoc loc) const {
  const TensorImpl &a = implOf(*this, loc), &b = implOf(o, loc);
  if (a.dtype != b.dtype)
    fail(std::string(torchTypeName(a.dtype)) + " did not match " +
             torchTypeName(b.dtype),
         "convert one tensor with .to() so both have the same dtype", loc);
  for (auto [what, v] : {std::pair{"rtol", rtol}, std::pair{"atol", atol}})
    if (!(v >= 0))
      fail(std::string(what) +
               " must be greater than or equal to zero, but got " +
               (std::ostringstream() << v).str(),
           "tolerances are magnitudes: pass a non-negative value", loc);
  NoGradGuard noGrad; // a bool result: no gradient flows through it
  // PyTorch updates `self == other` in place (|=): the result has its
  // layout, up to the strides of size-1 dims strata's ops order otherwise.
  Tensor close = eq(o, loc);
  const layout::Layout eqLayout = close.impl()->layout;
  if (equal_nan && isFloatingPoint(a.dtype))
    close = close.bitwise_or(isnan(loc).bitwise_and(o.isnan(loc), loc), loc);
  if (rtol == 0 && atol == 0)
    return sizeOneStrides(close, eqLayout);
  // Integers and bool: both in the default float dtype, so |a - b| is
  // computed in f32 (no wrap-around; 2^24 + 1 is close to 2^24).
  Tensor x = isFloatingPoint(a.dtype) ? *this : to(DType::F32, loc);
  Tensor y = isFloatingPoint(b.dtype) ? o : o.to(DType::F32, loc);
  Tensor scaled =
      binary("mul", Arg{nullptr, Scalar(rtol)}, Arg{&y, {}}, loc).abs(loc);
  Tensor allowed =
      binary("add", Arg{nullptr, Scalar(atol)}, Arg{&scaled, {}}, loc);
  Tensor actual = x.sub(y, loc).abs(loc);
  return sizeOneStrides(
      close.bitwise_or(
          actual.isfinite(loc).bitwise_and(actual.le(allowed, loc), loc), loc),
      eqLayout);
}

bool Tensor::allclose(const Tensor &o, double rtol, double atol, bool equal_nan,
                      SourceLoc loc) const {
  Tensor far = isclose(o, rtol, atol, equal_nan, loc).logical_not(loc);
  return far.sum(loc).item<int64_t>(loc) == 0;
}

Tensor strata::isclose(const Tensor &a, const Tensor &b, double rtol,
                       double atol, bool equal_nan, SourceLoc loc) {
  return a.isclose(b, rtol, atol, equal_nan, loc);
}
bool strata::allclose(const Tensor &a, const Tensor &b, double rtol,
                      double atol, bool equal_nan, SourceLoc loc) {
  return a.allclose(b, rtol, atol, equal_nan, loc);
}

//===--- Operators --------------------------------------------------------===//

#define STRATA_OPERATOR(sym, name, kind)                                       \
  Tensor strata::operator sym(const Tensor &a, LocatedTensor b) {              \
    return binary(name, Arg{&a, {}}, Arg{&b.tensor, {}}, b.loc, kind);         \
  }                                                                            \
  Tensor strata::operator sym(const Tensor &a, Scalar s) {                     \
    return binary(name, Arg{&a, {}}, Arg{nullptr, s}, s.loc(), kind);          \
  }
STRATA_OPERATOR(+, "add", Kind::Plain)
STRATA_OPERATOR(-, "sub", Kind::Plain)
STRATA_OPERATOR(*, "mul", Kind::Plain)
STRATA_OPERATOR(/, "div", Kind::Plain)
#undef STRATA_OPERATOR

// Comparisons take both operands located: C++20 also considers `b == a`
// for `a == b`, and identical parameter types keep that unambiguous.
#define STRATA_COMPARE(sym, name)                                              \
  Tensor strata::operator sym(LocatedTensor a, LocatedTensor b) {              \
    return binary(name, Arg{&a.tensor, {}}, Arg{&b.tensor, {}}, b.loc);        \
  }                                                                            \
  Tensor strata::operator sym(const Tensor &a, Scalar s) {                     \
    return binary(name, Arg{&a, {}}, Arg{nullptr, s}, s.loc());                \
  }
STRATA_COMPARE(==, "eq")
STRATA_COMPARE(!=, "ne")
STRATA_COMPARE(<, "lt")
STRATA_COMPARE(<=, "le")
STRATA_COMPARE(>, "gt")
STRATA_COMPARE(>=, "ge")
#undef STRATA_COMPARE

// A number on the left: `s + a` and `s * a` are LibTorch's (and Python's)
// a.add(s) and a.mul(s), the tensor first (the grad_fn's next_functions,
// (AccumulateGrad, None), are theirs; the values the same, both commute).
Tensor strata::operator+(Scalar s, const Tensor &a) {
  return binary("add", Arg{&a, {}}, Arg{nullptr, s}, s.loc(), Kind::Plain);
}
Tensor strata::operator-(Scalar s, const Tensor &a) {
  return binary("sub", Arg{nullptr, s}, Arg{&a, {}}, s.loc(), Kind::Plain);
}
Tensor strata::operator*(Scalar s, const Tensor &a) {
  return binary("mul", Arg{&a, {}}, Arg{nullptr, s}, s.loc(), Kind::Plain);
}

// LibTorch's (and Python's) number / t is t.reciprocal() * number: its
// layout, grad_fn (MulBackward0 over ReciprocalBackward0) and saved tensor
// (the reciprocal) are theirs.
Tensor strata::operator/(Scalar s, const Tensor &a) {
  return a.reciprocal(s.loc()) * s;
}

Tensor strata::operator-(LocatedTensor a) { return a.tensor.neg(a.loc); }

//===--- In place ---------------------------------------------------------===//

#define STRATA_INPLACE(method, name, kind)                                     \
  Tensor &Tensor::method(const Tensor &o, SourceLoc loc) {                     \
    checkInplaceFirst(*this, &o, #method, loc);                                \
    return inPlace(*this, binary(name, Arg{this, {}}, Arg{&o, {}}, loc, kind), \
                   #method, loc, &o);                                          \
  }                                                                            \
  Tensor &Tensor::method(Scalar s, SourceLoc loc) {                            \
    checkInplaceFirst(*this, nullptr, #method, loc);                           \
    return inPlaceNumber(*this, name, s, #method, loc, kind);                  \
  }
STRATA_INPLACE(add_, "add", Kind::Plain)
STRATA_INPLACE(sub_, "sub", Kind::Plain)
STRATA_INPLACE(mul_, "mul", Kind::Plain)
STRATA_INPLACE(div_, "div", Kind::Plain)
STRATA_INPLACE(fmod_, "fmod", Kind::Mod)
STRATA_INPLACE(remainder_, "remainder", Kind::Mod)
STRATA_INPLACE(floor_divide_, "floor_divide", Kind::Mod)
#undef STRATA_INPLACE

Tensor &Tensor::lerp_(const Tensor &end, Scalar weight, SourceLoc loc) {
  checkInplaceFirst(*this, &end, "lerp_", loc);
  return inPlace(*this, lerp(end, weight, loc), "lerp_", loc, &end);
}

Tensor &Tensor::lerp_(const Tensor &end, const Tensor &weight, SourceLoc loc) {
  checkInplaceFirst(*this, &end, "lerp_", loc);
  checkNoPartialOverlap(*impl(), implOf(weight, loc), "lerp_", loc);
  return inPlace(*this, lerp(end, weight, loc), "lerp_", loc, &end);
}
