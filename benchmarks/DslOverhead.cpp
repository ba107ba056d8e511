// DSL overhead (Google Benchmark): recording cost per op, record + evaluate
// of `x + 1` on one element, a cache-hit evaluation of a 10-op program (with
// and without recording it), and two fluent-API bandwidth workloads.
//
// `strata-bench-dsl --fluent-vs-ir [--reps N] [--markdown FILE] [--only
// ID,ID...]` instead
// prints the fluent API against the IR level (fluent issue: within 10%):
// every workload (a)-(h) of the JIT issue (benchmarks/JitBandwidthWorkloads.h)
// once recorded and evaluated through strata::Tensor, once run as its IR
// text through a jit::PreparedFunction, on the same input buffers (the IR
// arguments wrap the fluent tensors' storage), alternating fluent and IR
// repetition by repetition (which goes first alternates too) after a
// warm-up of each. Both time the whole call: recording/evaluation or run,
// result allocation (from the same caching allocator) and its release.
// Reported: medians, the median over repetitions of the ratio of the two
// adjacent timings, and the ratio of the fastest runs (the least disturbed
// by other processes on a shared machine).
#include "JitBandwidthWorkloads.h"
#include "strata/JIT/Jit.h"
#include <strata/strata.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

using namespace strata;

static void BM_RecordOnly(benchmark::State &state) {
  Tensor x = ones({1});
  x.eval();
  for (auto _ : state) {
    Tensor y = x + 1;
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_RecordOnly);

static void BM_RecordAndEval1Op(benchmark::State &state) {
  Tensor x = ones({1});
  x.eval();
  for (auto _ : state) {
    Tensor y = x + 1;
    y.eval();
  }
}
BENCHMARK(BM_RecordAndEval1Op);

static void BM_CacheHit10Ops(benchmark::State &state) {
  Tensor x = ones({16});
  x.eval();
  for (auto _ : state) {
    Tensor y = ((((x * 2 + 1).relu() - 3).abs() * 0.5 + x).exp() - 1).sqrt();
    y.eval();
  }
}
BENCHMARK(BM_CacheHit10Ops);

// The eval() alone of the 10-op program above (recorded outside the timing).
static void BM_CacheHit10OpsEvalOnly(benchmark::State &state) {
  Tensor x = ones({16});
  x.eval();
  for (auto _ : state) {
    Tensor y = ((((x * 2 + 1).relu() - 3).abs() * 0.5 + x).exp() - 1).sqrt();
    auto start = std::chrono::steady_clock::now();
    y.eval();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
}
BENCHMARK(BM_CacheHit10OpsEvalOnly)->UseManualTime();

// The same, timed in this thread's CPU time (what the overhead costs when
// other processes share the cores; the clock reads add ~0.1-0.5 us).
static double threadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
static void BM_CacheHit10OpsEvalOnlyCpu(benchmark::State &state) {
  Tensor x = ones({16});
  x.eval();
  for (auto _ : state) {
    Tensor y = ((((x * 2 + 1).relu() - 3).abs() * 0.5 + x).exp() - 1).sqrt();
    double start = threadSeconds();
    y.eval();
    state.SetIterationTime(threadSeconds() - start);
  }
}
BENCHMARK(BM_CacheHit10OpsEvalOnlyCpu)->UseManualTime();

static void BM_ViewChainMetadata(benchmark::State &state) {
  Tensor x = empty({8, 16, 32});
  for (auto _ : state) {
    Tensor v = x.transpose(0, 2).slice(0, 1, 9).unsqueeze(1).flip({0});
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(BM_ViewChainMetadata);

static void BM_FluentAxpyRelu16Mi(benchmark::State &state) {
  Tensor x = rand({1 << 24});
  for (auto _ : state) {
    Tensor y = (x * 1.5 + 0.25).relu();
    y.eval();
  }
  state.SetBytesProcessed(state.iterations() * (int64_t(8) << 24));
}
BENCHMARK(BM_FluentAxpyRelu16Mi)->Unit(benchmark::kMillisecond);

static void BM_FluentTransposeCopy4k(benchmark::State &state) {
  Tensor x = rand({4096, 4096});
  for (auto _ : state) {
    Tensor y = x.t().contiguous();
    y.eval();
  }
  state.SetBytesProcessed(state.iterations() * (int64_t(8) << 24));
}
BENCHMARK(BM_FluentTransposeCopy4k)->Unit(benchmark::kMillisecond);

//===--- Fluent vs IR level ----------------------------------------------===//

namespace {

using Clock = std::chrono::steady_clock;
using Fluent = std::function<Tensor(const std::vector<Tensor> &)>;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string loadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::string fmt(const char *f, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// The fluent form of each workload of JitBandwidthWorkloads.h, by id.
std::map<std::string, Fluent> fluentForms() {
  using T = const std::vector<Tensor> &;
  const int64_t N = 32, C = 256, H = 56, W = 56, G = 4;
  return {
      {"a", [](T in) { return in[0] + in[1]; }},
      {"b", [](T in) { return in[0].t() + in[1]; }},
      {"c", [](T in) { return (in[0] * 2 + 1).relu(); }},
      {"d", [](T in) { return (in[0].t() * in[1]).sum(); }},
      {"e", [](T in) { return in[0].t().contiguous(); }},
      {"f",
       [=](T in) {
         return in[0]
             .view({N, G, C / G, H, W})
             .transpose(1, 2)
             .contiguous()
             .view({N, C, H, W});
       }},
      {"g", [](T in) { return in[0] + in[1]; }},
      {"h0", [](T in) { return in[0].sum({0}); }},
      {"h1", [](T in) { return in[0].sum({1}); }},
  };
}

[[noreturn]] void die(const std::string &what) {
  fprintf(stderr, "strata-bench-dsl: %s\n", what.c_str());
  exit(1);
}

int fluentVsIR(int reps, const std::string &markdown, const std::string &only) {
  std::ostringstream out;
  auto line = [&](const std::string &s) {
    out << s << "\n";
    printf("%s\n", s.c_str());
    fflush(stdout);
  };
  line("Fluent API vs IR level: " + std::to_string(reps) +
       " alternating repetitions after a warm-up, whole call, wall time; " +
       std::to_string(std::thread::hardware_concurrency()) +
       " hardware threads; load average at start " + loadAverage() + ".");
  line("");
  line("| workload | kernels fluent / IR | fluent ms | IR ms | fluent GB/s | "
       "IR GB/s | fluent / IR throughput, paired | fluent / IR, fastest "
       "runs |");
  line("|---|---:|---:|---:|---:|---:|---:|---:|");
  std::map<std::string, Fluent> forms = fluentForms();
  for (const bench::Workload &w : bench::workloads()) {
    if (!only.empty() && only.find("," + w.id + ",") == std::string::npos)
      continue;
    auto form = forms.find(w.id);
    if (form == forms.end())
      die("no fluent form of workload (" + w.id + ")");
    // Inputs: fluent leaves; the IR arguments wrap the same buffers.
    std::vector<Tensor> inputs;
    std::vector<jit::JitValue> args;
    for (const auto &sizes : w.inputs) {
      Tensor t = rand(sizes);
      t.eval();
      jit::JitValue v;
      v.dtype = jit::DType::F32;
      v.buffer = runtime::Storage::wrapExternal(
          t.data_ptr(), static_cast<size_t>(t.numel() * 4),
          runtime::DeviceKind::CPU, nullptr);
      v.sizes = sizes;
      v.strides = t.strides();
      args.push_back(std::move(v));
      inputs.push_back(std::move(t));
    }
    std::string error;
    auto fn = jit::PreparedFunction::fromSource(w.source, "main", error);
    if (!fn)
      die("(" + w.id + ") " + error);
    int64_t fluentKernels = 0;
    auto runFluent = [&] {
      reset_eval_stats();
      auto s = Clock::now();
      {
        Tensor r = form->second(inputs);
        r.eval();
      }
      double t = seconds(s, Clock::now());
      fluentKernels = eval_stats().kernels;
      return t;
    };
    auto runIR = [&] {
      auto s = Clock::now();
      {
        jit::RunResult r = fn->run(args);
        if (!r.ok)
          die("(" + w.id + ") " + r.error);
      }
      return seconds(s, Clock::now());
    };
    runFluent(); // compiles
    runIR();
    std::vector<double> fluentT, irT, ratio;
    for (int r = 0; r < reps; ++r) {
      double f, i;
      if (r % 2) {
        i = runIR();
        f = runFluent();
      } else {
        f = runFluent();
        i = runIR();
      }
      fluentT.push_back(f);
      irT.push_back(i);
      ratio.push_back(i / f);
    }
    double mf = median(fluentT), mi = median(irT);
    line("| (" + w.id + ") `" + w.expr + "` | " +
         std::to_string(fluentKernels) + " / " +
         std::to_string(fn->numKernels()) + " | " + fmt("%.2f", 1e3 * mf) +
         " | " + fmt("%.2f", 1e3 * mi) + " | " +
         fmt("%.1f", w.bytes / mf / 1e9) + " | " +
         fmt("%.1f", w.bytes / mi / 1e9) + " | " + fmt("%.2f", median(ratio)) +
         " | " +
         fmt("%.2f", *std::min_element(irT.begin(), irT.end()) /
                         *std::min_element(fluentT.begin(), fluentT.end())) +
         " |");
  }
  line("");
  line("Load average at the end: " + loadAverage() + ".");
  if (!markdown.empty()) {
    std::ofstream f(markdown);
    f << out.str();
    if (!f)
      die("cannot write " + markdown);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "--fluent-vs-ir")
      continue;
    int reps = 9;
    std::string markdown, only;
    for (int j = 1; j < argc; ++j) {
      std::string a = argv[j];
      if (a == "--reps" && j + 1 < argc)
        reps = std::max(1, atoi(argv[++j]));
      else if (a == "--markdown" && j + 1 < argc)
        markdown = argv[++j];
      else if (a == "--only" && j + 1 < argc)
        only = "," + std::string(argv[++j]) + ",";
      else if (a != "--fluent-vs-ir")
        die("usage: strata-bench-dsl --fluent-vs-ir [--reps N] "
            "[--markdown FILE] [--only ID,ID...], or Google Benchmark flags");
    }
    return fluentVsIR(reps, markdown, only);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
