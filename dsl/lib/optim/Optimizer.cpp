//===- Optimizer.cpp - optim::Optimizer: parameters and zero_grad ---------===//
#include "strata/optim.h"

using namespace strata;
using namespace strata::optim;

Optimizer::Optimizer(std::vector<Tensor> params, SourceLoc loc)
    : params_(std::move(params)) {
  if (params_.empty())
    throw Error("optimizer got an empty parameter list",
                "pass model->parameters() (a module with parameters)", loc);
  for (const Tensor &p : params_)
    if (!p.is_leaf(loc))
      throw Error("can't optimize a non-leaf Tensor",
                  "optimize leaves (parameters); detach() a computed tensor "
                  "and requires_grad_() it to make one",
                  loc);
}

Optimizer::~Optimizer() = default;

void Optimizer::zero_grad(bool set_to_none) {
  for (Tensor &p : params_) {
    Tensor &g = p.mutable_grad();
    if (!g.defined())
      continue;
    if (set_to_none)
      g = Tensor();
    else
      g.zero_();
  }
}
