//===- ThreadSweep.cpp - where the thread pool starts to pay --------------===//
//
// Times one small program at a range of sizes, to set the executor's and
// the BLAS path's thresholds for spreading a kernel over the thread pool
// (docs/performance.md "Small kernels on the calling thread"): an
// elementwise kernel `(x * 2 + 1).relu()` of n f32 elements, a row sum of
// a 256 x (n / 256) matrix, and the product of a 256 x 64 by a 64 x n
// matrix (through the BLAS where it is loaded). Run it with
// STRATA_NUM_THREADS=1 and =2 and compare: µs per evaluation, median of
// 201 after warm-up.
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace strata;

namespace {
template <typename F> double medianMicros(F &&f, int reps = 201) {
  for (int i = 0; i < 20; ++i)
    f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto s = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(
                    std::chrono::steady_clock::now() - s)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
} // namespace

int main() {
  printf("| kind | size | µs |\n|---|---|---|\n");
  for (int64_t n :
       {16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152}) {
    Tensor x = randn({n});
    x.eval();
    printf("| elementwise | %lld | %.2f |\n", static_cast<long long>(n),
           medianMicros([&] { ((x * 2 + 1).relu()).eval(); }));
    Tensor m = randn({256, n / 256});
    m.eval();
    printf("| row sum | %lld | %.2f |\n", static_cast<long long>(n),
           medianMicros([&] { m.sum(1).eval(); }));
  }
  for (int64_t n : {10, 32, 64, 128, 256, 512, 1024, 2048}) {
    Tensor a = randn({256, 64}), b = randn({64, n});
    eval({a, b});
    printf("| matmul 256x64x%lld (%.2f MFLOP) | %lld | %.2f |\n",
           static_cast<long long>(n), 2.0 * 256 * 64 * n * 1e-6,
           static_cast<long long>(n),
           medianMicros([&] { a.matmul(b).eval(); }));
  }
  return 0;
}
