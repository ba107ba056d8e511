//===- ProgramFuzz.cpp - differential fuzzer: JIT vs reference evaluator --===//
//
// Random strata programs — views (transpose, permute, slice, select, flip,
// expand, unsqueeze, view), broadcasting elementwise ops (unary, binary,
// compare, where, cast), reductions (sum, mean, amax, amin, keepdim), and
// in-place writes through strided views of a storage argument followed by
// reads of the new version — are run by the CPU JIT (full pipeline, LLVM)
// and by the reference evaluator on the same random inputs. Every result
// must agree in layout and, elementwise, within a relative tolerance.
// Result types come from the layout algebra (tests/unit/jit/ProgramBuilder.h),
// as the DSL computes them.
//
//   strata-fuzz-programs [--programs N] [--seconds S] [--seed K] [--verbose]
// Program i uses seed K + i; a failure prints the program and the seed.
//
//===----------------------------------------------------------------------===//
#include "jit/ProgramBuilder.h"
#include "strata/JIT/Jit.h"
#include "strata/JIT/RefInterop.h"
#include "strata/Reference/Evaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

using namespace strata;
using namespace strata::test;

namespace {

class Generator {
public:
  explicit Generator(uint64_t seed) : rng(seed) {}

  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool chance(int percent) { return pick(0, 99) < percent; }

  std::vector<int64_t> shape(int64_t maxRank) {
    std::vector<int64_t> s;
    for (int64_t r = pick(0, maxRank); r > 0; --r)
      s.push_back(chance(6) ? 0 : (chance(30) ? 1 : pick(2, 6)));
    return s;
  }

  /// A random view of `x` when one applies (the algebra decides), else x.
  V view(Program &p, const V &x) {
    int64_t rank = x.l.dim();
    auto dim = [&] { return pick(-rank, rank - 1); };
    switch (pick(0, 7)) {
    case 0:
      if (rank >= 1)
        return p.transpose(x, dim(), dim());
      break;
    case 1:
      if (rank >= 1) {
        int64_t d = dim(), n = x.l.sizes[d < 0 ? d + rank : d];
        return p.slice(x, d, pick(-n, n), pick(-n, n + 1), pick(1, 3));
      }
      break;
    case 2:
      if (rank >= 1) {
        int64_t d = dim(), n = x.l.sizes[d < 0 ? d + rank : d];
        if (n > 0)
          return p.select(x, d, pick(-n, n - 1));
      }
      break;
    case 3:
      if (rank >= 1)
        return p.flip(x, {dim()});
      break;
    case 4: { // expand size-1 dims, maybe a new leading dim
      if (rank >= 4)
        break;
      std::vector<int64_t> to;
      if (chance(40))
        to.push_back(pick(1, 3));
      for (int64_t s : x.l.sizes)
        to.push_back(s == 1 ? pick(1, 4) : -1);
      return p.expand(x, to);
    }
    case 5:
      if (rank < 4)
        return p.unsqueeze(x, pick(-rank - 1, rank));
      break;
    case 6:
      if (rank >= 2) {
        std::vector<int64_t> dims(rank);
        std::iota(dims.begin(), dims.end(), 0);
        std::shuffle(dims.begin(), dims.end(), rng);
        return p.permute(x, dims);
      }
      break;
    default: { // view as flat when strides allow it
      std::vector<int64_t> flat{-1};
      if (x.l.numel() > 0 && layout::view(x.l, flat).ok())
        return p.viewAs(x, flat);
      break;
    }
    }
    return x;
  }

  /// Some value of `pool` whose shape broadcasts with `x`, or a scalar.
  V partner(Program &p, const std::vector<V> &pool, const V &x,
            bool sameShape) {
    for (int tries = 0; tries < 4; ++tries) {
      const V &y = pool[pick(0, pool.size() - 1)];
      if (y.dt != x.dt)
        continue;
      auto b = layout::broadcastShapes(x.l.sizes, y.l.sizes, "fuzz");
      if (b.ok() && (!sameShape || *b == x.l.sizes))
        return y;
    }
    return p.scalar(static_cast<double>(pick(-3, 3)) / 2, x.dt);
  }

  std::string program() {
    Program p;
    bool isFloat = !chance(15);
    std::string dt = isFloat ? (chance(80) ? "f32" : "f64") : "i32";
    std::vector<V> pool;
    for (int64_t n = pick(1, 3); n > 0; --n)
      pool.push_back(p.arg(shape(3), dt));
    std::vector<V> results;
    // A storage whose strided views are written in place.
    V storage = p.storageArg(24, dt);
    V grid =
        p.stridedView(storage, layout::contiguous(std::vector<int64_t>{4, 6}));
    bool wrote = false;
    const char *fUnary[] = {"neg",  "abs",     "exp", "relu",
                            "tanh", "sigmoid", "sqrt"};
    const char *iUnary[] = {"neg", "abs", "relu"};
    const char *fBinary[] = {"add", "sub", "mul", "div", "maximum", "minimum"};
    const char *iBinary[] = {"add", "sub", "mul", "maximum", "minimum"};
    const char *compare[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    for (int64_t step = pick(2, 8); step > 0; --step) {
      V x = pool[pick(0, pool.size() - 1)];
      if (x.dt != dt) // an i1 mask: only where() takes it
        continue;
      switch (pick(0, 7)) {
      case 0:
      case 1:
        pool.push_back(view(p, x));
        break;
      case 2: {
        std::string op = isFloat ? fUnary[pick(0, 6)] : iUnary[pick(0, 2)];
        if (op == "sqrt")
          x = p.unary("abs", x);
        pool.push_back(p.unary(op, x));
        break;
      }
      case 3: {
        std::string op = isFloat ? fBinary[pick(0, 5)] : iBinary[pick(0, 4)];
        V y = partner(p, pool, x, false);
        if (op == "div")
          y = p.binary("add", p.unary("abs", y), p.scalar(1.0, dt));
        pool.push_back(p.binary(op, x, y));
        break;
      }
      case 4: { // compare + where
        V y = partner(p, pool, x, false);
        V c = p.binary(compare[pick(0, 5)], x, y);
        V z = partner(p, pool, c.l.sizes == x.l.sizes ? x : c, false);
        if (z.dt != dt)
          z = p.scalar(0.5, dt);
        if (layout::broadcastShapes(c.l.sizes, z.l.sizes, "w").ok())
          pool.push_back(p.where(c, x, z));
        break;
      }
      case 5: { // reduction over some dims
        std::vector<int64_t> dims;
        int64_t rank = x.l.dim();
        for (int64_t d = 0; d < rank; ++d)
          if (chance(50))
            dims.push_back(chance(50) ? d : d - rank);
        const char *ops[] = {"sum", "amax", "amin", "mean"};
        std::string op = ops[pick(0, isFloat ? 3 : 2)];
        // max/min of an empty reduction is an error in PyTorch.
        bool empty = false;
        for (int64_t d = 0; d < rank; ++d)
          if (x.l.sizes[d] == 0 &&
              (dims.empty() ||
               std::find(dims.begin(), dims.end(), d) != dims.end() ||
               std::find(dims.begin(), dims.end(), d - rank) != dims.end()))
            empty = true;
        if (empty && op != "sum")
          op = "sum";
        V r = p.reduce(op, x, dims, chance(30));
        results.push_back(r);
        if (r.dt == dt)
          pool.push_back(r);
        break;
      }
      case 6: { // cast round trip through another type
        if (isFloat)
          pool.push_back(p.cast(p.cast(x, dt == "f32" ? "f64" : "f32"), dt));
        else
          pool.push_back(p.cast(p.cast(x, "i64"), dt));
        break;
      }
      default: { // write through a strided view of the storage, read back
        V dest = view(p, view(p, grid));
        if (layout::hasInternalOverlap(dest.l))
          break; // PyTorch rejects writes into overlapping views
        V src = p.binary(isFloat ? "mul" : "add", partner(p, pool, dest, true),
                         dest);
        if (src.l.sizes != dest.l.sizes)
          break;
        storage = p.write(src, dest);
        grid = p.stridedView(storage,
                             layout::contiguous(std::vector<int64_t>{4, 6}));
        pool.push_back(view(p, grid));
        wrote = true;
        break;
      }
      }
    }
    results.push_back(pool.back());
    for (int64_t k = pick(0, 2); k > 0; --k) // keep other values live too
      results.push_back(pool[pick(0, pool.size() - 1)]);
    if (wrote)
      results.push_back(storage);
    if (chance(50))
      results.push_back(p.contiguous(pool[pick(0, pool.size() - 1)]));
    return p.text(results);
  }

private:
  std::mt19937_64 rng;
};

/// "" when the JIT agrees with the reference, else what differs.
std::string check(const std::string &source, uint64_t seed, bool &skipped) {
  skipped = false;
  mlir::MLIRContext context;
  jit::loadDialects(context);
  context.printOpOnDiagnostic(false);
  std::string diags;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    diags += d.str() + "\n";
    return mlir::success();
  });
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module)
    return "the generated program does not parse/verify: " + diags;
  auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
  reference::InputGenerator gen(reference::InputKind::Random, seed);
  std::vector<reference::RefValue> refArgs;
  std::vector<jit::JitValue> jitArgs;
  for (mlir::Type t : func.getArgumentTypes()) {
    std::string whyNot;
    auto a = gen.makeArgument(t, whyNot);
    if (mlir::failed(a))
      return "no input for an argument: " + whyNot;
    refArgs.push_back(*a);
    jitArgs.push_back(jit::fromRefValue(*a));
  }
  auto expected = reference::evaluate(func, refArgs);
  if (mlir::failed(expected)) {
    skipped = true; // e.g. a program the reference refuses; not a JIT bug
    return "";
  }
  jit::RunResult got = jit::runSource(source, "main", jitArgs);
  if (!got.ok)
    return "JIT failed: " + got.error;
  if (got.values.size() != expected->size())
    return "result count differs";
  for (size_t r = 0; r < expected->size(); ++r) {
    const auto &e = (*expected)[r];
    const auto &g = got.values[r];
    std::string at = "result " + std::to_string(r) + ": ";
    if (g.isStorage != e.isStorage)
      return at + "storage vs tensor";
    if (!e.isStorage &&
        (g.sizes != e.layout.sizes || g.strides != e.layout.strides ||
         g.offset != e.layout.offset))
      return at + "layout differs";
    std::vector<double> ev = e.elements(), gv = g.elements();
    if (ev.size() != gv.size())
      return at + "element count differs";
    for (size_t i = 0; i < ev.size(); ++i) {
      if (std::isnan(ev[i]) ? std::isnan(gv[i])
                            : std::abs(gv[i] - ev[i]) <=
                                  1e-4 * std::max(1.0, std::abs(ev[i])))
        continue;
      return at + "element " + std::to_string(i) + ": JIT " +
             std::to_string(gv[i]) + ", reference " + std::to_string(ev[i]);
    }
  }
  return "";
}

} // namespace

int main(int argc, char **argv) {
  int64_t programs = 0;
  double seconds = 0;
  uint64_t seed = 1;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? argv[++i] : "0"; };
    if (!std::strcmp(argv[i], "--programs"))
      programs = std::atoll(next());
    else if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(next());
    else if (!std::strcmp(argv[i], "--seed"))
      seed = std::strtoull(next(), nullptr, 10);
    else if (!std::strcmp(argv[i], "--verbose"))
      verbose = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--programs N] [--seconds S] [--seed K] "
                   "[--verbose]\n",
                   argv[0]);
      return 2;
    }
  }
  if (programs <= 0 && seconds <= 0)
    programs = 200;
  jit::setCacheDir(""); // every program is new: keep the disk cache clean
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  int64_t done = 0, failures = 0, skipped = 0;
  for (; (programs <= 0 || done < programs) &&
         (seconds <= 0 || elapsed() < seconds);
       ++done) {
    std::string source = Generator(seed + done).program();
    bool skip = false;
    std::string why = check(source, seed + done, skip);
    skipped += skip;
    if (!why.empty()) {
      if (++failures <= 10)
        std::printf("MISMATCH seed %llu: %s\n%s\n",
                    static_cast<unsigned long long>(seed + done), why.c_str(),
                    source.c_str());
    } else if (verbose) {
      std::printf("seed %llu%s:\n%s\n",
                  static_cast<unsigned long long>(seed + done),
                  skip ? " (reference refused)" : "", source.c_str());
    }
    // Every program is unique: drop the cache's entries. (Compiled code
    // stays mapped; see docs/reliability.md: keep runs under ~10^4
    // programs per process, as tests/fuzz/run.sh does.)
    if (done % 256 == 255)
      jit::clearMemoryCache();
    if (done % 1000 == 999)
      std::fprintf(stderr,
                   "strata-fuzz-programs: %lld programs, %.0f s, %lld "
                   "failures\n",
                   static_cast<long long>(done + 1), elapsed(),
                   static_cast<long long>(failures));
  }
  std::printf("strata-fuzz-programs: %lld programs (%lld refused by the "
              "reference) in %.1f s, seeds %llu..%llu, %lld kernels "
              "compiled, %lld failures\n",
              static_cast<long long>(done), static_cast<long long>(skipped),
              elapsed(), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed + done - 1),
              static_cast<long long>(jit::cacheStats().compiles),
              static_cast<long long>(failures));
  return failures ? 1 : 0;
}
