//===- OuterSizeTest.cpp - one compiled kernel for every outermost size ---===//
//
// The CPU kernels' outermost trip count is a run-time argument (the ABI's
// [begin, end)), and the kernel cache's key is what the emitted code
// depends on (codegen::kernelCodeKey), not the kernel as printed: kernels
// that differ only in their outermost size share one compiled function.
// These tests run one structure at many sizes in one process — sizes 0, 1,
// 2, odd, large enough for non-temporal stores, reductions over the
// outermost dim (cascade scratch rows, an outer loop that must not run in
// parallel), transposed (tiled) kernels whose tiled loop is the outermost —
// and check every value against plain C++, and that the LLVM compiles
// (jit::cacheStats) stop after the first sizes.
//
//===----------------------------------------------------------------------===//
#include "strata/JIT/Jit.h"
#include "strata/strata.h"

#include "Ramp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace strata;

namespace {

int64_t llvmCompiles() { return jit::cacheStats().compiles; }

TEST(OuterSize, ElementwiseChainCompilesOnceForEverySize) {
  int64_t before = -1;
  for (int64_t n : {1, 2, 3, 17, 1000, 4099, 100000, 7, 2}) {
    std::vector<float> xv = ramp(n, n);
    Tensor x = from_vector(xv, {n});
    std::vector<float> got = ((x * 3 - 1).relu() + x).to_vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], std::max(xv[i] * 3 - 1, 0.0f) + xv[i]) << n << " " << i;
    if (n == 3)
      before = llvmCompiles();
  }
  // Sizes 17 .. 2 after size 3: no new kernel.
  EXPECT_EQ(llvmCompiles(), before);
}

TEST(OuterSize, NonTemporalThresholdIsPartOfTheKey) {
  // Past 4 MiB of result the kernel stores non-temporally: another kernel,
  // right on both sides of the threshold, in either order.
  for (int64_t n : {int64_t(1) << 21, int64_t(1000), (int64_t(1) << 20) + 3,
                    int64_t(5), int64_t(1) << 21}) {
    std::vector<float> xv = ramp(n, 3);
    Tensor x = from_vector(xv, {n});
    std::vector<float> got = (x * 0.5f).to_vector<float>();
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], xv[i] * 0.5f) << n << " " << i;
  }
}

TEST(OuterSize, SumsOverTheOutermostDim) {
  // f32 sums over dim 0 (cascade scratch rows, a loop that must not run in
  // parallel) and over everything, at rows 0, 1, 2, ... .
  const int64_t cols = 33;
  int64_t before = -1;
  for (int64_t rows : {0, 1, 2, 3, 129, 300, 1000, 5, 2}) {
    std::vector<float> xv = ramp(rows * cols, rows);
    Tensor x = from_vector(xv, {rows, cols});
    std::vector<float> col = x.sum({0}).to_vector<float>();
    float all = x.sum().item<float>();
    float top = rows ? x.amax({0}).to_vector<float>()[cols - 1] : 0.0f;
    double wantAll = 0;
    float wantTop = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) {
      double want = 0;
      for (int64_t r = 0; r < rows; ++r)
        want += xv[r * cols + c];
      wantAll += want;
      ASSERT_NEAR(col[c], want, 1e-4 * (1 + std::fabs(want))) << rows;
    }
    for (int64_t r = 0; r < rows; ++r)
      wantTop = std::max(wantTop, xv[r * cols + cols - 1]);
    EXPECT_NEAR(all, wantAll, 1e-4 * (1 + std::fabs(wantAll))) << rows;
    if (rows) {
      EXPECT_EQ(top, wantTop) << rows;
    }
    if (rows == 3)
      before = llvmCompiles();
  }
  EXPECT_EQ(llvmCompiles(), before);
}

TEST(OuterSize, TransposedKernelsWhoseTiledLoopIsOutermost) {
  // `x.t().contiguous()` of a (cols, rows) x: the outermost loop is tiled
  // with the innermost one; its trip count changes with rows.
  const int64_t cols = 40;
  for (int64_t rows : {1, 2, 15, 16, 17, 100, 257, 3}) {
    std::vector<float> xv = ramp(rows * cols, rows);
    Tensor x = from_vector(xv, {cols, rows});
    std::vector<float> got = (x.t().contiguous() + 1).to_vector<float>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(got[r * cols + c], xv[c * rows + r] + 1)
            << rows << " " << r << " " << c;
  }
}

TEST(OuterSize, NewBatchSizesOfAnMlpStepCompileNoKernel) {
  // The digits-sized MLP, forward and backward, at batch sizes 16..39:
  // after the first two steps, a new batch size prepares its programs but
  // compiles no kernel (the products run on the BLAS; a kernel product
  // reducing over the batch, as a smaller MLP's weight gradient, has the
  // batch as an inner loop and compiles per size: the gradient of
  // `(h @ w2).sum()` without the last relu reads a broadcast 1, no BLAS
  // operand); the loss and the gradients of w2 match plain C++.
  const int64_t in = 64, hidden = 128, out = 10;
  std::vector<float> w1v = ramp(in * hidden, 1), w2v = ramp(hidden * out, 2);
  for (float &v : w1v)
    v *= 0.05f;
  for (float &v : w2v)
    v *= 0.05f;
  Tensor w1 = from_vector(w1v, {in, hidden}).requires_grad_();
  Tensor w2 = from_vector(w2v, {hidden, out}).requires_grad_();
  int64_t before = -1;
  for (int64_t batch = 16; batch < 40; ++batch) {
    if (batch == 18) // (step 2 accumulates into .grad: its own kernels)
      before = llvmCompiles();
    std::vector<float> xv = ramp(batch * in, batch);
    Tensor x = from_vector(xv, {batch, in});
    Tensor loss = x.matmul(w1).relu().matmul(w2).relu().sum();
    loss.backward();
    float got = loss.item<float>();
    std::vector<float> g2 = w2.grad().to_vector<float>();
    Tensor(w1.grad()).zero_();
    Tensor(w2.grad()).zero_();
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
  }
  EXPECT_EQ(llvmCompiles(), before);
}

} // namespace
