//===- AutogradCheck.cpp - gradcheck by central finite differences --------===//
//
// The inputs are copied to float64 leaves. The analytic Jacobian comes from
// one strata::grad per output element (one-hot grad_outputs; the gradient
// program compiles once), the numeric one from central differences of the
// forward with one input element moved by +-eps (the forward compiles once).
//
//===----------------------------------------------------------------------===//
#include "Impl.h"

#include <cmath>
#include <cstdio>

using namespace strata;
using namespace strata::detail;

GradcheckResult
strata::gradcheck(const std::function<Tensor(const std::vector<Tensor> &)> &fn,
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
      gs = grad({y}, xs, {go}, /*retain_graph=*/true, loc);
    for (size_t i = 0; i < inputs.size(); ++i)
      analytic[i].push_back(gs[i].to_vector<double>(loc));
  }
  GradcheckResult result;
  double worst = -1;
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
        double excess =
            std::abs(ana - num) - (options.atol + options.rtol * std::abs(num));
        if (excess > worst) {
          worst = excess;
          result.input = static_cast<int64_t>(i);
          result.index = static_cast<int64_t>(e);
          result.output = o;
          result.analytic = ana;
          result.numeric = num;
        }
      }
    }
  }
  result.ok = worst <= 0;
  char buf[256];
  snprintf(buf, sizeof buf,
           "%s: worst element: input %lld, index %lld, output %lld: "
           "analytic %.9g, numeric %.9g",
           result.ok ? "gradcheck passed" : "Jacobian mismatch",
           static_cast<long long>(result.input),
           static_cast<long long>(result.index),
           static_cast<long long>(result.output), result.analytic,
           result.numeric);
  result.message = buf;
  return result;
}
