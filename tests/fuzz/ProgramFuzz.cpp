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
// Gradients: every program seed also builds a random differentiable float64
// DSL program (views, broadcasting smooth unary and binary ops, sum/mean
// reductions), reduced to a scalar by a fixed random weighting, and
// strata::gradcheck compares its DSL autograd gradient (the differentiated
// IR run by the JIT) with central finite differences.
//
//   strata-fuzz-programs [--programs N] [--seconds S] [--seed K] [--verbose]
//                        [--grad-every G] [--no-grad] [--cuda] [--large]
// --cuda also runs each program on the CUDA engine (a GPU, or the CUDA
// simulator of tests/cudasim) against the same reference, and each
// gradient program on cuda:0 inputs against its CPU gradients. --large makes
// most dimensions one of two sizes drawn per program (17..90, 33..130) and
// favours transposes and permutes, so that the CUDA emitter's tiled,
// row-reduce and split-reduction shapes occur.
// Program i uses seed K + i; a failure prints the program and the seed.
// The gradient check runs for every G-th program (i % G == 0; default 1):
// it costs ~8x a forward check (a forward, a backward and 2 forwards per
// input element, each compiled), and the DSL keeps every compiled program.
//
//===----------------------------------------------------------------------===//
#include "jit/ProgramBuilder.h"
#include "strata/Autograd.h"
#include "strata/Error.h"
#include "strata/JIT/CudaJit.h"
#include "strata/JIT/Jit.h"
#include "strata/JIT/RefInterop.h"
#include "strata/Reference/Evaluator.h"
#include "strata/strata.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <random>

using namespace strata;
using namespace strata::test;

namespace {

class Generator {
public:
  Generator(uint64_t seed, bool large) : rng(seed), large(large) {
    // Two large sizes per program, so that transposed values still meet
    // values of the same shape (tiled kernels need both layouts at once).
    bigSizes[0] = pick(17, 90);
    bigSizes[1] = pick(33, 130);
  }

  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  bool chance(int percent) { return pick(0, 99) < percent; }

  std::vector<int64_t> shape(int64_t maxRank) {
    std::vector<int64_t> s;
    for (int64_t r = pick(large ? 2 : 0, maxRank); r > 0; --r)
      s.push_back(chance(6)                 ? 0
                  : chance(large ? 12 : 30) ? 1
                  : large && chance(60)     ? bigSizes[pick(0, 1)]
                                            : pick(2, 6));
    return s;
  }

  /// A random view of `x` when one applies (the algebra decides), else x.
  V view(Program &p, const V &x) {
    int64_t rank = x.l.dim();
    auto dim = [&] { return pick(-rank, rank - 1); };
    // Large programs favour transposes and permutes (tiled CUDA kernels).
    switch (large && chance(30) ? (chance(50) ? 0 : 6) : pick(0, 7)) {
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
      if (large && x.l.dim() >= 2 && chance(20)) {
        // A value meets its own transpose, made contiguous: both layouts
        // in one kernel (the CUDA emitter's tiled shape when sizes allow).
        V t = p.transpose(x, -1, -2);
        V m = p.binary(isFloat ? "mul" : "add", t, p.contiguous(t));
        pool.push_back(m);
        if (chance(50) && m.l.numel() > 0) // row or column, maybe split
          results.push_back(p.reduce(chance(50) ? "sum" : "amax", m,
                                     chance(50) ? std::vector<int64_t>{}
                                                : std::vector<int64_t>{0},
                                     false));
        continue;
      }
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
  bool large;
  int64_t bigSizes[2];
};

/// "" when the JIT (and, with `cuda`, the CUDA engine) agrees with the
/// reference, else what differs.
std::string check(const std::string &source, uint64_t seed, bool cuda,
                  bool &skipped) {
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
  auto compare = [&](const jit::RunResult &got,
                     const std::string &engine) -> std::string {
    if (!got.ok)
      return engine + " failed: " + got.error;
    if (got.values.size() != expected->size())
      return engine + ": result count differs";
    for (size_t r = 0; r < expected->size(); ++r) {
      const auto &e = (*expected)[r];
      const auto &g = got.values[r];
      std::string at = engine + " result " + std::to_string(r) + ": ";
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
        return at + "element " + std::to_string(i) + ": " +
               std::to_string(gv[i]) + ", reference " + std::to_string(ev[i]);
      }
    }
    return "";
  };
  std::string why = compare(jit::runSource(source, "main", jitArgs), "JIT");
  if (!why.empty() || !cuda)
    return why;
  std::string error;
  auto prepared = jit::PreparedFunction::fromSource(source, "main", error);
  if (!prepared)
    return "CUDA: the program does not prepare: " + error;
  return compare(jit::runFunctionCuda(prepared->function(), jitArgs), "CUDA");
}

/// A random differentiable float64 DSL program of the inputs, rebuilt the
/// same way on every call (its choices come from `seed` and the shapes
/// only), so gradcheck can run it again on moved inputs.
class GradProgram {
public:
  explicit GradProgram(uint64_t seed) : seed(seed) {
    std::mt19937_64 rng(seed ^ 0x5eedULL);
    auto pick = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    for (int64_t n = pick(1, 3); n > 0; --n) {
      Shape s;
      for (int64_t r = pick(0, 3); r > 0; --r)
        s.push_back(pick(0, 19) == 0 ? 0 : (pick(0, 3) == 0 ? 1 : pick(2, 4)));
      int64_t numel = 1;
      for (int64_t d : s)
        numel *= d;
      std::vector<double> v(numel);
      for (double &x : v)
        x = std::uniform_real_distribution<double>(-1.5, 1.5)(rng);
      inputs.push_back(from_vector<double>(v, s, TensorOptions(DType::F64)));
    }
  }

  std::vector<Tensor> inputs;

  /// The program on `xs`; `log` (when given) gets one line per op.
  Tensor operator()(const std::vector<Tensor> &xs,
                    std::string *log = nullptr) const {
    std::mt19937_64 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    std::vector<Tensor> pool(xs);
    std::vector<std::string> names;
    for (size_t i = 0; i < xs.size(); ++i)
      names.push_back("x" + std::to_string(i));
    // Constants live where the inputs do (cuda:0 for --cuda's check).
    const TensorOptions f64 =
        TensorOptions(DType::F64)
            .device(xs.empty() ? Device::cpu() : xs[0].device());
    auto note = [&](const std::string &line) {
      if (log)
        *log += "  t" + std::to_string(pool.size()) + " = " + line + "\n";
      names.push_back("t" + std::to_string(pool.size()));
    };
    auto shapeText = [](const Shape &s) {
      std::string t = "{";
      for (size_t i = 0; i < s.size(); ++i)
        t += (i ? "," : "") + std::to_string(s[i]);
      return t + "}";
    };
    for (int64_t step = pick(2, 7); step > 0; --step) {
      size_t xi = pick(0, pool.size() - 1);
      Tensor x = pool[xi];
      const std::string &xn = names[xi];
      int64_t rank = x.dim();
      auto dim = [&] { return pick(-rank, rank - 1); };
      auto size = [&](int64_t d) { return x.sizes()[d < 0 ? d + rank : d]; };
      std::string line;
      std::optional<Tensor> y;
      switch (pick(0, 9)) {
      case 0: // a view
      case 1: {
        switch (pick(0, 6)) {
        case 0:
          if (rank >= 1) {
            int64_t a = dim(), b = dim();
            y = x.transpose(a, b);
            line = fmt(xn, ".transpose(", a, ",", b, ")");
          }
          break;
        case 1:
          if (rank >= 1) {
            int64_t d = dim(), n = size(d), lo = pick(-n, n),
                    hi = pick(-n, n + 1), st = pick(1, 3);
            y = x.slice(d, lo, hi, st);
            line = fmt(xn, ".slice(", d, ",", lo, ",", hi, ",", st, ")");
          }
          break;
        case 2:
          if (rank >= 1 && size(0) > 0) {
            int64_t i = pick(-size(0), size(0) - 1);
            y = x.select(0, i);
            line = fmt(xn, ".select(0,", i, ")");
          }
          break;
        case 3:
          if (rank >= 1) {
            int64_t d = dim();
            y = x.flip({d});
            line = fmt(xn, ".flip({", d, "})");
          }
          break;
        case 4:
          if (rank < 3) {
            int64_t d = pick(-rank - 1, rank);
            y = x.unsqueeze(d);
            line = fmt(xn, ".unsqueeze(", d, ")");
          }
          break;
        case 5: {
          Shape to{pick(1, 3)};
          for (int64_t s : x.sizes())
            to.push_back(s == 1 ? pick(1, 3) : -1);
          if (rank < 3) {
            y = x.expand(to);
            line = fmt(xn, ".expand(", shapeText(to), ")");
          }
          break;
        }
        default:
          if (rank >= 2) {
            Shape dims(rank);
            std::iota(dims.begin(), dims.end(), 0);
            std::shuffle(dims.begin(), dims.end(), rng);
            y = x.permute(dims);
            line = fmt(xn, ".permute(", shapeText(dims), ")");
          } else {
            y = x.reshape({-1});
            line = fmt(xn, ".reshape({-1})");
          }
          break;
        }
        break;
      }
      case 2:
      case 3: { // smooth unary ops, bounded
        switch (pick(0, 4)) {
        case 0:
          y = x.neg(), line = fmt(xn, ".neg()");
          break;
        case 1:
          y = x.tanh(), line = fmt(xn, ".tanh()");
          break;
        case 2:
          y = x.sigmoid(), line = fmt(xn, ".sigmoid()");
          break;
        case 3:
          y = x.tanh().exp(), line = fmt(xn, ".tanh().exp()");
          break;
        default:
          y = (x * x + 1.0).sqrt(), line = fmt("(", xn, "*", xn, "+1).sqrt()");
          break;
        }
        break;
      }
      case 4:
      case 5:
      case 6: { // broadcasting binary ops with another value
        size_t zi = pick(0, pool.size() - 1);
        Tensor z = pool[zi];
        if (!layout::broadcastShapes(x.sizes(), z.sizes(), "fuzz").ok()) {
          z = from_vector<double>({0.75}, {}, f64);
          zi = SIZE_MAX;
        }
        std::string zn = zi == SIZE_MAX ? "0.75" : names[zi];
        switch (pick(0, 3)) {
        case 0:
          y = x + z, line = fmt(xn, " + ", zn);
          break;
        case 1:
          y = x - z, line = fmt(xn, " - ", zn);
          break;
        case 2:
          y = x * z, line = fmt(xn, " * ", zn);
          break;
        default:
          y = x / (z * z + 1.0), line = fmt(xn, " / (", zn, "*", zn, "+1)");
          break;
        }
        break;
      }
      default: { // sum or mean over some dims
        Shape dims;
        for (int64_t d = 0; d < rank; ++d)
          if (pick(0, 1))
            dims.push_back(pick(0, 1) ? d : d - rank);
        bool keep = pick(0, 2) == 0, mean = pick(0, 1);
        // mean over no elements is NaN: sum then.
        if (mean && x.numel() == 0)
          mean = false;
        y = mean ? x.mean(dims, keep) : x.sum(dims, keep);
        line =
            fmt(xn, mean ? ".mean(" : ".sum(", shapeText(dims), ",", keep, ")");
        break;
      }
      }
      if (!y)
        continue;
      note(line);
      pool.push_back(*y);
    }
    // A scalar of every value (so every input and op gets a gradient):
    // the sum of each value weighted by fixed pseudo-random numbers (a
    // 0-d result, as PyTorch's losses are).
    std::mt19937_64 wrng(seed ^ 0x77ULL);
    std::optional<Tensor> total;
    for (size_t k = 0; k < pool.size(); ++k) {
      std::vector<double> w(pool[k].numel());
      for (double &v : w)
        v = std::uniform_real_distribution<double>(-1, 1)(wrng);
      Tensor term =
          (pool[k] * from_vector<double>(w, pool[k].sizes(), f64)).sum();
      total = total ? *total + term : term;
    }
    if (log)
      *log += "  result = sum over every x and t of (value * w).sum(), "
              "w random\n";
    return *total;
  }

private:
  template <typename... T> static std::string fmt(const T &...parts) {
    std::string out;
    auto add = [&](const auto &p) {
      if constexpr (std::is_arithmetic_v<std::decay_t<decltype(p)>>)
        out += std::to_string(p);
      else
        out += p;
    };
    (add(parts), ...);
    return out;
  }
  uint64_t seed;
};

/// "" when autograd's gradient of GradProgram(seed) matches finite
/// differences, else the program and the worst element.
/// "" when the gradients of the program on cuda:0 (the inputs moved there)
/// are cuda:0 tensors equal to the CPU ones, else what differs.
std::string checkCudaGradient(const GradProgram &program) {
  std::vector<Tensor> cpu, dev;
  for (const Tensor &x : program.inputs) {
    cpu.push_back(x.detach().clone().requires_grad_());
    dev.push_back(x.to(Device::cuda()).requires_grad_());
  }
  Tensor lc = program(cpu), ld = program(dev);
  lc.backward();
  ld.backward();
  auto close = [](double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
  };
  if (!close(ld.item<double>(), lc.item<double>()))
    return "CUDA gradient program: loss " + std::to_string(ld.item<double>()) +
           ", CPU " + std::to_string(lc.item<double>());
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (!dev[i].grad().defined() || !dev[i].grad().device().is_cuda())
      return "CUDA gradient of x" + std::to_string(i) + " is not on cuda:0";
    std::vector<double> g = dev[i].grad().to_vector<double>(),
                        c = cpu[i].grad().to_vector<double>();
    if (g.size() != c.size())
      return "CUDA gradient of x" + std::to_string(i) + ": element count";
    for (size_t e = 0; e < g.size(); ++e)
      if (!close(g[e], c[e]))
        return "CUDA gradient of x" + std::to_string(i) + " element " +
               std::to_string(e) + ": " + std::to_string(g[e]) + ", CPU " +
               std::to_string(c[e]);
  }
  return "";
}

std::string checkGradient(uint64_t seed, bool cuda, std::string &description) {
  GradProgram program(seed);
  description.clear();
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    description += "  x" + std::to_string(i) + ": f64 {";
    for (size_t d = 0; d < program.inputs[i].sizes().size(); ++d)
      description +=
          (d ? "," : "") + std::to_string(program.inputs[i].sizes()[d]);
    description += "}\n";
  }
  try {
    program(program.inputs, &description);
    GradcheckResult r =
        gradcheck([&](const std::vector<Tensor> &xs) { return program(xs); },
                  program.inputs);
    if (!r.ok)
      return "gradient: " + r.message;
    return cuda ? checkCudaGradient(program) : "";
  } catch (const strata::Error &e) {
    return std::string("gradient: strata::Error: ") + e.what();
  }
}

} // namespace

int main(int argc, char **argv) {
  int64_t programs = 0;
  double seconds = 0;
  uint64_t seed = 1;
  bool verbose = false, gradients = true, cuda = false, large = false;
  int64_t gradEvery = 1;
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
    else if (!std::strcmp(argv[i], "--no-grad"))
      gradients = false;
    else if (!std::strcmp(argv[i], "--cuda"))
      cuda = true;
    else if (!std::strcmp(argv[i], "--large"))
      large = true;
    else if (!std::strcmp(argv[i], "--grad-every"))
      gradEvery = std::max<int64_t>(1, std::atoll(next()));
    else {
      std::fprintf(stderr,
                   "usage: %s [--programs N] [--seconds S] [--seed K] "
                   "[--verbose] [--grad-every G] [--no-grad] [--cuda] "
                   "[--large]\n",
                   argv[0]);
      return 2;
    }
  }
  if (programs <= 0 && seconds <= 0)
    programs = 200;
  jit::setCacheDir(""); // every program is new: keep the disk cache clean
  if (cuda && !jit::cudaUnavailableReason().empty()) {
    std::fprintf(stderr, "strata-fuzz-programs: --cuda: %s\n",
                 jit::cudaUnavailableReason().c_str());
    return 1;
  }
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  int64_t done = 0, failures = 0, skipped = 0, gradChecks = 0, gradFailures = 0;
  for (; (programs <= 0 || done < programs) &&
         (seconds <= 0 || elapsed() < seconds);
       ++done) {
    std::string source = Generator(seed + done, large).program();
    bool skip = false;
    std::string why = check(source, seed + done, cuda, skip);
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
    if (gradients && done % gradEvery == 0) {
      std::string description;
      std::string gwhy = checkGradient(seed + done, cuda, description);
      ++gradChecks;
      if (!gwhy.empty()) {
        ++gradFailures;
        if (++failures <= 10)
          std::printf("MISMATCH seed %llu: %s\n%s\n",
                      static_cast<unsigned long long>(seed + done),
                      gwhy.c_str(), description.c_str());
      } else if (verbose) {
        std::printf("seed %llu gradient program:\n%s\n",
                    static_cast<unsigned long long>(seed + done),
                    description.c_str());
      }
    }
    if (done % 1000 == 999)
      std::fprintf(stderr,
                   "strata-fuzz-programs: %lld programs, %.0f s, %lld "
                   "failures\n",
                   static_cast<long long>(done + 1), elapsed(),
                   static_cast<long long>(failures));
  }
  std::printf("strata-fuzz-programs: %lld programs (%lld refused by the "
              "reference) and %lld gradient programs (%lld gradient "
              "mismatches) in %.1f s, seeds %llu..%llu, %lld kernels "
              "compiled (%lld evicted), %lld failures\n",
              static_cast<long long>(done), static_cast<long long>(skipped),
              static_cast<long long>(gradChecks),
              static_cast<long long>(gradFailures), elapsed(),
              static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed + done - 1),
              static_cast<long long>(jit::cacheStats().compiles),
              static_cast<long long>(jit::cacheStats().evictions),
              static_cast<long long>(failures));
  return failures ? 1 : 0;
}
