//===- Activation.cpp - nn::ReLU ------------------------------------------===//
//
// GELU is not here: strata has no erf or gelu op yet (issue 20 adds them in
// codegen); nn::GELU comes with them.
//
//===----------------------------------------------------------------------===//
#include "strata/nn/Layers.h"

using namespace strata;
using namespace strata::nn;

ReLUImpl::ReLUImpl() : Module("ReLU") {}

Tensor ReLUImpl::forward(const Tensor &input, SourceLoc loc) {
  return input.relu(loc);
}
