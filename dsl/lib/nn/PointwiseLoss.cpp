//===- PointwiseLoss.cpp - mse_loss, l1_loss, bce_with_logits -------------===//
//
// Losses that are one elementwise expression and a reduction: the whole
// loss is one fused kernel, and its gradient another (or the same, after
// sibling fusion). binary_cross_entropy_with_logits is PyTorch 1.13's
// formula, operation for operation, so it rounds as PyTorch does.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

using namespace strata;
using namespace strata::nn;
using namespace strata::nn::internal;

namespace {

/// PyTorch's '"mse_cpu" not implemented for 'Long'' for integer inputs.
void checkFloating(const Tensor &input, const char *kernel,
                   const SourceLoc &loc) {
  if (!isFloatingPoint(input.dtype(loc)))
    throw Error(std::string("\"") + kernel + "\" not implemented for '" +
                    scalarTypeName(input.dtype(loc)) + "'",
                "convert the input to a floating-point dtype first", loc);
}

} // namespace

Tensor strata::nn::functional::mse_loss(const Tensor &input,
                                        const Tensor &target,
                                        const MSELossFuncOptions &options,
                                        SourceLoc loc) {
  checkFloating(input, "mse_cpu", loc);
  Tensor d = input.sub(target, loc);
  return reduce(d.mul(d, loc), options.reduction(), loc);
}

Tensor strata::nn::functional::l1_loss(const Tensor &input,
                                       const Tensor &target,
                                       const L1LossFuncOptions &options,
                                       SourceLoc loc) {
  return reduce(input.sub(target, loc).abs(loc), options.reduction(), loc);
}

Tensor strata::nn::functional::binary_cross_entropy_with_logits(
    const Tensor &input, const Tensor &target,
    const BinaryCrossEntropyWithLogitsFuncOptions &options, SourceLoc loc) {
  if (target.sizes(loc) != input.sizes(loc))
    throw Error("Target size (" + shapeString(target.sizes(loc)) +
                    ") must be the same as input size (" +
                    shapeString(input.sizes(loc)) + ")",
                "give one target per logit", loc);
  if (!isFloatingPoint(input.dtype(loc)))
    throw Error(std::string("result type Float can't be cast to the desired "
                            "output type ") +
                    scalarTypeName(input.dtype(loc)),
                "logits are floating point: input.to(kFloat32)", loc);
  // m = max(-x, 0) keeps both exponents <= 0: log(e^-m + e^(-x-m)) + m is
  // log(1 + e^-x) without overflow.
  Tensor m = input.neg(loc).relu(loc);
  Tensor logTerm = m.neg(loc)
                       .exp(loc)
                       .add(input.neg(loc).sub(m, loc).exp(loc), loc)
                       .log(loc);
  Tensor one = scalarLike(input, 1, loc);
  Tensor loss = one.sub(target, loc).mul(input, loc);
  if (options.pos_weight().defined()) {
    Tensor logWeight =
        options.pos_weight().sub(one, loc).mul(target, loc).add(one, loc);
    loss = loss.add(logWeight.mul(logTerm.add(m, loc), loc), loc);
  } else {
    loss = loss.add(m, loc).add(logTerm, loc);
  }
  if (options.weight().defined())
    loss = loss.mul(options.weight(), loc);
  return reduce(loss, options.reduction(), loc);
}
