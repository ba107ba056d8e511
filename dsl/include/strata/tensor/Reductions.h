//===- Reductions.h - Tensor's reductions and scans -------------*- C++ -*-===//
//
// sum, mean, prod, amax, amin (dsl/lib/OpsReduce.cpp), cumsum and cumprod
// (ScanOps.cpp), and the reductions composed of them
// (CompositeReductions.cpp).
// Part of class strata::Tensor: strata/Tensor.h includes this file inside
// the class, so these are Tensor's members (not a header of its own).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TENSOR_CLASS_BODY
#error "part of class strata::Tensor: include strata/Tensor.h"
#endif

/// Sum of every element (PyTorch's sum(): grad_fn SumBackward0);
/// integers sum to i64.
Tensor sum(SourceLoc loc = SourceLoc::current()) const;
/// Sum over dims (all when empty: PyTorch's sum(dim), SumBackward1);
/// integers sum to i64.
Tensor sum(const Shape &dims, bool keepdim = false,
           SourceLoc loc = SourceLoc::current()) const;
/// Mean of every element (floating point only; MeanBackward0).
Tensor mean(SourceLoc loc = SourceLoc::current()) const;
/// Mean over dims (all when empty; floating point only; MeanBackward1).
Tensor mean(const Shape &dims, bool keepdim = false,
            SourceLoc loc = SourceLoc::current()) const;
/// Product of every element (ProdBackward0); integers and bool give
/// i64, as PyTorch.
Tensor prod(SourceLoc loc = SourceLoc::current()) const;
/// Product over one dim (ProdBackward1).
Tensor prod(int64_t dim, bool keepdim = false,
            SourceLoc loc = SourceLoc::current()) const;
/// Cumulative sum along `dim` (CumsumBackward0); integers and bool give
/// i64 unless `dtype` is given (the input is converted to it first).
Tensor cumsum(int64_t dim, std::optional<DType> dtype = std::nullopt,
              SourceLoc loc = SourceLoc::current()) const;
/// Cumulative product along `dim` (CumprodBackward0), dtypes as cumsum.
Tensor cumprod(int64_t dim, std::optional<DType> dtype = std::nullopt,
               SourceLoc loc = SourceLoc::current()) const;
/// In-place cumsum (the dtype, if given, must be the tensor's).
Tensor &cumsum_(int64_t dim, std::optional<DType> dtype = std::nullopt,
                SourceLoc loc = SourceLoc::current());
/// In-place cumprod (the dtype, if given, must be the tensor's).
Tensor &cumprod_(int64_t dim, std::optional<DType> dtype = std::nullopt,
                 SourceLoc loc = SourceLoc::current());
/// Maximum over dims.
Tensor amax(const Shape &dims = {}, bool keepdim = false,
            SourceLoc loc = SourceLoc::current()) const;
/// Minimum over dims.
Tensor amin(const Shape &dims = {}, bool keepdim = false,
            SourceLoc loc = SourceLoc::current()) const;

//===--- One-dim overloads of the reductions ------------------------------===//
/// sum({dim}, keepdim).
template <IntegralDim I>
Tensor sum(I dim, bool keepdim = false,
           SourceLoc loc = SourceLoc::current()) const {
  return sum(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
}
/// mean({dim}, keepdim).
template <IntegralDim I>
Tensor mean(I dim, bool keepdim = false,
            SourceLoc loc = SourceLoc::current()) const {
  return mean(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
}
/// amax({dim}, keepdim).
template <IntegralDim I>
Tensor amax(I dim, bool keepdim = false,
            SourceLoc loc = SourceLoc::current()) const {
  return amax(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
}
/// amin({dim}, keepdim).
template <IntegralDim I>
Tensor amin(I dim, bool keepdim = false,
            SourceLoc loc = SourceLoc::current()) const {
  return amin(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
}

//===--- Composite reductions (dsl/lib/CompositeReductions.cpp) -----------===//
/// var()/std()'s `unbiased` flag: only a bool converts to it, so that a
/// braced dim list such as `x.var({1})` takes the dims overload instead of
/// becoming `unbiased = true` (a silent reduction over every element).
struct Unbiased {
  /// From a bool only (not an int, nor a braced list of one).
  template <std::same_as<bool> B> constexpr Unbiased(B b) : value(b) {}
  /// Whether Bessel's correction (N - 1) is applied.
  bool value;
};
/// Variance of every element, with Bessel's correction when `unbiased`
/// (floating point only; N - correction <= 0 gives inf or NaN, as PyTorch).
Tensor var(Unbiased unbiased = true,
           SourceLoc loc = SourceLoc::current()) const;
/// Variance over dims (all when empty).
Tensor var(const Shape &dims, bool unbiased = true, bool keepdim = false,
           SourceLoc loc = SourceLoc::current()) const;
/// Variance over dims dividing by N - correction (default 1).
Tensor var(const Shape &dims, std::optional<int64_t> correction,
           bool keepdim = false, SourceLoc loc = SourceLoc::current()) const;
/// An integer second argument is a correction (LibTorch would take it as
/// the bool `unbiased`, so var({0}, 2) would silently mean correction 1).
template <IntegralDim I>
Tensor var(const Shape &dims, I correction, bool keepdim = false,
           SourceLoc loc = SourceLoc::current()) const {
  return var(dims, std::optional<int64_t>(correction), keepdim, loc);
}
/// Variance over one dim: `x.var(1)` reduces dim 1 (as Python; LibTorch's
/// C++ would take the 1 as `unbiased`).
template <IntegralDim I>
Tensor var(I dim, bool unbiased = true, bool keepdim = false,
           SourceLoc loc = SourceLoc::current()) const {
  return var(Shape{static_cast<int64_t>(dim)}, unbiased, keepdim, loc);
}
/// sqrt(var()); the gradient is 0 where the result is 0, as PyTorch's.
Tensor std(Unbiased unbiased = true,
           SourceLoc loc = SourceLoc::current()) const;
/// Standard deviation over dims (all when empty).
Tensor std(const Shape &dims, bool unbiased = true, bool keepdim = false,
           SourceLoc loc = SourceLoc::current()) const;
/// Standard deviation over dims dividing by N - correction.
Tensor std(const Shape &dims, std::optional<int64_t> correction,
           bool keepdim = false, SourceLoc loc = SourceLoc::current()) const;
/// An integer second argument is a correction (see var).
template <IntegralDim I>
Tensor std(const Shape &dims, I correction, bool keepdim = false,
           SourceLoc loc = SourceLoc::current()) const {
  return std(dims, std::optional<int64_t>(correction), keepdim, loc);
}
/// Standard deviation over one dim.
template <IntegralDim I>
Tensor std(I dim, bool unbiased = true, bool keepdim = false,
           SourceLoc loc = SourceLoc::current()) const {
  return std(Shape{static_cast<int64_t>(dim)}, unbiased, keepdim, loc);
}
/// log(sum(exp(x))) over dims, shifted by the (detached) maximum so it
/// neither overflows nor underflows; rows of -inf give -inf. Integers and
/// bool give f32. An empty dim list reduces every dim (PyTorch 1.13 raises
/// unless keepdim).
Tensor logsumexp(const Shape &dims, bool keepdim = false,
                 SourceLoc loc = SourceLoc::current()) const;
/// logsumexp over one dim.
template <IntegralDim I>
Tensor logsumexp(I dim, bool keepdim = false,
                 SourceLoc loc = SourceLoc::current()) const {
  return logsumexp(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
}
/// The p-norm of every element: p = 2 (default), 1, 0 (nonzero count),
/// inf (max |x|), -inf (min |x|) or any other p, (sum |x|^p)^(1/p).
/// Floating point only; the gradient is 0 where a 2- or p-norm is 0.
Tensor norm(Scalar p = 2, SourceLoc loc = SourceLoc::current()) const;
/// The p-norm over dims (all when empty; p unset: 2).
Tensor norm(std::optional<Scalar> p, const Shape &dims, bool keepdim = false,
            SourceLoc loc = SourceLoc::current()) const;
/// Whether any element is nonzero (bool; NaN counts as nonzero).
Tensor any(SourceLoc loc = SourceLoc::current()) const;
/// any() along dim.
Tensor any(int64_t dim, bool keepdim = false,
           SourceLoc loc = SourceLoc::current()) const;
/// Whether every element is nonzero (bool; true for an empty tensor).
Tensor all(SourceLoc loc = SourceLoc::current()) const;
/// all() along dim.
Tensor all(int64_t dim, bool keepdim = false,
           SourceLoc loc = SourceLoc::current()) const;
/// Index (i64) of the maximum along dim, or in the flattened tensor
/// without one: the first occurrence, a NaN before any number.
Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
              SourceLoc loc = SourceLoc::current()) const;
/// Index of the minimum (as argmax).
Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
              SourceLoc loc = SourceLoc::current()) const;
/// The maximum of every element (amax(); NaN propagates, and its
/// gradient is shared by the NaNs, as PyTorch's).
Tensor max(SourceLoc loc = SourceLoc::current()) const;
/// (values, indices) of the maximum along dim; indices as argmax, and the
/// gradient of the values goes to that index only, as PyTorch's.
std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false,
                               SourceLoc loc = SourceLoc::current()) const;
/// maximum(*this, other).
Tensor max(const Tensor &other, SourceLoc loc = SourceLoc::current()) const;
/// The minimum of every element.
Tensor min(SourceLoc loc = SourceLoc::current()) const;
/// (values, indices) of the minimum along dim.
std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false,
                               SourceLoc loc = SourceLoc::current()) const;
/// minimum(*this, other).
Tensor min(const Tensor &other, SourceLoc loc = SourceLoc::current()) const;
