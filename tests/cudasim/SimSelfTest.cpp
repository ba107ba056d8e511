//===- SimSelfTest.cpp - the CUDA simulator finds what it must find -------===//
//
// Hand-written kernels, in the emitter's dialect of CUDA C, run through the
// simulator's driver entry points directly (no strata): results of a
// shuffle-and-barrier reduction, and the launch failures the simulator
// exists to report (an access past an allocation, a misaligned vector
// access, a barrier or a shuffle not every thread reaches), plus PTX
// without its source and a copy past an allocation.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace {

using CUresult = int;
using DevicePtr = unsigned long long;

struct Sim {
  void *lib = dlopen(STRATA_CUDASIM_LIB, RTLD_NOW | RTLD_LOCAL);
  template <typename F> F get(const char *name) {
    return reinterpret_cast<F>(dlsym(lib, name));
  }
  CUresult (*memAlloc)(DevicePtr *,
                       size_t) = get<decltype(memAlloc)>("cuMemAlloc_v2");
  CUresult (*memFree)(DevicePtr) = get<decltype(memFree)>("cuMemFree_v2");
  CUresult (*toDevice)(DevicePtr, const void *, size_t, void *) =
      get<decltype(toDevice)>("cuMemcpyHtoDAsync_v2");
  CUresult (*toHost)(void *, DevicePtr, size_t,
                     void *) = get<decltype(toHost)>("cuMemcpyDtoHAsync_v2");
  CUresult (*load)(void **, const void *, unsigned, int *,
                   void **) = get<decltype(load)>("cuModuleLoadDataEx");
  CUresult (*function)(void **, void *, const char *) =
      get<decltype(function)>("cuModuleGetFunction");
  CUresult (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, unsigned, void *, void **,
                     void **) = get<decltype(launch)>("cuLaunchKernel");
  CUresult (*errorString)(CUresult, const char **) =
      get<decltype(errorString)>("cuGetErrorString");

  std::string lastError() {
    const char *text = nullptr;
    errorString(1, &text);
    return text ? text : "";
  }

  /// Loads `body` as kernel `k(const float *in0, float *out0)` and runs it
  /// with `threads` threads in `blocks` blocks on `in`; "" or the error.
  std::string run(const std::string &body, std::vector<float> in,
                  std::vector<float> &out, unsigned blocks, unsigned threads) {
    return launchOn(body, in, out, blocks, threads, 1);
  }
  /// One block of `x` by `y` threads.
  std::string run2d(const std::string &body, std::vector<float> in,
                    std::vector<float> &out, unsigned x, unsigned y) {
    return launchOn(body, in, out, 1, x, y);
  }
  std::string launchOn(const std::string &body, std::vector<float> in,
                       std::vector<float> &out, unsigned blocks,
                       unsigned threads, unsigned threadsY) {
    std::string ptx = "// PTX\n// strata-cuda-sim source begin\n";
    std::string src =
        "struct alignas(16) V4 {\n  float v[4];\n};\n"
        "extern \"C\" __global__ void __launch_bounds__(256)\n"
        "k(const float *__restrict__ in0,\n    float *__restrict__ out0) {\n" +
        body + "}\n";
    size_t start = 0;
    while (start < src.size()) {
      size_t end = src.find('\n', start);
      ptx += "//| " + src.substr(start, end - start) + "\n";
      start = end + 1;
    }
    ptx += "// strata-cuda-sim source end\n";
    void *module = nullptr, *fn = nullptr;
    if (load(&module, ptx.c_str(), 0, nullptr, nullptr) != 0)
      return "load: " + lastError();
    if (function(&fn, module, "k") != 0)
      return "function: " + lastError();
    DevicePtr a = 0, b = 0;
    EXPECT_EQ(memAlloc(&a, in.size() * 4), 0);
    EXPECT_EQ(memAlloc(&b, out.size() * 4), 0);
    EXPECT_EQ(toDevice(a, in.data(), in.size() * 4, nullptr), 0);
    void *params[] = {&a, &b};
    std::string error;
    if (launch(fn, blocks, 1, 1, threads, threadsY, 1, 0, nullptr, params,
               nullptr) != 0)
      error = lastError();
    EXPECT_EQ(toHost(out.data(), b, out.size() * 4, nullptr), 0);
    memFree(a);
    memFree(b);
    return error;
  }
};

Sim &sim() {
  static Sim s;
  return s;
}

TEST(CudaSim, Loads) {
  ASSERT_NE(sim().lib, nullptr) << dlerror();
  ASSERT_NE(sim().launch, nullptr);
}

TEST(CudaSim, ShuffleAndBarrierReduction) {
  // Per block: each warp sums its lanes by shuffles, warp 0 sums the warps.
  std::vector<float> in(3 * 256), out(3, -1);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i % 251);
  std::string body = R"(
  __shared__ float partial[8];
  float v = in0[blockIdx.x * blockDim.x + threadIdx.x];
  for (int d = 16; d > 0; d /= 2)
    v += __shfl_down_sync(0xffffffffu, v, d);
  if (threadIdx.x % 32 == 0)
    partial[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int w = 0; w < 8; ++w)
      s += partial[w];
    out0[blockIdx.x] = s;
  }
)";
  ASSERT_EQ(sim().run(body, in, out, 3, 256), "");
  for (int b = 0; b < 3; ++b) {
    float want = 0;
    for (int i = 0; i < 256; ++i)
      want += in[b * 256 + i];
    EXPECT_EQ(out[b], want) << "block " << b;
  }
}

TEST(CudaSim, PointerArithmeticBothWays) {
  // The emitter writes offsets like `in0 + 63 - i0` (a flipped operand).
  std::vector<float> in(64), out(64, -1);
  for (int i = 0; i < 64; ++i)
    in[i] = float(i);
  ASSERT_EQ(sim().run("  out0[threadIdx.x] = (in0 + 63 - threadIdx.x)[0];\n",
                      in, out, 1, 64),
            "");
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(out[i], 63 - i) << i;
}

TEST(CudaSim, OutOfBoundsAccessFailsTheLaunch) {
  std::vector<float> in(64), out(64);
  std::string e = sim().run("  out0[threadIdx.x + 1] = in0[threadIdx.x];\n", in,
                            out, 1, 64);
  EXPECT_NE(e.find("out-of-bounds access: out0[64]"), std::string::npos) << e;
  EXPECT_NE(e.find("thread (63, 0)"), std::string::npos) << e;
}

TEST(CudaSim, MisalignedVectorAccessFailsTheLaunch) {
  std::vector<float> in(64), out(64);
  std::string e =
      sim().run("  const V4 v = *reinterpret_cast<const V4 *>(in0 + 1);\n"
                "  out0[threadIdx.x] = v.v[0];\n",
                in, out, 1, 32);
  EXPECT_NE(e.find("misaligned vector access: in0[1]"), std::string::npos) << e;
}

TEST(CudaSim, DivergentBarrierFailsTheLaunch) {
  std::vector<float> in(64), out(64);
  std::string e = sim().run("  if (threadIdx.x < 5)\n    __syncthreads();\n",
                            in, out, 1, 64);
  EXPECT_NE(e.find("__syncthreads not reached by every thread"),
            std::string::npos)
      << e;
}

TEST(CudaSim, PartialWarpShuffleFailsTheLaunch) {
  std::vector<float> in(64), out(64);
  std::string e = sim().run("  float v = 1;\n  if (threadIdx.x < 16)\n"
                            "    v = __shfl_down_sync(0xffffffffu, v, 1);\n"
                            "  out0[threadIdx.x] = v;\n",
                            in, out, 1, 64);
  EXPECT_NE(e.find("warp shuffle not reached by every lane"), std::string::npos)
      << e;
}

TEST(CudaSim, SharedTileRaceFailsTheLaunch) {
  // A transpose through a tile: correct with the barrier, a race without.
  std::string body = R"(
  __shared__ float tile_a[32][33];
  tile_a[threadIdx.y][threadIdx.x] = in0[threadIdx.y * 32 + threadIdx.x];
  BARRIER
  out0[threadIdx.y * 32 + threadIdx.x] = tile_a[threadIdx.x][threadIdx.y];
)";
  std::vector<float> in(32 * 32), out(32 * 32);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i);
  auto withBarrier = [&](const char *barrier) {
    std::string b = body;
    b.replace(b.find("BARRIER"), 7, barrier);
    return b;
  };
  ASSERT_EQ(sim().run2d(withBarrier("__syncthreads();"), in, out, 32, 32), "");
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 32; ++c)
      EXPECT_EQ(out[r * 32 + c], in[c * 32 + r]);
  std::string e = sim().run2d(withBarrier(""), in, out, 32, 32);
  // Thread 1 (x 1, y 0) runs first and reads tile_a[1][0] before thread 32
  // (x 0, y 1) writes it.
  EXPECT_NE(e.find("shared-memory race on tile_a[1][0]: thread 32 writes "
                   "what thread 1 read"),
            std::string::npos)
      << e;
}

TEST(CudaSim, UnwrittenDeviceMemoryReadsAsNaN) {
  std::vector<float> in(32), out(32, 0);
  ASSERT_EQ(
      sim().run("  if (threadIdx.x == 0)\n    out0[0] = 1;\n", in, out, 1, 32),
      "");
  EXPECT_EQ(out[0], 1);
  EXPECT_TRUE(std::isnan(out[1]));
}

TEST(CudaSim, PtxWithoutItsSourceIsRefusedWithTheReason) {
  void *module = nullptr;
  char log[512] = {0};
  int options[] = {5, 6};
  void *values[] = {log, reinterpret_cast<void *>(uintptr_t(sizeof(log)))};
  EXPECT_EQ(
      sim().load(&module, ".version 8.0\n.target sm_90\n", 2, options, values),
      218);
  EXPECT_NE(std::string(log).find("libstrata-nvrtc-tap"), std::string::npos)
      << log;
}

TEST(CudaSim, CopyPastAnAllocationIsAnError) {
  DevicePtr a = 0;
  ASSERT_EQ(sim().memAlloc(&a, 100), 0);
  std::vector<char> host(101);
  EXPECT_EQ(sim().toDevice(a, host.data(), 101, nullptr), 1);
  EXPECT_EQ(sim().toDevice(a, host.data(), 100, nullptr), 0);
  EXPECT_EQ(sim().memFree(a), 0);
  EXPECT_EQ(sim().memFree(a), 1); // twice
}

} // namespace
