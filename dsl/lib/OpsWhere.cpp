//===- OpsWhere.cpp - where, and the ops composed of it -------------------===//
//
// where with tensors or numbers (PyTorch's result type), masked_fill, clamp
// and nan_to_num: where-selects with PyTorch's dtype rules and layouts, and
// the grad_fn PyTorch's one node has (CompositeNode.h).
//
//===----------------------------------------------------------------------===//
#include "CompositeNode.h"
#include "OpBuilders.h"

#include <cmath>
#include <limits>

using namespace strata;
using namespace strata::detail;

namespace {

/// x where `cond` is false, `value` (a scalar of x's dtype) where true.
Tensor replaceWhere(const Tensor &cond, const Scalar &value, const Tensor &x,
                    const SourceLoc &loc) {
  return where(cond, scalarTensor(value, x.impl()->dtype, loc), x, loc);
}

/// PyTorch's clamp with scalar bounds: the result type promotes with the
/// bounds; where-selects so the gradient passes where lo <= x <= hi (and
/// a NaN x stays NaN).
Tensor clampImpl(const Tensor &in, std::optional<Scalar> lo,
                 std::optional<Scalar> hi, const SourceLoc &loc,
                 const char *gradFn) {
  implOf(in, loc);
  if (!lo && !hi)
    fail("torch.clamp: At least one of 'min' or 'max' must not be None",
         "give a lower bound, an upper bound or both", loc);
  std::vector<Arg> args{Arg{&in, {}}};
  if (lo)
    args.push_back(Arg{nullptr, *lo});
  if (hi)
    args.push_back(Arg{nullptr, *hi});
  DType t = resultType(args);
  if (t == DType::Bool)
    notImplementedFor("clamp_cpu", t, "convert the mask first", loc);
  // PyTorch converts the bounds to the result type, raising where they
  // overflow it (an int32 tensor clamped at 2^40).
  for (const std::optional<Scalar> &b : {lo, hi})
    if (b)
      checkScalarFits(*b, t, "clamp", loc);
  Tensor x = castTo(in, t, loc);
  Tensor v = x; // min(max(x, lo), hi): lo > hi gives hi, NaN stays NaN
  if (lo)
    v = replaceWhere(binary("lt", Arg{&v, {}}, Arg{nullptr, *lo}, loc), *lo, v,
                     loc);
  if (hi)
    v = replaceWhere(binary("gt", Arg{&v, {}}, Arg{nullptr, *hi}, loc), *hi, v,
                     loc);
  // A NaN bound makes every element NaN, as PyTorch's (its min/max
  // propagate NaN); no comparison with NaN says so.
  auto isNan = [](const std::optional<Scalar> &b) {
    return b && !b->isIntegral() && std::isnan(b->toDouble());
  };
  // (PyTorch 1.13's clamp with one bound None keeps x at a NaN other
  // bound; clamp_min, clamp_max and two bounds give NaN.)
  bool oneOfClamp = std::string_view(gradFn) == "ClampBackward1" && !(lo && hi);
  if (!oneOfClamp && (isNan(lo) || isNan(hi)))
    v = binary("add", Arg{&v, {}}, Arg{nullptr, Scalar(NAN)}, loc);
  if (!gradEnabled() || !requiresGradOf(*x.impl()))
    return iteratorLayout(v, {&x.impl()->layout, 1});
  // PyTorch's gradient (clamp_backward): the incoming one where
  // lo <= x <= hi, none elsewhere, NaN included (where(x > hi, hi, x)
  // alone would pass it at NaN).
  Tensor mask;
  if (lo)
    mask = binary("ge", Arg{&x, {}}, Arg{nullptr, *lo}, loc);
  if (hi) {
    Tensor le = binary("le", Arg{&x, {}}, Arg{nullptr, *hi}, loc);
    mask = lo ? mask.logical_and(le, loc) : le;
  }
  return iteratorLayout(
      composite(strata::where(mask, x, v.detach(loc), loc), gradFn, {&in}),
      {&x.impl()->layout, 1});
}

Tensor nanToNumImpl(const Tensor &in, std::optional<double> nan,
                    std::optional<double> posinf, std::optional<double> neginf,
                    const SourceLoc &loc) {
  DType t = implOf(in, loc).dtype;
  if (!isFloatingPoint(t))
    return in.clone(loc); // nothing to replace
  double big = t == DType::F32 ? std::numeric_limits<float>::max()
                               : std::numeric_limits<double>::max();
  auto is = [&](double v) {
    return binary("eq", Arg{&in, {}}, Arg{nullptr, Scalar(v)}, loc);
  };
  Tensor isNan = binary("ne", Arg{&in, {}}, Arg{&in, {}}, loc);
  Tensor x = replaceWhere(isNan, Scalar(nan.value_or(0.0)), in, loc);
  x = replaceWhere(is(INFINITY), Scalar(posinf.value_or(big)), x, loc);
  // PyTorch writes into empty_like(self) (preserve_format: a dense input's
  // strides, size-1 dims included).
  return sizeOneStrides(
      composite(
          replaceWhere(is(-INFINITY), Scalar(neginf.value_or(-big)), x, loc),
          "NanToNumBackward0", {&in}),
      layout::preserveFormat(in.impl()->layout));
}

/// where with tensors or numbers (PyTorch's result_type over both).
Tensor whereArgs(const Tensor &cond, const Arg &a, const Arg &b,
                 const SourceLoc &loc) {
  const TensorImpl &c = implOf(cond, loc);
  if (a.tensor)
    implOf(*a.tensor, loc);
  if (b.tensor)
    implOf(*b.tensor, loc);
  if (c.dtype != DType::Bool)
    fail("where expected condition to be a boolean tensor, but got a tensor "
         "with dtype " +
             toString(c.dtype),
         "compare first (x > 0) or convert with .to(strata::kBool)", loc);
  Shape none;
  const Shape &sa = a.tensor ? a.tensor->impl()->layout.sizes : none;
  const Shape &sb = b.tensor ? b.tensor->impl()->layout.sizes : none;
  Shape s1 = check(layout::broadcastShapes(c.layout.sizes, sa, "where"), loc);
  Shape shape = check(layout::broadcastShapes(s1, sb, "where"), loc);
  DType common = resultType({a, b});
  // PyTorch converts a number to the result type, raising where it
  // overflows it (where(mask, int32, 3e9), where(mask, f32, 1e300)).
  for (const Arg *arg : {&a, &b})
    if (arg->scalar)
      checkScalarFits(*arg->scalar, common, "where", loc);
  Tensor x = asTensor(a, common, loc), y = asTensor(b, common, loc);
  return record(Op::Where, "where", common, std::move(shape), {&cond, &x, &y},
                loc);
}
} // namespace

Tensor strata::where(const Tensor &cond, const Tensor &a, const Tensor &b,
                     SourceLoc loc) {
  return whereArgs(cond, Arg{&a, {}}, Arg{&b, {}}, loc);
}

Tensor strata::where(const Tensor &cond, Scalar a, const Tensor &b,
                     SourceLoc loc) {
  return whereArgs(cond, Arg{nullptr, a}, Arg{&b, {}}, loc);
}

Tensor strata::where(const Tensor &cond, const Tensor &a, Scalar b,
                     SourceLoc loc) {
  return whereArgs(cond, Arg{&a, {}}, Arg{nullptr, b}, loc);
}

Tensor strata::where(const Tensor &cond, Scalar a, Scalar b, SourceLoc loc) {
  return whereArgs(cond, Arg{nullptr, a}, Arg{nullptr, b}, loc);
}

Tensor Tensor::masked_fill(const Tensor &mask, Scalar value,
                           SourceLoc loc) const {
  implOf(*this, loc);
  checkScalarFits(value, impl()->dtype, "masked_fill", loc);
  // The result keeps this tensor's dtype (the value is converted) and is
  // row-major (PyTorch fills a contiguous clone).
  return composite(
      rowMajorResult(strata::where(mask,
                                   scalarTensor(value, impl()->dtype, loc),
                                   *this, loc),
                     loc),
      "MaskedFillBackward0", {this});
}

Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi,
                     SourceLoc loc) const {
  return clampImpl(*this, lo, hi, loc, "ClampBackward1");
}

Tensor Tensor::clamp_min(Scalar lo, SourceLoc loc) const {
  return clampImpl(*this, lo, std::nullopt, loc, "ClampMinBackward0");
}

Tensor Tensor::clamp_max(Scalar hi, SourceLoc loc) const {
  return clampImpl(*this, std::nullopt, hi, loc, "ClampMaxBackward0");
}

Tensor Tensor::nan_to_num(std::optional<double> nan,
                          std::optional<double> posinf,
                          std::optional<double> neginf, SourceLoc loc) const {
  return nanToNumImpl(*this, nan, posinf, neginf, loc);
}

//===--- In place ---------------------------------------------------------===//

Tensor &Tensor::masked_fill_(const Tensor &mask, Scalar value, SourceLoc loc) {
  implOf(*this, loc);
  checkInplaceFirst(*this, nullptr, "masked_fill_", loc);
  return inPlace(*this, masked_fill(mask, value, loc), "masked_fill_", loc);
}

Tensor &Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi,
                       SourceLoc loc) {
  implOf(*this, loc);
  checkInplaceFirst(*this, nullptr, "clamp_", loc);
  return inPlace(*this, clamp(lo, hi, loc), "clamp_", loc);
}

Tensor &Tensor::clamp_min_(Scalar lo, SourceLoc loc) {
  implOf(*this, loc);
  checkInplaceFirst(*this, nullptr, "clamp_min_", loc);
  return inPlace(*this, clamp_min(lo, loc), "clamp_min_", loc);
}

Tensor &Tensor::clamp_max_(Scalar hi, SourceLoc loc) {
  implOf(*this, loc);
  checkInplaceFirst(*this, nullptr, "clamp_max_", loc);
  return inPlace(*this, clamp_max(hi, loc), "clamp_max_", loc);
}

Tensor &Tensor::nan_to_num_(std::optional<double> nan,
                            std::optional<double> posinf,
                            std::optional<double> neginf, SourceLoc loc) {
  implOf(*this, loc);
  checkInplaceFirst(*this, nullptr, "nan_to_num_", loc);
  return inPlace(*this, nan_to_num(nan, posinf, neginf, loc), "nan_to_num_",
                 loc);
}
