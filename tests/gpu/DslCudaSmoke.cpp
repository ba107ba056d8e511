//===- DslCudaSmoke.cpp - fluent programs on cuda:0 against the CPU -------===//
//
// Built as strata-gpu-dsl-smoke (tests/unit/CMakeLists.txt) and run by
// tests/gpu/run.sh. Without a driver or a GPU every test is SKIPPED, and
// says why; tests/unit/dsl/CudaDeviceTest.cpp covers that path.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include "strata/JIT/CudaJit.h"

#include <gtest/gtest.h>

using namespace strata;

namespace {

#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    std::string why = jit::cudaUnavailableReason();                            \
    if (!why.empty())                                                          \
      GTEST_SKIP() << why;                                                     \
  } while (0)

const Device kCuda = Device::cuda();

void expectSame(const Tensor &gpu, const Tensor &cpu) {
  ASSERT_TRUE(gpu.device().is_cuda());
  ASSERT_TRUE(cpu.device().is_cpu());
  EXPECT_EQ(gpu.sizes(), cpu.sizes());
  std::vector<double> g = gpu.to_vector<double>(), c = cpu.to_vector<double>();
  ASSERT_EQ(g.size(), c.size());
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], c[i], 1e-5 * (1 + std::abs(c[i]))) << "element " << i;
}

TEST(DslCuda, ElementwiseAndRoundTrip) {
  REQUIRE_GPU();
  Tensor a = arange(1000, dtype(kFloat32)).reshape({10, 100});
  Tensor ga = a.to(kCuda);
  EXPECT_EQ(ga.device().str(), "cuda:0");
  expectSame((ga * 0.01 + 1).exp().tanh(), (a * 0.01 + 1).exp().tanh());
  Tensor back = ga.to(kCPU);
  EXPECT_TRUE(back.device().is_cpu());
  EXPECT_EQ(back.to_vector<float>(), a.to_vector<float>());
}

TEST(DslCuda, Broadcast) {
  REQUIRE_GPU();
  Tensor x = randn({64, 1, 32}), y = randn({1, 48, 32});
  expectSame(x.to(kCuda) * y.to(kCuda) - 0.5, x * y - 0.5);
}

TEST(DslCuda, TransposedCopyAndViewUpload) {
  REQUIRE_GPU();
  Tensor a = arange(64 * 96, dtype(kFloat64)).reshape({64, 96});
  expectSame(a.to(kCuda).t().contiguous(), a.t().contiguous());
  // to() of a view copies the view (contiguous), not its whole storage.
  Tensor v = a.t().narrow(0, 3, 5);
  Tensor gv = v.to(kCuda);
  EXPECT_TRUE(gv.is_contiguous());
  expectSame(gv, v);
}

TEST(DslCuda, Reductions) {
  REQUIRE_GPU();
  Tensor a = randn({128, 257});
  Tensor g = a.to(kCuda);
  expectSame(g.sum(), a.sum());
  expectSame(g.sum({1}), a.sum({1}));
  expectSame(g.amax({0}, true), a.amax({0}, true));
  EXPECT_NEAR(g.sum().item<float>(), a.sum().item<float>(), 1e-2);
}

TEST(DslCuda, InPlaceThroughView) {
  REQUIRE_GPU();
  Tensor a = zeros({8, 8}, dtype(kFloat32));
  Tensor g = zeros({8, 8}, dtype(kFloat32).device(kCuda));
  EXPECT_TRUE(g.device().is_cuda());
  void *before = g.data_ptr();
  a.narrow(1, 2, 3).add_(arange(3, dtype(kFloat32)) + 1);
  g.narrow(1, 2, 3).add_(arange(3, dtype(kFloat32).device(kCuda)) + 1);
  g.diagonal().fill_(7);
  a.diagonal().fill_(7);
  expectSame(g, a);
  EXPECT_EQ(g.data_ptr(), before); // the storage is updated, not replaced
  EXPECT_EQ(g._version(), 2);
}

TEST(DslCuda, PrintingAndMemoryStats) {
  REQUIRE_GPU();
  empty_cache(kCuda);
  reset_peak_memory_stats(kCuda);
  int64_t before = memory_stats(kCuda).allocated_bytes;
  {
    Tensor g = ones({2, 2}, kCuda);
    EXPECT_EQ(g.toString(), "tensor([[1., 1.],\n        [1., 1.]], "
                            "device='cuda:0')");
    EXPECT_GT(memory_stats(kCuda).allocated_bytes, before);
  }
  EXPECT_EQ(memory_stats(kCuda).allocated_bytes, before);
  EXPECT_GE(memory_stats(kCuda).peak_allocated_bytes, before + 16);
  EXPECT_GT(memory_stats(kCuda).reserved_bytes, 0);
  empty_cache(kCuda);
  EXPECT_EQ(memory_stats(kCuda).reserved_bytes, before);
}

TEST(DslCuda, MixedDevicesThrow) {
  REQUIRE_GPU();
  Tensor c = ones({3}), g = ones({3}, kCuda);
  try {
    (void)(g + c);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(e.message(), "Expected all tensors to be on the same device, "
                           "but found at least two devices, cuda:0 and cpu!");
  }
  EXPECT_THROW((void)c.add_(g), Error);
  // Scalars join either device.
  expectSame(g * 3 + 1, c * 3 + 1);
}

} // namespace
