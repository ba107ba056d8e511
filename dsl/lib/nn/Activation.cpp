//===- Activation.cpp - nn::ReLU, nn::GELU --------------------------------===//
//
// Modules without parameters over the tensor ops: relu(), gelu(approximate)
// (whose errors, such as an unknown approximation, are the op's).
//
//===----------------------------------------------------------------------===//
#include "strata/nn/Layers.h"

using namespace strata;
using namespace strata::nn;

ReLUImpl::ReLUImpl() : Module("ReLU") {}

Tensor ReLUImpl::forward(const Tensor &input, SourceLoc loc) {
  return input.relu(loc);
}

GELUImpl::GELUImpl(const GELUOptions &options)
    : Module("GELU"), options(options) {}

Tensor GELUImpl::forward(const Tensor &input, SourceLoc loc) {
  return input.gelu(options.approximate(), loc);
}
