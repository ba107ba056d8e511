//===- ValuesBench.cpp - programs whose values change every step ----------===//
//
// Issue 17's "values are arguments" workloads through the fluent API:
// (1) a learning-rate schedule, `w = w - lr * g` with a new lr each step;
// (2) mini-batches by `narrow` at random offsets, `x.narrow(0, o, 256)
// .sum(0)`; (3) a training step on such mini-batches, `((x.narrow(0, o,
// 64) matmul w) relu).sum()` and its backward; (4) a write at a random
// offset, `x.narrow(0, o, 256).add_(1)`, evaluated every step; (5) rows of
// a leaf requiring grad at random offsets (an embedding's lookup),
// `(w.narrow(0, o, 64) * c).sum()` and its backward, whose gradient is
// written at the offset. Prints, per workload, the
// programs compiled on the first step and over the remaining steps
// (eval_stats().compiles; target 0 after the first) and the median time per
// step, checked against plain C++.
//
//
// `strata-bench-values --shapes N` runs an MLP step at N new batch sizes
// (what a new shape costs; see shapesMode).
//
// `strata-bench-values --memory N` measures what prepared programs cost
// instead (docs/performance.md, "Memory per prepared program"): heap bytes
// and RSS per cached program over 200 distinct one-kernel programs (the
// program cache and the kernel cache large enough to keep them all), what
// evicting them gives back, then RSS after every tenth of N distinct
// programs with the caches at their default bounds. Each program's value
// is checked (sum of 2k + 1 over k < n is n^2).
//
//===----------------------------------------------------------------------===//
#include "strata/JIT/Jit.h"
#include "strata/strata.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace strata;

namespace {

struct Result {
  int64_t firstCompiles = 0, laterCompiles = 0;
  double medianUs = 0;
  /// RSS growth from after the first step to after the last, in MB.
  double rssGrowthMb = 0;
  bool ok = true;
};

int64_t rssBytes();

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
    if (i == 0)
      r.rssGrowthMb = -static_cast<double>(rssBytes());
  }
  r.rssGrowthMb = (r.rssGrowthMb + static_cast<double>(rssBytes())) / 1048576.0;
  std::sort(us.begin() + 1, us.end());
  r.medianUs = us[1 + (us.size() - 1) / 2];
  return r;
}

void print(const char *name, const Result &r, int steps) {
  printf("| %s | %d | %lld | %lld | %.1f | %+.1f | %s |\n", name, steps,
         static_cast<long long>(r.firstCompiles),
         static_cast<long long>(r.laterCompiles), r.medianUs, r.rssGrowthMb,
         r.ok ? "yes" : "NO");
}

/// Resident set size in bytes (/proc/self/statm).
int64_t rssBytes() {
  long pages = 0, resident = 0;
  if (FILE *f = fopen("/proc/self/statm", "r")) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
      resident = 0;
    fclose(f);
  }
  return static_cast<int64_t>(resident) * 4096;
}

/// Heap bytes in use (glibc's allocator, all arenas).
int64_t heapBytes() {
  malloc_trim(0);
  struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}

/// Distinct program `i`: a one-kernel program over i + 1 elements whose
/// structure (its size) no other i has. True when its value is right.
bool distinctProgram(int64_t i) {
  const int64_t n = i + 1;
  double got = (arange(n, kFloat64) * 2 + 1).sum().item<double>();
  return got == double(n) * double(n); // sum of 2k + 1 over k < n
}

int memoryMode(int64_t n) {
  const int64_t kHeld = 200;
  bool ok = true;
  int64_t next = 0;
  // Warm up: the first programs load MLIR's and LLVM's own state.
  for (int i = 0; i < 20; ++i)
    ok &= distinctProgram(next++);
  set_program_cache_capacity(kHeld + 50);
  jit::setKernelCacheCapacity(100000);
  int64_t heap0 = heapBytes(), rss0 = rssBytes();
  int64_t size0 = program_cache_size();
  for (int64_t i = 0; i < kHeld; ++i)
    ok &= distinctProgram(next++);
  int64_t held = program_cache_size() - size0;
  int64_t heap1 = heapBytes(), rss1 = rssBytes();
  int64_t kernelBytes = jit::loadedKernelBytes();
  printf("| %lld distinct one-kernel programs held (program and kernel "
         "caches) | heap +%.1f KB per program | RSS +%.1f KB per program "
         "| %lld kernels loaded, %.1f KB of objects |\n",
         static_cast<long long>(held), (heap1 - heap0) / 1024.0 / held,
         (rss1 - rss0) / 1024.0 / held,
         static_cast<long long>(jit::loadedKernels()), kernelBytes / 1024.0);
  // Evict the programs only (their kernels stay cached), then the kernels.
  set_program_cache_capacity(1);
  int64_t heap2 = heapBytes();
  jit::setKernelCacheCapacity(1);
  int64_t heap3 = heapBytes(), rss3 = rssBytes();
  printf("| evicted | programs gave back %.1f KB each | their kernels "
         "%.1f KB each | RSS now +%.1f MB over the start (%lld kernels "
         "loaded) |\n",
         (heap1 - heap2) / 1024.0 / held, (heap2 - heap3) / 1024.0 / held,
         (rss3 - rss0) / 1048576.0,
         static_cast<long long>(jit::loadedKernels()));
  // RSS over n distinct programs at the default bounds.
  set_program_cache_capacity(256);
  jit::setKernelCacheCapacity(0);
  printf("| distinct programs run | program cache | kernels loaded | heap MB "
         "| RSS MB |\n|---:|---:|---:|---:|---:|\n");
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 1; i <= n; ++i) {
    // Sizes cycle past the bounds, so entries are evicted and reloaded.
    ok &= distinctProgram(kHeld + 20 + (i - 1));
    if (i % std::max<int64_t>(n / 10, 1) == 0)
      printf("| %lld | %lld | %lld | %.1f | %.1f |\n",
             static_cast<long long>(i),
             static_cast<long long>(program_cache_size()),
             static_cast<long long>(jit::loadedKernels()),
             heapBytes() / 1048576.0, rssBytes() / 1048576.0);
  }
  printf("%lld programs in %.1f s; values %s\n", static_cast<long long>(n),
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count(),
         ok ? "match" : "DO NOT MATCH");
  return ok ? 0 : 1;
}

} // namespace

/// `--shapes N`: the digits-sized MLP (64 -> 128 -> 10), forward and
/// backward, at N distinct batch sizes, then at the same sizes again: what
/// a new shape costs (programs prepared, kernels compiled by LLVM, time)
/// against a shape seen before. The loss is checked against plain C++.
int shapesMode(int shapes) {
  manual_seed(1);
  const int64_t in = 64, hidden = 128, out = 10;
  Tensor w1 = ((rand({in, hidden}) - 0.5) * 0.2).requires_grad_();
  Tensor w2 = ((rand({hidden, out}) - 0.5) * 0.2).requires_grad_();
  std::vector<float> w1v = w1.to_vector<float>(), w2v = w2.to_vector<float>();
  printf("| pass | batch sizes | programs prepared | kernels compiled (LLVM "
         "ms) | kernels from cache | median ms per step | losses match "
         "|\n|---|---|---:|---:|---:|---:|---|\n");
  for (int pass = 0; pass < 2; ++pass) {
    int64_t programs = eval_stats().compiles;
    jit::resetCacheStats();
    std::vector<double> ms;
    bool ok = true;
    for (int k = 0; k < shapes; ++k) {
      const int64_t b = 16 + k;
      Tensor x = rand({b, in});
      std::vector<float> xv = x.to_vector<float>();
      auto start = std::chrono::steady_clock::now();
      Tensor loss = x.matmul(w1).relu().matmul(w2).relu().sum();
      loss.backward();
      float got = loss.item<float>();
      Tensor(w1.grad()).zero_();
      Tensor(w2.grad()).zero_();
      w1.grad().eval();
      w2.grad().eval();
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count());
      double want = 0;
      for (int64_t r = 0; r < b; ++r) {
        std::vector<double> h(hidden, 0.0);
        for (int64_t j = 0; j < hidden; ++j) {
          for (int64_t i = 0; i < in; ++i)
            h[j] += double(xv[r * in + i]) * w1v[i * hidden + j];
          h[j] = std::max(h[j], 0.0);
        }
        for (int64_t o = 0; o < out; ++o) {
          double y = 0;
          for (int64_t j = 0; j < hidden; ++j)
            y += h[j] * w2v[j * out + o];
          want += std::max(y, 0.0);
        }
      }
      ok &= std::fabs(got - want) <= 1e-4 * (1 + std::fabs(want));
    }
    std::sort(ms.begin(), ms.end());
    jit::CacheStats c = jit::cacheStats();
    printf("| %s | %d..%d | %ld | %ld (%.0f) | %ld | %.2f | %s |\n",
           pass ? "second" : "first", 16, 16 + shapes - 1,
           static_cast<long>(eval_stats().compiles - programs),
           static_cast<long>(c.compiles), c.compileSeconds * 1e3,
           static_cast<long>(c.memoryHits + c.diskHits), ms[ms.size() / 2],
           ok ? "yes" : "NO");
    if (!ok)
      return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 2 && std::string(argv[1]) == "--memory")
    return memoryMode(atoll(argv[2]));
  if (argc > 2 && std::string(argv[1]) == "--shapes")
    return shapesMode(atoi(argv[2]));
  int steps = argc > 1 ? atoi(argv[1]) : 300;
  const int64_t n = 1 << 16;
  manual_seed(1);
  printf(
      "| workload | steps | compiles, first step | compiles, later steps "
      "| median us per later step | RSS growth after step 1, MB | values match "
      "|\n|---|---:|---:|---:|---:|---:|---|\n");
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
  {
    const int64_t rows = 4096, cols = 64, batch = 256;
    Tensor x = rand({rows, cols});
    x.eval();
    std::vector<float> xv = x.to_vector<float>();
    std::mt19937 rng(7);
    Result r = measure(steps, [&](int) {
      int64_t o = std::uniform_int_distribution<int64_t>(0, rows - batch)(rng);
      x.narrow(0, o, batch).add_(1);
      x.eval();
      // The written rows and one row on each side (untouched).
      const float *p = x.data_ptr<float>();
      bool ok = true;
      for (int64_t i = std::max<int64_t>(o - 1, 0) * cols;
           i < std::min(o + batch + 1, rows) * cols; ++i) {
        if (i >= o * cols && i < (o + batch) * cols)
          xv[i] += 1;
        ok &= p[i] == xv[i];
      }
      return ok;
    });
    print("random-offset write: `x.narrow(0, o, 256).add_(1)` (4096x64 f32)", r,
          steps);
  }
  {
    const int64_t rows = 4096, cols = 64, batch = 64;
    Tensor w = rand({rows, cols}).requires_grad_();
    Tensor c = rand({batch, cols});
    std::vector<float> cv = c.to_vector<float>();
    std::mt19937 rng(8);
    Result r = measure(steps, [&](int) {
      int64_t o = std::uniform_int_distribution<int64_t>(0, rows - batch)(rng);
      Tensor loss = (w.narrow(0, o, batch) * c).sum();
      loss.backward();
      // d loss / d w = c at rows o..o+B, zero elsewhere.
      std::vector<float> g = w.grad().to_vector<float>();
      Tensor(w.grad()).zero_();
      bool ok = true;
      for (int64_t i = 0; i < rows * cols; ++i) {
        int64_t row = i / cols;
        float want =
            row >= o && row < o + batch ? cv[(row - o) * cols + i % cols] : 0;
        ok &= g[i] == want;
      }
      return ok;
    });
    print("leaf rows backward: `(w.narrow(0, o, 64) * c).sum()` + backward "
          "(w 4096x64 f32 requiring grad)",
          r, steps);
  }
  return 0;
}
