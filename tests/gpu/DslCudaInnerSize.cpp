//===- DslCudaInnerSize.cpp - one PTX for every inner size on cuda:0 ------===//
//
// Part of strata-gpu-dsl-smoke (run by tests/gpu/run.sh on a GPU and by the
// CUDA simulator, ctest `cudasim-dsl`). Pointwise and vectorized CUDA
// kernels of two loops or more take their inner sizes, strides and
// offsets as parameters (KernelToCUDADynamic.cpp), so their source — the
// PTX cache's key — is their layout class: padded rows at many column
// counts (pointwise: the rows start at an odd element; vectorized: the
// columns and the pitch multiples of 4) and broadcast operands need NVRTC
// for the first sizes only. Counted: PTX misses (compiles plus disk-cache
// hits). Every value is checked against plain C++.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include "strata/JIT/CudaJit.h"

#include "CudaTest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace strata;

namespace {

// Columns [1, 1 + cols) of rows `cols + 3` long: a two-loop pointwise
// kernel whose row stride, column count and result stride change with the
// size; then columns [0, cols) of rows `cols + 4` long, cols a multiple of
// 4: vectorized. The first size of each is not counted.
TEST(DslCuda, NewInnerSizesCompileOncePadded) {
  REQUIRE_GPU();
  const int64_t rows = 3;
  int64_t before = -1;
  for (int64_t cols : {5, 2, 3, 9, 17, 64, 333, 6}) {
    int64_t pitch = cols + 3;
    std::vector<float> xv = ramp(rows * pitch, cols);
    Tensor x = from_vector(xv, {rows, pitch}).to(kCuda).narrow(1, 1, cols);
    std::vector<float> got = ((x * 3 - 1).relu() + x).to_vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        float v = xv[r * pitch + 1 + c];
        ASSERT_EQ(got[r * cols + c], std::max(v * 3 - 1, 0.0f) + v)
            << cols << " " << r << " " << c;
      }
    if (before < 0)
      before = ptxMisses();
  }
  EXPECT_EQ(ptxMisses(), before);
  before = -1;
  for (int64_t cols : {8, 4, 12, 40, 100, 1000}) {
    int64_t pitch = cols + 4;
    std::vector<float> xv = ramp(rows * pitch, cols);
    Tensor x = from_vector(xv, {rows, pitch}).to(kCuda).narrow(1, 0, cols);
    std::vector<float> got = (x * 2 + 1).to_vector<float>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(got[r * cols + c], xv[r * pitch + c] * 2 + 1)
            << cols << " " << r << " " << c;
    if (before < 0)
      before = ptxMisses();
  }
  EXPECT_EQ(ptxMisses(), before);
}

// a[R, C] (rows padded, from element 1) + b[1, C] * c[R, 1]: strides of 0
// are part of the class.
TEST(DslCuda, NewInnerSizesCompileOnceBroadcast) {
  REQUIRE_GPU();
  const int64_t rows = 4;
  int64_t before = -1;
  for (int64_t cols : {7, 2, 9, 31, 250}) {
    int64_t pitch = cols + 2;
    std::vector<float> av = ramp(rows * pitch, cols), bv = ramp(cols, 7),
                       cv = ramp(rows, 11);
    Tensor a = from_vector(av, {rows, pitch}).to(kCuda).narrow(1, 1, cols);
    Tensor b = from_vector(bv, {1, cols}).to(kCuda);
    Tensor c = from_vector(cv, {rows, 1}).to(kCuda);
    std::vector<float> got = (a + b * c).to_vector<float>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j)
        ASSERT_EQ(got[r * cols + j], av[r * pitch + 1 + j] + bv[j] * cv[r])
            << cols << " " << r << " " << j;
    if (before < 0)
      before = ptxMisses();
  }
  EXPECT_EQ(ptxMisses(), before);
}

// Column means of y[T, 5] (the sum's kernel reduces the outermost loop;
// the division's, over the 5 outputs, has T only as the count: a size value,
// a parameter) and the gradient of x[T, 8].mean({0}).sum(), 1 / T at every
// element (a two-loop kernel dividing by the count): one PTX each for
// every T, values bit for bit those of plain C++ (the ramp's sums are exact,
// so the mean is float(sum) / float(T), as PyTorch's). (Past a few hundred
// rows the column sums split, a decision in their source: other kernels.)
TEST(DslCuda, MeanCountsAreParameters) {
  REQUIRE_GPU();
  int64_t before = -1;
  for (int64_t t : {6, 2, 3, 9, 17, 100, 33}) {
    std::vector<float> yv = ramp(t * 5, t);
    std::vector<float> got =
        from_vector(yv, {t, 5}).to(kCuda).mean({0}).to_vector<float>();
    for (int64_t c = 0; c < 5; ++c) {
      double sum = 0;
      for (int64_t r = 0; r < t; ++r)
        sum += yv[r * 5 + c];
      ASSERT_EQ(got[c], static_cast<float>(sum) / static_cast<float>(t))
          << t << " " << c;
    }
    Tensor x = from_vector(ramp(t * 8, t), {t, 8}).to(kCuda).requires_grad_();
    x.mean({0}).sum().backward();
    for (float g : x.grad().to_vector<float>())
      ASSERT_EQ(g, 1.0f / static_cast<float>(t)) << t;
    if (before < 0)
      before = ptxMisses();
  }
  EXPECT_EQ(ptxMisses(), before);
}

} // namespace
