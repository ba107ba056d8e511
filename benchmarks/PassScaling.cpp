//===- PassScaling.cpp - the passes are linear in program size ------------===//
//
// Times fold-views, materialize-copies and the whole pipeline on recorded
// programs of 10^2 .. 10^5 ops of two shapes, and reports the time per op
// (`per_op`): flat across sizes means linear.
//  - LongChains: chains of up to 1000 views, each ending in copies and
//    compute whose result roots the next chain;
//  - ManyChains: many independent chains of 8 views over one argument,
//    each ending in copies and compute, summed into one result.
// Each iteration runs on a fresh clone of the program (cloning is not
// timed); the verifier is off so that only the passes are timed. Times are
// CPU times (the passes are single-threaded; machines are often shared).
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataDialect.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <benchmark/benchmark.h>

#include <functional>

using namespace mlir;
using namespace strata::ir;

namespace {

constexpr int64_t kSide = 8;

/// Builds recorded programs op by op through the dialect's builders (so
/// every type comes from the layout algebra, as when the DSL records).
class ProgramBuilder {
public:
  ProgramBuilder(MLIRContext &context) : builder(&context) {}

  /// A function of about `numOps` ops: chains of `chainLength` views; when
  /// `chained`, each chain starts at the previous chain's compute result,
  /// otherwise at the argument.
  OwningOpRef<ModuleOp> build(int64_t numOps, int64_t chainLength,
                              bool chained) {
    loc = builder.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    auto square =
        StridedTensorType::getContiguous(builder.getF32Type(), {kSide, kSide});
    builder.setInsertionPointToEnd(module->getBody());
    auto func = builder.create<func::FuncOp>(
        loc, "program", builder.getFunctionType({square}, {square}));
    builder.setInsertionPointToStart(func.addEntryBlock());
    Value arg = func.getArgument(0), root = arg, sum;
    count = 0;
    while (count < numOps) {
      Value result = segment(chained ? root : arg, chainLength);
      if (chained) {
        root = result;
      } else {
        sum = sum ? add(sum, result) : result;
      }
    }
    builder.create<func::ReturnOp>(loc, chained ? root : sum);
    ops = count + 1;
    return module;
  }

  /// Ops in the last program built.
  int64_t ops = 0;

private:
  template <typename Op, typename... Args> Value make(Args &&...args) {
    ++count;
    return builder.create<Op>(loc, std::forward<Args>(args)...).getResult();
  }
  Value add(Value a, Value b) { return make<AddOp>(a, b); }

  /// One view; the cycle keeps the shape 8x8 every two steps and moves
  /// through transposed, flipped (negative) and unsqueezed layouts.
  Value view(Value v, int64_t step) {
    switch (step % 8) {
    case 0:
      return make<TransposeOp>(v, uint64_t(0), uint64_t(1));
    case 1:
      return make<FlipOp>(v, builder.getDenseI64ArrayAttr({0}));
    case 2:
      return make<UnsqueezeOp>(v, uint64_t(0));
    case 3:
      return make<SqueezeOp>(v, builder.getDenseI64ArrayAttr({0}));
    case 4:
      return make<PermuteOp>(v, builder.getDenseI64ArrayAttr({1, 0}));
    case 5:
      return make<NarrowOp>(v, uint64_t(1), uint64_t(0), uint64_t(kSide));
    case 6:
      return make<FlipOp>(v, builder.getDenseI64ArrayAttr({1}));
    default:
      return make<SliceOp>(v, uint64_t(0), builder.getI64IntegerAttr(0),
                           IntegerAttr(), uint64_t(1));
    }
  }

  /// A chain of views, then a contiguous that compute reads (removable),
  /// a reshape that must copy, a reduction and elementwise ops.
  Value segment(Value root, int64_t chainLength) {
    Value v = root;
    for (int64_t i = 0; i < chainLength; ++i)
      v = view(v, i);
    if (v.getType().cast<StridedTensorType>().getRank() == 3)
      v = make<SqueezeOp>(v, builder.getDenseI64ArrayAttr({0}));
    Value c = make<ContiguousOp>(v);
    Value e = make<ExpOp>(c);
    Value r = make<ReshapeOp>(make<TransposeOp>(v, uint64_t(0), uint64_t(1)),
                              builder.getDenseI64ArrayAttr({kSide * kSide}));
    Value s = make<SumOp>(r, ArrayRef<int64_t>{0}, false);
    return make<MulOp>(e, s);
  }

  OpBuilder builder;
  Location loc = UnknownLoc();
  int64_t count = 0;
};

MLIRContext &context() {
  static MLIRContext *ctx = [] {
    auto *c = new MLIRContext();
    c->loadDialect<StrataDialect, func::FuncDialect>();
    c->disableMultithreading();
    return c;
  }();
  return *ctx;
}

using Populate = std::function<void(OpPassManager &)>;

/// Runs `passes` on fresh clones of a program of state.range(0) ops whose
/// chains are state.range(1) views long.
void runPasses(benchmark::State &state, bool chained, Populate prepare,
               Populate passes) {
  ProgramBuilder programs(context());
  OwningOpRef<ModuleOp> base =
      programs.build(state.range(0), state.range(1), chained);
  int64_t ops = programs.ops;
  if (prepare) {
    PassManager pm(&context());
    prepare(pm);
    if (failed(pm.run(*base)))
      state.SkipWithError("preparing the program failed");
  }
  PassManager pm(&context());
  pm.enableVerifier(false);
  passes(pm);
  for (auto _ : state) {
    state.PauseTiming();
    OwningOpRef<ModuleOp> module = base->clone();
    state.ResumeTiming();
    if (failed(pm.run(*module)))
      state.SkipWithError("pass failed");
    state.PauseTiming();
    module = nullptr; // destroying the clone is not timed either
    state.ResumeTiming();
  }
  state.counters["ops"] = double(ops);
  state.counters["per_op"] = benchmark::Counter(
      double(ops), benchmark::Counter::kIsIterationInvariantRate |
                       benchmark::Counter::kInvert);
}

void addFoldViews(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(strata::createFoldViews());
}
void addMaterializeCopies(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(strata::createMaterializeCopies());
}
void addPipeline(OpPassManager &pm) { strata::buildStrataPipeline(pm); }

void BM_FoldViews_LongChains(benchmark::State &state) {
  runPasses(state, true, nullptr, addFoldViews);
}
void BM_FoldViews_ManyChains(benchmark::State &state) {
  runPasses(state, false, nullptr, addFoldViews);
}
// On the recorded program (views not folded), so that every op is seen.
void BM_MaterializeCopies_LongChains(benchmark::State &state) {
  runPasses(state, true, nullptr, addMaterializeCopies);
}
void BM_MaterializeCopies_ManyChains(benchmark::State &state) {
  runPasses(state, false, nullptr, addMaterializeCopies);
}
void BM_Pipeline_LongChains(benchmark::State &state) {
  runPasses(state, true, nullptr, addPipeline);
}
void BM_Pipeline_ManyChains(benchmark::State &state) {
  runPasses(state, false, nullptr, addPipeline);
}

/// Sizes 10^2 .. 10^5; long chains are min(1000, size / 2) views.
void longSizes(benchmark::internal::Benchmark *b) {
  for (int64_t n : {100, 1000, 10000, 100000})
    b->Args({n, std::min<int64_t>(1000, n / 2)});
}
void manySizes(benchmark::internal::Benchmark *b) {
  for (int64_t n : {100, 1000, 10000, 100000})
    b->Args({n, 8});
}

} // namespace

#define STRATA_PASS_BENCHMARK(fn, sizes)                                       \
  BENCHMARK(fn)                                                                \
      ->Apply(sizes)                                                           \
      ->ArgNames({"ops", "chain"})                                             \
      ->Unit(benchmark::kMicrosecond)

STRATA_PASS_BENCHMARK(BM_FoldViews_LongChains, longSizes);
STRATA_PASS_BENCHMARK(BM_FoldViews_ManyChains, manySizes);
STRATA_PASS_BENCHMARK(BM_MaterializeCopies_LongChains, longSizes);
STRATA_PASS_BENCHMARK(BM_MaterializeCopies_ManyChains, manySizes);
STRATA_PASS_BENCHMARK(BM_Pipeline_LongChains, longSizes);
STRATA_PASS_BENCHMARK(BM_Pipeline_ManyChains, manySizes);

BENCHMARK_MAIN();
