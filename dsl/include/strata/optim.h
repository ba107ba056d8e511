//===- optim.h - torch::optim: SGD, Adam, AdamW -----------------*- C++ -*-===//
//
// Optimizers with LibTorch's names, options and PyTorch 1.13's update rules
// (torch.optim's single-tensor code paths, operation for operation). A
// step() records every parameter's update with in-place ops under a
// NoGradGuard and evaluates them together, as one program in which each
// parameter's update (and its state: momentum buffer, moments) is one fused
// kernel. Scalars (lr, bias corrections) are program arguments, so a
// learning-rate schedule or Adam's changing step sizes reuse the compiled
// program. One parameter group per optimizer.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_OPTIM_H
#define STRATA_OPTIM_H

#include "strata/Arg.h"
#include "strata/Tensor.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace strata {
namespace optim {

/// The base of the optimizers: the parameters and zero_grad().
class Optimizer {
public:
  /// Optimizes `params`: leaves (PyTorch's "can't optimize a non-leaf
  /// Tensor"), at least one ("optimizer got an empty parameter list").
  explicit Optimizer(std::vector<Tensor> params,
                     SourceLoc loc = SourceLoc::current());
  /// Virtual: optimizers are used through the base too.
  virtual ~Optimizer();
  /// One update of every parameter that has a gradient (parameters without
  /// one are skipped, as in PyTorch); evaluates the updates.
  virtual void step(SourceLoc loc = SourceLoc::current()) = 0;
  /// Resets every gradient: zeros in place (PyTorch 1.13's default), or
  /// undefined when `set_to_none` (the next backward() then writes the
  /// gradient instead of adding it to zeros).
  void zero_grad(bool set_to_none = false);
  /// The parameters, in the order given.
  const std::vector<Tensor> &parameters() const { return params_; }

protected:
  /// The parameters.
  std::vector<Tensor> params_;
};

/// Options of SGD (torch::optim::SGDOptions).
struct SGDOptions {
  /// Learning rate `lr`.
  SGDOptions(double lr) : lr_(lr) {}
  /// Learning rate.
  STRATA_ARG(double, lr);
  /// Momentum factor (0: plain SGD).
  STRATA_ARG(double, momentum) = 0;
  /// Dampening of the gradient added to the momentum buffer.
  STRATA_ARG(double, dampening) = 0;
  /// L2 penalty added to the gradient (weight_decay * p).
  STRATA_ARG(double, weight_decay) = 0;
  /// Nesterov momentum (needs momentum > 0 and dampening 0).
  STRATA_ARG(bool, nesterov) = false;
};

/// Stochastic gradient descent with PyTorch's rules:
/// g += wd * p; buf = g (first step) or buf = momentum * buf + (1 -
/// dampening) * g; g = nesterov ? g + momentum * buf : buf; p -= lr * g.
class SGD : public Optimizer {
public:
  /// SGD over `params`; PyTorch's errors for a negative lr, momentum or
  /// weight_decay and for nesterov without momentum or with dampening.
  SGD(std::vector<Tensor> params, const SGDOptions &options,
      SourceLoc loc = SourceLoc::current());
  /// One update (one fused kernel per parameter).
  void step(SourceLoc loc = SourceLoc::current()) override;
  /// The options; changing lr() here takes effect at the next step.
  SGDOptions &options() { return options_; }
  /// The momentum buffer of parameter `i` (undefined before its first step
  /// or without momentum).
  const Tensor &momentum_buffer(size_t i) const { return buffers_.at(i); }

private:
  SGDOptions options_;
  std::vector<Tensor> buffers_;
};

/// Options of Adam (torch::optim::AdamOptions).
struct AdamOptions {
  /// Learning rate `lr` (default 1e-3).
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  /// The two decay rates (a pair where LibTorch has a tuple:
  /// `.betas({0.9, 0.98})` reads the same).
  using Betas = std::pair<double, double>;
  /// Learning rate.
  STRATA_ARG(double, lr);
  /// Decay rates of the first and second moment averages.
  STRATA_ARG(Betas, betas) = {0.9, 0.999};
  /// Added to the denominator.
  STRATA_ARG(double, eps) = 1e-8;
  /// L2 penalty added to the gradient (Adam) or decoupled (AdamW).
  STRATA_ARG(double, weight_decay) = 0;
  /// Use the running maximum of the second moment (AMSGrad).
  STRATA_ARG(bool, amsgrad) = false;
};

/// Options of AdamW (torch::optim::AdamWOptions): Adam's, weight_decay
/// 1e-2. Its setters return AdamOptions&, which AdamW takes.
struct AdamWOptions : AdamOptions {
  /// Learning rate `lr` (default 1e-3), weight_decay 1e-2.
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay(1e-2); }
};

/// Adam (PyTorch's rules): g += wd * p; m = b1 m + (1 - b1) g;
/// v = b2 v + (1 - b2) g^2; p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 -
/// b2^t) + eps) (v: its running maximum with amsgrad).
class Adam : public Optimizer {
public:
  /// Adam over `params`; PyTorch's errors for a negative lr, eps or
  /// weight_decay and betas outside [0, 1).
  Adam(std::vector<Tensor> params, const AdamOptions &options = {},
       SourceLoc loc = SourceLoc::current());
  /// One update (one fused kernel per parameter).
  void step(SourceLoc loc = SourceLoc::current()) override;
  /// The options; changes take effect at the next step.
  AdamOptions &options() { return options_; }
  /// The steps parameter `i` has taken.
  int64_t step_count(size_t i) const { return steps_.at(i); }

protected:
  /// Adam with `decoupled` weight decay (AdamW): p *= 1 - lr * wd first.
  Adam(std::vector<Tensor> params, const AdamOptions &options, bool decoupled,
       SourceLoc loc);

private:
  AdamOptions options_;
  bool decoupled_;
  std::vector<Tensor> expAvg_, expAvgSq_, maxExpAvgSq_;
  std::vector<int64_t> steps_;
};

/// AdamW (PyTorch's rules): Adam with decoupled weight decay,
/// p *= 1 - lr * wd before the Adam update of the plain gradient.
class AdamW : public Adam {
public:
  /// AdamW over `params` (Adam's checks).
  AdamW(std::vector<Tensor> params, const AdamOptions &options = AdamWOptions(),
        SourceLoc loc = SourceLoc::current());
};

} // namespace optim
} // namespace strata

#endif // STRATA_OPTIM_H
