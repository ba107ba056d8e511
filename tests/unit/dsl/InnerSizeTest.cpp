//===- InnerSizeTest.cpp - one compiled kernel for every inner size -------===//
//
// A CPU kernel whose loop plan is plain is dynamic (KernelToLLVMDynamic.cpp):
// its inner trip counts, strides other than 0 and +-1 and offsets come in the
// ABI's %dims, and the kernel cache's key holds only its layout class. These
// tests run one structure at many inner sizes in one process — 0, 1, 2,
// odd, large; rows of a padded matrix (a row stride that is not the row
// length), row reductions, sums over a middle dim (cascade scratch rows),
// broadcast operands, a transposed view whose plan stays plain — and check
// every value against plain C++ loops, and that the LLVM compiles
// (jit::cacheStats) stop after the first sizes. Inner sizes below 8 stay
// constants by design (docs/design.md, "Sizes"), so the counts are taken
// once those have run.
//
//===----------------------------------------------------------------------===//
#include "strata/JIT/Jit.h"
#include "strata/strata.h"

#include "Ramp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace strata;

namespace {

TEST(InnerSize, RowsOfAPaddedMatrix) {
  // The first `cols` columns of rows `cols + 5` long: a two-loop nest whose
  // row stride changes with the size; elementwise, then a row max and a
  // row sum of the same view.
  const int64_t rows = 6;
  int64_t before = -1;
  for (int64_t cols : kSizes) {
    int64_t pitch = cols + 5;
    std::vector<float> xv = ramp(rows * pitch, cols);
    Tensor x = from_vector(xv, {rows, pitch}).narrow(1, 0, cols);
    std::vector<float> got = ((x * 3 - 1).relu() + x).to_vector<float>();
    std::vector<float> sum = x.sum({1}).to_vector<float>();
    std::vector<float> top =
        cols ? (x * 2).amax({1}).to_vector<float>() : std::vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      double want = 0;
      float wantTop = -INFINITY;
      for (int64_t c = 0; c < cols; ++c) {
        float v = xv[r * pitch + c];
        ASSERT_EQ(got[r * cols + c], std::max(v * 3 - 1, 0.0f) + v)
            << cols << " " << r << " " << c;
        want += v;
        wantTop = std::max(wantTop, v * 2);
      }
      ASSERT_NEAR(sum[r], want, 1e-4 * (1 + std::fabs(want))) << cols;
      if (cols) {
        ASSERT_EQ(top[r], wantTop) << cols << " " << r;
      }
    }
    if (cols == kFirstDynamic)
      before = kernelCompiles();
  }
  EXPECT_EQ(kernelCompiles(), before);
}

TEST(InnerSize, SumsOverAMiddleDim) {
  // x of [4, T, 32]: its sum over T (a cascade sum into scratch rows, the
  // loop of T inside the batch loop) and its max over the last dim.
  const int64_t batch = 4, width = 32;
  int64_t before = -1;
  for (int64_t t : kSizes) {
    std::vector<float> xv = ramp(batch * t * width, t);
    Tensor x = from_vector(xv, {batch, t, width});
    std::vector<float> sum = x.sum({1}).to_vector<float>();
    std::vector<float> top =
        t ? x.amax({2}).to_vector<float>() : std::vector<float>();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t c = 0; c < width; ++c) {
        double want = 0;
        for (int64_t i = 0; i < t; ++i)
          want += xv[(b * t + i) * width + c];
        ASSERT_NEAR(sum[b * width + c], want, 1e-4 * (1 + std::fabs(want)))
            << t << " " << b << " " << c;
      }
      for (int64_t i = 0; i < t; ++i) {
        float want = -INFINITY;
        for (int64_t c = 0; c < width; ++c)
          want = std::max(want, xv[(b * t + i) * width + c]);
        ASSERT_EQ(top[b * t + i], want) << t << " " << b << " " << i;
      }
    }
    if (t == kFirstDynamic)
      before = kernelCompiles();
  }
  EXPECT_EQ(kernelCompiles(), before);
}

TEST(InnerSize, BroadcastOperands) {
  // a[R, C] + b[1, C] * c[R, 1]: b does not move along rows, c along
  // columns (a stride of 0: part of the class); the rows of a are padded.
  const int64_t rows = 5;
  int64_t before = -1;
  for (int64_t cols : kSizes) {
    int64_t pitch = cols + 3;
    std::vector<float> av = ramp(rows * pitch, cols), bv = ramp(cols, 7),
                       cv = ramp(rows, 11);
    Tensor a = from_vector(av, {rows, pitch}).narrow(1, 0, cols);
    Tensor b = from_vector(bv, {1, cols});
    Tensor c = from_vector(cv, {rows, 1});
    std::vector<float> got = (a + b * c).to_vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j)
        ASSERT_EQ(got[r * cols + j], av[r * pitch + j] + bv[j] * cv[r])
            << cols << " " << r << " " << j;
    if (cols == kFirstDynamic)
      before = kernelCompiles();
  }
  EXPECT_EQ(kernelCompiles(), before);
}

TEST(InnerSize, TransposedViewWithAPlainPlan) {
  // Column sums and maxima of x[C, R] read through x.t(): the innermost
  // loop walks a column with stride R (no operand is unit-stride along it,
  // so the plan is not tiled), R changing with the size.
  const int64_t cols = 12;
  int64_t before = -1;
  for (int64_t rows : kSizes) {
    std::vector<float> xv = ramp(cols * rows, rows);
    Tensor xt = from_vector(xv, {cols, rows}).t();
    std::vector<float> sum = xt.sum({1}).to_vector<float>();
    std::vector<float> top =
        rows ? xt.amax({1}).to_vector<float>() : std::vector<float>();
    for (int64_t r = 0; r < rows; ++r) {
      double want = 0;
      float wantTop = -INFINITY;
      for (int64_t c = 0; c < cols; ++c) {
        want += xv[c * rows + r];
        wantTop = std::max(wantTop, xv[c * rows + r]);
      }
      ASSERT_NEAR(sum[r], want, 1e-4 * (1 + std::fabs(want))) << rows;
      ASSERT_EQ(top[r], wantTop) << rows << " " << r;
    }
    if (rows == kFirstDynamic)
      before = kernelCompiles();
  }
  EXPECT_EQ(kernelCompiles(), before);
}

TEST(InnerSize, StaticWhenTurnedOff) {
  // STRATA_DYNAMIC_SHAPES=0: every inner size is its own kernel again (the
  // count above is the dynamic mode's doing, not an accident of caching).
  ::setenv("STRATA_DYNAMIC_SHAPES", "0", 1);
  int64_t before = kernelCompiles();
  for (int64_t cols : {23, 24, 25}) {
    std::vector<float> xv = ramp(3 * (cols + 2), cols);
    Tensor x = from_vector(xv, {3, cols + 2}).narrow(1, 1, cols);
    std::vector<float> got = (x * 5).to_vector<float>();
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(got[r * cols + c], xv[r * (cols + 2) + c + 1] * 5);
  }
  ::unsetenv("STRATA_DYNAMIC_SHAPES");
  EXPECT_EQ(kernelCompiles(), before + 3);
}

} // namespace
