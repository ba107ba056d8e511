//===- CudaTest.cpp - the CUDA backend without (and with) a GPU -----------===//
//
// Without a GPU: every kernel of the JIT's test programs (each function of
// tests/lit/Reference/*.mlir and the bandwidth workloads of issue 4) goes
// through the CUDA emitter and NVRTC, and `ptxas -arch=sm_90` accepts the
// PTX; the emitter is deterministic; asking for a device without a driver
// gives "no CUDA device: ...". With a GPU: the same programs run on CUDA
// and agree with the CPU JIT. Each test says SKIPPED when it cannot run.
//
//===----------------------------------------------------------------------===//
#include "ProgramBuilder.h"
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/CudaJit.h"
#include "strata/JIT/Jit.h"
#include "strata/Runtime/CudaAllocator.h"
#include "strata/Runtime/CudaDriver.h"
#include "strata/Target/CUDA/KernelToCUDA.h"
#include "strata/Transforms/KernelPasses.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace strata;
namespace fs = std::filesystem;

namespace {

struct Program {
  std::string name, source;
};

/// A path fixed at build time, unless the environment variable `env`
/// overrides it (a build carried to another machine, where the sources and
/// the CUDA toolkit are elsewhere: tests/gpu/run.sh --bundle sets them).
std::string configured(const char *env, const char *builtIn) {
  const char *value = std::getenv(env);
  return value && *value ? value : builtIn;
}

/// Every test program: the Reference lit files (errors.mlir holds invalid
/// functions on purpose) and the issue-4 bandwidth workloads.
std::vector<Program> programs() {
  std::vector<Program> out;
  std::vector<fs::path> files;
  for (const auto &entry : fs::directory_iterator(
           configured("STRATA_SOURCE_DIR", STRATA_SOURCE_DIR) +
           "/tests/lit/Reference"))
    if (entry.path().extension() == ".mlir" &&
        entry.path().filename() != "errors.mlir")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path &p : files) {
    std::ifstream in(p);
    out.push_back({p.filename().string(),
                   std::string(std::istreambuf_iterator<char>(in), {})});
  }
  using test::V;
  const int64_t n = 4096;
  auto add = [&](const std::string &name, test::Program &p,
                 const std::vector<V> &results) {
    out.push_back({name, p.text(results)});
  };
  {
    test::Program p;
    V a = p.arg({n, n}), b = p.arg({n, n});
    add("(a) a + b", p, {p.binary("add", a, b)});
  }
  {
    test::Program p;
    V a = p.arg({n, n}), b = p.arg({n, n});
    add("(b) a.t() + b", p, {p.binary("add", p.transpose(a, 0, 1), b)});
    test::Program q;
    V c = q.arg({n, n}), d = q.arg({n, n});
    add("(d) (a.t() * b).sum()", q,
        {q.reduce("sum", q.binary("mul", q.transpose(c, 0, 1), d), {0, 1})});
  }
  {
    test::Program p;
    V a = p.arg({n, n});
    V s = p.binary("add", p.binary("mul", a, p.scalar(2)), p.scalar(1));
    add("(c) (a * 2 + 1).relu()", p, {p.unary("relu", s)});
  }
  {
    test::Program p;
    V a = p.arg({n, n});
    add("(e) a.t().contiguous()", p, {p.contiguous(p.transpose(a, 0, 1))});
  }
  {
    test::Program p;
    V x = p.arg({32, 256, 56, 56});
    V t = p.transpose(p.viewAs(x, {32, 4, 64, 56, 56}), 1, 2);
    add("(f) channel shuffle", p,
        {p.viewAs(p.contiguous(t), {32, 256, 56, 56})});
  }
  {
    test::Program p;
    V a = p.arg({n, 1}), b = p.arg({1, n});
    add("(g) a(n,1) + b(1,n)", p, {p.binary("add", a, b)});
  }
  for (int64_t dim : {0, 1}) {
    test::Program p;
    V a = p.arg({n, n});
    add("(h) a.sum(" + std::to_string(dim) + ")", p,
        {p.reduce("sum", a, {dim})});
  }
  return out;
}

/// Parses and lowers `source`; null with a test failure on error.
mlir::OwningOpRef<mlir::ModuleOp> lower(mlir::MLIRContext &context,
                                        const Program &program) {
  auto module =
      mlir::parseSourceString<mlir::ModuleOp>(program.source, &context);
  if (!module) {
    ADD_FAILURE() << program.name << " does not parse";
    return nullptr;
  }
  mlir::PassManager pm(&context);
  buildStrataPipeline(pm, {.formKernels = true});
  if (mlir::failed(pm.run(*module))) {
    ADD_FAILURE() << program.name << ": the pipeline failed";
    return nullptr;
  }
  return module;
}

} // namespace

TEST(CudaEmitter, IsDeterministic) {
  mlir::MLIRContext context;
  jit::loadDialects(context);
  int kernels = 0;
  for (const Program &program : programs()) {
    auto module = lower(context, program);
    if (!module)
      continue;
    module->walk([&](ir::KernelOp kernel) {
      codegen::CudaKernel a, b;
      std::string error;
      ASSERT_TRUE(codegen::emitKernelCUDA(kernel, "k", a, error)) << error;
      ASSERT_TRUE(codegen::emitKernelCUDA(kernel, "k", b, error)) << error;
      EXPECT_EQ(a.source, b.source);
      ++kernels;
    });
  }
  EXPECT_GT(kernels, 50);
}

// The ptxas CTest: every kernel to PTX with NVRTC, validated by ptxas.
TEST(CudaPtx, EveryKernelCompilesAndPtxasAcceptsIt) {
  if (!jit::hasNVRTC())
    GTEST_SKIP() << "SKIPPED: strata was built without the CUDA toolkit";
  std::string ptxas = configured("STRATA_PTXAS", STRATA_PTXAS);
  if (ptxas.empty() || !fs::exists(ptxas))
    GTEST_SKIP() << "SKIPPED: ptxas not found ('" << ptxas
                 << "'; STRATA_PTXAS=path overrides)";
  jit::setCacheDir(""); // measure NVRTC, not the disk cache
  fs::path dir =
      fs::temp_directory_path() / ("strata-ptx-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  mlir::MLIRContext context;
  jit::loadDialects(context);
  std::vector<double> compileMs;
  std::map<std::string, int> kinds;
  for (const Program &program : programs()) {
    auto module = lower(context, program);
    if (!module)
      continue;
    module->walk([&](ir::KernelOp kernel) {
      codegen::CudaKernel info;
      std::string ptx, error;
      auto start = std::chrono::steady_clock::now();
      bool ok = jit::kernelPTX(kernel, "sm_90", info, ptx, error);
      compileMs.push_back(std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                              .count());
      ASSERT_TRUE(ok) << program.name << ": " << error;
      ++kinds[codegen::cudaKernelKindName(info.kind)];
      fs::path file = dir / ("k" + std::to_string(compileMs.size()) + ".ptx");
      std::ofstream(file) << ptx;
      std::string cmd =
          ptxas + " -arch=sm_90 " + file.string() + " -o /dev/null 2>&1";
      FILE *pipe = popen(cmd.c_str(), "r");
      ASSERT_NE(pipe, nullptr);
      std::string log;
      char buf[512];
      while (fgets(buf, sizeof(buf), pipe))
        log += buf;
      int status = pclose(pipe);
      EXPECT_EQ(status, 0) << program.name << ": ptxas rejected the PTX:\n"
                           << log << "\n--- CUDA ---\n"
                           << info.source;
    });
  }
  fs::remove_all(dir);
  ASSERT_GT(compileMs.size(), 50u);
  std::vector<double> sorted = compileMs;
  std::sort(sorted.begin(), sorted.end());
  std::printf("[ptx] %zu kernels validated by ptxas -arch=sm_90; NVRTC "
              "compile per kernel: median %.1f ms, max %.1f ms\n",
              sorted.size(), sorted[sorted.size() / 2], sorted.back());
  for (const auto &[kind, count] : kinds)
    std::printf("[ptx]   %s: %d\n", kind.c_str(), count);
  // Every shape the emitter knows occurs in the suite.
  EXPECT_EQ(kinds.size(), 7u); // (scan: Reference/scan.mlir)
}

TEST(CudaPtx, NvrtcErrorsCarryTheLogAndTheSource) {
  if (!jit::hasNVRTC())
    GTEST_SKIP() << "SKIPPED: strata was built without the CUDA toolkit";
  std::string ptx, error;
  EXPECT_FALSE(jit::compileCudaToPTX(
      "extern \"C\" __global__ void k() { undeclared_thing(); }", "k", "sm_90",
      ptx, error));
  EXPECT_NE(error.find("NVRTC failed to compile kernel 'k'"), std::string::npos)
      << error;
  EXPECT_NE(error.find("undeclared_thing"), std::string::npos) << error;
  EXPECT_NE(error.find("--- CUDA source ---"), std::string::npos) << error;
}

TEST(CudaDriver, MissingLibraryIsNoDevice) {
  std::string why =
      runtime::cuda::Driver::probe("/nonexistent/strata/libcuda.so.1");
  EXPECT_EQ(why.rfind("no CUDA device: ", 0), 0u) << why;
  EXPECT_NE(why.find("could not be loaded"), std::string::npos) << why;
}

TEST(CudaDriver, ToolkitStubIsNoDriver) {
  std::string stub = configured("STRATA_CUDA_STUB", STRATA_CUDA_STUB);
  if (stub.empty() || !fs::exists(stub))
    GTEST_SKIP() << "SKIPPED: no CUDA toolkit stub library";
  std::string why = runtime::cuda::Driver::probe(stub);
  EXPECT_EQ(why.rfind("no CUDA device: no driver", 0), 0u) << why;
}

TEST(CudaDriver, NoDeviceGivesTheClearError) {
  std::string why = jit::cudaUnavailableReason();
  if (why.empty())
    GTEST_SKIP() << "SKIPPED: a CUDA device is present";
  EXPECT_EQ(why.rfind("no CUDA device: ", 0), 0u) << why;
  // Running, allocating: the same error, no crash.
  mlir::MLIRContext context;
  jit::loadDialects(context);
  test::Program p;
  test::V a = p.arg({4});
  auto module = lower(context, {"a + a", p.text({p.binary("add", a, a)})});
  ASSERT_TRUE(module);
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  std::vector<jit::JitValue> args = {
      jit::JitValue::fresh(jit::DType::F32, {4}, {1, 2, 3, 4})};
  jit::RunResult run = jit::runFunctionCuda(func, args);
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.error.rfind("no CUDA device: ", 0), 0u) << run.error;
  runtime::cuda::DevicePtr ptr = 0;
  std::string error = runtime::cuda::Allocator::get().allocate(64, ptr);
  EXPECT_EQ(error.rfind("no CUDA device: ", 0), 0u) << error;
  EXPECT_EQ(runtime::cuda::Allocator::get().stats().allocations, 0);
}

TEST(CudaDevice, AllocatorCachesAndCounts) {
  if (!jit::cudaUnavailableReason().empty())
    GTEST_SKIP() << "SKIPPED: " << jit::cudaUnavailableReason();
  auto &alloc = runtime::cuda::Allocator::get();
  if (!alloc.caching())
    GTEST_SKIP() << "SKIPPED: the cache is off (STRATA_NO_CUDA_MEMORY_CACHING)";
  alloc.resetPeakStats();
  auto before = alloc.stats();
  runtime::cuda::DevicePtr a = 0, b = 0;
  ASSERT_EQ(alloc.allocate(1000, a), "");
  EXPECT_EQ(alloc.stats().allocated - before.allocated, 1024);
  alloc.release(a);
  ASSERT_EQ(alloc.allocate(1000, b), "");
  EXPECT_EQ(a, b); // served from the cache
  EXPECT_EQ(alloc.stats().allocations - before.allocations, 2);
  alloc.release(b);
  EXPECT_EQ(alloc.emptyCache(), "");
  EXPECT_EQ(alloc.stats().reserved, alloc.stats().allocated);
}

TEST(CudaDevice, UncachedAllocatorIsExact) {
  if (!jit::cudaUnavailableReason().empty())
    GTEST_SKIP() << "SKIPPED: " << jit::cudaUnavailableReason();
  auto &alloc = runtime::cuda::Allocator::get();
  if (alloc.caching())
    GTEST_SKIP() << "SKIPPED: the cache is on (STRATA_NO_CUDA_MEMORY_CACHING "
                    "is not set)";
  auto before = alloc.stats();
  runtime::cuda::DevicePtr a = 0;
  ASSERT_EQ(alloc.allocate(1000, a), "");
  EXPECT_EQ(alloc.stats().allocated - before.allocated, 1000);
  EXPECT_EQ(alloc.stats().reserved - before.reserved, 1000);
  alloc.release(a);
  EXPECT_EQ(alloc.stats().allocated, before.allocated);
  EXPECT_EQ(alloc.stats().reserved, before.reserved); // back to the driver
  EXPECT_EQ(alloc.stats().allocations - before.allocations, 1);
}
