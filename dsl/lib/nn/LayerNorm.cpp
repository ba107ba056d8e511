//===- LayerNorm.cpp - functional::layer_norm and nn::LayerNorm -----------===//
//
// Mean and biased variance over the trailing dims, then (x - mean) *
// rsqrt(var + eps) * weight + bias: two reductions and one elementwise
// map, whose gradient autograd derives.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "strata/Autograd.h"
#include "strata/nn/Layers.h"

using namespace strata;
using namespace strata::nn;

Tensor strata::nn::functional::layer_norm(const Tensor &input,
                                          const LayerNormFuncOptions &options,
                                          SourceLoc loc) {
  const Shape &norm = options.normalized_shape();
  const Shape &in = input.sizes(loc);
  int64_t k = static_cast<int64_t>(norm.size()), rank = input.dim(loc);
  bool fits = k <= rank && Shape(in.end() - k, in.end()) == norm;
  if (!fits) {
    std::string star = "[*";
    for (int64_t s : norm)
      star += ", " + std::to_string(s);
    throw Error("Given normalized_shape=" + internal::shapeString(norm) +
                    ", expected input with shape " + star +
                    "], but got input of size" + internal::shapeString(in),
                "the input's trailing dims are normalized_shape", loc);
  }
  for (const auto &[t, what] : {std::pair{options.weight(), "weight"},
                                std::pair{options.bias(), "bias"}})
    if (t.defined() && t.sizes(loc) != norm)
      throw Error(std::string("Expected ") + what +
                      " to be of same shape as normalized_shape, but got " +
                      what + " of shape " +
                      internal::shapeString(t.sizes(loc)) +
                      " and normalized_shape = " + internal::shapeString(norm),
                  "weight and bias have the normalized_shape", loc);
  Shape dims;
  for (int64_t d = rank - k; d < rank; ++d)
    dims.push_back(d);
  Tensor centered = input.sub(input.mean(dims, true, loc), loc);
  Tensor var = centered.mul(centered, loc).mean(dims, true, loc);
  Tensor y = centered.div((var + Scalar(options.eps(), loc)).sqrt(loc), loc);
  if (options.weight().defined())
    y = y.mul(options.weight(), loc);
  if (options.bias().defined())
    y = y.add(options.bias(), loc);
  return y;
}

LayerNormImpl::LayerNormImpl(const LayerNormOptions &options, SourceLoc loc)
    : Module("LayerNorm"), options(options) {
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", ones(options.normalized_shape()),
                                true, loc);
    bias = register_parameter("bias", zeros(options.normalized_shape()), true,
                              loc);
  }
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine())
    return;
  NoGradGuard noGrad;
  weight.fill_(1);
  bias.zero_();
  strata::eval({weight, bias});
}

Tensor LayerNormImpl::forward(const Tensor &input, SourceLoc loc) {
  return functional::layer_norm(
      input,
      functional::LayerNormFuncOptions(options.normalized_shape())
          .eps(options.eps())
          .weight(weight)
          .bias(bias),
      loc);
}
