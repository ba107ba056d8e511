//===- Ramp.h - a deterministic input for the size tests ------------------===//
//
// OuterSizeTest.cpp and InnerSizeTest.cpp run one structure at many sizes
// and check values against plain C++ loops over this input.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TESTS_UNIT_DSL_RAMP_H
#define STRATA_TESTS_UNIT_DSL_RAMP_H

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

#endif // STRATA_TESTS_UNIT_DSL_RAMP_H
