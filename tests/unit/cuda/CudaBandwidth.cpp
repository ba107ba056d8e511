//===- CudaBandwidth.cpp - strata's CUDA kernels against a device copy ----===//
//
// For tests/gpu/run.sh on a GPU machine. Prints a markdown table of
//   * the baseline: cuMemcpyDtoD of 1 GiB (read + write bytes / time);
//   * the workloads of issue 4, scaled to fill the GPU (16384^2 float32
//     tensors, channel shuffle of (64,256,112,112)): GB/s of useful traffic
//     (bytes of the logical tensors read + written) over the device time of
//     the kernels (CUDA events), median of the repetitions, and % of the
//     baseline; the kernel shapes the emitter chose;
//   * NVRTC compile time per kernel (cold caches).
// Every workload's results are checked against the CPU JIT's (a row says
// WRONG and the exit status is 1 when they differ).
// Without a GPU it prints why and exits 2.
//
// Usage: strata-bench-cuda [--reps N] [--small | --tiny]
//   --small: 4096^2; --tiny: 256^2 and a 16 MiB baseline, for the CUDA
//   simulator (the cudasim-bench test: the program runs and its results
//   are right; its speeds mean nothing there).
//
//===----------------------------------------------------------------------===//
#include "ProgramBuilder.h"
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/CudaJit.h"
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

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace strata;
using test::V;
namespace rt = strata::runtime::cuda;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "strata-bench-cuda: %s\n", message.c_str());
  std::exit(1);
}

struct Workload {
  std::string id, expr, source;
  std::vector<std::vector<int64_t>> inputs;
  double bytes;
};

std::vector<Workload> workloads(int64_t n) {
  std::vector<Workload> w;
  double nn = double(n) * n;
  auto add = [&](std::string id, std::string expr, test::Program &p,
                 std::vector<V> results,
                 std::vector<std::vector<int64_t>> inputs, double bytes) {
    w.push_back({id, expr, p.text(results), inputs, bytes});
  };
  std::string sz = std::to_string(n);
  {
    test::Program p;
    V a = p.arg({n, n}), b = p.arg({n, n});
    add("a", "a + b", p, {p.binary("add", a, b)}, {{n, n}, {n, n}}, 12 * nn);
  }
  {
    test::Program p;
    V a = p.arg({n, n}), b = p.arg({n, n});
    add("b", "a.t() + b", p, {p.binary("add", p.transpose(a, 0, 1), b)},
        {{n, n}, {n, n}}, 12 * nn);
  }
  {
    test::Program p;
    V a = p.arg({n, n});
    V s = p.binary("add", p.binary("mul", a, p.scalar(2)), p.scalar(1));
    add("c", "(a * 2 + 1).relu()", p, {p.unary("relu", s)}, {{n, n}}, 8 * nn);
  }
  {
    test::Program p;
    V a = p.arg({n, n}), b = p.arg({n, n});
    add("d", "(a.t() * b).sum()", p,
        {p.reduce("sum", p.binary("mul", p.transpose(a, 0, 1), b), {0, 1})},
        {{n, n}, {n, n}}, 8 * nn + 4);
  }
  {
    test::Program p;
    V a = p.arg({n, n});
    add("e", "a.t().contiguous()", p, {p.contiguous(p.transpose(a, 0, 1))},
        {{n, n}}, 8 * nn);
  }
  {
    int64_t N = n >= 16384  ? 64
                : n >= 4096 ? 32
                            : 2,
            C = 256,
            H = n >= 16384  ? 112
                : n >= 4096 ? 56
                            : 14;
    test::Program p;
    V x = p.arg({N, C, H, H});
    V t = p.transpose(p.viewAs(x, {N, 4, C / 4, H, H}), 1, 2);
    add("f",
        "channel shuffle (" + std::to_string(N) + ",256," + std::to_string(H) +
            "," + std::to_string(H) + "), g=4",
        p, {p.viewAs(p.contiguous(t), {N, C, H, H})}, {{N, C, H, H}},
        8.0 * N * C * H * H);
  }
  {
    test::Program p;
    V a = p.arg({n, 1}), b = p.arg({1, n});
    add("g", "a(n,1) + b(1,n)", p, {p.binary("add", a, b)}, {{n, 1}, {1, n}},
        4 * nn + 8.0 * n);
  }
  for (int64_t dim : {0, 1}) {
    test::Program p;
    V a = p.arg({n, n});
    add("h" + std::to_string(dim), "a.sum(" + std::to_string(dim) + ")", p,
        {p.reduce("sum", a, {dim})}, {{n, n}}, 4 * nn + 4.0 * n);
  }
  for (Workload &x : w)
    x.expr += x.id == "f" ? "" : " (" + sz + "x" + sz + ")";
  return w;
}

jit::JitValue input(const std::vector<int64_t> &sizes) {
  jit::JitValue v;
  v.dtype = jit::DType::F32;
  int64_t count = 1;
  for (int64_t s : sizes)
    count *= s;
  v.buffer = runtime::Storage::create(count * sizeof(float));
  float *data = reinterpret_cast<float *>(v.buffer->data());
  for (int64_t i = 0; i < count; ++i)
    data[i] = float(i % 17) * 0.25f - 2.0f;
  v.sizes = sizes;
  int64_t stride = 1;
  v.strides.assign(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 0;) {
    v.strides[d] = stride;
    stride *= sizes[d];
  }
  return v;
}

} // namespace

int main(int argc, char **argv) {
  int reps = 10;
  int64_t n = 16384;
  size_t bytes = size_t(1) << 30; // the baseline copy
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--small"))
      n = 4096;
    else if (!std::strcmp(argv[i], "--tiny"))
      n = 256, bytes = size_t(16) << 20;
    else
      die(std::string("unknown option ") + argv[i]);
  }
  std::string why;
  rt::Driver *driver = rt::Driver::get(why);
  if (!driver) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return 2;
  }
  jit::setCacheDir(""); // compile times below are cold NVRTC compiles
  std::printf("Device: %s (sm_%d)\n\n", driver->deviceName().c_str(),
              driver->computeCapability());

  // Baseline: device-to-device copy of 1 GiB.
  rt::DevicePtr src = 0, dst = 0;
  auto &alloc = rt::Allocator::get();
  if (!(why = alloc.allocate(bytes, src)).empty() ||
      !(why = alloc.allocate(bytes, dst)).empty())
    die(why);
  void *e0 = nullptr, *e1 = nullptr;
  driver->createEvent(e0);
  driver->createEvent(e1);
  std::vector<double> copy;
  for (int r = 0; r < reps + 1; ++r) {
    float ms = 0;
    driver->recordEvent(e0);
    driver->copyOnDevice(dst, src, bytes);
    driver->recordEvent(e1);
    if (!(why = driver->elapsedMs(e0, e1, ms)).empty())
      die(why);
    if (r)
      copy.push_back(2.0 * bytes / (ms * 1e-3) / 1e9);
  }
  alloc.release(src);
  alloc.release(dst);
  double base = median(copy);
  std::printf("| workload | kernels (shape) | GB/s (kernel time) | %% of "
              "device copy |\n|---|---|---|---|\n");
  std::printf("| baseline: cuMemcpyDtoD %zu MiB | - | %.0f | 100%% |\n",
              bytes >> 20, base);

  mlir::MLIRContext context;
  jit::loadDialects(context);
  jit::resetCudaCacheStats();
  int64_t kernels = 0;
  bool wrong = false;
  for (const Workload &w : workloads(n)) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(w.source, &context);
    if (!module)
      die("(" + w.id + ") does not parse");
    mlir::PassManager pm(&context);
    buildStrataPipeline(pm, {.formKernels = true});
    if (mlir::failed(pm.run(*module)))
      die("(" + w.id + ") pipeline failed");
    auto func = *module->getOps<mlir::func::FuncOp>().begin();
    std::string shapes;
    func.walk([&](ir::KernelOp k) {
      codegen::CudaKernel info;
      std::string error;
      if (codegen::emitKernelCUDA(k, "k", info, error))
        shapes += std::string(shapes.empty() ? "" : ", ") +
                  codegen::cudaKernelKindName(info.kind) +
                  (info.splits > 1 ? "+finish" : "");
      ++kernels;
    });
    std::vector<jit::JitValue> args;
    for (const auto &sizes : w.inputs)
      args.push_back(input(sizes));
    std::vector<double> seconds;
    jit::CudaRunOptions options;
    options.repetitions = reps + 1;
    options.kernelSeconds = &seconds;
    jit::RunResult run = jit::runFunctionCuda(func, args, options);
    if (!run.ok)
      die("(" + w.id + ") " + run.error);
    seconds.erase(seconds.begin()); // warm-up
    double gbs = w.bytes / median(seconds) / 1e9;
    // The same function on the CPU: the GPU's results must agree.
    std::string check;
    jit::RunResult cpu = jit::runFunction(func, args);
    if (!cpu.ok)
      die("(" + w.id + ") CPU run: " + cpu.error);
    for (size_t r = 0; r < cpu.values.size() && check.empty(); ++r) {
      std::vector<double> g = run.values[r].elements(),
                          c = cpu.values[r].elements();
      if (g.size() != c.size())
        check = "result " + std::to_string(r) + ": element count";
      for (size_t i = 0; i < g.size() && check.empty(); ++i)
        if (!(std::abs(g[i] - c[i]) <= 1e-3 * std::max(1.0, std::abs(c[i]))))
          check = "result " + std::to_string(r) + " element " +
                  std::to_string(i) + ": " + std::to_string(g[i]) + ", CPU " +
                  std::to_string(c[i]);
    }
    if (!check.empty()) {
      wrong = true;
      std::fprintf(stderr, "strata-bench-cuda: (%s) WRONG: %s\n", w.id.c_str(),
                   check.c_str());
    }
    std::printf("| (%s) %s | %s | %.0f%s | %.0f%% |\n", w.id.c_str(),
                w.expr.c_str(), shapes.c_str(), gbs,
                check.empty() ? "" : " WRONG", 100 * gbs / base);
    std::fflush(stdout);
  }
  jit::CacheStats stats = jit::cudaCacheStats();
  std::printf("\nNVRTC compile per kernel (cold, %lld kernels): %.1f ms "
              "mean\n",
              (long long)stats.compiles,
              stats.compiles ? 1e3 * stats.compileSeconds / stats.compiles
                             : 0.0);
  rt::MemoryStats m = alloc.stats();
  std::printf("Device memory: peak %.2f GiB, reserved %.2f GiB, %lld "
              "allocations\n",
              m.peak / double(1 << 30), m.reserved / double(1 << 30),
              (long long)m.allocations);
  (void)kernels;
  return wrong ? 1 : 0;
}
