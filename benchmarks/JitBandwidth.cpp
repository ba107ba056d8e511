//===- JitBandwidth.cpp - strata's JIT kernels against a STREAM baseline --===//
//
// One run prints (and with --markdown FILE writes) a table of
//   * a STREAM-like baseline in plain C++ on the runtime's thread pool
//     (copy, add, triad, read-sum on float32 arrays of 64 Mi elements from
//     strata's allocator, parallel first-touch initialisation), in GB/s;
//   * strata workloads built as strata IR text, lowered and compiled once
//     (PreparedFunction) and run on preallocated inputs: GB/s of useful
//     traffic (bytes of the logical tensors read + written, as PyTorch
//     counts them) over the time spent inside kernel calls, median of the
//     repetitions, and % of the matching baseline: of the baseline table's
//     median, and "paired": the median over repetitions of the workload's
//     GB/s over that of one baseline run made right after it (robust to
//     the load of a shared machine changing during the run);
//   * JIT compile time per kernel (cold caches), cache-hit dispatch time of
//     a small program, and the load time from the disk cache.
//
// Usage: strata-bench-jit [--reps N] [--markdown FILE] [--only ID,ID...]
// (--only: just those workloads, e.g. --only b,d; the table is then partial)
//
//===----------------------------------------------------------------------===//
#include "JitBandwidthWorkloads.h"
#include "strata/JIT/Jit.h"
#include "strata/Runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace strata;
using namespace strata::bench;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

runtime::ThreadPool &pool() { return runtime::ThreadPool::global(); }

//===--- STREAM-like baseline ---------------------------------------------===//

struct Baseline {
  double copy = 0, add = 0, triad = 0, readSum = 0; // GB/s
};

enum class Kernel { Copy, Add, Triad, ReadSum };

/// The STREAM-like kernels on three arrays of 64 Mi f32 that stay allocated,
/// so that a workload's repetitions can each be paired with a baseline
/// repetition run right after it (the ratio then sees the same machine
/// load; docs/performance.md).
class BaselineRunner {
public:
  BaselineRunner() {
    // From the allocator the workloads' buffers come from (same alignment
    // and huge page advice), so that the comparison is like with like.
    a = runtime::Storage::create(n * 4);
    b = runtime::Storage::create(n * 4);
    c = runtime::Storage::create(n * 4);
    float *pa = f(a), *pb = f(b), *pc = f(c);
    // First touch in parallel, with the same split the timed loops use.
    pool().parallelFor(n, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        pa[i] = 1.0f;
        pb[i] = 2.0f;
        pc[i] = 0.0f;
      }
    });
  }
  /// One timed run of `kernel`: GB/s.
  double once(Kernel kernel) {
    float *pa = f(a), *pb = f(b), *pc = f(c);
    const double bytes = 4.0 * n;
    std::function<void(int64_t, int64_t)> body;
    double traffic = 0;
    switch (kernel) {
    case Kernel::Copy:
      traffic = 2 * bytes;
      body = [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i)
          pc[i] = pa[i];
      };
      break;
    case Kernel::Add:
      traffic = 3 * bytes;
      body = [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i)
          pc[i] = pa[i] + pb[i];
      };
      break;
    case Kernel::Triad:
      traffic = 3 * bytes;
      body = [&](int64_t lo, int64_t hi) {
        const float s = 3.0f;
        for (int64_t i = lo; i < hi; ++i)
          pa[i] = pb[i] + s * pc[i];
      };
      break;
    case Kernel::ReadSum:
      traffic = bytes;
      body = [&](int64_t lo, int64_t hi) {
        // Independent accumulators: vectorizes without -ffast-math.
        constexpr int k = 32;
        float acc[k] = {};
        int64_t i = lo;
        for (; i + k <= hi; i += k)
          for (int j = 0; j < k; ++j)
            acc[j] += pa[i + j];
        float sum = 0;
        for (; i < hi; ++i)
          sum += pa[i];
        for (int j = 0; j < k; ++j)
          sum += acc[j];
        sink += sum;
      };
      break;
    }
    auto s = Clock::now();
    pool().parallelFor(n, body);
    return traffic / seconds(s, Clock::now()) / 1e9;
  }
  /// Median GB/s of `reps` runs after one warm-up.
  double median(Kernel kernel, int reps) {
    once(kernel);
    std::vector<double> g;
    for (int r = 0; r < reps; ++r)
      g.push_back(once(kernel));
    return ::median(g);
  }

private:
  static constexpr int64_t n = int64_t(64) << 20;
  static float *f(const runtime::StoragePtr &s) {
    return reinterpret_cast<float *>(s->data());
  }
  runtime::StoragePtr a, b, c;
  std::atomic<float> sink{0};
};

Baseline runBaseline(BaselineRunner &runner, int reps) {
  Baseline out;
  out.copy = runner.median(Kernel::Copy, reps);
  out.add = runner.median(Kernel::Add, reps);
  out.triad = runner.median(Kernel::Triad, reps);
  out.readSum = runner.median(Kernel::ReadSum, reps);
  return out;
}

/// A contiguous f32 input, initialised in parallel (first touch is the
/// zeroing of std::vector, on the calling thread).
jit::JitValue makeInput(const std::vector<int64_t> &sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  jit::JitValue v;
  v.dtype = jit::DType::F32;
  v.buffer = strata::runtime::Storage::create(n * 4);
  v.sizes = sizes;
  v.strides.assign(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;)
    v.strides[d - 1] = v.strides[d] * sizes[d];
  float *p = reinterpret_cast<float *>(v.buffer->data());
  pool().parallelFor(n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      p[i] = float((i * 7) % 13) * 0.25f - 1.0f;
  });
  return v;
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string fmt(const char *f, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, f, v);
  return buf;
}

[[noreturn]] void die(const std::string &what) {
  fprintf(stderr, "strata-bench-jit: %s\n", what.c_str());
  exit(1);
}

} // namespace

int main(int argc, char **argv) {
  int reps = 7;
  std::string markdown, only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, atoi(argv[++i]));
    else if (a == "--markdown" && i + 1 < argc)
      markdown = argv[++i];
    else if (a == "--only" && i + 1 < argc)
      only = "," + std::string(argv[++i]) + ",";
    else
      die("usage: strata-bench-jit [--reps N] [--markdown FILE] "
          "[--only ID,ID...]");
  }

  // A fresh disk cache: compile times are cold.
  char dirTemplate[] = "/tmp/strata-bench-cache-XXXXXX";
  if (!mkdtemp(dirTemplate))
    die("cannot create a temporary cache directory");
  std::string cacheDir = dirTemplate;
  setenv("STRATA_CACHE_DIR", cacheDir.c_str(), 1);
  jit::setCacheDir(cacheDir);
  jit::clearMemoryCache();

  std::vector<std::string> rows; // markdown rows
  std::ostringstream out;
  auto line = [&](const std::string &s) {
    out << s << "\n";
    printf("%s\n", s.c_str());
    fflush(stdout);
  };

  line("# strata JIT bandwidth");
  line("");
  line("Machine: " + cpuModel() + ", " +
       std::to_string(std::thread::hardware_concurrency()) +
       " hardware threads; "
       "thread pool: " +
       std::to_string(pool().size()) + " threads; " + std::to_string(reps) +
       " timed repetitions, medians.");
  line("");

  BaselineRunner baselineRunner;
  Baseline base = runBaseline(baselineRunner, reps);
  line("| baseline (plain C++, 64 Mi f32, all threads) | GB/s |");
  line("|---|---:|");
  line("| copy `c = a` | " + fmt("%.1f", base.copy) + " |");
  line("| add `c = a + b` | " + fmt("%.1f", base.add) + " |");
  line("| triad `a = b + s*c` | " + fmt("%.1f", base.triad) + " |");
  line("| read-sum `s += a[i]` | " + fmt("%.1f", base.readSum) + " |");
  line("");

  // Compile cold: fresh disk cache, empty memory cache.
  std::vector<Workload> ws = workloads();
  if (!only.empty())
    std::erase_if(ws, [&](const Workload &w) {
      return only.find("," + w.id + ",") == std::string::npos;
    });
  std::vector<std::unique_ptr<jit::PreparedFunction>> fns;
  std::vector<double> compileMs, prepareColdMs;
  for (const Workload &w : ws) {
    jit::CacheStats before = jit::cacheStats();
    std::string error;
    auto s = Clock::now();
    auto fn = jit::PreparedFunction::fromSource(w.source, "main", error);
    double t = seconds(s, Clock::now());
    if (!fn)
      die("(" + w.id + ") " + error);
    jit::CacheStats after = jit::cacheStats();
    int64_t compiles = after.compiles - before.compiles;
    if (compiles > 0)
      compileMs.push_back(1e3 * (after.compileSeconds - before.compileSeconds) /
                          double(compiles));
    prepareColdMs.push_back(1e3 * t);
    fns.push_back(std::move(fn));
  }

  line("| workload | kernels | GB/s (kernel time) | % of baseline | "
       "% of baseline, paired | GB/s (whole run) | baseline |");
  line("|---|---:|---:|---:|---:|---:|---|");
  for (size_t i = 0; i < ws.size(); ++i) {
    const Workload &w = ws[i];
    std::vector<jit::JitValue> args;
    for (const auto &sizes : w.inputs)
      args.push_back(makeInput(sizes));
    Kernel baseKernel = w.base == Base::Copy  ? Kernel::Copy
                        : w.base == Base::Add ? Kernel::Add
                                              : Kernel::ReadSum;
    std::vector<double> kernelT, wallT, paired;
    for (int r = 0; r < reps + 1; ++r) {
      double k = 0;
      jit::RunOptions opts;
      opts.kernelSeconds = &k;
      auto s = Clock::now();
      jit::RunResult res = fns[i]->run(args, opts);
      double t = seconds(s, Clock::now());
      if (!res.ok)
        die("(" + w.id + ") " + res.error);
      if (r) {
        kernelT.push_back(k);
        wallT.push_back(t);
        // The matching baseline right after: a ratio under the same load.
        paired.push_back(w.bytes / k / 1e9 / baselineRunner.once(baseKernel));
      }
    }
    double gbs = w.bytes / median(kernelT) / 1e9;
    double wall = w.bytes / median(wallT) / 1e9;
    double ref = w.base == Base::Copy  ? base.copy
                 : w.base == Base::Add ? base.add
                                       : base.readSum;
    const char *refName = w.base == Base::Copy  ? "copy"
                          : w.base == Base::Add ? "add"
                                                : "read-sum";
    line("| (" + w.id + ") `" + w.expr + "` | " +
         std::to_string(fns[i]->numKernels()) + " | " + fmt("%.1f", gbs) +
         " | " + fmt("%.0f%%", 100 * gbs / ref) + " | " +
         fmt("%.0f%%", 100 * median(paired)) + " | " + fmt("%.1f", wall) +
         " | " + refName + " |");
  }
  line("");

  // Cache-hit dispatch of a small program.
  Program small;
  V x = small.arg({8}), y = small.arg({8});
  std::string smallSrc = small.text({small.binary("add", x, y)});
  std::string error;
  auto smallFn = jit::PreparedFunction::fromSource(smallSrc, "main", error);
  if (!smallFn)
    die("small program: " + error);
  std::vector<jit::JitValue> smallArgs = {makeInput({8}), makeInput({8})};
  std::vector<double> perCall;
  const int batch = 1000;
  for (int r = 0; r < 200; ++r) {
    auto s = Clock::now();
    for (int i = 0; i < batch; ++i)
      if (!smallFn->run(smallArgs).ok)
        die("small program failed");
    perCall.push_back(seconds(s, Clock::now()) / batch);
  }
  std::vector<double> perSource;
  for (int r = 0; r < 50; ++r) {
    auto s = Clock::now();
    if (!jit::runSource(smallSrc, "main", smallArgs).ok)
      die("small program failed");
    perSource.push_back(seconds(s, Clock::now()));
  }

  // Disk-cache loads: forget the compiled kernels, prepare again.
  std::vector<double> prepareDiskMs, prepareMemMs;
  jit::clearMemoryCache();
  jit::resetCacheStats();
  for (const Workload &w : ws) {
    auto s = Clock::now();
    auto fn = jit::PreparedFunction::fromSource(w.source, "main", error);
    prepareDiskMs.push_back(1e3 * seconds(s, Clock::now()));
    if (!fn)
      die("(" + w.id + ") " + error);
  }
  jit::CacheStats disk = jit::cacheStats();
  for (const Workload &w : ws) {
    auto s = Clock::now();
    auto fn = jit::PreparedFunction::fromSource(w.source, "main", error);
    prepareMemMs.push_back(1e3 * seconds(s, Clock::now()));
  }

  line("| JIT | median |");
  line("|---|---:|");
  line("| compile per kernel, cold (LLVM IR emit + O3 + object + link; " +
       std::to_string(compileMs.size()) + " kernels) | " +
       fmt("%.1f ms", median(compileMs)) + " |");
  line("| prepare a workload, cold (parse + passes + compile) | " +
       fmt("%.1f ms", median(prepareColdMs)) + " |");
  line("| prepare a workload, kernels from the disk cache (" +
       std::to_string(disk.diskHits) + " hits, " +
       std::to_string(disk.compiles) + " compiles) | " +
       fmt("%.2f ms", median(prepareDiskMs)) + " |");
  line("| prepare a workload, kernels in memory | " +
       fmt("%.2f ms", median(prepareMemMs)) + " |");
  line("| disk-cache load per workload (difference of the two above) | " +
       fmt("%.2f ms", median(prepareDiskMs) - median(prepareMemMs)) + " |");
  line(
      "| cache-hit evaluation of an 8-element add, `PreparedFunction::run` | " +
      fmt("%.2f us", 1e6 * median(perCall)) + " |");
  line("| the same through `runSource` (parse + passes + cache lookup) | " +
       fmt("%.1f us", 1e6 * median(perSource)) + " |");

  if (!markdown.empty()) {
    std::ofstream f(markdown);
    f << out.str();
    if (!f)
      die("cannot write " + markdown);
  }
  std::string rm = "rm -rf '" + cacheDir + "'";
  if (system(rm.c_str()) != 0)
    fprintf(stderr, "strata-bench-jit: could not remove %s\n",
            cacheDir.c_str());
  return 0;
}
