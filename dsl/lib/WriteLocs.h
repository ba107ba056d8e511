//===- WriteLocs.h - where a storage's recent in-place writes were made ---===//
//
// Backward's "modified by an inplace operation" error names the write that
// made the version after the one a saved tensor expected. A storage written
// in place every step (a parameter updated by its optimizer, a .grad
// accumulated into) would keep one location per write for the whole run:
// 8 bytes a step, without bound. This keeps the last kKept to 2 * kKept of
// them; an older write is reported without its location.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_WRITELOCS_H
#define STRATA_DSL_WRITELOCS_H

#include "strata/strata.h"

#include <cstdint>
#include <vector>

namespace strata::detail {

class WriteLocs {
public:
  /// Records the write that made the next version.
  void push(const SourceLoc &loc) {
    if (locs_.size() >= 2 * kKept) {
      locs_.erase(locs_.begin(), locs_.begin() + kKept);
      first_ += kKept;
    }
    locs_.push_back(loc);
  }
  /// The write that made version `v + 1`, if still kept.
  const SourceLoc *madeAfter(int64_t v) const {
    int64_t i = v - first_;
    if (i < 0 || i >= static_cast<int64_t>(locs_.size()))
      return nullptr;
    return &locs_[static_cast<size_t>(i)];
  }
  /// Versions whose writes are kept at most (tests).
  static constexpr size_t kKept = 128;

private:
  std::vector<SourceLoc> locs_;
  /// The version the first kept write was made after.
  int64_t first_ = 0;
};

} // namespace strata::detail

#endif // STRATA_DSL_WRITELOCS_H
