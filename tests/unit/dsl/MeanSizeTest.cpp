//===- MeanSizeTest.cpp - a mean's count is read at run time --------------===//
//
// `mean` is a sum and one division by the count of the reduced elements
// (splitMeans, FusePass.cpp; the mean VJP divides the gradient by it). The
// count is a size value (kSizeValueAttrName): the LLVM kernels read it from
// %dims at run time, so a new size of the reduced dims compiles no kernel.
// These tests run means over inner, middle and outer dims, over everything,
// in f32 and f64 and through backward at many sizes in one process, and
// check every value bit for bit against plain C++ — PyTorch's CPU mean: the
// sum, then one division by the count converted to the dtype (the ramp's
// sums are exact in f32, so the reference is float(sum) / float(count)) —
// and that the LLVM compiles stop after the first sizes. Counts past 2^24
// check the conversion (2^24 + 1 is 2^24 in f32).
//
//===----------------------------------------------------------------------===//
#include "strata/JIT/Jit.h"
#include "strata/strata.h"

#include "Ramp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

using namespace strata;

namespace {

/// PyTorch's f32 mean of elements whose sum is `sum` (exact).
float meanOf(double sum, int64_t count) {
  return static_cast<float>(sum) / static_cast<float>(count);
}

/// Bitwise equality (NaN equals NaN: an empty mean).
bool same(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}
bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

TEST(MeanSize, OverAMiddleDim) {
  // x of [4, T, 32]: its mean over T (a sum into scratch rows, divided in
  // a kernel of its own), and the seqlen probe's `x.mean({1}).sum()`, which
  // divides in the one-loop kernel of the final sum.
  const int64_t batch = 4, width = 32;
  int64_t before = -1;
  for (int64_t t : kSizes) {
    std::vector<float> xv = ramp(batch * t * width, t);
    Tensor x = from_vector(xv, {batch, t, width});
    std::vector<float> got = x.mean({1}).to_vector<float>();
    float total = x.mean({1}).sum().item<float>();
    double wantTotal = 0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t c = 0; c < width; ++c) {
        double sum = 0;
        for (int64_t i = 0; i < t; ++i)
          sum += xv[(b * t + i) * width + c];
        float want = meanOf(sum, t);
        ASSERT_TRUE(same(got[b * width + c], want))
            << t << " " << b << " " << c << ": " << got[b * width + c]
            << " != " << want;
        wantTotal += want;
      }
    if (t)
      ASSERT_NEAR(total, wantTotal, 1e-6 * (1 + std::fabs(wantTotal))) << t;
    else
      ASSERT_TRUE(std::isnan(total));
    if (t == kFirstDynamic)
      before = kernelCompiles();
  }
  EXPECT_EQ(kernelCompiles(), before);
}

TEST(MeanSize, OverRowsColumnsAndEverything) {
  // Row means of x[6, T] (the innermost loop reduced), column means of
  // y[T, 5] (the outermost: the division is a kernel over 5 points in which
  // T is only the count), the mean of all of x, and x's row means in f64.
  const int64_t rows = 6, cols = 5;
  int64_t before = -1;
  for (int64_t t : kSizes) {
    std::vector<float> xv = ramp(rows * t, t), yv = ramp(t * cols, t + 3);
    Tensor x = from_vector(xv, {rows, t});
    Tensor y = from_vector(yv, {t, cols});
    std::vector<float> rowMeans = x.mean({1}).to_vector<float>();
    std::vector<float> colMeans = y.mean({0}).to_vector<float>();
    float all = x.mean().item<float>();
    std::vector<double> rowMeans64 =
        x.to(kFloat64).mean({1}).to_vector<double>();
    double sumAll = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (int64_t c = 0; c < t; ++c)
        sum += xv[r * t + c];
      sumAll += sum;
      ASSERT_TRUE(same(rowMeans[r], meanOf(sum, t))) << t << " " << r;
      ASSERT_TRUE(same(rowMeans64[r], sum / static_cast<double>(t)))
          << t << " " << r;
    }
    ASSERT_TRUE(same(all, meanOf(sumAll, rows * t))) << t;
    for (int64_t c = 0; c < cols; ++c) {
      double sum = 0;
      for (int64_t r = 0; r < t; ++r)
        sum += yv[r * cols + c];
      ASSERT_TRUE(same(colMeans[c], meanOf(sum, t))) << t << " " << c;
    }
    if (t == kFirstDynamic)
      before = kernelCompiles();
  }
  EXPECT_EQ(kernelCompiles(), before);
}

TEST(MeanSize, Backward) {
  // loss = (x.mean({1}) * w).sum() for x of [4, T, 32]: x's gradient is
  // w / T at every t (the mean VJP's division, by a count it reads at run
  // time too).
  const int64_t batch = 4, width = 32;
  std::vector<float> wv = ramp(batch * width, 5);
  Tensor w = from_vector(wv, {batch, width});
  int64_t before = -1;
  for (int64_t t : kSizes) {
    if (t == 0)
      continue;
    Tensor x = from_vector(ramp(batch * t * width, t), {batch, t, width})
                   .requires_grad_();
    (x.mean({1}) * w).sum().backward();
    std::vector<float> g = x.grad().to_vector<float>();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < t; ++i)
        for (int64_t c = 0; c < width; ++c)
          ASSERT_EQ(g[(b * t + i) * width + c],
                    wv[b * width + c] / static_cast<float>(t))
              << t << " " << b << " " << i << " " << c;
    if (t == kFirstDynamic)
      before = kernelCompiles();
  }
  EXPECT_EQ(kernelCompiles(), before);
}

TEST(MeanSize, CountsPast2To24AreConvertedToF32) {
  // n alternating +-0.75 (and one more +0.75): the sum is 0.75 exactly,
  // the mean 0.75f / float(n); at n = 2^24 + 1, float(n) is 2^24, and
  // dividing by n in f64 would round to another float (checked: the test
  // tells the two apart). Both sizes are one kernel.
  int64_t before = -1;
  for (int64_t n : {int64_t(1000003), (int64_t(1) << 24) + 1}) {
    std::vector<float> xv(n);
    for (int64_t i = 0; i < n; ++i)
      xv[i] = i % 2 ? -0.75f : 0.75f;
    float got = from_vector(xv, {n}).mean().item<float>();
    float want = 0.75f / static_cast<float>(n);
    EXPECT_EQ(got, want) << n;
    if (n > (int64_t(1) << 24)) {
      EXPECT_NE(want, static_cast<float>(0.75 / static_cast<double>(n)));
    }
    if (before < 0)
      before = kernelCompiles();
  }
  EXPECT_EQ(kernelCompiles(), before);
}

TEST(MeanSize, StaticWhenTurnedOff) {
  // STRATA_DYNAMIC_SHAPES=0: the count is a constant again, so the column
  // means' division kernel (T only its count) compiles per T — the flat
  // counts above are the size value's doing.
  ::setenv("STRATA_DYNAMIC_SHAPES", "0", 1);
  int64_t before = kernelCompiles();
  for (int64_t t : {41, 42, 43}) {
    std::vector<float> yv = ramp(t * 5, t);
    std::vector<float> got =
        from_vector(yv, {t, 5}).mean({0}).to_vector<float>();
    for (int64_t c = 0; c < 5; ++c) {
      double sum = 0;
      for (int64_t r = 0; r < t; ++r)
        sum += yv[r * 5 + c];
      ASSERT_EQ(got[c], meanOf(sum, t)) << t << " " << c;
    }
  }
  ::unsetenv("STRATA_DYNAMIC_SHAPES");
  EXPECT_GE(kernelCompiles(), before + 2);
}

} // namespace
