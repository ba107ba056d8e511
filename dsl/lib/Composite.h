//===- Composite.h - helpers of the composed ops ---------------*- C++ -*-===//
//
// ShapeOps.cpp, CompositeReductions.cpp and RangeFactories.cpp build their
// ops from strata's public ops only (views, copy_ into a fresh tensor,
// where, comparisons, arange, reductions), as a user could: the compiler
// fuses them, and their gradients come from differentiating the
// composition. These helpers check arguments with PyTorch's messages.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_COMPOSITE_H
#define STRATA_DSL_COMPOSITE_H

#include "nn/Common.h"

#include <algorithm>
#include <string>

namespace strata {
namespace composite {

using nn::internal::scalarTypeName;
using nn::internal::shapeString;
using nn::internal::wrapDim;

/// `dim` wrapped into [0, rank) for ops that need a real dim (unbind, roll,
/// tril): a 0-d tensor raises PyTorch's "Dimension specified as 0 but tensor
/// has no dimensions".
inline int64_t wrapRealDim(int64_t dim, int64_t rank, const char *op,
                           const SourceLoc &loc) {
  if (rank == 0)
    throw Error(std::string(op) + ": Dimension specified as " +
                    std::to_string(dim) + " but tensor has no dimensions",
                "the op needs a tensor with dims: unsqueeze(0) first", loc);
  return wrapDim(dim, rank, op, loc);
}

/// Every dim of `dims` wrapped (all dims when empty), sorted, each once; or
/// PyTorch's errors for a dim out of range or named twice.
inline Shape wrapDims(const Shape &dims, int64_t rank, const char *op,
                      const SourceLoc &loc) {
  Shape out;
  if (dims.empty()) {
    for (int64_t d = 0; d < rank; ++d)
      out.push_back(d);
    return out;
  }
  for (int64_t d : dims) {
    int64_t w = wrapDim(d, rank, op, loc);
    if (std::find(out.begin(), out.end(), w) != out.end())
      throw Error(std::string(op) + ": dim " + std::to_string(w) +
                      " appears multiple times in the list of dims",
                  "name each dim once", loc);
    out.push_back(w);
  }
  if (rank == 0) // a 0-d tensor's dim 0 and -1 name the tensor itself
    out.clear();
  std::sort(out.begin(), out.end());
  return out;
}

/// The number of elements a reduction over (wrapped) `dims` combines.
inline int64_t reducedCount(const Shape &sizes, const Shape &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= sizes[static_cast<size_t>(d)];
  return n;
}

/// PyTorch's promoteTypes of two tensors' dtypes (bool < int32 < int64 <
/// float32 < float64: the enum has no unsigned or half types, so the
/// promotion is the larger of the two in that order).
inline DType promote(DType a, DType b) {
  auto rankOf = [](DType t) {
    switch (t) {
    case DType::Bool:
      return 0;
    case DType::I32:
      return 1;
    case DType::I64:
      return 2;
    case DType::F32:
      return 3;
    case DType::F64:
      return 4;
    }
    return 0;
  };
  return rankOf(a) >= rankOf(b) ? a : b;
}

/// A 0-d tensor holding `v` with `dtype` on `like`'s device.
inline Tensor scalarOf(const Tensor &like, Scalar v, DType dtype,
                       const SourceLoc &loc) {
  return full({}, v, TensorOptions(dtype).device(like.device(loc)), loc);
}

/// arange(n) (i64) shaped to lie along `dim` of a rank-`rank` tensor.
inline Tensor positionsAlong(const Tensor &like, int64_t n, int64_t dim,
                             int64_t rank, const SourceLoc &loc) {
  Shape s(static_cast<size_t>(rank), 1);
  s[static_cast<size_t>(dim)] = n;
  return arange(n, TensorOptions(DType::I64).device(like.device(loc)), loc)
      .view(s, loc);
}

} // namespace composite
} // namespace strata

#endif // STRATA_DSL_COMPOSITE_H
