//===- Adam.cpp - optim::Adam and optim::AdamW with PyTorch 1.13's update
//--===//
//
// torch.optim.adam._single_tensor_adam and adamw._single_tensor_adamw,
// operation for operation, recorded under a NoGradGuard. The parameter is
// written in place once; the moments are the optimizer's own and are
// rebound to new tensors, so both come from one kernel (two results) and
// the parameter's write reads them: two kernels per parameter (a
// strata.kernel writes one storage). Every update is evaluated at the end
// of step(), one program per step. The
// bias corrections change every step but are program arguments, so the
// step compiles once. Python computes them in double and each op rounds
// the factor to the tensor's dtype, as strata's scalars do.
//
//===----------------------------------------------------------------------===//
#include "../OpBuilders.h"
#include "../nn/Common.h"

#include "strata/Autograd.h"
#include "strata/optim.h"

#include <cmath>

using namespace strata;
using namespace strata::optim;

Adam::Adam(std::vector<Tensor> params, const AdamOptions &options,
           SourceLoc loc)
    : Adam(std::move(params), options, false, loc) {}

Adam::Adam(std::vector<Tensor> params, const AdamOptions &options,
           bool decoupled, SourceLoc loc)
    : Optimizer(std::move(params), loc), options_(options),
      decoupled_(decoupled), expAvg_(params_.size()), expAvgSq_(params_.size()),
      maxExpAvgSq_(params_.size()), steps_(params_.size(), 0) {
  using nn::internal::formatDouble;
  if (options.lr() < 0)
    throw Error("Invalid learning rate: " + formatDouble(options.lr()),
                "a learning rate >= 0", loc);
  if (options.eps() < 0)
    throw Error("Invalid epsilon value: " + formatDouble(options.eps()),
                "an eps >= 0", loc);
  double betas[2] = {options.betas().first, options.betas().second};
  for (int i = 0; i < 2; ++i)
    if (!(betas[i] >= 0 && betas[i] < 1))
      throw Error("Invalid beta parameter at index " + std::to_string(i) +
                      ": " + formatDouble(betas[i]),
                  "betas are in [0, 1)", loc);
  if (options.weight_decay() < 0)
    throw Error("Invalid weight_decay value: " +
                    formatDouble(options.weight_decay()),
                "a weight_decay >= 0", loc);
}

AdamW::AdamW(std::vector<Tensor> params, const AdamOptions &options,
             SourceLoc loc)
    : Adam(std::move(params), options, true, loc) {}

void Adam::step(SourceLoc loc) {
  NoGradGuard noGrad;
  const AdamOptions &o = options_;
  double beta1 = o.betas().first, beta2 = o.betas().second;
  std::vector<Tensor> updated;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor &p = params_[i];
    const Tensor &g = p.grad(loc);
    if (!g.defined())
      continue;
    TensorOptions state = p.options(loc).requires_grad(false);
    Tensor &m = expAvg_[i], &v = expAvgSq_[i], &vmax = maxExpAvgSq_[i];
    if (!m.defined()) { // zeros like p
      m = zeros(p.sizes(loc), state, loc);
      v = zeros(p.sizes(loc), state, loc);
      if (o.amsgrad())
        vmax = zeros(p.sizes(loc), state, loc);
    }
    int64_t step = ++steps_[i];
    // grad + weight_decay * p (Adam), recorded afresh for each use: a
    // value read by two kernels is written once and read back, an
    // expression is recomputed inside each kernel that reads it.
    auto gradient = [&] {
      return !decoupled_ && o.weight_decay() != 0
                 ? g.add(p, Scalar(o.weight_decay(), loc), loc)
                 : g;
    };
    // exp_avg.mul_(b1).add_(g, alpha=1-b1), exp_avg_sq.mul_(b2).addcmul_(g,
    // g, value=1-b2): the same arithmetic (each add one fused multiply-add,
    // as PyTorch's kernels), as new tensors (see above).
    Tensor vOld = v;
    auto secondMoment = [&] {
      return detail::addProduct(vOld * Scalar(beta2, loc), gradient(),
                                gradient(), Scalar(1 - beta2, loc), loc);
    };
    m = (m * Scalar(beta1, loc)).add(gradient(), Scalar(1 - beta1, loc), loc);
    v = secondMoment();
    updated.push_back(m);
    updated.push_back(v);
    double bias1 = 1 - std::pow(beta1, static_cast<double>(step));
    double bias2 = 1 - std::pow(beta2, static_cast<double>(step));
    double stepSize = o.lr() / bias1;
    double bias2Sqrt = std::sqrt(bias2);
    Tensor second = v;
    if (o.amsgrad()) {
      vmax = maximum(vmax, secondMoment(), loc); // in the moments' kernel
      updated.push_back(vmax);
      second = vmax;
    }
    Tensor denom =
        second.sqrt(loc) / Scalar(bias2Sqrt, loc) + Scalar(o.eps(), loc);
    // AdamW's p.mul_(1 - lr * wd) and then addcdiv_(m, denom,
    // value=-step_size) (self + value * t1 / t2, in ATen's order): one
    // write of p.
    Tensor decayed =
        decoupled_ ? p * Scalar(1 - o.lr() * o.weight_decay(), loc) : p;
    p.copy_(decayed + m * Scalar(-stepSize, loc) / denom, loc);
    updated.push_back(p);
  }
  strata::eval(updated, loc);
}
