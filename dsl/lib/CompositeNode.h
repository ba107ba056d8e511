//===- CompositeNode.h - an op built of others, named as PyTorch's node -===//
//
// The one trace hook the ops composed of public API (nn/, the composite
// ops) use: the grad_fn of their last op takes PyTorch's name and inputs.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_COMPOSITENODE_H
#define STRATA_DSL_LIB_COMPOSITENODE_H

#include "strata/Tensor.h"

#include <initializer_list>

namespace strata::detail {
/// `t`, whose last op ends a composite the DSL built of other ops, which
/// PyTorch records as one node named `name` (ClampBackward1) reading
/// `inputs`: its grad_fn gets that name and those next_functions (the
/// where and compares inside are not shown). Nothing when `t` does not
/// require grad.
Tensor composite(Tensor t, const char *name,
                 std::initializer_list<const Tensor *> inputs);
/// `r` as a row-major tensor (a copy where it is not), strides of size-1
/// dims included: the layout of composites PyTorch writes into a
/// contiguous result (softmax, masked_fill, triu/tril, one_hot).
Tensor rowMajorResult(const Tensor &r, const SourceLoc &loc);
} // namespace strata::detail

#endif // STRATA_DSL_LIB_COMPOSITENODE_H
