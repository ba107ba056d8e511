//===- ScanBench.cpp - cumsum/cumprod times beside PyTorch's (scan_torch.py)
//===//
//
// Median seconds of 7 runs (after 2 warm-ups) of x.cumsum(d) / cumprod(d)
// over large f32 tensors, each run a program of one scan kernel whose input
// is already materialized. Prints `strata <what> <seconds>` lines;
// benchmarks/scan_torch.py prints PyTorch's for the same cases.
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace strata;

namespace {
double medianSeconds(const std::function<void()> &fn) {
  for (int i = 0; i < 2; ++i)
    fn();
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count());
  }
  std::sort(t.begin(), t.end());
  return t[3];
}
} // namespace

int main() {
  manual_seed(0);
  Tensor m = randn({4096, 4096}).eval();
  Tensor v = randn({1 << 24}).eval();
  Tensor p = (rand({4096, 4096}) * 0.02 + 0.99).eval();
  struct Case {
    const char *what;
    std::function<Tensor()> run;
  };
  const Case cases[] = {
      {"cumsum_4096x4096_dim1", [&] { return m.cumsum(1); }},
      {"cumsum_4096x4096_dim0", [&] { return m.cumsum(0); }},
      {"cumsum_16M_dim0", [&] { return v.cumsum(0); }},
      {"cumprod_4096x4096_dim1", [&] { return p.cumprod(1); }},
      {"cumsum_t_4096x4096_dim1", [&] { return m.t().cumsum(1); }},
  };
  for (const Case &c : cases)
    std::printf("strata %s %.6f\n", c.what,
                medianSeconds([&] { c.run().eval(); }));
  return 0;
}
