//===- JitTest.cpp - the CPU JIT against the reference evaluator ----------===//
#include "strata/JIT/Jit.h"
#include "ProgramBuilder.h"
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/RefInterop.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <random>
#include <thread>
#include <unistd.h>

using namespace strata;
using namespace strata::test;

namespace {

/// Runs `source` through the reference evaluator and the JIT on the same
/// random inputs and compares every result (layout and elements).
void expectMatchesReference(const std::string &source, uint64_t seed = 1,
                            double rtol = 1e-4) {
  SCOPED_TRACE(source);
  mlir::MLIRContext context;
  jit::loadDialects(context);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  ASSERT_TRUE(module) << "program does not parse";
  auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
  reference::InputGenerator gen(reference::InputKind::Random, seed);
  std::vector<reference::RefValue> refArgs;
  std::vector<jit::JitValue> jitArgs;
  for (mlir::Type t : func.getArgumentTypes()) {
    std::string whyNot;
    auto a = gen.makeArgument(t, whyNot);
    ASSERT_TRUE(mlir::succeeded(a));
    refArgs.push_back(*a);
    jitArgs.push_back(jit::fromRefValue(*a));
  }
  auto expected = reference::evaluate(func, refArgs);
  ASSERT_TRUE(mlir::succeeded(expected)) << "reference failed";
  jit::RunResult got = jit::runSource(source, "main", jitArgs);
  ASSERT_TRUE(got.ok) << got.error;
  ASSERT_EQ(got.values.size(), expected->size());
  for (size_t r = 0; r < expected->size(); ++r) {
    const auto &e = (*expected)[r];
    const auto &g = got.values[r];
    EXPECT_EQ(g.isStorage, e.isStorage) << "result " << r;
    if (!e.isStorage) {
      EXPECT_EQ(g.sizes, e.layout.sizes) << "result " << r;
      EXPECT_EQ(g.strides, e.layout.strides) << "result " << r;
      EXPECT_EQ(g.offset, e.layout.offset) << "result " << r;
    }
    std::vector<double> ev = e.elements(), gv = g.elements();
    ASSERT_EQ(gv.size(), ev.size()) << "result " << r;
    for (size_t i = 0; i < ev.size(); ++i) {
      if (std::isnan(ev[i])) {
        EXPECT_TRUE(std::isnan(gv[i])) << "result " << r << " element " << i;
        continue;
      }
      double tol = rtol * std::max(1.0, std::abs(ev[i]));
      EXPECT_NEAR(gv[i], ev[i], tol) << "result " << r << " element " << i;
    }
  }
}

TEST(JitElementwise, UnaryOps) {
  for (std::string op :
       {"neg", "abs", "exp", "log", "sqrt", "relu", "sigmoid", "tanh"}) {
    Program p;
    V a = p.arg({3, 5});
    expectMatchesReference(p.text({p.unary(op, p.transpose(a, 0, 1))}));
  }
  Program p;
  V a = p.arg({7}, "i32");
  expectMatchesReference(
      p.text({p.unary("neg", a), p.unary("abs", a), p.unary("relu", a)}));
}

TEST(JitElementwise, BinaryAndBroadcast) {
  for (std::string op :
       {"add", "sub", "mul", "div", "maximum", "minimum", "pow"}) {
    Program p;
    V a = p.arg({4, 1}), b = p.arg({1, 6});
    expectMatchesReference(p.text({p.binary(op, a, b)}));
  }
  for (std::string op : {"add", "sub", "mul", "maximum", "minimum"}) {
    Program p;
    V a = p.arg({3, 4}, "i64"), b = p.arg({4}, "i64");
    expectMatchesReference(p.text({p.binary(op, a, b)}));
  }
}

TEST(JitElementwise, CompareWhereCast) {
  Program p;
  V a = p.arg({5, 3}), b = p.arg({3});
  std::vector<V> out;
  for (std::string op : {"eq", "ne", "lt", "le", "gt", "ge"})
    out.push_back(p.binary(op, a, b));
  V c = p.binary("gt", a, p.scalar(0.5));
  out.push_back(p.where(c, a, p.scalar(-1.0)));
  out.push_back(p.cast(a, "i32"));
  out.push_back(p.cast(p.cast(a, "i64"), "f64"));
  out.push_back(p.cast(c, "f32"));
  out.push_back(p.cast(a, "i1"));
  expectMatchesReference(p.text(out));
}

TEST(JitElementwise, FusedChainWithScalars) {
  Program p;
  V a = p.arg({300, 257}); // large enough for the thread pool
  V y = p.unary("relu",
                p.binary("add", p.binary("mul", a, p.scalar(2)), p.scalar(1)));
  expectMatchesReference(p.text({y}));
}

TEST(JitElementwise, SharedIntermediateWrittenOnce) {
  Program p;
  V a = p.arg({8, 8});
  V e = p.unary("exp", a);
  V s1 = p.binary("add", e, a), s2 = p.binary("mul", e, p.scalar(3));
  expectMatchesReference(p.text({s1, s2, e}));
}

TEST(JitViews, NegativeStridesSlicesSelect) {
  Program p;
  V a = p.arg({6, 7});
  V f = p.flip(a, {0, 1});
  V s = p.slice(f, 1, 1, 7, 2);
  V t = p.transpose(s, 0, 1);
  V r = p.binary("add", t, p.slice(p.select(a, 0, 2), 0, 0, 6, 1));
  expectMatchesReference(p.text({p.contiguous(t), r, p.copy(f)}));
}

TEST(JitViews, ZeroSizeAndSizeOne) {
  Program p;
  V a = p.arg({0, 4}), b = p.arg({1, 4}), c = p.arg({3, 1, 1});
  expectMatchesReference(p.text(
      {p.unary("exp", a), p.binary("add", a, b), p.reduce("sum", a, {0}),
       p.reduce("sum", a, {1}), p.unary("neg", c), p.reduce("amax", c, {})}));
}

TEST(JitViews, ExpandAndPermute) {
  Program p;
  V a = p.arg({2, 3, 4});
  V e = p.expand(p.unsqueeze(a, 0), {5, 2, 3, 4});
  V q = p.permute(e, {3, 1, 0, 2});
  expectMatchesReference(p.text({p.contiguous(q), p.unary("neg", q)}));
}

TEST(JitReduce, AllFamilies) {
  Program p;
  V a = p.arg({9, 17});
  V at = p.transpose(a, 0, 1);
  std::vector<V> out;
  for (std::string op : {"sum", "mean", "amax", "amin"}) {
    out.push_back(p.reduce(op, a, {0}));
    out.push_back(p.reduce(op, a, {1}, true));
    out.push_back(p.reduce(op, at, {}));
  }
  V i = p.arg({5, 6}, "i32");
  out.push_back(p.reduce("sum", i, {1}));
  out.push_back(p.reduce("amax", i, {0}));
  V b = p.arg({4, 4}, "i1");
  out.push_back(p.reduce("sum", b, {}));
  expectMatchesReference(p.text(out));
}

TEST(JitReduce, FusedProductSum) {
  Program p;
  V a = p.arg({32, 48}), b = p.arg({48, 32});
  V prod = p.binary("mul", p.transpose(a, 0, 1), b);
  expectMatchesReference(p.text({p.reduce("sum", prod, {})}), 1, 1e-3);
}

TEST(JitMatmul, Shapes) {
  Program p;
  V a = p.arg({5, 7}), b = p.arg({7, 3}), v = p.arg({7}), w = p.arg({5});
  V ba = p.arg({2, 5, 7}), bb = p.arg({7, 3});
  expectMatchesReference(
      p.text({p.matmul(a, b, {5, 3}),
              p.matmul(p.transpose(b, 0, 1), p.transpose(a, 0, 1), {3, 5}),
              p.matmul(a, v, {5}), p.matmul(w, a, {7}), p.matmul(v, v, {}),
              p.matmul(ba, bb, {2, 5, 3})}),
      1, 1e-3);
}

// Matrix products run by BLAS (Gemm.cpp) where their strides allow it,
// as kernels where not: every layout class against the reference, f32 and
// f64, big enough for the row blocks the thread pool spreads.
TEST(JitMatmul, BlasLayouts) {
  for (std::string dt : {"f32", "f64"}) {
    SCOPED_TRACE(dt);
    Program p;
    V a = p.arg({40, 56}, dt), b = p.arg({56, 72}, dt);
    V at = p.arg({56, 40}, dt), bt = p.arg({72, 56}, dt);
    V v = p.arg({56}, dt), ba = p.arg({3, 40, 56}, dt);
    V bb = p.arg({3, 56, 72}, dt), wide = p.arg({40, 112}, dt);
    std::vector<V> results = {
        p.matmul(a, b, {40, 72}),                     // row-major both
        p.matmul(p.transpose(at, 0, 1), b, {40, 72}), // A transposed
        p.matmul(a, p.transpose(bt, 0, 1), {40, 72}), // B transposed
        p.matmul(p.transpose(at, 0, 1), p.transpose(bt, 0, 1), {40, 72}),
        p.matmul(a, v, {40}),                               // matrix-vector
        p.matmul(v, b, {72}),                               // vector-matrix
        p.matmul(v, v, {}),                                 // dot
        p.matmul(ba, b, {3, 40, 72}),                       // batch x matrix
        p.matmul(ba, bb, {3, 40, 72}),                      // batch x batch
        p.matmul(a, bb, {3, 40, 72}),                       // broadcast A
        p.matmul(p.slice(wide, 1, 0, 112, 2), b, {40, 72}), // stride 2: loops
        p.matmul(p.slice(a, 0, 1, 40, 3), b, {13, 72}),     // rows skipped
    };
    std::string source = p.text(results);
    expectMatchesReference(source, 7, dt == "f32" ? 1e-4 : 1e-10);
    std::string error;
    auto fn = jit::PreparedFunction::fromSource(source, "main", error);
    ASSERT_TRUE(fn) << error;
    const char *env = std::getenv("STRATA_BLAS");
    // All but the product reading A with stride 2 along K.
    EXPECT_EQ(fn->numKernels(), 12);
    EXPECT_EQ(fn->numBlasKernels(), env && std::string(env) == "0" ? 0 : 11);
  }
  // A plain product runs through BLAS when OpenBLAS is there (the install
  // script installs it; STRATA_BLAS=0 turns it off).
  Program p;
  V a = p.arg({8, 4}), b = p.arg({4, 5});
  std::string error;
  auto fn = jit::PreparedFunction::fromSource(p.text({p.matmul(a, b, {8, 5})}),
                                              "main", error);
  ASSERT_TRUE(fn) << error;
  const char *env = std::getenv("STRATA_BLAS");
  if (env && std::string(env) == "0")
    EXPECT_EQ(fn->numBlasKernels(), 0);
  else
    EXPECT_EQ(fn->numBlasKernels(), 1) << "libopenblas.so.0 not loaded";
}

// Products whose loop nest BLAS runs as C^T = B^T A^T (a result that looks
// column-major to the matcher: here A broadcast over the batch and its
// rows, so the batch loop is taken as N). The matcher swaps the operands'
// descriptions; runGemm must swap the buffers too (it read A's buffer as
// B's: garbage and NaN from another batch, found by the torch fuzzer).
TEST(JitMatmul, SwappedOperandsReadTheirOwnBuffers) {
  for (std::string dt : {"f32", "f64"}) {
    SCOPED_TRACE(dt);
    Program p;
    V one = p.arg({1, 1, 1}, dt), b = p.arg({4, 1, 1}, dt);
    V row = p.arg({1, 1, 3}, dt), b3 = p.arg({5, 3, 1}, dt);
    std::vector<V> results = {
        p.matmul(p.expand(one, {4, 2, 1}), b, {4, 2, 1}),
        p.matmul(p.expand(row, {5, 2, 3}), b3, {5, 2, 1}),
    };
    std::string source = p.text(results);
    expectMatchesReference(source, 3, dt == "f32" ? 1e-4 : 1e-10);
  }
}

TEST(JitWrite, ThroughViews) {
  Program p;
  V s = p.storageArg(24);
  V t = p.stridedView(s, layout::contiguous(std::vector<int64_t>{4, 6}));
  V col = p.slice(t, 1, 1, 6, 2);                          // a strided view
  V s1 = p.write(p.binary("add", col, p.scalar(10)), col); // col += 10
  V t1 = p.stridedView(s1, layout::contiguous(std::vector<int64_t>{4, 6}));
  V row = p.select(t1, 0, 0);
  V s2 = p.write(p.flip(row, {0}), p.select(t1, 0, 3)); // t[3] = t[0].flip()
  V t2 = p.stridedView(s2, layout::contiguous(std::vector<int64_t>{4, 6}));
  expectMatchesReference(
      p.text({s1, s2, t, p.contiguous(p.transpose(t2, 0, 1))}));
}

TEST(JitFill, FillAndArange) {
  Program p;
  V a = p.arg({3});
  expectMatchesReference(
      p.text({p.fill(2.5, {2, 3}, "f32"), p.arange(1, 0.5, 7, "f32"),
              p.arange(0, 1, 5, "i64"), p.scalar(3.0),
              p.binary("add", a, p.scalar(1))}));
}

/// Random programs: views, elementwise chains, reductions, JIT vs reference.
TEST(JitDifferential, RandomPrograms) {
  std::mt19937_64 rng(20240611);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const char *unary[] = {"neg", "abs", "exp", "relu", "tanh", "sigmoid"};
  const char *binary[] = {"add", "sub", "mul", "maximum", "minimum"};
  for (int trial = 0; trial < 40; ++trial) {
    Program p;
    std::vector<int64_t> shape = {1 + pick(6), 1 + pick(9)};
    if (pick(3) == 0)
      shape.insert(shape.begin(), 1 + pick(3));
    std::vector<V> pool = {p.arg(shape), p.arg(shape)};
    std::vector<V> results;
    for (int step = 0; step < 6; ++step) {
      V x = pool[pick(pool.size())];
      int kind = pick(6);
      if (kind == 0 && x.l.sizes.size() >= 2)
        pool.push_back(p.transpose(x, 0, x.l.sizes.size() - 1));
      else if (kind == 1)
        pool.push_back(
            p.flip(x, {static_cast<int64_t>(pick(x.l.sizes.size()))}));
      else if (kind == 2)
        pool.push_back(p.unary(unary[pick(6)], x));
      else if (kind == 3) {
        V y = pool[pick(pool.size())];
        if (y.l.sizes == x.l.sizes)
          pool.push_back(p.binary(binary[pick(5)], x, y));
        else
          pool.push_back(p.binary(binary[pick(5)], x, p.scalar(0.25)));
      } else if (kind == 4) {
        results.push_back(
            p.reduce(pick(2) ? "sum" : "amax", x,
                     {static_cast<int64_t>(pick(x.l.sizes.size()))}));
      } else {
        results.push_back(p.contiguous(x));
      }
    }
    results.push_back(pool.back());
    expectMatchesReference(p.text(results), trial, 1e-4);
  }
}

// Sibling fusion over permuted spaces: two inputs of a random 2-4-d shape,
// each program computes f over the inputs and g over a random permutation
// of them (the kernels' spaces are permutations of each other, so they
// merge with per-result orders), and sometimes a reduction over one dim of
// each; every result against the reference evaluator. Sizes include 1 and
// sizes that are not multiples of the 8x8 / 16x16 transpose tiles.
TEST(JitDifferential, RandomPermutedSiblings) {
  std::mt19937_64 rng(20261129);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const char *unary[] = {"neg", "exp", "relu", "tanh"};
  const char *binary[] = {"add", "sub", "mul", "maximum"};
  int merged = 0;
  for (int trial = 0; trial < 30; ++trial) {
    Program p;
    int rank = 2 + pick(3);
    std::vector<int64_t> shape;
    for (int d = 0; d < rank; ++d)
      shape.push_back(
          std::vector<int64_t>{1, 3, 8, 17, 33}[pick(rank == 2 ? 5 : 4)]);
    std::vector<int64_t> perm(rank);
    for (int d = 0; d < rank; ++d)
      perm[d] = d;
    std::shuffle(perm.begin(), perm.end(), rng);
    V a = p.arg(shape), b = p.arg(shape);
    V pa = p.permute(a, perm), pb = p.permute(b, perm);
    std::vector<V> results;
    results.push_back(p.unary(unary[pick(4)], p.binary(binary[pick(4)], a, b)));
    results.push_back(
        p.binary(binary[pick(4)], p.unary(unary[pick(4)], pa), pb));
    if (pick(2)) {
      int64_t d = pick(rank);
      results.push_back(
          p.reduce(pick(2) ? "sum" : "amax", p.binary("mul", pa, pb), {d}));
    }
    std::string source = p.text(results);
    // The pipeline really merges them into one kernel.
    mlir::MLIRContext context;
    jit::loadDialects(context);
    auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    ASSERT_TRUE(module);
    mlir::PassManager pm(&context);
    buildStrataPipeline(pm, {.formKernels = true});
    ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
    // Returned f32 sums round from their f64 accumulators in a kernel of
    // their own (--strata-widen-sums): one truncf, not counted.
    int kernels = 0;
    module->walk([&](strata::ir::KernelOp k) {
      auto &body = k.getBodyBlock().getOperations();
      bool rounding = body.size() == 2 &&
                      body.front().getName().getStringRef() == "arith.truncf";
      kernels += !rounding;
    });
    merged += kernels == 1;
    expectMatchesReference(source, trial, 1e-4);
  }
  // Every program's kernels share both inputs: all merge into one.
  EXPECT_EQ(merged, 30);
}

std::string tempDir(const std::string &name) {
  std::string dir = ::testing::TempDir() + "strata-cache-" + name + "-" +
                    std::to_string(::getpid());
  std::string cmd = "rm -rf '" + dir + "'";
  (void)system(cmd.c_str());
  return dir;
}

std::string cacheProgram(double constant) {
  Program p;
  V a = p.arg({4, 5});
  return p.text({p.binary("mul", a, p.scalar(constant))});
}

std::vector<jit::JitValue> cacheArgs() {
  return {jit::JitValue::fresh(jit::DType::F32, {4, 5},
                               std::vector<double>(20, 2.0))};
}

TEST(JitCache, MemoryHitThenDiskHitThenCorruption) {
  jit::setCacheDir(tempDir("a"));
  jit::clearMemoryCache();
  jit::resetCacheStats();
  std::string src = cacheProgram(3.0);
  auto r1 = jit::runSource(src, "main", cacheArgs());
  ASSERT_TRUE(r1.ok) << r1.error;
  EXPECT_EQ(jit::cacheStats().compiles, 1);
  auto r2 = jit::runSource(src, "main", cacheArgs());
  ASSERT_TRUE(r2.ok);
  EXPECT_EQ(jit::cacheStats().compiles, 1);
  EXPECT_EQ(jit::cacheStats().memoryHits, 1);
  // As a new process: only the disk cache is left.
  jit::clearMemoryCache();
  auto r3 = jit::runSource(src, "main", cacheArgs());
  ASSERT_TRUE(r3.ok);
  EXPECT_EQ(jit::cacheStats().compiles, 1);
  EXPECT_EQ(jit::cacheStats().diskHits, 1);
  EXPECT_EQ(r3.values[0].elements(), std::vector<double>(20, 6.0));
  // Corrupt every entry: it is recompiled, never trusted.
  std::string cmd = "for f in '" + jit::cacheDir() +
                    "'/*.sko; do printf 'garbage' | dd of=\"$f\" bs=1 "
                    "seek=100 conv=notrunc 2>/dev/null; done";
  ASSERT_EQ(system(cmd.c_str()), 0);
  jit::clearMemoryCache();
  auto r4 = jit::runSource(src, "main", cacheArgs());
  ASSERT_TRUE(r4.ok);
  EXPECT_EQ(jit::cacheStats().diskCorrupt, 1);
  EXPECT_EQ(jit::cacheStats().compiles, 2);
  EXPECT_EQ(r4.values[0].elements(), std::vector<double>(20, 6.0));
}

TEST(JitCache, DifferentProgramsNeverCollide) {
  jit::setCacheDir(tempDir("b"));
  jit::clearMemoryCache();
  jit::resetCacheStats();
  for (int i = 0; i < 4; ++i) {
    auto r = jit::runSource(cacheProgram(i + 1), "main", cacheArgs());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.values[0].elements(), std::vector<double>(20, 2.0 * (i + 1)));
  }
  EXPECT_EQ(jit::cacheStats().compiles, 4);
  EXPECT_EQ(jit::cacheStats().memoryHits, 0);
}

TEST(JitCache, ConcurrentCompilesOfOneKernelCompileOnce) {
  jit::setCacheDir("");
  jit::clearMemoryCache();
  jit::resetCacheStats();
  std::string src = cacheProgram(7.0);
  std::vector<std::thread> threads;
  std::atomic<int> okCount{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      if (jit::runSource(src, "main", cacheArgs()).ok)
        ++okCount;
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(okCount.load(), 4);
  EXPECT_EQ(jit::cacheStats().compiles, 1);
  EXPECT_EQ(jit::cacheStats().memoryHits, 3);
}

/// Memory mappings of this process (/proc/self/maps lines): what the
/// never-unloaded JIT exhausted (vm.max_map_count) before kernels were
/// freed.
int64_t mappingCount() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int64_t n = 0;
  while (std::getline(maps, line))
    ++n;
  return n;
}

/// The bounded memory cache: 600 distinct kernels through a
/// 32-kernel cache are evicted and unloaded (loaded kernels and the
/// process's mappings stay bounded), an evicted kernel recompiles and
/// computes what the reference evaluator does, and a kernel evicted while
/// a PreparedFunction holds it keeps running.
TEST(JitCache, BoundedCacheEvictsAndUnloadsKernels) {
  jit::setCacheDir("");
  jit::clearMemoryCache();
  jit::setKernelCacheCapacity(32);
  jit::resetCacheStats();
  int64_t loadedBefore = jit::loadedKernels();
  std::string error;
  auto held =
      jit::PreparedFunction::fromSource(cacheProgram(0.5), "main", error);
  ASSERT_TRUE(held) << error;
  const int n = 600;
  int64_t mapsAfterWarmup = 0;
  for (int i = 1; i <= n; ++i) {
    if (i == 100)
      mapsAfterWarmup = mappingCount();
    // A distinct kernel each time (its constant is part of the body).
    auto f = jit::PreparedFunction::fromSource(cacheProgram(1.0 + i * 0.25),
                                               "main", error);
    ASSERT_TRUE(f) << error;
    if (i % 250 == 0) {
      auto r = f->run(cacheArgs());
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_EQ(r.values[0].elements(),
                std::vector<double>(20, 2.0 * (1.0 + i * 0.25)));
    }
    // The cache's 32 plus `held`'s kernel plus f's own.
    ASSERT_LE(jit::loadedKernels() - loadedBefore, 34) << "kernel " << i;
  }
  EXPECT_EQ(jit::cacheStats().compiles, n + 1);
  EXPECT_EQ(jit::cacheStats().evictions, n + 1 - 32);
  // Without unloading, every kernel keeps its mappings (500 kernels: over
  // a thousand); with it, the count stays level.
  EXPECT_LT(mappingCount() - mapsAfterWarmup, 100)
      << "the unloaded kernels' memory was not returned";
  // Evicted long ago, its code still loaded: held runs it.
  auto r = held->run(cacheArgs());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.values[0].elements(), std::vector<double>(20, 1.0));
  held.reset();
  EXPECT_LE(jit::loadedKernels() - loadedBefore, 32);
  // An evicted kernel compiles again and agrees with the reference. (The
  // transposed product streams in storage order: one loop of 20, the code
  // of cacheProgram's kernels, so its constant is none of theirs.)
  int64_t compiles = jit::cacheStats().compiles;
  {
    Program p;
    V a = p.arg({4, 5});
    V y = p.binary("mul", p.transpose(a, 0, 1), p.scalar(-0.375));
    expectMatchesReference(p.text({y}), 3);
    expectMatchesReference(p.text({y}), 4); // a memory hit now
  }
  expectMatchesReference(cacheProgram(1.25), 5); // i = 1: evicted
  EXPECT_EQ(jit::cacheStats().compiles, compiles + 2);
  jit::clearMemoryCache();
  EXPECT_EQ(jit::loadedKernels(), loadedBefore);
  jit::setKernelCacheCapacity(0); // back to the default
}

/// The same program run several times with a cache directory that cannot
/// be created (under a regular file: root's permissions do not matter):
/// one warning naming the directory, correct results, nothing cached on
/// disk.
TEST(JitCache, UncreatableCacheDirWarnsOnce) {
  std::string file = tempDir("file");
  { std::ofstream(file) << "not a directory"; }
  std::string dir = file + "/cache";
  jit::setCacheDir(dir);
  jit::clearMemoryCache();
  jit::resetCacheStats();
  ::testing::internal::CaptureStderr();
  for (int round = 0; round < 2; ++round) {
    jit::clearMemoryCache(); // compile (and try to store) every time
    for (int i = 0; i < 3; ++i) {
      auto r = jit::runSource(cacheProgram(10.0 + i), "main", cacheArgs());
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_EQ(r.values[0].elements(),
                std::vector<double>(20, 2.0 * (10.0 + i)));
    }
  }
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(jit::cacheStats().compiles, 6);
  EXPECT_EQ(jit::cacheStats().diskHits, 0);
  size_t first = err.find("warning: kernel disk cache disabled");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find("warning", first + 1), std::string::npos)
      << "warned more than once:\n"
      << err;
  EXPECT_NE(err.find("'" + dir + "'"), std::string::npos) << err;
  EXPECT_NE(err.find("Not a directory"), std::string::npos) << err;
  jit::setCacheDir("");
  std::remove(file.c_str());
}

} // namespace
