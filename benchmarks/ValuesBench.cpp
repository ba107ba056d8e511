//===- ValuesBench.cpp - programs whose values change every step ----------===//
//
// Issue 17's "values are arguments" workloads through the fluent API:
// (1) a learning-rate schedule, `w = w - lr * g` with a new lr each step;
// (2) mini-batches by `narrow` at random offsets, `x.narrow(0, o, 256)
// .sum(0)`; (3) a training step on such mini-batches, `((x.narrow(0, o,
// 64) matmul w) relu).sum()` and its backward. Prints, per workload, the
// programs compiled on the first step and over the remaining steps
// (eval_stats().compiles; target 0 after the first) and the median time per
// step, checked against plain C++.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace strata;

namespace {

struct Result {
  int64_t firstCompiles = 0, laterCompiles = 0;
  double medianUs = 0;
  bool ok = true;
};

template <typename Step> Result measure(int steps, Step step) {
  Result r;
  std::vector<double> us;
  for (int i = 0; i < steps; ++i) {
    int64_t before = eval_stats().compiles;
    auto start = std::chrono::steady_clock::now();
    r.ok &= step(i);
    us.push_back(std::chrono::duration<double, std::micro>(
                     std::chrono::steady_clock::now() - start)
                     .count());
    (i ? r.laterCompiles : r.firstCompiles) += eval_stats().compiles - before;
  }
  std::sort(us.begin() + 1, us.end());
  r.medianUs = us[1 + (us.size() - 1) / 2];
  return r;
}

void print(const char *name, const Result &r, int steps) {
  printf("| %s | %d | %lld | %lld | %.1f | %s |\n", name, steps,
         static_cast<long long>(r.firstCompiles),
         static_cast<long long>(r.laterCompiles), r.medianUs,
         r.ok ? "yes" : "NO");
}

} // namespace

int main(int argc, char **argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 300;
  const int64_t n = 1 << 16;
  manual_seed(1);
  printf("| workload | steps | compiles, first step | compiles, later steps "
         "| median us per later step | values match |\n|---|---:|---:|---:|"
         "---:|---|\n");
  {
    Tensor w = rand({n}), g = rand({n});
    std::vector<float> wv = w.to_vector<float>(), gv = g.to_vector<float>();
    Result r = measure(steps, [&](int i) {
      double lr = 0.1 * std::pow(0.99, i);
      w = w - lr * g;
      std::vector<float> got = w.to_vector<float>();
      bool ok = true;
      for (int64_t j = 0; j < n; ++j) {
        wv[j] = wv[j] - static_cast<float>(lr) * gv[j];
        ok &= got[j] == wv[j];
      }
      return ok;
    });
    print("lr schedule: `w = w - lr * g` (65536 f32)", r, steps);
  }
  {
    const int64_t rows = 4096, cols = 64, batch = 256;
    Tensor x = rand({rows, cols});
    std::vector<float> xv = x.to_vector<float>();
    std::mt19937 rng(5);
    Result r = measure(steps, [&](int) {
      int64_t o = std::uniform_int_distribution<int64_t>(0, rows - batch)(rng);
      std::vector<float> got =
          x.narrow(0, o, batch).sum({0}).to_vector<float>();
      bool ok = true;
      for (int64_t c = 0; c < cols; ++c) {
        double want = 0;
        for (int64_t b = 0; b < batch; ++b)
          want += xv[(o + b) * cols + c];
        ok &= std::fabs(got[c] - want) <= 1e-5 * std::fabs(want) + 1e-5;
      }
      return ok;
    });
    print("random offsets: `x.narrow(0, o, 256).sum(0)` (4096x64 f32)", r,
          steps);
  }
  {
    const int64_t rows = 4096, in = 64, out = 32, batch = 64;
    Tensor x = rand({rows, in});
    std::vector<float> xv = x.to_vector<float>();
    Tensor w = (rand({in, out}) - 0.5).requires_grad_();
    std::mt19937 rng(6);
    Result r = measure(steps, [&](int) {
      int64_t o = std::uniform_int_distribution<int64_t>(0, rows - batch)(rng);
      std::vector<float> wv = w.to_vector<float>();
      Tensor loss = x.narrow(0, o, batch).matmul(w).relu().sum();
      loss.backward();
      std::vector<float> g = w.grad().to_vector<float>();
      float l = loss.item<float>();
      Tensor(w.grad()).zero_();
      // Plain C++: h = x[o:o+B] w; loss = sum relu(h); dw = x^T (h > 0).
      std::vector<double> gw(in * out, 0.0);
      double want = 0;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < out; ++j) {
          double h = 0;
          for (int64_t i = 0; i < in; ++i)
            h += double(xv[(o + b) * in + i]) * wv[i * out + j];
          if (h <= 0)
            continue;
          want += h;
          for (int64_t i = 0; i < in; ++i)
            gw[i * out + j] += xv[(o + b) * in + i];
        }
      bool ok = std::fabs(l - want) <= 1e-4 * (1 + std::fabs(want));
      for (int64_t i = 0; i < in * out; ++i)
        ok &= std::fabs(g[i] - gw[i]) <= 1e-4 * (1 + std::fabs(gw[i]));
      return ok;
    });
    print("mini-batch step: `((x.narrow(0, o, 64) matmul w) relu).sum()` "
          "+ backward (4096x64, w 64x32 f32)",
          r, steps);
  }
  return 0;
}
