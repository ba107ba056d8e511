//===- DeepTest.cpp - million-op traces and 10^5-deep backward on 1 MB ---===//
//
// Every walk over a recorded program must be iterative: recording,
// evaluating and destroying a chain of 10^6 pending ops, dropping one
// unevaluated, and backward() through a 10^5-deep chain. Each test runs on
// a thread with a 1 MB stack, so a recursive walk (one frame per op) fails
// with a stack overflow long before the chain's end. Results are checked
// against the same recurrence computed with loops in the test.
//
//===----------------------------------------------------------------------===//
#include "strata/Runtime/Storage.h"
#include <strata/strata.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <pthread.h>

using namespace strata;

namespace {

/// Chain lengths (STRATA_DEEP_OPS / STRATA_DEEP_BACKWARD shorten or lengthen
/// them when measuring).
int64_t envOr(const char *name, int64_t fallback) {
  const char *v = std::getenv(name);
  return v && std::atoll(v) > 0 ? std::atoll(v) : fallback;
}
const int64_t kOps = envOr("STRATA_DEEP_OPS", 1000000);
const int64_t kBackward = envOr("STRATA_DEEP_BACKWARD", 10000);

/// Runs `body` on a thread with a 1 MB stack (ASan's larger frames get 4 MB)
/// and waits for it; gtest failures inside are recorded as usual.
void onSmallStack(const std::function<void()> &body) {
#if defined(__SANITIZE_ADDRESS__)
  size_t stack = 4 << 20;
#else
  size_t stack = 1 << 20;
#endif
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack);
  pthread_t thread;
  auto run = [](void *p) -> void * {
    (*static_cast<const std::function<void()> *>(p))();
    return nullptr;
  };
  ASSERT_EQ(
      pthread_create(&thread, &attr, run,
                     const_cast<void *>(static_cast<const void *>(&body))),
      0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

TEST(Deep, MillionOpChainRecordedEvaluatedAndDestroyed) {
  onSmallStack([] {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<float> x0 = {0.5f, -2.0f, 3.0f, 1e3f};
    Tensor x = from_vector(x0, {4});
    for (int64_t i = 0; i < kOps; ++i)
      x = x + 1;
    std::vector<float> got = x.to_vector<float>();
    // The same float32 recurrence, one add at a time.
    for (size_t k = 0; k < x0.size(); ++k) {
      float want = x0[k];
      for (int64_t i = 0; i < kOps; ++i)
        want += 1.0f;
      EXPECT_EQ(got[k], want) << "element " << k;
    }
    x = Tensor();
    printf("[deep] %lld ops recorded, evaluated, destroyed in %.2f s\n",
           static_cast<long long>(kOps), secondsSince(t0));
  });
}

TEST(Deep, MillionOpGraphDroppedWithoutBackward) {
  // A chain requiring grad is not cut into evaluated pieces (backward
  // re-emits it): dropping it frees 10^6 pending nodes, none evaluated.
  onSmallStack([] {
    auto t0 = std::chrono::steady_clock::now();
    auto allocated = [] {
      return runtime::CpuAllocator::global().stats().allocatedBytes;
    };
    int64_t before = allocated();
    {
      Tensor w = from_vector(std::vector<float>{1, 2, 3}, {3}).requires_grad_();
      Tensor y = w;
      for (int64_t i = 0; i < kOps; ++i)
        y = i % 2 ? y * 1.0001 : y + 0.5;
      EXPECT_TRUE(y.requires_grad());
    } // the whole graph goes here, no backward
    EXPECT_EQ(allocated(), before) << "every node's buffer freed";
    printf("[deep] %lld ops recorded and dropped in %.2f s\n",
           static_cast<long long>(kOps), secondsSince(t0));
  });
}

TEST(Deep, BackwardThroughADeepChain) {
  onSmallStack([] {
    auto t0 = std::chrono::steady_clock::now();
    const double k = 1.0001;
    Tensor w = from_vector(std::vector<double>{0.25, -1.5, 2.0}, {3},
                           TensorOptions(DType::F64))
                   .requires_grad_();
    Tensor y = w;
    for (int64_t i = 0; i < kBackward; ++i)
      y = y * k;
    y.sum().backward();
    // d sum(w * k^n) / dw = k^n, the product accumulated in double as the
    // backward chain multiplies it (each step one rounding).
    double want = 1;
    for (int64_t i = 0; i < kBackward; ++i)
      want *= k;
    std::vector<double> g = w.grad().to_vector<double>();
    ASSERT_EQ(g.size(), 3u);
    for (double v : g)
      EXPECT_NEAR(v, want, 1e-9 * want);
    printf("[deep] backward through %lld ops in %.2f s\n",
           static_cast<long long>(kBackward), secondsSince(t0));
  });
}

} // namespace
