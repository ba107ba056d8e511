//===- ScalarArgsTest.cpp - scalars are program arguments -----------------===//
//
// A program's cache key is its structure: the C++ scalars of `x * lr + c`,
// `fill_(v)` and clamp-like bounds are arguments of the compiled program,
// so a new value every step compiles nothing (eval_stats().compiles), and
// each step's values match plain C++. A scalar whose value selects code (a
// pow exponent) stays a constant: a new exponent is a new program.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace strata;

namespace {

TEST(ScalarArgs, ScheduleOf100StepsCompilesOnce) {
  manual_seed(3);
  Tensor x = rand({1000});
  std::vector<float> xv = x.to_vector<float>();
  int64_t before = eval_stats().compiles;
  for (int step = 0; step < 100; ++step) {
    // A learning-rate schedule and a bias that change every step.
    double lr = 0.1 * std::pow(0.97, step), bias = 0.25 * step - 3;
    std::vector<float> got = (x * lr + bias).relu().to_vector<float>();
    ASSERT_EQ(got.size(), xv.size());
    for (size_t i = 0; i < xv.size(); i += 97) {
      float want = xv[i] * static_cast<float>(lr) + static_cast<float>(bias);
      EXPECT_FLOAT_EQ(got[i], want > 0 ? want : 0) << step << " " << i;
    }
  }
  EXPECT_EQ(eval_stats().compiles - before, 1);
}

TEST(ScalarArgs, FillsAndIntegerScalarsAreArguments) {
  int64_t before = eval_stats().compiles;
  for (int64_t v = 0; v < 20; ++v) {
    Tensor t = zeros({8}, kInt64);
    t.fill_(v * 1000003);
    std::vector<int64_t> got = (t + (v - 7)).to_vector<int64_t>();
    for (int64_t g : got)
      EXPECT_EQ(g, v * 1000003 + v - 7);
    Tensor f = ones({5}, kFloat64) * (0.1 * v);
    EXPECT_EQ(f.to_vector<double>()[4], 0.1 * v);
  }
  // One program for the fill-and-add, one for the f64 product.
  EXPECT_EQ(eval_stats().compiles - before, 2);
}

TEST(ScalarArgs, FullOfAnyShapeIsOneProgramForEveryValue) {
  Tensor w = tensor({1.5f, -2.0f, 0.25f, 4.0f, 8.0f, -1.0f});
  std::vector<float> wv = w.to_vector<float>();
  int64_t before = eval_stats().compiles;
  for (int k = 0; k < 12; ++k) {
    double v = 0.37 * k - 2;
    // Read, alone, and through a narrow at offset k (uniform: one program).
    std::vector<float> prod = (w * full({6}, v)).to_vector<float>();
    std::vector<float> alone = full({2, 3}, v).to_vector<float>();
    float part = (ones({20}).narrow(0, k, 6) * v).sum().item<float>();
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(prod[i], wv[i] * static_cast<float>(v));
      EXPECT_EQ(alone[i], static_cast<float>(v));
    }
    EXPECT_FLOAT_EQ(part, 6 * static_cast<float>(v));
  }
  // The product, the fill alone, the narrowed sum.
  EXPECT_EQ(eval_stats().compiles - before, 3);
  // Written into at offset k: the offset is the write's, not dropped.
  for (int k = 0; k < 12; ++k) {
    Tensor z = zeros({16});
    z.narrow(0, k, 2).fill_(k + 1);
    std::vector<float> zv = z.to_vector<float>();
    for (int i = 0; i < 16; ++i)
      EXPECT_EQ(zv[i], i == k || i == k + 1 ? k + 1.0f : 0.0f) << k << " " << i;
  }
  // Empty and size-1 shapes keep PyTorch's strides (torch.full(s, v)
  // .stride()); on [0, 1] a product's inferred layout is not the fill's,
  // and the fill keeps its value in the program (a fuzzer's find).
  struct Want {
    Shape sizes, strides;
  } wants[] = {{{0, 1}, {1, 1}}, {{1, 0}, {1, 1}}, {{2, 0, 3}, {3, 3, 1}},
               {{1, 1}, {1, 1}}, {{3, 1}, {1, 1}}, {{0}, {1}}};
  for (const Want &w : wants) {
    Tensor f = full(w.sizes, -1.0);
    f.eval();
    EXPECT_EQ(f.strides(), w.strides);
    EXPECT_EQ(f.sizes(), w.sizes);
  }
  // Values a fill must keep exactly: -0.0, NaN, int64 beyond 2^53.
  EXPECT_TRUE(std::signbit(full({3}, -0.0).to_vector<float>()[2]));
  EXPECT_TRUE(std::isnan(full({3}, NAN).to_vector<float>()[1]));
  int64_t big = (int64_t{1} << 62) + 1;
  EXPECT_EQ(full({4}, big, kInt64).to_vector<int64_t>()[3], big);
  EXPECT_EQ((full({4}, big, kInt64) + 0).to_vector<int64_t>()[0], big);
}

TEST(ScalarArgs, ArangeStartAndStepAreArguments) {
  // Position ids of a decoder step: `arange(past, past + n)`, a new start
  // every step. One program per dtype, every start.
  Tensor w = tensor({0.5f, 1.0f, 2.0f, 4.0f, 8.0f, 16.0f});
  w.eval();
  int64_t before = eval_stats().compiles;
  for (int k = 0; k < 12; ++k) {
    double start = 0.37 * k - 1, step = 0.25 + k;
    std::vector<float> got =
        (arange(start, start + 6 * step, step, kFloat32) * w)
            .to_vector<float>();
    ASSERT_EQ(got.size(), 6u);
    for (int i = 0; i < 6; ++i) // start + i * step in f64, then f32
      EXPECT_EQ(got[i],
                static_cast<float>(start + i * step) * w.to_vector<float>()[i]);
    int64_t big = (int64_t{1} << 60) + 3 * k;
    std::vector<int64_t> ids =
        (arange(big, big + 5 * k + 5, k + 1) + 1).to_vector<int64_t>();
    ASSERT_EQ(ids.size(), 5u);
    for (int i = 0; i < 5; ++i) // exact in int64
      EXPECT_EQ(ids[i], big + i * (k + 1) + 1);
  }
  EXPECT_EQ(eval_stats().compiles - before, 2);
}

TEST(ScalarArgs, PowExponentsStayInTheKey) {
  Tensor x = tensor({-INFINITY, 4.0f, 9.0f});
  int64_t before = eval_stats().compiles;
  std::vector<float> h = x.pow(0.5).to_vector<float>();
  EXPECT_TRUE(std::isnan(h[0])); // sqrt, as PyTorch, not C's pow
  EXPECT_EQ(h[1], 2.0f);
  std::vector<float> q = x.pow(2.0).to_vector<float>();
  EXPECT_EQ(q[2], 81.0f);
  EXPECT_EQ(eval_stats().compiles - before, 2);
}

TEST(ScalarArgs, BackwardWithAScheduleCompilesOnce) {
  // Scalars inside the differentiated graph (a loss weight annealed every
  // step, a temperature, a shift) are arguments of the gradient program
  // too: 50 steps of new values prepare it once. Checked against the
  // gradient by hand: d/dx sum(relu(x * w + b) * lam) = w * lam where
  // x * w + b > 0; and w.pow(2)'s exponent stays in the key (one program).
  std::vector<float> xv = {-1.5f, -0.25f, 0.5f, 2.0f};
  int64_t before = backward_compiles();
  for (int step = 0; step < 50; ++step) {
    double w = 0.5 + 0.01 * step, b = 0.02 * step - 0.5,
           lam = std::pow(0.9, step);
    Tensor x = from_vector(xv, {4}).requires_grad_();
    Tensor loss = ((x * w + b).relu() * lam).sum() + x.pow(2.0).sum() * 0.5;
    loss.backward();
    std::vector<float> g = x.grad().to_vector<float>();
    for (size_t i = 0; i < xv.size(); ++i) {
      float pre = xv[i] * static_cast<float>(w) + static_cast<float>(b);
      double want =
          (pre > 0 ? static_cast<float>(w) * static_cast<float>(lam) : 0.0) +
          xv[i];
      EXPECT_NEAR(g[i], want, 1e-5 * (1 + std::abs(want)))
          << "step " << step << " element " << i;
    }
  }
  EXPECT_EQ(backward_compiles() - before, 1);
}

} // namespace
