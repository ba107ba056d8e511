//===- CompositeReductions.cpp - var, std, logsumexp, norm, any, argmax ---===//
//
// Reductions composed of sum/mean/amax/amin and elementwise ops
// (Composite.h), with PyTorch 1.13's dtype rules, errors and gradients:
//
// - var: the two-pass sum((x - mean)^2) / max(N - correction, 0);
//   std = sqrt(var) behind a double `where`, so its gradient is 0 where the
//   deviation is 0 (PyTorch masks it there) instead of 0 * inf.
// - logsumexp: shifted by the detached maximum, a +-inf maximum replaced by
//   0 as PyTorch does, so a row of -inf gives -inf, not NaN.
// - argmax/argmin: the smallest position whose value equals the row's
//   maximum, or is NaN (amax propagates NaN, so a NaN row's maximum is NaN
//   and the first NaN wins, as PyTorch's); an amin over
//   where(hit, position, size).
// - max/min over a dim: the values select the indexed element
//   (where(position == index, x, -0.0).sum(dim)), so the gradient goes to
//   that element only, as PyTorch's value_selecting_reduction_backward.
// - norm: p = 2 is safeSqrt(sum(x * x)); other p compute the norm of a copy
//   of x whose masked rows (norm 0, or NaN for +-inf) read a constant, as
//   PyTorch's norm_backward masks them.
// - max()/min() of everything: amax/amin, except that a NaN result shares
//   its gradient among the NaNs (PyTorch's evenly_distribute_backward).
// - any/all: counts of nonzero elements compared with 0, so empty
//   reductions give PyTorch's false/true.
//
//===----------------------------------------------------------------------===//
#include "Composite.h"
#include "strata/Autograd.h"

#include <cmath>

using namespace strata;
using namespace strata::composite;

namespace {

void checkVarDtype(const Tensor &x, const SourceLoc &loc) {
  if (!isFloatingPoint(x.dtype(loc)))
    throw Error("std and var only support floating point and complex dtypes",
                "convert first: x.to(kFloat32)", loc);
}

Tensor varImpl(const Tensor &x, const Shape &dims, int64_t correction,
               bool keepdim, const char *op, const SourceLoc &loc) {
  checkVarDtype(x, loc);
  Shape wrapped = wrapDims(dims, x.dim(loc), op, loc);
  int64_t n = reducedCount(x.sizes(loc), wrapped);
  // The mean is detached: its gradient term sums (x - mean), which is 0,
  // and PyTorch's var_backward leaves it out (so x - mean = +-inf or a
  // divisor of 0 give +-inf gradients there, not inf - inf = NaN).
  Tensor mean = x.detach(loc).mean(wrapped, true, loc);
  Tensor dev = x.sub(mean, loc);
  Tensor ss = dev.mul(dev, loc).sum(wrapped, keepdim, loc);
  double divisor = static_cast<double>(std::max<int64_t>(n - correction, 0));
  Tensor var = ss / Scalar(divisor, loc);
  if (divisor == 0 || !x.requires_grad(loc) || !strata::is_grad_enabled())
    return var;
  // The second derivative (create_graph): PyTorch's var_backward,
  // 2 / divisor * grad * (x - x.mean()), is a function of the mean too,
  // which the detached mean is not. -(n / divisor) * w^2, with w the live
  // mean minus the detached one (0 exactly; 0 where the mean is not
  // finite), adds 0 to the value and to the first derivative, and the
  // missing -2 / (n * divisor) to every element pair of the second.
  Tensor live = x.mean(wrapped, true, loc);
  Tensor w = where(mean.isfinite(loc), live - mean,
                   scalarOf(x, 0, x.dtype(loc), loc), loc);
  return var + (w * w).sum(wrapped, keepdim, loc) *
                   Scalar(-static_cast<double>(n) / divisor, loc);
}

/// sqrt(v), with gradient 0 where v is 0 (not 0 * inf = NaN).
Tensor safeSqrt(const Tensor &v, const SourceLoc &loc) {
  Tensor zero = v == Scalar(0, loc);
  Tensor one = scalarOf(v, 1, v.dtype(loc), loc);
  Tensor nil = scalarOf(v, 0, v.dtype(loc), loc);
  return where(zero, nil, where(zero, one, v, loc).sqrt(loc), loc);
}

/// The p-norm (p not 0, 1 or 2) over `dims` (keepdim), masked as PyTorch's
/// norm_backward: where the norm is 0 (any finite p) or NaN (p = +-inf) the
/// gradient is 0. The masked rows read a constant instead of x, so no
/// 0 * inf reaches the gradient, and take their value from a detached norm.
Tensor maskedNorm(const Tensor &x, double p, const Shape &dims,
                  const SourceLoc &loc) {
  auto norm = [&](const Tensor &t) {
    Tensor a = t.abs(loc);
    if (std::isinf(p))
      return p > 0 ? a.amax(dims, true, loc) : a.amin(dims, true, loc);
    return a.pow(Scalar(p, loc), loc)
        .sum(dims, true, loc)
        .pow(Scalar(1.0 / p, loc), loc);
  };
  Tensor value = norm(x.detach(loc));
  Tensor masked = std::isinf(p) ? value.isnan(loc) : value == Scalar(0, loc);
  Tensor safe = where(
      masked, scalarOf(x, std::isinf(p) ? 0 : 1, x.dtype(loc), loc), x, loc);
  return where(masked, value, norm(safe), loc);
}

/// The index along the wrapped `dim` of the first maximum (or minimum) of
/// x, NaN first; `x` has at least one dim and a nonempty `dim`.
Tensor firstExtremum(const Tensor &x, int64_t dim, bool keepdim, bool isMax,
                     const SourceLoc &loc) {
  Tensor v = x.detach(loc);
  Tensor m = isMax ? v.amax({dim}, true, loc) : v.amin({dim}, true, loc);
  Tensor hit = v.eq(m, loc);
  if (isFloatingPoint(x.dtype(loc)))
    hit = hit.logical_or(v.isnan(loc), loc);
  int64_t n = x.size(dim, loc);
  Tensor pos = positionsAlong(x, n, dim, x.dim(loc), loc);
  return where(hit, pos, scalarOf(x, n, DType::I64, loc), loc)
      .amin({dim}, keepdim, loc);
}

Tensor argExtremum(const Tensor &x, std::optional<int64_t> dim, bool keepdim,
                   bool isMax, const SourceLoc &loc) {
  const char *op = isMax ? "argmax" : "argmin";
  if (x.dtype(loc) == DType::Bool)
    throw Error(std::string("\"") + op + "_cpu\" not implemented for 'Bool'",
                "convert first: x.to(kInt64)", loc);
  int64_t rank = x.dim(loc);
  if (!dim) {
    if (x.numel(loc) == 0)
      throw Error(std::string(op) +
                      "(): Expected reduction dim to be specified for "
                      "input.numel() == 0.",
                  "give a dim whose size is not 0", loc);
    Tensor i =
        rank == 0
            ? zeros({}, TensorOptions(DType::I64).device(x.device(loc)), loc)
            : firstExtremum(x.reshape({-1}, loc), 0, false, isMax, loc);
    return keepdim ? i.view(Shape(static_cast<size_t>(rank), 1), loc) : i;
  }
  int64_t d = wrapDim(*dim, rank, op, loc);
  if (rank == 0)
    return zeros({}, TensorOptions(DType::I64).device(x.device(loc)), loc);
  if (x.size(d, loc) == 0)
    throw Error(std::string(op) + "(): Expected reduction dim " +
                    std::to_string(d) + " to have non-zero size.",
                "reduce over a dim that is not empty", loc);
  return firstExtremum(x, d, keepdim, isMax, loc);
}

std::tuple<Tensor, Tensor> valuesIndices(const Tensor &x, int64_t dim,
                                         bool keepdim, bool isMax,
                                         const SourceLoc &loc) {
  const char *op = isMax ? "max" : "min";
  int64_t rank = x.dim(loc);
  int64_t d = wrapDim(dim, rank, op, loc);
  if (rank == 0)
    return {x.clone(loc),
            zeros({}, TensorOptions(DType::I64).device(x.device(loc)), loc)};
  if (x.size(d, loc) == 0)
    throw Error(std::string(op) + "(): Expected reduction dim " +
                    std::to_string(d) + " to have non-zero size.",
                "reduce over a dim that is not empty", loc);
  Tensor index = firstExtremum(x, d, true, isMax, loc);
  Tensor values;
  if (isFloatingPoint(x.dtype(loc))) {
    Tensor at = positionsAlong(x, x.size(d, loc), d, rank, loc).eq(index, loc);
    // -0.0 is the identity of + for every x (a -0.0 maximum stays -0.0).
    values = where(at, x, scalarOf(x, -0.0, x.dtype(loc), loc), loc)
                 .sum({d}, keepdim, loc);
  } else { // no gradient: the extremum itself, in the input's dtype
    values = isMax ? x.amax({d}, keepdim, loc) : x.amin({d}, keepdim, loc);
  }
  return {values, keepdim ? index : index.squeeze(d, loc)};
}

Tensor fullExtremum(const Tensor &x, bool isMax, const SourceLoc &loc) {
  if (x.numel(loc) == 0)
    throw Error(std::string(isMax ? "max" : "min") +
                    "(): Expected reduction dim to be specified for "
                    "input.numel() == 0. Specify the reduction dim with the "
                    "'dim' argument.",
                "reduce over a dim, or check numel() first", loc);
  auto extremum = [&](const Tensor &t) {
    return isMax ? t.amax({}, false, loc) : t.amin({}, false, loc);
  };
  if (!isFloatingPoint(x.dtype(loc)))
    return extremum(x);
  // PyTorch's evenly_distribute_backward: the gradient is shared by the
  // elements equal to the result (amax's), or by the NaNs when the result
  // is NaN (where amax's would be NaN everywhere). The NaN branch is the
  // mean of the NaN elements (NaN, its gradient 1/count each); the other
  // branch reads 0 instead of x when there is a NaN.
  DType t = x.dtype(loc);
  Tensor nans = x.detach(loc).isnan(loc);
  Tensor hasNan = nans.any(loc);
  Tensor count = nans.sum({}, false, loc).clamp_min(1, loc);
  Tensor nanMean =
      where(nans, x, scalarOf(x, 0, t, loc), loc).sum({}, false, loc) / count;
  Tensor plain = extremum(where(hasNan, scalarOf(x, 0, t, loc), x, loc));
  return where(hasNan, nanMean, plain, loc);
}

/// Whether elements are nonzero, counted along dims and compared.
Tensor countNonzero(const Tensor &x, const Shape &dims, bool keepdim, bool any,
                    const SourceLoc &loc) {
  Tensor hit = any ? x != Scalar(0, loc) : x == Scalar(0, loc);
  Tensor n = hit.sum(dims, keepdim, loc);
  return any ? n > Scalar(0, loc) : n == Scalar(0, loc);
}

} // namespace

//===--- var and std ------------------------------------------------------===//

Tensor Tensor::var(Unbiased unbiased, SourceLoc loc) const {
  return varImpl(*this, {}, unbiased.value ? 1 : 0, false, "var", loc);
}
Tensor Tensor::var(const Shape &dims, bool unbiased, bool keepdim,
                   SourceLoc loc) const {
  return varImpl(*this, dims, unbiased ? 1 : 0, keepdim, "var", loc);
}
Tensor Tensor::var(const Shape &dims, std::optional<int64_t> correction,
                   bool keepdim, SourceLoc loc) const {
  return varImpl(*this, dims, correction.value_or(1), keepdim, "var", loc);
}
Tensor Tensor::std(Unbiased unbiased, SourceLoc loc) const {
  return safeSqrt(varImpl(*this, {}, unbiased.value ? 1 : 0, false, "std", loc),
                  loc);
}
Tensor Tensor::std(const Shape &dims, bool unbiased, bool keepdim,
                   SourceLoc loc) const {
  return safeSqrt(varImpl(*this, dims, unbiased ? 1 : 0, keepdim, "std", loc),
                  loc);
}
Tensor Tensor::std(const Shape &dims, std::optional<int64_t> correction,
                   bool keepdim, SourceLoc loc) const {
  return safeSqrt(
      varImpl(*this, dims, correction.value_or(1), keepdim, "std", loc), loc);
}

//===--- logsumexp and norm -----------------------------------------------===//

Tensor Tensor::logsumexp(const Shape &dims, bool keepdim, SourceLoc loc) const {
  Tensor x = isFloatingPoint(dtype(loc)) ? *this : to(DType::F32, loc);
  Shape wrapped = wrapDims(dims, x.dim(loc), "logsumexp", loc);
  if (x.numel(loc) == 0) // no maximum to shift by; log(0) = -inf
    return x.exp(loc).sum(wrapped, keepdim, loc).log(loc);
  Tensor m = x.detach(loc).amax(wrapped, true, loc);
  // PyTorch: an infinite maximum shifts by 0 (inf - inf would be NaN).
  m = where(m.abs(loc) == Scalar(INFINITY, loc),
            scalarOf(m, 0, m.dtype(loc), loc), m, loc);
  Tensor r = x.sub(m, loc).exp(loc).sum(wrapped, keepdim, loc).log(loc);
  if (!keepdim)
    for (auto it = wrapped.rbegin(); it != wrapped.rend(); ++it)
      m = m.squeeze(*it, loc);
  return r.add(m, loc);
}

Tensor Tensor::norm(Scalar p, SourceLoc loc) const {
  return norm(std::optional<Scalar>(p), {}, false, loc);
}

Tensor Tensor::norm(std::optional<Scalar> p, const Shape &dims, bool keepdim,
                    SourceLoc loc) const {
  DType t = dtype(loc);
  if (!isFloatingPoint(t))
    throw Error(std::string("norm(): input dtype should be either floating "
                            "point or complex. Got ") +
                    scalarTypeName(t) + " instead.",
                "convert first: x.to(kFloat32)", loc);
  Shape wrapped = wrapDims(dims, dim(loc), "norm", loc);
  double pv = p ? p->toDouble() : 2.0;
  if (pv == 2)
    return safeSqrt(mul(*this, loc).sum(wrapped, keepdim, loc), loc);
  if (pv == 1)
    return abs(loc).sum(wrapped, keepdim, loc);
  if (pv == 0) // the count of nonzero elements, with a zero gradient
    return where(*this != Scalar(0, loc), scalarOf(*this, 1, t, loc),
                 *this * Scalar(0, loc), loc)
        .sum(wrapped, keepdim, loc);
  if (std::isinf(pv) && reducedCount(sizes(loc), wrapped) == 0)
    return abs(loc).sum(wrapped, keepdim, loc); // PyTorch: 0, not an error
  Tensor r = maskedNorm(*this, pv, wrapped, loc);
  if (!keepdim)
    for (auto it = wrapped.rbegin(); it != wrapped.rend(); ++it)
      r = r.squeeze(*it, loc);
  return r;
}

//===--- any and all ------------------------------------------------------===//

Tensor Tensor::any(SourceLoc loc) const {
  return countNonzero(*this, {}, false, true, loc);
}
Tensor Tensor::any(int64_t dim, bool keepdim, SourceLoc loc) const {
  Shape d = wrapDims({dim}, this->dim(loc), "any", loc);
  return countNonzero(*this, d, keepdim, true, loc);
}
Tensor Tensor::all(SourceLoc loc) const {
  return countNonzero(*this, {}, false, false, loc);
}
Tensor Tensor::all(int64_t dim, bool keepdim, SourceLoc loc) const {
  Shape d = wrapDims({dim}, this->dim(loc), "all", loc);
  return countNonzero(*this, d, keepdim, false, loc);
}

//===--- argmax, argmin, max, min -----------------------------------------===//

Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim,
                      SourceLoc loc) const {
  return argExtremum(*this, dim, keepdim, true, loc);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim,
                      SourceLoc loc) const {
  return argExtremum(*this, dim, keepdim, false, loc);
}
Tensor Tensor::max(SourceLoc loc) const {
  return fullExtremum(*this, true, loc);
}
Tensor Tensor::min(SourceLoc loc) const {
  return fullExtremum(*this, false, loc);
}
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim,
                                       SourceLoc loc) const {
  return valuesIndices(*this, dim, keepdim, true, loc);
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim,
                                       SourceLoc loc) const {
  return valuesIndices(*this, dim, keepdim, false, loc);
}
Tensor Tensor::max(const Tensor &other, SourceLoc loc) const {
  return maximum(*this, other, loc);
}
Tensor Tensor::min(const Tensor &other, SourceLoc loc) const {
  return minimum(*this, other, loc);
}
