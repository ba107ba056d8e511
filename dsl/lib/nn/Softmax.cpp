//===- Softmax.cpp - softmax and log_softmax, stable by the row maximum ---===//
//
// Both subtract the maximum along the dim before exponentiating, so exp
// never overflows and the largest term is exp(0) = 1 (the sum is >= 1 and
// its log finite). The maximum is detached: mathematically it cancels, and
// differentiating through amax would add a term that is zero only up to
// rounding (and split at ties). Gradients come from autograd over the
// composition; the forward is three fusable reductions/maps.
//
//===----------------------------------------------------------------------===//
#include "../CompositeNode.h"
#include "Common.h"

using namespace strata;
using namespace strata::nn::internal;

namespace {

/// x - max(x) along dim (keepdim), and the wrapped dim.
Tensor shifted(const Tensor &x, int64_t &dim, const char *op,
               const SourceLoc &loc) {
  dim = softmaxDim(x, dim, op, loc);
  Tensor m = x.detach(loc).amax({dim}, true, loc);
  return x.sub(m, loc);
}

} // namespace

Tensor strata::nn::functional::softmax(const Tensor &input, int64_t dim,
                                       SourceLoc loc) {
  Tensor e = shifted(input, dim, "softmax", loc).exp(loc);
  // (Row-major, as PyTorch's: its kernel writes a contiguous result.)
  return detail::composite(
      detail::rowMajorResult(e.div(e.sum({dim}, true, loc), loc), loc),
      "SoftmaxBackward0", {&input});
}

Tensor strata::nn::functional::log_softmax(const Tensor &input, int64_t dim,
                                           SourceLoc loc) {
  Tensor s = shifted(input, dim, "log_softmax", loc);
  return detail::composite(
      detail::rowMajorResult(
          s.sub(s.exp(loc).sum({dim}, true, loc).log(loc), loc), loc),
      "LogSoftmaxBackward0", {&input});
}

Tensor Tensor::softmax(int64_t dim, SourceLoc loc) const {
  return nn::functional::softmax(*this, dim, loc);
}

Tensor Tensor::log_softmax(int64_t dim, SourceLoc loc) const {
  return nn::functional::log_softmax(*this, dim, loc);
}
