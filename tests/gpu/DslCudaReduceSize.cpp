//===- DslCudaReduceSize.cpp - one PTX for every reduced size on cuda:0 ---===//
//
// Part of strata-gpu-dsl-smoke (run by tests/gpu/run.sh on a GPU and by the
// CUDA simulator, ctest `cudasim-dsl`). Reductions of two loops or more take
// their inner sizes, strides, offsets, split count and (when the innermost
// loop is reduced) their kind, row or column, as parameters
// (KernelToCUDAReduce.cpp), so their source — the PTX cache's key — is
// their layout class plus whether they split: row sums, means and maxima
// over rows of 2 to 1001 elements (column kind below 32, row kind from
// 32) need NVRTC for the first length only, and those long enough to split
// (other split counts) for the first split one. The same for column sums
// and means over a changing number of rows. Sizes 0 and 1 are other loop
// nests (no points; a dim of 1) and run first, uncounted. Counted: PTX
// misses (compiles plus disk-cache hits). The ramp's sums are exact in
// f32 (multiples of 1/8 below 2^21), so every value is compared exactly
// with plain C++, whatever the order of the sum.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include "strata/JIT/CudaJit.h"

#include "CudaTest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace strata;

namespace {

template <typename T> std::vector<T> values(int64_t n, int64_t salt) {
  std::vector<float> r = ramp(n, salt);
  return std::vector<T>(r.begin(), r.end());
}

/// The PTX misses over a run of sizes: none after the `first` counted size
/// until the `split` one (the split source's first), none after that.
struct PtxPhases {
  int64_t first, split;
  int64_t before = -1, splitBefore = -1;
  void saw(int64_t size) {
    if (size == first) {
      before = ptxMisses();
    } else if (size == split) {
      splitBefore = ptxMisses();
    } else if (before >= 0 && splitBefore < 0) {
      ASSERT_EQ(ptxMisses(), before) << size;
    }
  }
};

// x[5, cols].sum({1}), .mean({1}), .amax({1}) and the row sums of a padded
// view (rows `cols + 3` apart, from element 1: its stride and offset are
// parameters too, so it shares the plain sum's PTX): unsplit lengths from
// 7 on share one PTX per kernel, split ones (8192 and longer) another.
template <typename T> void rowReductions() {
  const int64_t rows = 5;
  PtxPhases phases{7, 10000};
  for (int64_t cols :
       {0, 1, 7, 2, 3, 9, 31, 32, 33, 100, 1001, 64, 10000, 8200, 12345}) {
    std::vector<T> xv = values<T>(rows * cols, cols);
    Tensor x = from_vector(xv, {rows, cols}).to(kCuda);
    std::vector<T> sum = x.sum({1}).to_vector<T>();
    std::vector<T> mean = x.mean({1}).to_vector<T>();
    std::vector<T> top =
        cols ? x.amax({1}).to_vector<T>() : std::vector<T>(rows);
    std::vector<T> pv = values<T>(rows * (cols + 3), cols + 1);
    Tensor padded = from_vector(pv, {rows, cols + 3}).to(kCuda);
    std::vector<T> inner = padded.narrow(1, 1, cols).sum({1}).to_vector<T>();
    ASSERT_EQ(sum.size(), static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      double want = 0;
      T best = -INFINITY;
      for (int64_t c = 0; c < cols; ++c) {
        want += xv[r * cols + c];
        best = std::max(best, xv[r * cols + c]);
      }
      ASSERT_EQ(sum[r], static_cast<T>(want)) << cols << " " << r;
      double view = 0;
      for (int64_t c = 0; c < cols; ++c)
        view += pv[r * (cols + 3) + 1 + c];
      ASSERT_EQ(inner[r], static_cast<T>(view)) << cols << " " << r;
      if (cols == 0) {
        ASSERT_TRUE(std::isnan(mean[r])) << r;
        continue;
      }
      ASSERT_EQ(mean[r], static_cast<T>(want) / static_cast<T>(cols))
          << cols << " " << r;
      ASSERT_EQ(top[r], best) << cols << " " << r;
    }
    ASSERT_NO_FATAL_FAILURE(phases.saw(cols));
  }
  EXPECT_EQ(ptxMisses(), phases.splitBefore);
}

TEST(DslCuda, NewInnerSizesCompileOnceRowReductions) {
  REQUIRE_GPU();
  rowReductions<float>();
}

TEST(DslCuda, NewInnerSizesCompileOnceRowReductionsF64) {
  REQUIRE_GPU();
  rowReductions<double>();
}

// x[3, rows, 40].sum({1}) and .mean({1}) (an inner loop reduced: column
// kind) and y[rows, 40].sum({0}) (the outermost reduced): unsplit row
// counts share one PTX, split ones (128 rows and more: 3 to 16 partials
// per output) another.
template <typename T> void columnReductions() {
  const int64_t batch = 3, cols = 40;
  PtxPhases phases{5, 200};
  for (int64_t rows : {0, 1, 5, 2, 3, 17, 100, 127, 64, 200, 129, 300, 1000}) {
    std::vector<T> xv = values<T>(batch * rows * cols, rows);
    Tensor x = from_vector(xv, {batch, rows, cols}).to(kCuda);
    std::vector<T> sum = x.sum({1}).to_vector<T>();
    std::vector<T> mean = x.mean({1}).to_vector<T>();
    std::vector<T> yv = values<T>(rows * cols, rows + 1);
    Tensor y = from_vector(yv, {rows, cols}).to(kCuda);
    std::vector<T> col = y.sum({0}).to_vector<T>();
    ASSERT_EQ(sum.size(), static_cast<size_t>(batch * cols));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t c = 0; c < cols; ++c) {
        double want = 0;
        for (int64_t r = 0; r < rows; ++r)
          want += xv[(b * rows + r) * cols + c];
        ASSERT_EQ(sum[b * cols + c], static_cast<T>(want))
            << rows << " " << b << " " << c;
        if (rows == 0) {
          ASSERT_TRUE(std::isnan(mean[b * cols + c]));
        } else {
          ASSERT_EQ(mean[b * cols + c],
                    static_cast<T>(want) / static_cast<T>(rows))
              << rows << " " << b << " " << c;
        }
      }
    for (int64_t c = 0; c < cols; ++c) {
      double want = 0;
      for (int64_t r = 0; r < rows; ++r)
        want += yv[r * cols + c];
      ASSERT_EQ(col[c], static_cast<T>(want)) << rows << " " << c;
    }
    ASSERT_NO_FATAL_FAILURE(phases.saw(rows));
  }
  EXPECT_EQ(ptxMisses(), phases.splitBefore);
}

TEST(DslCuda, NewInnerSizesCompileOnceColumnReductions) {
  REQUIRE_GPU();
  columnReductions<float>();
}

TEST(DslCuda, NewInnerSizesCompileOnceColumnReductionsF64) {
  REQUIRE_GPU();
  columnReductions<double>();
}

} // namespace
