//===- DslCudaOuterSize.cpp - one PTX for every outermost size on cuda:0 --===//
//
// Part of strata-gpu-dsl-smoke (run by tests/gpu/run.sh on a GPU and by the
// CUDA simulator, ctest `cudasim-dsl`). The CUDA kernels take their
// outermost trip count as a parameter and the PTX cache's key is their
// source, which leaves that size out (docs/design.md "Sizes"): one
// structure at many outer sizes (0, 2, odd, not a multiple of 4) needs
// NVRTC for the first size only. Size 1 is another loop nest (coalescing
// drops a dim of size 1, on the CPU too), so it runs second and its kernels
// are not counted. Counted: PTX misses (NVRTC compiles plus disk-cache
// hits, so that a warm disk cache hides nothing). Every value is checked
// against plain C++.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include "strata/JIT/CudaJit.h"
#include "strata/Runtime/CudaDriver.h"

#include "CudaTest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace strata;

namespace {

Tensor onDevice(const std::vector<float> &v, const Shape &sizes) {
  return from_vector(v, sizes).to(kCuda);
}

// A vectorized chain (one loop: n % 4 points in the scalar tail) and a
// pointwise one (a misaligned view: one point per thread).
TEST(DslCuda, NewOuterSizesCompileOnceElementwise) {
  REQUIRE_GPU();
  int64_t before = -1;
  for (int64_t n : {5, 1, 0, 2, 3, 4, 17, 1001, 4099, 7, 300001}) {
    std::vector<float> xv = ramp(n + 1, n);
    Tensor x = onDevice(xv, {n + 1});
    Tensor head = x.narrow(0, 0, n), tail = x.narrow(0, 1, n);
    std::vector<float> v = ((head * 3 - 1).relu() + head).to_vector<float>();
    std::vector<float> p = (tail * tail - 2).to_vector<float>();
    ASSERT_EQ(v.size(), static_cast<size_t>(n));
    ASSERT_EQ(p.size(), static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(v[i], std::max(xv[i] * 3 - 1, 0.0f) + xv[i]) << n << " " << i;
      ASSERT_EQ(p[i], xv[i + 1] * xv[i + 1] - 2) << n << " " << i;
    }
    if (n == 1)
      before = ptxMisses();
  }
  EXPECT_EQ(ptxMisses(), before);
}

// Row sums (one block per row: the outermost loop is the outputs'), column
// sums of a batch of matrices (the outermost loop is kept, an inner one
// reduced) and sums over the outermost loop (its length is the size).
TEST(DslCuda, NewOuterSizesCompileOnceReductions) {
  REQUIRE_GPU();
  const int64_t cols = 40, rows = 3;
  int64_t before = -1;
  for (int64_t b : {5, 1, 0, 2, 3, 17, 100, 7}) {
    std::vector<float> xv = ramp(b * cols, b);
    Tensor x = onDevice(xv, {b, cols});
    std::vector<float> rowSum = x.sum({1}).to_vector<float>();
    std::vector<float> rowMax = x.amax({1}).to_vector<float>();
    std::vector<float> colSum = x.sum({0}).to_vector<float>();
    Tensor x3 = onDevice(ramp(b * rows * cols, b), {b, rows, cols});
    std::vector<float> batchCol = x3.sum({1}).to_vector<float>();
    ASSERT_EQ(rowSum.size(), static_cast<size_t>(b));
    ASSERT_EQ(colSum.size(), static_cast<size_t>(cols));
    for (int64_t r = 0; r < b; ++r) {
      double want = 0;
      float top = -INFINITY;
      for (int64_t c = 0; c < cols; ++c) {
        want += xv[r * cols + c];
        top = std::max(top, xv[r * cols + c]);
      }
      ASSERT_NEAR(rowSum[r], want, 1e-4 * (1 + std::fabs(want))) << b;
      ASSERT_EQ(rowMax[r], top) << b << " " << r;
    }
    for (int64_t c = 0; c < cols; ++c) {
      double want = 0;
      for (int64_t r = 0; r < b; ++r)
        want += xv[r * cols + c];
      ASSERT_NEAR(colSum[c], want, 1e-4 * (1 + std::fabs(want))) << b;
    }
    std::vector<float> x3v = ramp(b * rows * cols, b);
    for (int64_t i = 0; i < b; ++i)
      for (int64_t c = 0; c < cols; ++c) {
        double want = 0;
        for (int64_t r = 0; r < rows; ++r)
          want += x3v[(i * rows + r) * cols + c];
        ASSERT_NEAR(batchCol[i * cols + c], want, 1e-4 * (1 + std::fabs(want)))
            << b << " " << i << " " << c;
      }
    if (b == 1)
      before = ptxMisses();
  }
  EXPECT_EQ(ptxMisses(), before);
}

// Sizes whose decisions differ (a split reduction) have their own
// kernels; their values are right all the same. On a GPU also sizes past
// one grid (65536 blocks at most: a second round of the grid-stride
// loops), which the simulator would take minutes over.
TEST(DslCuda, OuterSizesWithSplitsAndPastTheGrid) {
  REQUIRE_GPU();
  for (int64_t b : {1000, 129, 4001}) { // split column sums, in order
    std::vector<float> xv = ramp(b * 3, b);
    std::vector<float> got = onDevice(xv, {b, 3}).sum({0}).to_vector<float>();
    for (int64_t c = 0; c < 3; ++c) {
      double want = 0;
      for (int64_t r = 0; r < b; ++r)
        want += xv[r * 3 + c];
      ASSERT_NEAR(got[c], want, 1e-4 * (1 + std::fabs(want))) << b;
    }
  }
  std::string error;
  runtime::cuda::Driver *driver = runtime::cuda::Driver::get(error);
  ASSERT_NE(driver, nullptr) << error;
  if (driver->deviceName().find("simulator") != std::string::npos)
    return;
  for (int64_t b : {70001, 3}) { // one block per row
    std::vector<float> xv = ramp(b * 32, b);
    std::vector<float> got = onDevice(xv, {b, 32}).sum({1}).to_vector<float>();
    for (int64_t r = 0; r < b; ++r) {
      double want = 0;
      for (int64_t c = 0; c < 32; ++c)
        want += xv[r * 32 + c];
      ASSERT_NEAR(got[r], want, 1e-4 * (1 + std::fabs(want))) << b << " " << r;
    }
  }
  const int64_t n = (int64_t(65536) * 256 + 5) * 4 + 3; // vectors and a tail
  std::vector<float> xv = ramp(n, 1);
  std::vector<float> got = (onDevice(xv, {n}) * 2 + 1).to_vector<float>();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], xv[i] * 2 + 1) << i;
}

// A small MLP's training step (forward and backward; products are kernels
// on CUDA) at batch sizes 9, 1, then 8 .. 100: a new batch size compiles
// nothing: the batch is the outermost loop of every kernel, kept (the
// activations) or reduced (the weights' gradients: column reductions, not
// split below 128 rows). (Below 8 rows the loss, a sum of fewer than 32
// points, is a column reduction: another kernel.) The loss and w2's
// gradient match plain C++.
TEST(DslCuda, NewBatchSizesOfAnMlpStepCompileOnce) {
  REQUIRE_GPU();
  const int64_t in = 8, hidden = 16, out = 4;
  std::vector<float> w1v = ramp(in * hidden, 1), w2v = ramp(hidden * out, 2);
  for (float &v : w1v)
    v *= 0.05f;
  for (float &v : w2v)
    v *= 0.05f;
  int64_t before = -1;
  for (int64_t batch : {9, 1, 8, 12, 17, 33, 100}) {
    Tensor w1 = onDevice(w1v, {in, hidden}).requires_grad_();
    Tensor w2 = onDevice(w2v, {hidden, out}).requires_grad_();
    std::vector<float> xv = ramp(batch * in, batch);
    Tensor loss =
        onDevice(xv, {batch, in}).matmul(w1).relu().matmul(w2).relu().sum();
    loss.backward();
    float got = loss.item<float>();
    std::vector<float> g2 = w2.grad().to_vector<float>();
    double want = 0;
    std::vector<double> wantG2(hidden * out, 0.0);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<double> h(hidden, 0.0);
      for (int64_t j = 0; j < hidden; ++j) {
        for (int64_t i = 0; i < in; ++i)
          h[j] += double(xv[b * in + i]) * w1v[i * hidden + j];
        h[j] = std::max(h[j], 0.0);
      }
      for (int64_t o = 0; o < out; ++o) {
        double y = 0;
        for (int64_t j = 0; j < hidden; ++j)
          y += h[j] * w2v[j * out + o];
        if (y <= 0)
          continue;
        want += y;
        for (int64_t j = 0; j < hidden; ++j)
          wantG2[j * out + o] += h[j];
      }
    }
    ASSERT_NEAR(got, want, 1e-4 * (1 + std::fabs(want))) << batch;
    for (int64_t k = 0; k < hidden * out; ++k)
      ASSERT_NEAR(g2[k], wantG2[k], 1e-4 * (1 + std::fabs(wantG2[k])))
          << batch << " " << k;
    if (batch == 1)
      before = ptxMisses();
  }
  EXPECT_EQ(ptxMisses(), before);
}

} // namespace
