//===- OffsetArgsTest.cpp - storage offsets are program arguments ---------===//
//
// A view's offset into a materialized storage is not in the program's
// cache key: each storage is passed as the window its reads and writes
// reach (Slice::placeArgs, Eval.cpp). So `narrow`, `select` and `slice`
// at 100 random offsets, read or written in place, compile one program
// each (eval_stats().compiles),
// and every step's values match the same reads done in plain C++ on the
// tensor's elements (from_vector in, to_vector out). Views of pending
// results at offsets that change compile twice, then not again.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace strata;

namespace {

constexpr int64_t kRows = 300, kCols = 24;

std::vector<float> ramp(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 37) % 101) / 8.0f - 6.0f;
  return v;
}

int64_t compilesSince(int64_t before) { return eval_stats().compiles - before; }

TEST(OffsetArgs, RandomNarrowCompilesOnce) {
  std::vector<float> xv = ramp(kRows * kCols);
  Tensor x = from_vector(xv, {kRows, kCols});
  std::mt19937 rng(11);
  const int64_t batch = 17;
  int64_t before = eval_stats().compiles;
  for (int step = 0; step < 100; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, kRows - batch)(rng);
    std::vector<float> got =
        (x.narrow(0, k, batch) * 2 + 1).sum({1}).to_vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(batch));
    for (int64_t r = 0; r < batch; ++r) {
      float want = 0;
      for (int64_t c = 0; c < kCols; ++c)
        want += xv[(k + r) * kCols + c] * 2 + 1;
      EXPECT_NEAR(got[r], want, 1e-4 * (1 + std::fabs(want)))
          << "k " << k << " row " << r;
    }
  }
  EXPECT_EQ(compilesSince(before), 1);
}

TEST(OffsetArgs, RandomSelectAndSliceCompileOnceEach) {
  std::vector<float> xv = ramp(kRows * kCols);
  Tensor x = from_vector(xv, {kRows, kCols});
  // A 1-D tensor sliced at any element: offsets that are not a multiple
  // of anything.
  std::vector<float> yv = ramp(1000);
  Tensor y = from_vector(yv);
  std::mt19937 rng(12);
  int64_t before = eval_stats().compiles;
  for (int step = 0; step < 100; ++step) {
    int64_t row = std::uniform_int_distribution<int64_t>(0, kRows - 1)(rng);
    int64_t col = std::uniform_int_distribution<int64_t>(0, kCols - 1)(rng);
    std::vector<float> r = (x.select(0, row) - 0.5).to_vector<float>();
    std::vector<float> c = x.select(1, col).exp().to_vector<float>();
    for (int64_t j = 0; j < kCols; ++j)
      ASSERT_FLOAT_EQ(r[j], xv[row * kCols + j] - 0.5f) << row << " " << j;
    for (int64_t i = 0; i < kRows; i += 7)
      ASSERT_NEAR(c[i], std::exp(xv[i * kCols + col]),
                  1e-5 * std::exp(xv[i * kCols + col]))
          << col << " " << i;
    int64_t s = std::uniform_int_distribution<int64_t>(0, 1000 - 90)(rng);
    std::vector<float> sl = (y.slice(0, s, s + 90, 3) * 3).to_vector<float>();
    ASSERT_EQ(sl.size(), 30u);
    for (int64_t j = 0; j < 30; ++j)
      ASSERT_FLOAT_EQ(sl[j], yv[s + 3 * j] * 3) << s << " " << j;
  }
  EXPECT_EQ(compilesSince(before), 3);
}

// Two reads of one storage in one program: the window spans both, and only
// their distance is in the key.
TEST(OffsetArgs, TwoReadsOfOneStorageKeepTheirDistance) {
  std::vector<float> xv = ramp(kRows * kCols);
  Tensor x = from_vector(xv, {kRows, kCols});
  std::mt19937 rng(13);
  int64_t before = eval_stats().compiles;
  for (int step = 0; step < 50; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, kRows - 12)(rng);
    std::vector<float> got =
        (x.narrow(0, k, 4) * x.narrow(0, k + 8, 4)).to_vector<float>();
    for (int64_t i = 0; i < 4 * kCols; ++i)
      ASSERT_FLOAT_EQ(got[i], xv[k * kCols + i] * xv[(k + 8) * kCols + i])
          << k << " " << i;
  }
  EXPECT_EQ(compilesSince(before), 1);
}

// Negative strides (flip) and as_strided: the window runs from the
// smallest element read, which for a flipped view is not its offset.
TEST(OffsetArgs, FlippedAndAsStridedViews) {
  std::vector<float> xv = ramp(kRows * kCols);
  Tensor x = from_vector(xv, {kRows, kCols});
  std::mt19937 rng(14);
  int64_t before = eval_stats().compiles;
  for (int step = 0; step < 60; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, kRows - 10)(rng);
    // Rows k+9 .. k, columns reversed.
    std::vector<float> f =
        (x.narrow(0, k, 10).flip({0, 1}) + 0.25).to_vector<float>();
    for (int64_t r = 0; r < 10; ++r)
      for (int64_t c = 0; c < kCols; ++c)
        ASSERT_FLOAT_EQ(f[r * kCols + c],
                        xv[(k + 9 - r) * kCols + (kCols - 1 - c)] + 0.25f)
            << k << " " << r << " " << c;
    // Overlapping windows: a 5x6 view with strides (3, 2) from offset o.
    int64_t o = std::uniform_int_distribution<int64_t>(0, 1000)(rng);
    std::vector<float> a =
        x.as_strided({5, 6}, {3, 2}, o).relu().to_vector<float>();
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 6; ++j) {
        float v = xv[o + 3 * i + 2 * j];
        ASSERT_FLOAT_EQ(a[i * 6 + j], v > 0 ? v : 0) << o << " " << i;
      }
  }
  EXPECT_EQ(compilesSince(before), 2);
}

// An in-place write through a view keeps the whole storage (it is donated
// and written where it is); a read of another storage beside it is still
// a window. The in-place result must land in the tensor's own elements.
// A write at a random offset is one program too: the written storage is
// passed as the window its reads and writes reach, the write's offset
// relative to it (Slice::placeArgs). Each step is evaluated on its own;
// values against the same writes done in plain C++ (eager).
TEST(OffsetArgs, RandomWritesCompileOnce) {
  std::vector<float> xv = ramp(kRows * kCols);
  Tensor x = from_vector(xv, {kRows, kCols});
  std::vector<float> yv = ramp(1000);
  Tensor y = from_vector(yv);
  std::mt19937 rng(17);
  const int64_t batch = 9;
  // x.narrow(0, k, B).add_(1): one program for every k.
  int64_t before = eval_stats().compiles;
  for (int step = 0; step < 60; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, kRows - batch)(rng);
    x.narrow(0, k, batch).add_(1);
    x.eval();
    for (int64_t i = k * kCols; i < (k + batch) * kCols; ++i)
      xv[i] += 1;
  }
  EXPECT_EQ(compilesSince(before), 1);
  EXPECT_EQ(x.to_vector<float>(), xv);
  // A column (strided) scaled in place at a random index.
  before = eval_stats().compiles;
  for (int step = 0; step < 40; ++step) {
    int64_t c = std::uniform_int_distribution<int64_t>(0, kCols - 1)(rng);
    x.select(1, c).mul_(0.5);
    x.eval();
    for (int64_t r = 0; r < kRows; ++r)
      xv[r * kCols + c] *= 0.5f;
  }
  EXPECT_EQ(compilesSince(before), 1);
  EXPECT_EQ(x.to_vector<float>(), xv);
  // copy_ of a random window of y into a random slice of it, with a step
  // (the read and the written window of one storage: their distance
  // changes the program, so the read comes from another tensor here).
  Tensor z = from_vector(ramp(1000)), src = from_vector(yv);
  std::vector<float> zv = ramp(1000);
  before = eval_stats().compiles;
  for (int step = 0; step < 60; ++step) {
    int64_t s = std::uniform_int_distribution<int64_t>(0, 1000 - 60)(rng);
    int64_t r = std::uniform_int_distribution<int64_t>(0, 1000 - 20)(rng);
    z.slice(0, s, s + 60, 3).copy_(src.narrow(0, r, 20) * 2);
    z.eval();
    for (int64_t j = 0; j < 20; ++j)
      zv[s + 3 * j] = yv[r + j] * 2;
  }
  EXPECT_EQ(compilesSince(before), 1);
  EXPECT_EQ(z.to_vector<float>(), zv);
  EXPECT_EQ(src.to_vector<float>(), yv); // the read storage is untouched
}

// Writes whose old version is still read (the write cannot go in place:
// the program writes a copy of the window, put back at its start), and a
// view of the written storage read in the same program.
TEST(OffsetArgs, RandomWritesWithReadersOfTheOldVersion) {
  std::vector<float> xv = ramp(kRows * kCols);
  Tensor x = from_vector(xv, {kRows, kCols});
  std::mt19937 rng(18);
  int64_t before = eval_stats().compiles;
  for (int step = 0; step < 40; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, kRows - 4)(rng);
    Tensor old = x.narrow(0, k, 4).sum({1}); // reads the old version
    x.narrow(0, k, 4).mul_(2);
    Tensor now = x.narrow(0, k, 4).sum({1});
    eval({old, now, x});
    std::vector<float> o = old.to_vector<float>(), n = now.to_vector<float>();
    for (int64_t r = 0; r < 4; ++r) {
      float want = 0;
      for (int64_t c = 0; c < kCols; ++c)
        want += xv[(k + r) * kCols + c];
      ASSERT_NEAR(o[r], want, 1e-4 * (1 + std::fabs(want))) << step;
      ASSERT_NEAR(n[r], 2 * want, 1e-4 * (1 + std::fabs(want))) << step;
    }
    for (int64_t i = k * kCols; i < (k + 4) * kCols; ++i)
      xv[i] *= 2;
  }
  EXPECT_LE(compilesSince(before), 2);
  EXPECT_EQ(x.to_vector<float>(), xv);
}

// Pending writes at several offsets evaluated together: their window
// spans them all and their distances stay in the key, so programs are
// bounded by the writes, and every value is right.
TEST(OffsetArgs, SeveralPendingWritesShareOneWindow) {
  std::vector<float> xv = ramp(kRows * kCols);
  Tensor x = from_vector(xv, {kRows, kCols});
  Tensor acc = zeros({kRows, kCols});
  std::vector<float> accv(kRows * kCols, 0.0f);
  std::mt19937 rng(15);
  int64_t before = eval_stats().compiles;
  for (int step = 0; step < 40; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, kRows - 8)(rng);
    int64_t j = std::uniform_int_distribution<int64_t>(0, kRows - 8)(rng);
    acc.narrow(0, j, 8).add_(x.narrow(0, k, 8));
    for (int64_t i = 0; i < 8 * kCols; ++i)
      accv[j * kCols + i] += xv[k * kCols + i];
    if (step % 5 == 4) {
      std::vector<float> got = acc.to_vector<float>();
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_FLOAT_EQ(got[i], accv[i]) << step << " " << i;
    }
  }
  EXPECT_LE(compilesSince(before), 8);
  std::vector<float> xs = x.to_vector<float>();
  EXPECT_EQ(xs, xv); // the read storage is untouched
}

// A training step on mini-batches at random offsets: the forward and the
// backward compile on the first step only.
TEST(OffsetArgs, MiniBatchTrainingStep) {
  const int64_t rows = 200, in = 8, out = 5, batch = 16;
  std::vector<float> xv = ramp(rows * in);
  std::vector<float> wv(in * out);
  for (int64_t i = 0; i < in * out; ++i)
    wv[i] = static_cast<float>((i * 13) % 17) / 16.0f - 0.4f;
  Tensor x = from_vector(xv, {rows, in});
  std::mt19937 rng(16);
  int64_t compiles = 0, backwardCompiles = 0;
  for (int step = 0; step < 30; ++step) {
    Tensor w = from_vector(wv, {in, out}).requires_grad_();
    int64_t k = std::uniform_int_distribution<int64_t>(0, rows - batch)(rng);
    int64_t before = eval_stats().compiles, bwBefore = backward_compiles();
    Tensor loss = x.narrow(0, k, batch).matmul(w).relu().sum();
    loss.backward();
    std::vector<float> g = w.grad().to_vector<float>();
    float l = loss.item<float>();
    if (step > 0) {
      compiles += eval_stats().compiles - before;
      backwardCompiles += backward_compiles() - bwBefore;
    }
    // Plain C++: h = x[k:k+B] w; loss = sum relu(h); dw = x^T (h > 0).
    std::vector<double> gw(in * out, 0.0);
    double wantLoss = 0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t o = 0; o < out; ++o) {
        double h = 0;
        for (int64_t i = 0; i < in; ++i)
          h += double(xv[(k + b) * in + i]) * wv[i * out + o];
        if (h <= 0)
          continue;
        wantLoss += h;
        for (int64_t i = 0; i < in; ++i)
          gw[i * out + o] += xv[(k + b) * in + i];
      }
    EXPECT_NEAR(l, wantLoss, 1e-4 * (1 + std::fabs(wantLoss))) << k;
    for (int64_t i = 0; i < in * out; ++i)
      ASSERT_NEAR(g[i], gw[i], 1e-4 * (1 + std::fabs(gw[i]))) << k << " " << i;
  }
  EXPECT_EQ(compiles, 0);
  EXPECT_EQ(backwardCompiles, 0);
}

// Rows of a leaf requiring grad at random offsets (an embedding's
// lookup): the gradient program gets the window of the leaf its reads
// reach and writes its gradient there, so the backward compiles on the
// first step only; `.grad()` accumulates over the steps as in PyTorch
// (checked against the same sums in plain C++).
TEST(OffsetArgs, LeafRowsAtRandomOffsetsBackwardCompilesOnce) {
  const int64_t rows = 120, cols = 6, batch = 5;
  std::vector<float> wv = ramp(rows * cols), cv = ramp(batch * cols);
  Tensor w = from_vector(wv, {rows, cols}).requires_grad_();
  Tensor c = from_vector(cv, {batch, cols});
  std::vector<double> grad(rows * cols, 0.0);
  std::mt19937 rng(19);
  int64_t backwardCompiles = 0, compiles = 0;
  for (int step = 0; step < 30; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, rows - batch)(rng);
    int64_t before = eval_stats().compiles, bwBefore = backward_compiles();
    Tensor loss = (w.narrow(0, k, batch) * c).relu().sum();
    loss.backward();
    std::vector<float> g = w.grad().to_vector<float>();
    if (step > 0)
      backwardCompiles += backward_compiles() - bwBefore;
    if (step > 1) // step 1 is the first accumulation into .grad
      compiles += eval_stats().compiles - before;
    // d loss / d w[k + b][j] = c[b][j] where w * c > 0.
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < cols; ++j)
        if (wv[(k + b) * cols + j] * cv[b * cols + j] > 0)
          grad[(k + b) * cols + j] += cv[b * cols + j];
    for (int64_t i = 0; i < rows * cols; ++i)
      ASSERT_NEAR(g[i], grad[i], 1e-4 * (1 + std::fabs(grad[i])))
          << "step " << step << " k " << k << " element " << i;
  }
  EXPECT_EQ(backwardCompiles, 0);
  EXPECT_EQ(compiles, 0);
}

// The arguments are numbered by first use, not by creation: after one
// step of `w = w - lr * g`, `w` is newer than `g`, and the program is the
// same.
TEST(OffsetArgs, ArgumentOrderIsFirstUse) {
  std::vector<float> wv = ramp(500), gv(500);
  for (size_t i = 0; i < gv.size(); ++i)
    gv[i] = static_cast<float>(i % 7) - 3;
  Tensor w = from_vector(wv), g = from_vector(gv);
  int64_t before = eval_stats().compiles;
  for (int step = 0; step < 20; ++step) {
    double lr = 0.1 / (1 + step);
    w = w - lr * g;
    std::vector<float> got = w.to_vector<float>();
    for (size_t i = 0; i < wv.size(); ++i) {
      wv[i] = wv[i] - static_cast<float>(lr) * gv[i];
      ASSERT_EQ(got[i], wv[i]) << step << " " << i;
    }
  }
  EXPECT_EQ(compilesSince(before), 1);
}

// A view of a pending result (a tensor the program computes, not a
// storage argument) at a random offset each step: the first offsets are
// fused into the program (a narrow of `x * 2 + 1` computes only its
// rows), and once the same structure comes with other offsets, the
// viewed result is evaluated first, a storage whose window the reads get
// (Slice::offsetsVary): 3 programs in all (4 for a write into it), none
// after the second step, whether the result is a temporary, a named
// tensor kept pending, or the destination of an in-place write.
TEST(OffsetArgs, ViewsOfPendingResultsAtRandomOffsetsCompileTwice) {
  std::vector<float> xv = ramp(kRows * kCols);
  Tensor x = from_vector(xv, {kRows, kCols});
  std::mt19937 rng(23);
  const int64_t batch = 13;
  auto rowSums = [&](int64_t k, auto f) {
    std::vector<float> want(batch, 0.0f);
    for (int64_t r = 0; r < batch; ++r)
      for (int64_t c = 0; c < kCols; ++c)
        want[r] += f(xv[(k + r) * kCols + c]);
    return want;
  };
  auto expectNear = [](const std::vector<float> &got,
                       const std::vector<float> &want, int64_t k) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i])))
          << "k " << k << " row " << i;
  };
  // 100 offsets, k % 97 + 1: each differs from the one before.
  int64_t before = eval_stats().compiles, afterSecond = 0;
  for (int step = 0; step < 100; ++step) {
    int64_t k = (step * 31) % 97 + 1;
    expectNear((x * 2 + 1).narrow(0, k, batch).sum({1}).to_vector<float>(),
               rowSums(k, [](float v) { return v * 2 + 1; }), k);
    if (step == 1)
      afterSecond = eval_stats().compiles;
  }
  EXPECT_EQ(afterSecond - before, 3);
  EXPECT_EQ(compilesSince(afterSecond), 0);
  // A named result that stays pending (cheap to recompute, never asked
  // for itself): evaluated once the offsets change, then only read.
  Tensor norm = (x - 1) * 0.5;
  before = eval_stats().compiles;
  for (int step = 0; step < 60; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(1, kRows - batch)(rng);
    expectNear(norm.narrow(0, k, batch).sum({1}).to_vector<float>(),
               rowSums(k, [](float v) { return (v - 1) * 0.5f; }), k);
    if (step == 1)
      afterSecond = eval_stats().compiles;
  }
  EXPECT_LE(afterSecond - before, 3);
  EXPECT_EQ(compilesSince(afterSecond), 0);
  // An in-place write into a fresh result at a random offset, then all of
  // it read: the result is evaluated first, then the write alone (its own
  // window), then the read: 4 programs.
  before = eval_stats().compiles;
  for (int step = 0; step < 60; ++step) {
    int64_t k = (step * 37) % 101 + 1;
    Tensor y = x * 3;
    y.narrow(0, k, batch).add_(1);
    std::vector<float> got = y.sum({1}).to_vector<float>();
    for (int64_t r = 0; r < kRows; ++r) {
      float want = 0;
      for (int64_t c = 0; c < kCols; ++c)
        want += xv[r * kCols + c] * 3 + (r >= k && r < k + batch ? 1 : 0);
      ASSERT_NEAR(got[r], want, 1e-4 * (1 + std::fabs(want)))
          << "k " << k << " row " << r;
    }
    if (step == 1)
      afterSecond = eval_stats().compiles;
  }
  EXPECT_LE(afterSecond - before, 4);
  EXPECT_EQ(compilesSince(afterSecond), 0);
}

// Views of a pending result at offsets that do not change (the chunks of
// `x @ w + b`, as an LSTM's gates) stay fused: one program, evaluated
// whole each step, the pending result never written on its own.
TEST(OffsetArgs, ViewsOfPendingResultsAtFixedOffsetsStayFused) {
  std::vector<float> xv = ramp(kRows * kCols);
  Tensor x = from_vector(xv, {kRows, kCols});
  int64_t before = eval_stats().compiles;
  int64_t programs = eval_stats().programs;
  for (int step = 0; step < 20; ++step) {
    std::vector<Tensor> parts = (x * 2 - float(step)).chunk(4, 1);
    Tensor s = (parts[1].sigmoid() * parts[2].tanh()).sum();
    double want = 0;
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t c = 0; c < kCols / 4; ++c) {
        double a = xv[r * kCols + kCols / 4 + c] * 2.0 - step;
        double b = xv[r * kCols + kCols / 2 + c] * 2.0 - step;
        want += 1 / (1 + std::exp(-a)) * std::tanh(b);
      }
    EXPECT_NEAR(s.item<float>(), want, 1e-3 * (1 + std::fabs(want))) << step;
  }
  EXPECT_EQ(compilesSince(before), 1);
  EXPECT_EQ(eval_stats().programs - programs, 20);
}

// An optimizer's step while the loss is still alive (the usual loop: the
// loss goes out of scope after the step): the forward's pending results
// that read the parameters' old versions are not recomputed in the step's
// program (the old version keeps its data instead, SliceReaders.cpp), so
// rows of a parameter read at random offsets (an embedding's lookup) cost
// no program per offset, and the step runs only its update.
TEST(OffsetArgs, OptimizerStepWithTheLossAliveRecomputesNothing) {
  const int64_t rows = 64, cols = 8, batch = 8;
  // Kernels a step runs (the same every step), with the loss alive or
  // dropped before the step; compiles after the second step.
  auto train = [&](bool lossAlive, int64_t &stepCompiles) {
    Tensor e = ones({rows, cols}).requires_grad_();
    Tensor w = ones({4}).requires_grad_();
    optim::SGD opt({w, e}, optim::SGDOptions(0.1));
    std::vector<float> ev(rows * cols, 1.0f);
    std::mt19937 rng(46);
    int64_t stepKernels = -1;
    stepCompiles = 0;
    for (int step = 0; step < 12; ++step) {
      int64_t k = std::uniform_int_distribution<int64_t>(0, rows - batch)(rng);
      opt.zero_grad();
      Tensor loss = e.narrow(0, k, batch).sum() + (w * w).sum();
      loss.backward();
      double want = std::pow(0.8, 2 * step) * 4;
      for (int64_t i = 0; i < batch * cols; ++i)
        want += ev[k * cols + i];
      EXPECT_NEAR(loss.item<float>(), want, 1e-4 * want) << step;
      if (!lossAlive)
        loss = Tensor();
      EvalStats before = eval_stats();
      opt.step();
      e.eval();
      w.eval();
      EvalStats after = eval_stats();
      if (step >= 2) {
        stepCompiles += after.compiles - before.compiles;
        if (stepKernels < 0)
          stepKernels = after.kernels - before.kernels;
        EXPECT_EQ(after.kernels - before.kernels, stepKernels) << step;
      }
      for (int64_t i = 0; i < batch * cols; ++i)
        ev[k * cols + i] -= 0.1f;
    }
    EXPECT_EQ(e.to_vector<float>(), ev);
    return stepKernels;
  };
  int64_t aliveCompiles, droppedCompiles;
  int64_t alive = train(true, aliveCompiles);
  int64_t dropped = train(false, droppedCompiles);
  EXPECT_EQ(aliveCompiles, 0);
  EXPECT_EQ(droppedCompiles, 0);
  EXPECT_EQ(alive, dropped); // the update only
}

// A pending constant read at random offsets inside a differentiated graph
// (mini-batches of a normalized dataset kept pending): the backward
// evaluates it first, then reads its window, so neither the forward nor
// the gradient program compiles again after the first steps.
TEST(OffsetArgs, MiniBatchesOfAPendingDatasetBackwardCompileOnce) {
  const int64_t rows = 200, in = 6, batch = 16;
  std::vector<float> dv = ramp(rows * in);
  Tensor data = from_vector(dv, {rows, in});
  Tensor norm = (data - 1) * 0.5; // pending, named
  std::vector<float> wv(in, 0.25f);
  std::mt19937 rng(10);
  int64_t compiles = 0, backwardCompiles = 0;
  for (int step = 0; step < 20; ++step) {
    Tensor w = from_vector(wv, {in, 1}).requires_grad_();
    int64_t k = std::uniform_int_distribution<int64_t>(0, rows - batch)(rng);
    int64_t before = eval_stats().compiles, bwBefore = backward_compiles();
    Tensor loss = norm.narrow(0, k, batch).matmul(w).pow(2).sum();
    loss.backward();
    std::vector<float> g = w.grad().to_vector<float>();
    if (step >= 2) {
      compiles += eval_stats().compiles - before;
      backwardCompiles += backward_compiles() - bwBefore;
    }
    // d/dw sum (x w)^2 = 2 x^T (x w), x = (data[k:k+B] - 1) / 2.
    for (int64_t j = 0; j < in; ++j) {
      double want = 0;
      for (int64_t b = 0; b < batch; ++b) {
        double h = 0;
        for (int64_t i = 0; i < in; ++i)
          h += (dv[(k + b) * in + i] - 1.0) * 0.5 * wv[i];
        want += 2 * (dv[(k + b) * in + j] - 1.0) * 0.5 * h;
      }
      ASSERT_NEAR(g[j], want, 1e-4 * (1 + std::fabs(want))) << step << " " << j;
    }
  }
  EXPECT_EQ(compiles, 0);
  EXPECT_EQ(backwardCompiles, 0);
}

} // namespace

// A view at a changing offset of a result that requires grad: `h = x * w`
// read a batch at a time, `h.narrow(0, k, B)`, whose gradient scatters at
// `k`. Once the offsets change, backward cuts the graph after `h`: `h` is
// evaluated and read as a leaf (its window passed), and each side is one
// gradient program for every `k`. Gradients against plain C++.
TEST(OffsetArgs,
     ViewsOfResultsRequiringGradAtRandomOffsetsBackwardCompileOnce) {
  const int64_t rows = 90, cols = 5, batch = 7;
  std::vector<float> xv = ramp(rows * cols), wv = ramp(cols);
  Tensor x = from_vector(xv, {rows, cols});
  Tensor w = from_vector(wv, {cols}).requires_grad_();
  std::vector<double> grad(cols, 0.0);
  std::mt19937 rng(41);
  int64_t compiles = 0, backwardCompiles = 0;
  for (int step = 0; step < 40; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, rows - 15)(rng);
    int64_t before = eval_stats().compiles, bwBefore = backward_compiles();
    // (select and slice with a step too: views of one pending result at
    // offsets a fixed distance apart.)
    Tensor h = (x * w).tanh();
    Tensor loss = (h.narrow(0, k, batch) * 3).relu().sum() +
                  h.select(0, k + batch - 1).sum() +
                  h.slice(0, k, k + 3 * 5, 5).pow(2).sum();
    loss.backward();
    std::vector<float> g = w.grad().to_vector<float>();
    if (step >= 2) {
      compiles += eval_stats().compiles - before;
      backwardCompiles += backward_compiles() - bwBefore;
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double t = std::tanh(double(xv[r * cols + c]) * wv[c]);
        double dh = 0; // d loss / d h[r][c]
        if (r >= k && r < k + batch && t > 0)
          dh += 3;
        if (r == k + batch - 1)
          dh += 1;
        if (r >= k && r < k + 15 && (r - k) % 5 == 0)
          dh += 2 * t;
        grad[c] += dh * (1 - t * t) * xv[r * cols + c];
      }
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_NEAR(g[c], grad[c], 1e-3 * (1 + std::fabs(grad[c])))
          << "step " << step << " k " << k << " column " << c;
  }
  EXPECT_EQ(backwardCompiles, 0);
  EXPECT_EQ(compiles, 0);
}

// `cat` and `stack` of views at changing offsets: their pieces are
// written into a fresh storage, reading the views. Forward, the viewed
// result is evaluated before the writes (which then read an argument's
// window); backward, the cut after it windows it for the writes too.
// Values and gradients against plain C++, no compile after step 2.
TEST(OffsetArgs, CatAndStackOfViewsAtRandomOffsetsCompileOnce) {
  const int64_t rows = 40, cols = 4;
  std::vector<float> xv = ramp(rows * cols), wv = ramp(cols);
  Tensor x = from_vector(xv, {rows, cols}), c = ones({2, cols});
  Tensor w = from_vector(wv, {cols}).requires_grad_();
  eval({c}); // (the same structure from the first step on)
  std::vector<double> grad(cols, 0.0);
  std::mt19937 rng(8);
  int64_t compiles = 0;
  for (int step = 0; step < 30; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, rows - 2)(rng);
    int64_t before = eval_stats().compiles;
    std::vector<float> got =
        cat({(x * 2).narrow(0, k, 2), c}).sum({1}).to_vector<float>();
    ASSERT_EQ(got.size(), 4u);
    for (int64_t r = 0; r < 2; ++r) {
      double want = 0;
      for (int64_t j = 0; j < cols; ++j)
        want += 2.0 * xv[(k + r) * cols + j];
      ASSERT_NEAR(got[r], want, 1e-4 * (1 + std::fabs(want))) << k;
      ASSERT_EQ(got[2 + r], float(cols)) << k;
    }
    Tensor h = (x * w).tanh();
    (stack({h.select(0, k), h.select(0, k + 1) * 3}) * 0.5).sum().backward();
    std::vector<float> g = w.grad().to_vector<float>();
    if (step >= 2)
      compiles += eval_stats().compiles - before;
    for (int64_t r = k; r < k + 2; ++r)
      for (int64_t j = 0; j < cols; ++j) {
        double t = std::tanh(double(xv[r * cols + j]) * wv[j]);
        grad[j] += (r == k ? 0.5 : 1.5) * (1 - t * t) * xv[r * cols + j];
      }
    for (int64_t j = 0; j < cols; ++j)
      ASSERT_NEAR(g[j], grad[j], 1e-3 * (1 + std::fabs(grad[j])))
          << "step " << step << " k " << k << " column " << j;
  }
  EXPECT_EQ(compiles, 0);
}

// A backward whose root is itself a part of a result requiring grad at a
// changing offset, `h.narrow(0, k, B).backward(g)` or a 0-d `select`: as
// `root * 1`, cut after `h` once the offsets change. Gradients against
// plain C++, no compile after step 2.
TEST(OffsetArgs, RootViewsAtRandomOffsetsBackwardCompileOnce) {
  const int64_t rows = 30, cols = 3, batch = 4;
  std::vector<float> xv = ramp(rows * cols), wv = ramp(cols),
                     gv = ramp(batch * cols);
  Tensor x = from_vector(xv, {rows, cols}), g = from_vector(gv, {batch, cols});
  Tensor w = from_vector(wv, {cols}).requires_grad_();
  std::vector<double> grad(cols, 0.0);
  std::mt19937 rng(12);
  int64_t compiles = 0;
  for (int step = 0; step < 20; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, rows - batch)(rng);
    int64_t before = eval_stats().compiles;
    (x * w).tanh().narrow(0, k, batch).backward(g);
    (x * w).sum(1).select(0, k).backward();
    std::vector<float> got = w.grad().to_vector<float>();
    if (step >= 2)
      compiles += eval_stats().compiles - before;
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t b = 0; b < batch; ++b) {
        double xr = xv[(k + b) * cols + j], t = std::tanh(xr * wv[j]);
        grad[j] += gv[b * cols + j] * (1 - t * t) * xr;
      }
      grad[j] += xv[k * cols + j];
      ASSERT_NEAR(got[j], grad[j], 1e-3 * (1 + std::fabs(grad[j])))
          << "step " << step << " k " << k << " column " << j;
    }
  }
  EXPECT_EQ(compiles, 0);
}

// Forward only: an op on a window of a pending result at a changing offset,
// then a view of that op's result (`h.narrow(0, k, B).tanh().narrow(1, 0,
// 2)`): the viewed results are evaluated in turn (the op's then reads the
// window of `h`'s), and `k = 0` is one of the offsets. Values against
// plain C++; nothing compiles after the second step.
TEST(OffsetArgs, ViewsOfOpsOnWindowsAtRandomOffsetsCompileTwice) {
  const int64_t rows = 50, cols = 5, batch = 6;
  std::vector<float> xv = ramp(rows * cols);
  Tensor x = from_vector(xv, {rows, cols});
  std::mt19937 rng(31);
  int64_t afterSecond = 0, before = eval_stats().compiles;
  for (int step = 0; step < 40; ++step) {
    int64_t k =
        step % 7 == 3
            ? 0
            : std::uniform_int_distribution<int64_t>(1, rows - batch)(rng);
    Tensor h = x * 2;
    std::vector<float> got = h.narrow(0, k, batch)
                                 .tanh()
                                 .narrow(1, 1, 2)
                                 .sum({1})
                                 .to_vector<float>();
    ASSERT_EQ(got.size(), size_t(batch));
    for (int64_t r = 0; r < batch; ++r) {
      double want = 0;
      for (int64_t c = 1; c < 3; ++c)
        want += std::tanh(2.0 * xv[(k + r) * cols + c]);
      ASSERT_NEAR(got[r], want, 1e-5 * (1 + std::fabs(want)))
          << "step " << step << " k " << k;
    }
    if (step == 1)
      afterSecond = eval_stats().compiles;
  }
  EXPECT_LE(afterSecond - before, 4);
  EXPECT_EQ(compilesSince(afterSecond), 0);
}

// Forward only: one result read whole and through a window at a changing
// offset in one program (`eval({h.narrow(0, k, B).tanh(), h.sum(0)})`, or
// one expression of both): once the offsets vary, the window's reader is
// evaluated alone, its read its own window. Values against plain C++;
// nothing compiles after the second step.
TEST(OffsetArgs, WholeAndWindowReadsOfOneResultCompileTwice) {
  const int64_t rows = 40, cols = 4, batch = 5;
  std::vector<float> xv = ramp(rows * cols);
  Tensor x = from_vector(xv, {rows, cols});
  std::mt19937 rng(17);
  int64_t afterSecond = 0, before = eval_stats().compiles;
  for (int step = 0; step < 30; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, rows - batch)(rng);
    Tensor h = x * 2;
    Tensor a = h.narrow(0, k, batch).tanh().narrow(1, 1, 2);
    Tensor w = h.sum(0);
    Tensor both = h.narrow(0, k, batch).sigmoid().sum() + h.sum() * 0.5;
    eval({a, w, both});
    std::vector<float> av = a.to_vector<float>(), wv = w.to_vector<float>();
    double whole = 0, sig = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double v = 2.0 * xv[r * cols + c];
        whole += v;
        if (r >= k && r < k + batch)
          sig += 1 / (1 + std::exp(-v));
      }
    for (int64_t r = 0; r < batch; ++r)
      for (int64_t c = 0; c < 2; ++c) {
        double want = std::tanh(2.0 * xv[(k + r) * cols + 1 + c]);
        ASSERT_NEAR(av[r * 2 + c], want, 1e-5) << "step " << step;
      }
    for (int64_t c = 0; c < cols; ++c) {
      double want = 0;
      for (int64_t r = 0; r < rows; ++r)
        want += 2.0 * xv[r * cols + c];
      ASSERT_NEAR(wv[c], want, 1e-4 * (1 + std::fabs(want)));
    }
    double want = sig + whole * 0.5;
    ASSERT_NEAR(both.item<float>(), want, 1e-4 * (1 + std::fabs(want)))
        << "step " << step;
    if (step == 1)
      afterSecond = eval_stats().compiles;
  }
  EXPECT_LE(afterSecond - before, 8);
  EXPECT_EQ(compilesSince(afterSecond), 0);
}

// Backward through a result read whole and through a window at a
// changing offset (`h.sum() * 0.5 + h.narrow(0, k, B).pow(2).sum()`, the
// whole read recorded first): the window's reader runs in a segment of
// its own, its read its own window. Gradients against plain C++, no
// compile after step 2.
TEST(OffsetArgs, WholeAndWindowReadsOfAResultRequiringGradBackwardCompileOnce) {
  const int64_t rows = 36, cols = 3, batch = 5;
  std::vector<float> xv = ramp(rows * cols), wv = ramp(cols);
  Tensor x = from_vector(xv, {rows, cols});
  Tensor w = from_vector(wv, {cols}).requires_grad_();
  std::vector<double> grad(cols, 0.0);
  std::mt19937 rng(23);
  int64_t compiles = 0;
  for (int step = 0; step < 25; ++step) {
    int64_t k = std::uniform_int_distribution<int64_t>(0, rows - batch)(rng);
    int64_t before = eval_stats().compiles;
    Tensor h = (x * w).tanh();
    Tensor whole = h.sum() * 0.5;
    (whole + h.narrow(0, k, batch).pow(2).sum()).backward();
    std::vector<float> g = w.grad().to_vector<float>();
    if (step >= 2)
      compiles += eval_stats().compiles - before;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j) {
        double xr = xv[r * cols + j], t = std::tanh(xr * wv[j]);
        double dh = 0.5 + (r >= k && r < k + batch ? 2 * t : 0.0);
        grad[j] += dh * (1 - t * t) * xr;
      }
    for (int64_t j = 0; j < cols; ++j)
      ASSERT_NEAR(g[j], grad[j], 1e-3 * (1 + std::fabs(grad[j])))
          << "step " << step << " k " << k << " column " << j;
  }
  EXPECT_EQ(compiles, 0);
}
