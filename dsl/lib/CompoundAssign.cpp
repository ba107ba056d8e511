//===- CompoundAssign.cpp - x += y, x -= y, x *= y, x /= y ----------------===//
//
// LibTorch's member operators: each is the in-place op (add_, sub_, mul_,
// div_) with its dtype rule (the result must cast to the destination's
// dtype) and its error located at the user's expression (the operand's
// conversion to LocatedTensor or Scalar happens there).
//
//===----------------------------------------------------------------------===//
#include "strata/Tensor.h"

using namespace strata;

#define STRATA_COMPOUND(op, method)                                            \
  Tensor &Tensor::operator op(LocatedTensor o) {                               \
    return method(o.tensor, o.loc);                                            \
  }                                                                            \
  Tensor &Tensor::operator op(Scalar s) { return method(s, s.loc()); }
STRATA_COMPOUND(+=, add_)
STRATA_COMPOUND(-=, sub_)
STRATA_COMPOUND(*=, mul_)
STRATA_COMPOUND(/=, div_)
#undef STRATA_COMPOUND
