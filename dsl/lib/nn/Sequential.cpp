//===- Sequential.cpp - nn::Sequential ------------------------------------===//
#include "strata/nn/Layers.h"

#include <string>

using namespace strata;
using namespace strata::nn;

SequentialImpl::SequentialImpl() : Module("Sequential") {}

void SequentialImpl::append(std::shared_ptr<Module> module,
                            Function<Tensor(const Tensor &, SourceLoc)> fwd) {
  // PyTorch names a Sequential's children by position.
  register_module(std::to_string(forwards_.size()), std::move(module));
  forwards_.push_back(std::move(fwd));
}

Tensor SequentialImpl::forward(const Tensor &input, SourceLoc loc) {
  Tensor x = input;
  for (const auto &f : forwards_)
    x = f(x, loc);
  return x;
}

std::shared_ptr<Module> SequentialImpl::operator[](size_t index) const {
  return children().at(index); // std::out_of_range past the end, as at()
}
