//===- CudaDeviceTest.cpp - CUDA tensors without a usable GPU -------------===//
//
// Every CUDA request of the fluent API throws strata::Error with the
// runtime's reason ("no CUDA device: ..."), never crashes. The driver is
// pointed at a library that does not exist ($STRATA_CUDA_DRIVER), so this
// holds on GPU machines too; CPU tensors keep working afterwards.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace strata;

namespace {

class NoCudaDevice : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    setenv("STRATA_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  }
};

template <typename F> void expectNoDevice(F &&f) {
  try {
    f();
    FAIL() << "expected strata::Error";
  } catch (const Error &e) {
    EXPECT_EQ(e.message().rfind("no CUDA device: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("CudaDeviceTest.cpp"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(NoCudaDevice, EveryRequestThrowsTheRuntimeReason) {
  Tensor c = arange(6).reshape({2, 3});
  expectNoDevice([&] { (void)c.to(Device::cuda()); });
  expectNoDevice([&] { (void)c.t().to(Device::cuda(0)); });
  expectNoDevice([&] { (void)zeros({2}, Device::cuda()); });
  expectNoDevice(
      [&] { (void)ones({2}, dtype(kFloat64).device(Device::cuda())); });
  expectNoDevice([&] { (void)arange(4, Device::cuda()); });
  expectNoDevice([&] {
    (void)from_vector<float>({1, 2}, {2}, Device::cuda());
  });
  expectNoDevice([&] { (void)empty({3}, Device::cuda()); });
  expectNoDevice([&] { (void)randn({3}, Device::cuda()); });
  expectNoDevice([&] { (void)memory_stats(Device::cuda()); });
  expectNoDevice([&] { reset_peak_memory_stats(Device::cuda()); });
  expectNoDevice([&] { empty_cache(Device::cuda()); });
}

TEST_F(NoCudaDevice, CpuStillWorks) {
  EXPECT_THROW((void)ones({2}).to(Device::cuda()), Error);
  Tensor c = arange(4, dtype(kFloat32));
  EXPECT_TRUE(c.device().is_cpu());
  EXPECT_EQ(c.to(kCPU).data_ptr(), c.data_ptr());
  EXPECT_EQ((c * 2).sum().item<float>(), 12.0f);
  EXPECT_EQ(c.options().device(), kCPU);
  EXPECT_EQ(memory_stats(kCPU).allocated_bytes >= 0, true);
}

} // namespace

// NVRTC hidden (ctest cudasim-no-nvrtc: the CUDA simulator as the driver,
// STRATA_NVRTC_LIBRARY naming a missing library): the program starts, data
// moves to the device, and the first CUDA kernel throws strata::Error that
// says NVRTC could not be loaded and how to fix it, at the user's line.
TEST(NoNvrtc, CudaKernelsThrowAClearError) {
  const char *hidden = std::getenv("STRATA_NVRTC_LIBRARY");
  if (!hidden || std::string(hidden).rfind("/nonexistent", 0) != 0)
    GTEST_SKIP() << "run by ctest cudasim-no-nvrtc (NVRTC hidden)";
  Tensor a = arange(8, kFloat32).to(Device::cuda());
  try {
    (void)(a * 2 + 1).to_vector<float>();
    FAIL() << "expected strata::Error";
  } catch (const Error &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("NVRTC (the CUDA runtime compiler) could not be "
                        "loaded"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("STRATA_NVRTC_LIBRARY"), std::string::npos) << what;
    EXPECT_NE(what.find("CudaDeviceTest.cpp"), std::string::npos) << what;
  }
  // The CPU keeps working.
  EXPECT_EQ((arange(3, kFloat32) * 2).to_vector<float>(),
            (std::vector<float>{0, 2, 4}));
}
