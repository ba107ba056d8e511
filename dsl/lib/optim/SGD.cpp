//===- SGD.cpp - optim::SGD with PyTorch 1.13's update
//---------------------===//
//
// torch.optim.sgd._single_tensor_sgd, operation for operation, recorded
// under a NoGradGuard. Only the parameter is written in place (the user's
// tensor); the momentum buffer is rebound to a new tensor each step. A
// strata.kernel writes one storage (`into`), so plain SGD is one kernel per
// parameter and SGD with momentum two (the new buffer; the parameter's
// write reading it). All updates are evaluated together at the end of
// step(): one program per step, compiled once (lr and the other factors
// are program arguments).
//
//===----------------------------------------------------------------------===//
#include "../nn/Common.h"

#include "strata/Autograd.h"
#include "strata/optim.h"

using namespace strata;
using namespace strata::optim;

SGD::SGD(std::vector<Tensor> params, const SGDOptions &options, SourceLoc loc)
    : Optimizer(std::move(params), loc), options_(options),
      buffers_(params_.size()) {
  using nn::internal::formatDouble;
  if (options.lr() < 0)
    throw Error("Invalid learning rate: " + formatDouble(options.lr()),
                "a learning rate >= 0", loc);
  if (options.momentum() < 0)
    throw Error("Invalid momentum value: " + formatDouble(options.momentum()),
                "a momentum >= 0", loc);
  if (options.weight_decay() < 0)
    throw Error("Invalid weight_decay value: " +
                    formatDouble(options.weight_decay()),
                "a weight_decay >= 0", loc);
  if (options.nesterov() &&
      (options.momentum() <= 0 || options.dampening() != 0))
    throw Error("Nesterov momentum requires a momentum and zero dampening",
                "set momentum > 0 and dampening 0, or nesterov false", loc);
}

void SGD::step(SourceLoc loc) {
  NoGradGuard noGrad;
  const SGDOptions &o = options_;
  std::vector<Tensor> updated;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor &p = params_[i];
    const Tensor &grad = p.grad(loc);
    if (!grad.defined())
      continue;
    // d_p = grad + weight_decay * p, recorded afresh for each use: a value
    // read by two kernels is written to memory once and read back, while
    // an expression is recomputed inside each kernel that reads it.
    // Each `add(x, alpha)` is PyTorch's: one fused multiply-add.
    auto gradient = [&] {
      return o.weight_decay() != 0
                 ? grad.add(p, Scalar(o.weight_decay(), loc), loc)
                 : grad;
    };
    Tensor d;
    if (o.momentum() != 0) {
      // The buffer is the optimizer's own: a new tensor each step (buf.mul_
      // then add_ in PyTorch, the same arithmetic), computed by a kernel
      // that reads the gradient rather than written in place by a kernel
      // of its own; the first step clones d_p (it may be the gradient).
      Tensor &buf = buffers_[i];
      buf = buf.defined()
                ? (buf * Scalar(o.momentum(), loc))
                      .add(gradient(), Scalar(1 - o.dampening(), loc), loc)
                : gradient().clone(loc);
      updated.push_back(buf);
      d = o.nesterov() ? gradient().add(buf, Scalar(o.momentum(), loc), loc)
                       : buf;
    } else {
      d = gradient();
    }
    p.add_(d, Scalar(-o.lr(), loc), loc);
    updated.push_back(p);
  }
  strata::eval(updated, loc);
}
