//===- Ramp.h - a deterministic input for the size tests ------------------===//
//
// OuterSizeTest.cpp, InnerSizeTest.cpp and MeanSizeTest.cpp run one
// structure at many sizes and check values against plain C++ loops over
// this input (the GPU tests' DslCuda*Size.cpp too), and count compiles.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TESTS_UNIT_DSL_RAMP_H
#define STRATA_TESTS_UNIT_DSL_RAMP_H

#include "strata/JIT/Jit.h"

#include <cstdint>
#include <vector>

/// n values in [-6, 6.5], in steps of 1/8, repeating every 101 elements
/// (exact in f32), shifted by `salt`.
inline std::vector<float> ramp(int64_t n, int64_t salt = 0) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(((i + salt) * 37) % 101) / 8.0f - 6.0f;
  return v;
}

/// Kernels compiled by LLVM or read from the disk cache (which a run before
/// this one may have filled).
inline int64_t kernelCompiles() {
  return strata::jit::cacheStats().compiles +
         strata::jit::cacheStats().diskHits;
}

/// Inner sizes: the small ones (constants) first, then dynamic ones.
inline const std::vector<int64_t> kSizes = {0,  1,   2,  3,    9, 17,
                                            64, 100, 33, 1001, 8, 10};
/// Where the compile count is taken: after the first dynamic size.
inline constexpr int64_t kFirstDynamic = 9;

#endif // STRATA_TESTS_UNIT_DSL_RAMP_H
