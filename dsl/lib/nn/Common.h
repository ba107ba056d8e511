//===- Common.h - helpers shared by the nn and optim sources ----*- C++ -*-===//
//
// These files build on the public API only (strata/strata.h): they are what
// a user could write, so they include no trace internals (dsl/lib/Impl.h).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_NN_COMMON_H
#define STRATA_DSL_NN_COMMON_H

#include "strata/Functions.h"
#include "strata/nn/Functional.h"

#include <cstdio>
#include <string>

namespace strata {
namespace detail {
/// PyTorch's ScalarType name ("Float", "Long"), as its "not implemented
/// for" messages print it (defined in dsl/lib/Ops.cpp, declared in Impl.h).
const char *torchTypeName(DType t);
} // namespace detail
namespace nn {
namespace internal {

/// PyTorch's ScalarType name in kernel messages ("Float", "Long", ...):
/// the DSL's one table (dsl/lib/Ops.cpp).
inline const char *scalarTypeName(DType t) {
  return strata::detail::torchTypeName(t);
}

/// "[3, 4]", as c10 prints IntArrayRef.
inline std::string shapeString(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

/// A double as C++'s ostream prints it ("1.5", "2", "-0.1"), as in
/// PyTorch's TORCH_CHECK messages.
inline std::string formatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// `dim` wrapped into [0, rank) (a 0-d tensor takes 0 and -1, as PyTorch),
/// or PyTorch's "Dimension out of range" error named after `op`.
inline int64_t wrapDim(int64_t dim, int64_t rank, const char *op,
                       const SourceLoc &loc) {
  int64_t r = rank > 0 ? rank : 1;
  if (dim < -r || dim >= r)
    throw Error(std::string(op) +
                    ": Dimension out of range (expected to be in range of [" +
                    std::to_string(-r) + ", " + std::to_string(r - 1) +
                    "], but got " + std::to_string(dim) + ")",
                "count dims from 0, or from the end with negative dims", loc);
  return dim < 0 ? dim + r : dim;
}

/// The wrapped dim of softmax/log_softmax (`op`) over `x`, or PyTorch's
/// errors: a dim out of range, an integer input ("softmax_lastdim_kernel_impl"
/// not implemented for 'Long').
inline int64_t softmaxDim(const Tensor &x, int64_t dim, const char *op,
                          const SourceLoc &loc) {
  int64_t rank = x.dim(loc);
  dim = wrapDim(dim, rank, op, loc);
  if (!isFloatingPoint(x.dtype(loc))) {
    bool last = rank == 0 || dim == rank - 1;
    throw Error(std::string("\"") + op + (last ? "_lastdim" : "") +
                    "_kernel_impl\" not implemented for '" +
                    scalarTypeName(x.dtype(loc)) + "'",
                "convert the input to a floating-point dtype first: "
                "x.to(kFloat32)",
                loc);
  }
  return dim;
}

/// The loss reduced as `r` says (Mean: the plain mean).
inline Tensor reduce(const Tensor &loss, Reduction r, const SourceLoc &loc) {
  switch (r) {
  case Reduction::None:
    return loss;
  case Reduction::Sum:
    return loss.sum({}, false, loc);
  case Reduction::Mean:
    break;
  }
  return loss.mean({}, false, loc);
}

/// A 0-d tensor holding `v` with `t`'s dtype and device (an operand of
/// where(), which takes tensors).
inline Tensor scalarLike(const Tensor &t, double v, const SourceLoc &loc) {
  return full({}, v, TensorOptions(t.dtype(loc)).device(t.device(loc)), loc);
}

} // namespace internal
} // namespace nn
} // namespace strata

#endif // STRATA_DSL_NN_COMMON_H
