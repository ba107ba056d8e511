// DSL overhead: recording cost per op, record + evaluate of `x + 1` on one
// element, a cache-hit evaluation of a 10-op program, and a fluent-API
// bandwidth workload (y = relu(x * a + b) over 16 Mi floats).
//
// Fluent vs IR level (issue 5: within 10%): workloads (a) `a + b`,
// (c) `(a * 2 + 1).relu()` and (e) `a.t().contiguous()` of
// benchmarks/JitBandwidth.cpp on 4096x4096 f32, each as a BM_Fluent_* /
// BM_IR_* pair in the same run: the fluent one records and evaluates
// through strata::Tensor, the IR one runs the same program text through a
// jit::PreparedFunction (compiled once). Both count the whole call (result
// allocation included), wall time; compare their bytes_per_second.
#include "ProgramBuilder.h"
#include "strata/JIT/Jit.h"
#include <strata/strata.h>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

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

//===--- Fluent vs IR level ----------------------------------------------===//

namespace {
constexpr int64_t kN = 4096;

jit::JitValue irInput() {
  jit::JitValue v;
  v.dtype = jit::DType::F32;
  v.buffer = strata::runtime::Storage::create(kN * kN * 4);
  v.sizes = {kN, kN};
  v.strides = {kN, 1};
  float *p = reinterpret_cast<float *>(v.buffer->data());
  for (int64_t i = 0; i < kN * kN; ++i)
    p[i] = float((i * 7) % 13) * 0.25f - 1.0f;
  return v;
}

void runIR(benchmark::State &state, const std::string &source, int numInputs,
           double bytes) {
  std::string error;
  auto fn = jit::PreparedFunction::fromSource(source, "main", error);
  if (!fn) {
    state.SkipWithError(error.c_str());
    return;
  }
  std::vector<jit::JitValue> args;
  for (int i = 0; i < numInputs; ++i)
    args.push_back(irInput());
  for (auto _ : state) {
    jit::RunResult r = fn->run(args);
    if (!r.ok) {
      state.SkipWithError(r.error.c_str());
      return;
    }
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(int64_t(state.iterations() * bytes));
}

std::string irAdd() {
  strata::test::Program p;
  auto a = p.arg({kN, kN}), b = p.arg({kN, kN});
  return p.text({p.binary("add", a, b)});
}
std::string irRelu() {
  strata::test::Program p;
  auto a = p.arg({kN, kN});
  auto s = p.binary("add", p.binary("mul", a, p.scalar(2)), p.scalar(1));
  return p.text({p.unary("relu", s)});
}
std::string irTranspose() {
  strata::test::Program p;
  auto a = p.arg({kN, kN});
  return p.text({p.contiguous(p.transpose(a, 0, 1))});
}
} // namespace

static void BM_Fluent_A_Add(benchmark::State &state) {
  Tensor a = rand({kN, kN}), b = rand({kN, kN});
  a.eval();
  b.eval();
  for (auto _ : state)
    (a + b).eval();
  state.SetBytesProcessed(state.iterations() * 12 * kN * kN);
}
static void BM_IR_A_Add(benchmark::State &state) {
  runIR(state, irAdd(), 2, 12.0 * kN * kN);
}
static void BM_Fluent_C_Relu(benchmark::State &state) {
  Tensor a = rand({kN, kN});
  a.eval();
  for (auto _ : state)
    ((a * 2 + 1).relu()).eval();
  state.SetBytesProcessed(state.iterations() * 8 * kN * kN);
}
static void BM_IR_C_Relu(benchmark::State &state) {
  runIR(state, irRelu(), 1, 8.0 * kN * kN);
}
static void BM_Fluent_E_Transpose(benchmark::State &state) {
  Tensor a = rand({kN, kN});
  a.eval();
  for (auto _ : state)
    a.t().contiguous().eval();
  state.SetBytesProcessed(state.iterations() * 8 * kN * kN);
}
static void BM_IR_E_Transpose(benchmark::State &state) {
  runIR(state, irTranspose(), 1, 8.0 * kN * kN);
}
// Pairs adjacent, so that both see the same machine load.
BENCHMARK(BM_Fluent_A_Add)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IR_A_Add)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Fluent_C_Relu)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IR_C_Relu)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Fluent_E_Transpose)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IR_E_Transpose)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
