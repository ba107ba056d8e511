//===- LayoutInternal.h - what the layout algebra's files share -*- C++ -*-===//
//
// Private to runtime/lib/Layout: the algebra's error channel (a rule fails
// with PyTorch's message prefixed by "<op>: "), overflow-checked arithmetic
// on user sizes and strides, and the dim-list rules that both the queries
// (LayoutAlgebra.cpp) and the view ops (ViewOps.cpp) apply.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_RUNTIME_LIB_LAYOUT_LAYOUTINTERNAL_H
#define STRATA_RUNTIME_LIB_LAYOUT_LAYOUTINTERNAL_H

#include "strata/Layout/LayoutAlgebra.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata::layout::detail {

/// Appends `part` to `s` (an integer in decimal).
template <typename P> void appendPart(std::string &s, const P &part) {
  if constexpr (std::is_integral_v<P>)
    s += std::to_string(part);
  else
    s += part;
}

/// "<op>: " followed by the parts; integers are printed in decimal.
template <typename... Parts>
std::string message(const char *op, const Parts &...parts) {
  std::string s = op;
  s += ": ";
  (appendPart(s, parts), ...);
  return s;
}

/// An error on its way out; converts to a failed Result of any type, so that
/// a rule can return the error of a rule it called.
struct Failure {
  std::string error;
  template <typename T> operator Result<T>() const {
    return Result<T>::failure(error);
  }
};

/// The failure of rule `op` with message "<op>: " and the parts.
template <typename... Parts>
Failure fail(const char *op, const Parts &...parts) {
  return Failure{message(op, parts...)};
}

// Sizes and strides come from users; arithmetic on them must not overflow
// (signed overflow is undefined and would corrupt a layout silently).
inline bool mulOverflows(int64_t a, int64_t b, int64_t &out) {
  return __builtin_mul_overflow(a, b, &out);
}
inline bool addOverflows(int64_t a, int64_t b, int64_t &out) {
  return __builtin_add_overflow(a, b, &out);
}
/// Two's-complement product, as PyTorch's int64 arithmetic behaves in
/// practice; for strides of size-1 dims, which no index ever multiplies.
inline int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

/// The element count of `sizes` (all >= 0), or nullopt when it does not fit
/// in int64. A zero anywhere makes the count 0 even if a partial product of
/// the other sizes would overflow.
std::optional<int64_t> checkedNumel(IntList sizes);

/// Smallest and largest index, or nullopt on overflow. numel must be > 0.
std::optional<std::pair<int64_t, int64_t>>
checkedIndexRange(IntList sizes, IntList strides, int64_t offset);

/// Wraps each of `dims` in turn; the first bad one is the error.
Result<Shape> wrapDims(IntList dims, int64_t rank, const char *op);

/// Wraps every dim of `dims` and rejects repeats, as PyTorch's
/// dim_list_to_bitset. The result has one flag per dim (at least one, so a
/// 0-dim tensor's wrapped dim 0 has a slot). PyTorch's reductions wrap the
/// whole list before looking for repeats (`wrapFirst`); flip checks each dim
/// as it goes. The difference shows in which error a list like [0, 0, 5]
/// gets.
Result<std::vector<bool>> dimFlags(IntList dims, int64_t rank, const char *op,
                                   bool wrapFirst = false);

} // namespace strata::layout::detail

#endif // STRATA_RUNTIME_LIB_LAYOUT_LAYOUTINTERNAL_H
