//===- AutogradCheck.cpp - gradcheck by central finite differences --------===//
//
// The inputs are copied to float64 leaves. The analytic Jacobian comes from
// one strata::grad per output element (one-hot grad_outputs; the gradient
// program compiles once), the numeric one from central differences of the
// forward with one input element moved by +-eps (the forward compiles once).
//
//===----------------------------------------------------------------------===//
#include "Impl.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace strata;
using namespace strata::detail;

GradcheckResult
strata::gradcheck(const Function<Tensor(const std::vector<Tensor> &)> &fn,
                  const std::vector<Tensor> &inputs,
                  const GradcheckOptions &options, SourceLoc loc) {
  // from_vector reads empty sizes as "1-D of the values' length": a 0-d
  // input or output is made 1-element, then viewed as 0-d.
  auto values = [&](const std::vector<double> &v, const Shape &sizes,
                    DType dtype) {
    Tensor t = from_vector<double>(v, sizes.empty() ? Shape{1} : sizes,
                                   TensorOptions(dtype), loc);
    return sizes.empty() ? t.reshape({}, loc) : t;
  };
  std::vector<std::vector<double>> data;
  for (const Tensor &t : inputs)
    data.push_back(t.to_vector<double>(loc));
  auto leaves = [&](bool requiresGrad) {
    std::vector<Tensor> xs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Tensor x = values(data[i], inputs[i].sizes(), DType::F64);
      if (requiresGrad)
        x.requires_grad_(true, loc);
      xs.push_back(x);
    }
    return xs;
  };
  std::vector<Tensor> xs = leaves(true);
  Tensor y = fn(xs);
  int64_t m = implOf(y, loc).layout.numel();
  // analytic[i][out][elem]
  std::vector<std::vector<std::vector<double>>> analytic(inputs.size());
  for (int64_t o = 0; o < m; ++o) {
    std::vector<double> onehot(m, 0.0);
    onehot[o] = 1;
    Tensor go = values(onehot, y.sizes(), y.dtype());
    std::vector<Tensor> gs;
    if (options.analytic)
      gs = options.analytic(xs, go);
    else
      gs = grad({y}, xs, {go}, /*retain_graph=*/true, /*create_graph=*/false,
                loc);
    for (size_t i = 0; i < inputs.size(); ++i)
      analytic[i].push_back(gs[i].to_vector<double>(loc));
  }
  // The reported element is the worst by relative error |a - n| / max(|a|,
  // |n|) (0 where both are 0, so an off-diagonal 0/0 is never "worst"),
  // among the failing elements when there are any.
  GradcheckResult result;
  bool haveWorst = false, worstFails = false;
  double worstRel = -1, worstAbs = -1;
  NoGradGuard guard;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t e = 0; e < data[i].size(); ++e) {
      double saved = data[i][e];
      data[i][e] = saved + options.eps;
      std::vector<double> plus = fn(leaves(false)).to_vector<double>(loc);
      data[i][e] = saved - options.eps;
      std::vector<double> minus = fn(leaves(false)).to_vector<double>(loc);
      data[i][e] = saved;
      for (int64_t o = 0; o < m; ++o) {
        double num = (plus[o] - minus[o]) / (2 * options.eps);
        double ana = analytic[i][o][e];
        double diff = std::abs(ana - num);
        // NaN differences fail and rank first.
        bool fails = !(diff <= options.atol + options.rtol * std::abs(num));
        double scale = std::max(std::abs(ana), std::abs(num));
        double rel = std::isnan(diff) ? INFINITY
                     : scale == 0     ? 0
                                      : diff / scale;
        // Equal relative errors (within rounding): the larger difference.
        bool tie = std::abs(rel - worstRel) <= 1e-9 * worstRel;
        bool better =
            !haveWorst || (fails && !worstFails) ||
            (fails == worstFails && (tie ? diff > worstAbs : rel > worstRel));
        if (better) {
          haveWorst = true;
          worstFails = fails;
          worstRel = rel;
          worstAbs = diff;
          result.input = static_cast<int64_t>(i);
          result.index = static_cast<int64_t>(e);
          result.output = o;
          result.analytic = ana;
          result.numeric = num;
          result.relative_error = rel;
        }
      }
    }
  }
  result.ok = !worstFails;
  char buf[256];
  snprintf(buf, sizeof buf,
           "%s: worst element: input %lld, index %lld, output %lld: "
           "analytic %.9g, numeric %.9g, relative error %.3g",
           result.ok ? "gradcheck passed" : "Jacobian mismatch",
           static_cast<long long>(result.input),
           static_cast<long long>(result.index),
           static_cast<long long>(result.output), result.analytic,
           result.numeric, result.relative_error);
  result.message = buf;
  return result;
}
