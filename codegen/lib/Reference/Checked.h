//===- Checked.h - overflow-checked sizes for the reference evaluator -*- C++
//-*-===//
//
// Private to codegen/lib/Reference: element counts and storage ranges the
// evaluator and its input generator compute without trusting int64.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LIB_REFERENCE_CHECKED_H
#define STRATA_LIB_REFERENCE_CHECKED_H

#include "strata/Layout/LayoutAlgebra.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace strata::reference {

/// The element count of `sizes`, or nullopt when it overflows int64.
inline std::optional<int64_t> checkedNumel(llvm::ArrayRef<int64_t> sizes) {
  if (llvm::is_contained(sizes, 0))
    return 0;
  int64_t n = 1;
  for (int64_t s : sizes)
    if (__builtin_mul_overflow(n, s, &n))
      return std::nullopt;
  return n;
}

/// The smallest and largest storage index `l` addresses (numel > 0), or
/// nullopt when they overflow int64.
inline std::optional<std::pair<int64_t, int64_t>>
checkedRange(const layout::Layout &l) {
  int64_t lo = l.offset, hi = l.offset, extent;
  for (size_t k = 0; k < l.sizes.size(); ++k) {
    if (__builtin_mul_overflow(l.sizes[k] - 1, l.strides[k], &extent))
      return std::nullopt;
    int64_t &bound = extent > 0 ? hi : lo;
    if (__builtin_add_overflow(bound, extent, &bound))
      return std::nullopt;
  }
  return std::make_pair(lo, hi);
}

} // namespace strata::reference

#endif // STRATA_LIB_REFERENCE_CHECKED_H
