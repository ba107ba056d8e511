// DSL overhead: recording cost per op, record + evaluate of `x + 1` on one
// element, a cache-hit evaluation of a 10-op program, and a fluent-API
// bandwidth workload (y = relu(x * a + b) over 16 Mi floats).
#include <strata/strata.h>

#include <benchmark/benchmark.h>

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

BENCHMARK_MAIN();
