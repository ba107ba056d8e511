//===- Linear.cpp - functional::linear and nn::Linear ---------------------===//
#include "Common.h"

#include "strata/Autograd.h"
#include "strata/nn/Layers.h"

#include <cmath>

using namespace strata;
using namespace strata::nn;

Tensor strata::nn::functional::linear(const Tensor &input, const Tensor &weight,
                                      const Tensor &bias, SourceLoc loc) {
  Tensor y = input.matmul(weight.t(loc), loc);
  return bias.defined() ? y.add(bias, loc) : y;
}

namespace {
/// U(-bound, bound) of `sizes`, from strata's generator, as a leaf with a
/// buffer (PyTorch's uniform_).
Tensor uniform(const Shape &sizes, double bound) {
  NoGradGuard noGrad;
  Tensor t = rand(sizes) * (2 * bound) - bound;
  t.eval();
  return t;
}
} // namespace

LinearImpl::LinearImpl(int64_t in_features, int64_t out_features, SourceLoc loc)
    : LinearImpl(LinearOptions(in_features, out_features), loc) {}

LinearImpl::LinearImpl(const LinearOptions &options, SourceLoc loc)
    : Module("Linear"), options(options) {
  if (options.in_features() < 0 || options.out_features() < 0)
    throw Error("Linear: Trying to create tensor with negative dimension " +
                    std::to_string(std::min(options.in_features(),
                                            options.out_features())),
                "in_features and out_features are >= 0", loc);
  weight = register_parameter(
      "weight", zeros({options.out_features(), options.in_features()}), true,
      loc);
  if (options.bias())
    bias =
        register_parameter("bias", zeros({options.out_features()}), true, loc);
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  // kaiming_uniform_(a = sqrt(5)): gain sqrt(2 / (1 + 5)), bound gain *
  // sqrt(3 / fan_in) = 1 / sqrt(fan_in); the bias has the same bound.
  int64_t fanIn = options.in_features();
  double bound = fanIn > 0 ? 1.0 / std::sqrt(static_cast<double>(fanIn)) : 0;
  NoGradGuard noGrad;
  weight.copy_(uniform(weight.sizes(), bound));
  std::vector<Tensor> written{weight};
  if (bias.defined()) {
    bias.copy_(uniform(bias.sizes(), bound));
    written.push_back(bias);
  }
  strata::eval(written);
}

Tensor LinearImpl::forward(const Tensor &input, SourceLoc loc) {
  return functional::linear(input, weight, bias, loc);
}
