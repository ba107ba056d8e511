//===- Dropout.cpp - functional::dropout and nn::Dropout ------------------===//
//
// PyTorch's dropout: noise = bernoulli(1 - p) / (1 - p); input * noise. The
// uniform draws come from strata's generator (manual_seed), so masks are
// reproducible within strata but differ from PyTorch's.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "strata/nn/Layers.h"

using namespace strata;
using namespace strata::nn;

namespace {
void checkP(double p, const SourceLoc &loc) {
  if (!(p >= 0 && p <= 1))
    throw Error("dropout probability has to be between 0 and 1, but got " +
                    internal::formatDouble(p),
                "p is the probability of zeroing an element, in [0, 1]", loc);
}
} // namespace

Tensor strata::nn::functional::dropout(const Tensor &input,
                                       const DropoutFuncOptions &options,
                                       SourceLoc loc) {
  double p = options.p();
  checkP(p, loc);
  if (p == 0 || !options.training() || input.numel(loc) == 0)
    return input;
  if (p == 1)
    return input.mul(internal::scalarLike(input, 0, loc), loc);
  DType t = input.dtype(loc);
  Tensor u = rand(input.sizes(loc), isFloatingPoint(t) ? t : DType::F32, loc);
  if (!input.device(loc).is_cpu())
    u = u.to(input.device(loc), loc);
  Tensor noise =
      (u < Scalar(1 - p, loc)).to(u.dtype(loc), loc) / Scalar(1 - p, loc);
  return input.mul(noise, loc);
}

DropoutImpl::DropoutImpl(const DropoutOptions &options, SourceLoc loc)
    : Module("Dropout"), options(options) {
  checkP(options.p(), loc);
}

Tensor DropoutImpl::forward(const Tensor &input, SourceLoc loc) {
  return functional::dropout(
      input,
      functional::DropoutFuncOptions(options.p()).training(is_training()), loc);
}
