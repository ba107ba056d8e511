//===- RangeFactories.cpp - eye, linspace, logspace -----------------------===//
//
// Composed of arange, comparisons and where (Composite.h), so they are
// recorded like arange and fuse into their first reader. linspace follows
// PyTorch's CPU kernel: the step (end - start) / (steps - 1) is computed in
// the result's type (double for integers), the first half of the values is
// start + step * i and the second half end - step * (steps - 1 - i), so both
// ends are exact (for floats each an fma, in its vectorized blocks:
// blockedRange); logspace raises the base to those exponents in double.
//
//===----------------------------------------------------------------------===//
#include "Composite.h"
#include "OpBuilders.h"

#include <cmath>

using namespace strata;
using namespace strata::composite;

namespace {

void checkSteps(int64_t steps, const char *op, DType dtype,
                const SourceLoc &loc) {
  if (steps < 0)
    throw Error("number of steps must be non-negative",
                "steps >= 0 (the number of values)", loc);
  if (dtype == DType::Bool)
    throw Error(std::string("\"") + op + "_cpu\" not implemented for 'Bool'",
                "make a numeric range and compare it", loc);
}

/// PyTorch's linspace exponents/values in `t` (F32 or F64): start + step * i
/// below steps / 2, end - step * (steps - 1 - i) from there; steps >= 2.
Tensor symmetricRange(double start, double end, int64_t steps, DType t,
                      const TensorOptions &options, const SourceLoc &loc) {
  // The step rounded as the kernel's type computes it.
  double step = t == DType::F32
                    ? static_cast<double>((static_cast<float>(end) -
                                           static_cast<float>(start)) /
                                          static_cast<float>(steps - 1))
                    : (end - start) / static_cast<double>(steps - 1);
  TensorOptions o = TensorOptions(t).device(options.device());
  Tensor i = arange(steps, o, loc);
  Tensor fromStart = i * Scalar(step, loc) + Scalar(start, loc);
  Tensor back = arange(steps - 1, -1, -1, o, loc); // steps - 1 - i
  Tensor fromEnd = Scalar(end, loc) - back * Scalar(step, loc);
  return where(i < Scalar(steps / 2, loc), fromStart, fromEnd, loc);
}

/// PyTorch 1.13's CPU linspace of a float dtype `t` (one thread, AVX2):
/// the values of symmetricRange, but in blocks of two vectors of `lanes`
/// elements (8 f32, 4 f64) each vector is Vectorized::arange(base, step)
/// from its first index idx - base the first or second half's formula at
/// idx, then base + k * step (a product and a sum in `t`) - and only the
/// last steps % (2 * lanes) elements are their own formula; each formula
/// is one fused multiply-add in `t`, as the kernel is compiled.
Tensor blockedRange(double start, double end, int64_t steps, DType t,
                    const TensorOptions &options, const SourceLoc &loc) {
  using detail::castTo;
  using detail::fusedMultiplyAdd;
  float step32 = (static_cast<float>(end) - static_cast<float>(start)) /
                 static_cast<float>(steps - 1);
  double step = t == DType::F32
                    ? static_cast<double>(step32)
                    : (end - start) / static_cast<double>(steps - 1);
  int64_t lanes = t == DType::F32 ? 8 : 4, half = steps / 2;
  auto number = [&](double v) { return detail::scalarTensor(v, t, loc); };
  Tensor i = arange(steps, TensorOptions(DType::F64).device(options.device()),
                    loc); // exact
  Tensor first = number(start), last = number(end), by = number(step),
         back = number(-step);
  // The value at index j (an f64 tensor of integers): one fma in t.
  auto at = [&](const Tensor &j) {
    Tensor fromStart = fusedMultiplyAdd(by, castTo(j, t, loc), first, loc);
    Tensor fromEnd = fusedMultiplyAdd(
        back, castTo(Scalar(static_cast<double>(steps - 1), loc) - j, t, loc),
        last, loc);
    return where(j < Scalar(static_cast<double>(half), loc), fromStart, fromEnd,
                 loc);
  };
  Tensor idx = i.floor_divide(static_cast<double>(lanes), loc) *
               static_cast<double>(lanes);
  Tensor blocked = at(idx) + castTo(i - idx, t, loc) * by;
  int64_t blockEnd = steps - steps % (2 * lanes);
  return where(i < Scalar(static_cast<double>(blockEnd), loc), blocked, at(i),
               loc);
}

/// A scalar as the dtype's kernel reads it (integers truncate).
double asKernelType(const Scalar &s, DType t) {
  if (isFloatingPoint(t))
    return t == DType::F32 ? static_cast<float>(s.toDouble()) : s.toDouble();
  return static_cast<double>(s.toLong());
}

Tensor withGrad(Tensor t, const TensorOptions &options, const SourceLoc &loc) {
  if (options.requires_grad())
    t.requires_grad_(true, loc);
  return t;
}

} // namespace

Tensor strata::eye(int64_t n, TensorOptions options, SourceLoc loc) {
  return eye(n, n, options, loc);
}

Tensor strata::eye(int64_t n, int64_t m, TensorOptions options, SourceLoc loc) {
  if (n < 0)
    throw Error("n must be greater or equal to 0, got " + std::to_string(n),
                "sizes are >= 0", loc);
  if (m < 0)
    throw Error("m must be greater or equal to 0, got " + std::to_string(m),
                "sizes are >= 0", loc);
  TensorOptions idx = TensorOptions(DType::I64).device(options.device());
  Tensor diag =
      arange(n, idx, loc).unsqueeze(1, loc).eq(arange(m, idx, loc), loc);
  return withGrad(diag.to(options.dtype(), loc), options, loc);
}

Tensor strata::linspace(Scalar start, Scalar end, int64_t steps,
                        TensorOptions options, SourceLoc loc) {
  DType t = options.dtype();
  checkSteps(steps, "linspace", t, loc);
  TensorOptions o = options.dtype(t).requires_grad(false);
  if (steps <= 1) // PyTorch fills the one value with start
    return withGrad(full({steps}, asKernelType(start, t), o, loc), options,
                    loc);
  // Integers: the step and values in double, truncated into the type.
  DType work = isFloatingPoint(t) ? t : DType::F64;
  Tensor r = isFloatingPoint(t)
                 ? blockedRange(asKernelType(start, t), asKernelType(end, t),
                                steps, t, o, loc)
                 : symmetricRange(asKernelType(start, t), asKernelType(end, t),
                                  steps, work, o, loc);
  return withGrad(r.to(t, loc), options, loc);
}

Tensor strata::logspace(Scalar start, Scalar end, int64_t steps, double base,
                        TensorOptions options, SourceLoc loc) {
  DType t = options.dtype();
  checkSteps(steps, "logspace", t, loc);
  TensorOptions o = options.dtype(t).requires_grad(false);
  if (steps <= 1)
    return withGrad(full({steps}, std::pow(base, start.toDouble()), o, loc),
                    options, loc);
  DType work = isFloatingPoint(t) ? t : DType::F64;
  Tensor e = symmetricRange(asKernelType(start, t), asKernelType(end, t), steps,
                            work, o, loc);
  Tensor b = full({}, base, TensorOptions(DType::F64).device(o.device()), loc);
  return withGrad(b.pow(e.to(DType::F64, loc), loc).to(t, loc), options, loc);
}
