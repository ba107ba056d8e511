//===- DifferentiateTest.cpp - every VJP against finite differences -------===//
//
// Each case builds a small f64 function, differentiates it with
// --strata-differentiate and compares the gradient of every listed
// argument, evaluated by the reference evaluator, with central finite
// differences of the forward function (also evaluated by the reference
// evaluator, in double). The differentiated function is then run through
// the whole pipeline (fuse, coalesce) on the CPU JIT and must agree.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataAutodiff.h"
#include "strata/JIT/Jit.h"
#include "strata/Reference/Evaluator.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

using namespace mlir;
using namespace strata::ir;
using namespace strata::reference;

namespace {
/// An argument: a contiguous f64 tensor of `shape`, or a storage of `size`.
struct Arg {
  std::vector<int64_t> shape;
  int64_t storage = -1;
};
using Body =
    std::function<SmallVector<Value>(OpBuilder &, Location, ArrayRef<Value>)>;
struct Case {
  const char *name;
  std::vector<Arg> args;
  Body body;
  double step = 1e-6, tolerance = 1e-6;
};

// Shorthands for building the cases.
DenseI64ArrayAttr ints(OpBuilder &b, ArrayRef<int64_t> v) {
  return b.getDenseI64ArrayAttr(v);
}
IntegerAttr i64(OpBuilder &b, int64_t v) { return b.getI64IntegerAttr(v); }
Value fill(OpBuilder &b, Location l, double v, ArrayRef<int64_t> shape = {}) {
  return b.create<FillOp>(
      l, StridedTensorType::getContiguous(b.getF64Type(), shape),
      b.getF64FloatAttr(v));
}
/// |x| + 0.5: a positive input for log, sqrt, div and pow.
Value positive(OpBuilder &b, Location l, Value x) {
  return b.create<AddOp>(l, b.create<AbsOp>(l, x), fill(b, l, 0.5));
}
Value view(OpBuilder &b, Location l, Value storage, ArrayRef<int64_t> sizes,
           ArrayRef<int64_t> strides, int64_t offset) {
  strata::layout::Layout lay{
      {sizes.begin(), sizes.end()}, {strides.begin(), strides.end()}, offset};
  return b.create<StridedViewOp>(l, StridedTensorType::get(b.getF64Type(), lay),
                                 storage);
}

#define UNARY(Name, OpT)                                                       \
  Case {                                                                       \
    Name, {{{2, 3}}}, [](OpBuilder &b, Location l, ArrayRef<Value> x) {        \
      return SmallVector<Value>{b.create<OpT>(l, x[0])};                       \
    }                                                                          \
  }
#define BINARY(Name, OpT, A, B)                                                \
  Case {                                                                       \
    Name, {{A}, {B}}, [](OpBuilder &b, Location l, ArrayRef<Value> x) {        \
      return SmallVector<Value>{b.create<OpT>(l, x[0], x[1])};                 \
    }                                                                          \
  }
#define S(...)                                                                 \
  std::vector<int64_t> { __VA_ARGS__ }

std::vector<Case> cases() {
  using V = SmallVector<Value>;
  using B = OpBuilder;
  using L = Location;
  using A = ArrayRef<Value>;
  return {
      // Elementwise.
      UNARY("neg", NegOp),
      UNARY("abs", AbsOp),
      UNARY("exp", ExpOp),
      UNARY("relu", ReluOp),
      UNARY("sigmoid", SigmoidOp),
      UNARY("tanh", TanhOp),
      {"log",
       {{{4}}},
       [](B &b, L l, A x) -> V {
         return {b.create<LogOp>(l, positive(b, l, x[0]))};
       }},
      {"sqrt",
       {{{4}}},
       [](B &b, L l, A x) -> V {
         return {b.create<SqrtOp>(l, positive(b, l, x[0]))};
       }},
      BINARY("add_broadcast", AddOp, S(2, 3), S(3)),
      BINARY("sub_broadcast", SubOp, S(2, 1), S(1, 3)),
      BINARY("mul_broadcast", MulOp, S(4, 1, 3), S(2, 1)),
      BINARY("maximum", MaximumOp, S(2, 3), S(3)),
      BINARY("minimum", MinimumOp, S(3), S(2, 3)),
      BINARY("hypot_broadcast", HypotOp, S(2, 3), S(3)),
      BINARY("logaddexp_broadcast", LogaddexpOp, S(2, 1), S(1, 3)),
      {"mul_scalar",
       {{{3}}},
       [](B &b, L l, A x) -> V {
         return {b.create<MulOp>(l, x[0], fill(b, l, 3.0))};
       }},
      {"div",
       {{{2, 3}}, {{3}}},
       [](B &b, L l, A x) -> V {
         return {b.create<DivOp>(l, x[0], positive(b, l, x[1]))};
       }},
      {"pow",
       {{{2, 3}}, {{2, 1}}},
       [](B &b, L l, A x) -> V {
         return {b.create<PowOp>(l, positive(b, l, x[0]), x[1])};
       }},
      {"where",
       {{{2, 3}}, {{3}}},
       [](B &b, L l, A x) -> V {
         Value c = b.create<GtOp>(l, x[0], fill(b, l, 0.0));
         return {b.create<WhereOp>(l, c, x[0], x[1])};
       }},
      {"cast_f32",
       {{{5}}},
       [](B &b, L l, A x) -> V {
         Value f = b.create<CastOp>(
             l, StridedTensorType::getContiguous(b.getF32Type(), {5}), x[0]);
         Value e = b.create<ExpOp>(l, f);
         return {b.create<CastOp>(
             l, StridedTensorType::getContiguous(b.getF64Type(), {5}), e)};
       },
       1e-3,
       1e-3},
      // Reductions.
      {"sum_dim",
       {{{2, 3}}},
       [](B &b, L l, A x) -> V {
         return {b.create<SumOp>(l, x[0], ints(b, {1}), UnitAttr())};
       }},
      {"sum_all",
       {{{2, 3}}},
       [](B &b, L l, A x) -> V {
         return {b.create<SumOp>(l, x[0], ints(b, {}), UnitAttr())};
       }},
      {"sum_keepdim",
       {{{2, 3, 2}}},
       [](B &b, L l, A x) -> V {
         return {b.create<SumOp>(l, x[0], ints(b, {0, 2}), b.getUnitAttr())};
       }},
      {"mean_dim",
       {{{2, 3}}},
       [](B &b, L l, A x) -> V {
         return {b.create<MeanOp>(l, x[0], ints(b, {0}), UnitAttr())};
       }},
      {"mean_all",
       {{{2, 3}}},
       [](B &b, L l, A x) -> V {
         return {b.create<MeanOp>(l, x[0], ints(b, {}), UnitAttr())};
       }},
      {"amax_dim",
       {{{3, 4}}},
       [](B &b, L l, A x) -> V {
         return {b.create<AmaxOp>(l, x[0], ints(b, {1}), UnitAttr())};
       }},
      {"amin_all",
       {{{3, 4}}},
       [](B &b, L l, A x) -> V {
         return {b.create<AminOp>(l, x[0], ints(b, {}), UnitAttr())};
       }},
      // Matmul, every torch.matmul form.
      BINARY("matmul_2d", MatmulOp, S(3, 4), S(4, 2)),
      BINARY("matmul_1d_2d", MatmulOp, S(4), S(4, 2)),
      BINARY("matmul_2d_1d", MatmulOp, S(3, 4), S(4)),
      BINARY("matmul_1d_1d", MatmulOp, S(4), S(4)),
      BINARY("matmul_batched", MatmulOp, S(2, 3, 4), S(4, 2)),
      BINARY("matmul_batch_broadcast", MatmulOp, S(2, 1, 2, 3), S(3, 3, 2)),
      // Views.
      {"view",
       {{{2, 6}}},
       [](B &b, L l, A x) -> V {
         return {b.create<ViewOp>(l, x[0], ints(b, {3, 4}))};
       }},
      {"reshape_copy",
       {{{2, 3}}},
       [](B &b, L l, A x) -> V {
         Value t = b.create<TransposeOp>(l, x[0], i64(b, 0), i64(b, 1));
         return {b.create<ReshapeOp>(l, t, ints(b, {6}))};
       }},
      {"flatten",
       {{{2, 3, 2}}},
       [](B &b, L l, A x) -> V {
         return {b.create<FlattenOp>(l, x[0], i64(b, 0), i64(b, 1))};
       }},
      {"permute",
       {{{2, 3, 4}}},
       [](B &b, L l, A x) -> V {
         Value p = b.create<PermuteOp>(l, x[0], ints(b, {2, 0, 1}));
         return {b.create<MulOp>(l, p, p)};
       }},
      {"transpose_contiguous",
       {{{2, 3}}},
       [](B &b, L l, A x) -> V {
         Value t = b.create<TransposeOp>(l, x[0], i64(b, 0), i64(b, 1));
         return {b.create<ContiguousOp>(l, t)};
       }},
      {"slice_step",
       {{{7, 2}}},
       [](B &b, L l, A x) -> V {
         return {b.create<SliceOp>(l, x[0], i64(b, 0), i64(b, 1), i64(b, 6),
                                   i64(b, 2))};
       }},
      {"slice_empty",
       {{{4}}},
       [](B &b, L l, A x) -> V {
         Value s = b.create<SliceOp>(l, x[0], i64(b, 0), i64(b, 2), i64(b, 2),
                                     i64(b, 1));
         return {s, b.create<MulOp>(l, x[0], x[0])};
       }},
      {"select",
       {{{3, 4}}},
       [](B &b, L l, A x) -> V {
         return {b.create<SelectOp>(l, x[0], i64(b, 1), i64(b, 2))};
       }},
      {"narrow",
       {{{3, 4}}},
       [](B &b, L l, A x) -> V {
         return {b.create<NarrowOp>(l, x[0], i64(b, 1), i64(b, 1), i64(b, 2))};
       }},
      {"expand_size1",
       {{{3, 1}}},
       [](B &b, L l, A x) -> V {
         return {b.create<ExpandOp>(l, x[0], ints(b, {2, 3, 4}))};
       }},
      {"squeeze_unsqueeze",
       {{{3, 1, 2}}},
       [](B &b, L l, A x) -> V {
         Value q = b.create<SqueezeOp>(l, x[0], ints(b, {1}));
         return {b.create<UnsqueezeOp>(l, q, i64(b, 0))};
       }},
      {"as_strided_overlap",
       {{{6}}},
       [](B &b, L l, A x) -> V {
         return {b.create<AsStridedOp>(l, x[0], ints(b, {3, 3}),
                                       ints(b, {1, 1}), i64(b, 0))};
       }},
      {"as_strided_gaps",
       {{{3, 4}}},
       [](B &b, L l, A x) -> V {
         return {b.create<AsStridedOp>(l, x[0], ints(b, {2, 2}),
                                       ints(b, {5, 2}), i64(b, 1))};
       }},
      {"as_strided_of_expand",
       {{{1}}},
       [](B &b, L l, A x) -> V {
         Value e = b.create<ExpandOp>(l, x[0], ints(b, {3}));
         return {b.create<AsStridedOp>(l, e, ints(b, {2}), ints(b, {0}),
                                       i64(b, 0))};
       }},
      {"diagonal",
       {{{3, 4}}},
       [](B &b, L l, A x) -> V {
         return {
             b.create<DiagonalOp>(l, x[0], i64(b, 1), i64(b, 0), i64(b, 1))};
       }},
      {"unfold_overlap",
       {{{2, 6}}},
       [](B &b, L l, A x) -> V {
         return {b.create<UnfoldOp>(l, x[0], i64(b, 1), i64(b, 3), i64(b, 1))};
       }},
      {"unfold_disjoint",
       {{{7}}},
       [](B &b, L l, A x) -> V {
         return {b.create<UnfoldOp>(l, x[0], i64(b, 0), i64(b, 2), i64(b, 3))};
       }},
      {"flip",
       {{{2, 3}}},
       [](B &b, L l, A x) -> V {
         Value f = b.create<FlipOp>(l, x[0], ints(b, {0, 1}));
         return {b.create<MulOp>(l, f, x[0])};
       }},
      {"copy",
       {{{2, 3}}},
       [](B &b, L l, A x) -> V { return {b.create<CopyOp>(l, x[0])}; }},
      {"storage_views",
       {{{}, 12}},
       [](B &b, L l, A x) -> V {
         Value m = view(b, l, x[0], {3, 4}, {4, 1}, 0);
         Value t = view(b, l, x[0], {4, 3}, {1, 4}, 0);
         return {b.create<MatmulOp>(l, m, t)};
       }},
      // Views covering their storage once: the gradient is read in storage
      // order, the elementwise ops rebuilt on that read.
      {"storage_transposed_relu_mask",
       {{{}, 12}, {{3, 4}}},
       [](B &b, L l, A x) -> V {
         Value t = view(b, l, x[0], {3, 4}, {1, 3}, 0);
         Value r = b.create<ReluOp>(l, b.create<MulOp>(l, t, x[1]));
         return {b.create<SumOp>(l, r, ints(b, {}), UnitAttr()),
                 b.create<MulOp>(l, r, t)};
       }},
      {"storage_flipped_size1_dims",
       {{{}, 6}, {{3, 1, 2}}},
       [](B &b, L l, A x) -> V {
         Value v = view(b, l, x[0], {3, 1, 2}, {-1, 5, 3}, 2);
         Value e = b.create<ExpOp>(l, b.create<MulOp>(l, v, x[1]));
         return {b.create<MulOp>(l, e, b.create<TanhOp>(l, e))};
       }},
      {"storage_broadcast_operand",
       {{{}, 6}, {{2}}},
       [](B &b, L l, A x) -> V {
         Value v = view(b, l, x[0], {3, 2}, {1, 3}, 0);
         Value m = b.create<MulOp>(l, b.create<SigmoidOp>(l, v), x[1]);
         return {b.create<AddOp>(l, m, b.create<MulOp>(l, m, m))};
       }},
      // Functional in-place writes (CopySlices).
      {"write_storage",
       {{{}, 6}, {{3}}},
       [](B &b, L l, A x) -> V {
         Value dest = view(b, l, x[0], {3}, {2}, 0);
         Value src = b.create<MulOp>(l, x[1], dest);
         Value s1 = b.create<WriteOp>(l, x[0].getType(), src, dest);
         Value all = view(b, l, s1, {2, 3}, {3, 1}, 0);
         return {b.create<MulOp>(l, all, all)};
       }},
      {"write_broadcast_into_result",
       {{{2, 3}}, {{}}},
       [](B &b, L l, A x) {
         Value y = b.create<ExpOp>(l, x[0]);
         Value row = b.create<SelectOp>(l, y, i64(b, 0), i64(b, 1));
         auto storage = StorageType::get(b.getContext(), 6, b.getF64Type());
         Value s1 = b.create<WriteOp>(l, storage, x[1], row);
         Value all = view(b, l, s1, {2, 3}, {3, 1}, 0);
         return V{b.create<MulOp>(l, all, y)};
       }},
      {"long_chain",
       {{{4, 3}}},
       [](B &b, L l, A x) -> V {
         Value v = x[0];
         for (int i = 0; i < 6; ++i) {
           v = b.create<TransposeOp>(l, v, i64(b, 0), i64(b, 1));
           v = b.create<TanhOp>(l, b.create<MulOp>(l, v, fill(b, l, 1.1)));
           v = b.create<FlipOp>(l, v, ints(b, {0}));
         }
         return {b.create<SumOp>(l, v, ints(b, {0}), UnitAttr())};
       }},
  };
}

class Differentiate : public ::testing::TestWithParam<Case> {
protected:
  Differentiate() { strata::jit::loadDialects(context); }

  /// Builds `func @f` of the case in a fresh module.
  OwningOpRef<ModuleOp> build(const Case &c) {
    OpBuilder b(&context);
    Location l = b.getUnknownLoc();
    auto module = ModuleOp::create(l);
    SmallVector<Type> argTypes;
    for (const Arg &a : c.args)
      argTypes.push_back(
          a.storage >= 0
              ? Type(StorageType::get(&context, a.storage, b.getF64Type()))
              : Type(
                    StridedTensorType::getContiguous(b.getF64Type(), a.shape)));
    b.setInsertionPointToEnd(module.getBody());
    auto func = b.create<func::FuncOp>(l, "f", b.getFunctionType(argTypes, {}));
    Block *block = func.addEntryBlock();
    b.setInsertionPointToEnd(block);
    SmallVector<Value> results =
        c.body(b, l, SmallVector<Value>(block->getArguments()));
    b.create<func::ReturnOp>(l, results);
    func.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
    EXPECT_TRUE(succeeded(mlir::verify(module))) << c.name;
    return module;
  }

  MLIRContext context;
};

/// sum(seed * out) over every differentiable result.
double loss(ArrayRef<RefValue> outs, ArrayRef<RefValue> seeds) {
  double total = 0;
  size_t s = 0;
  for (const RefValue &o : outs) {
    if (!o.elementType.isa<FloatType>())
      continue;
    std::vector<double> e = o.elements(), w = seeds[s++].elements();
    for (size_t i = 0; i < e.size(); ++i)
      total += e[i] * w[i];
  }
  return total;
}

TEST_P(Differentiate, MatchesFiniteDifferences) {
  const Case &c = GetParam();
  OwningOpRef<ModuleOp> forward = build(c), backward = build(c);
  auto fwd = *forward->getOps<func::FuncOp>().begin();
  auto bwd = *backward->getOps<func::FuncOp>().begin();
  SmallVector<int64_t> wrt;
  for (size_t i = 0; i < c.args.size(); ++i)
    wrt.push_back(i);
  bwd->setAttr("strata.wrt", DenseI64ArrayAttr::get(&context, wrt));
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  PassManager pm(&context, func::FuncOp::getOperationName());
  pm.addPass(strata::createDifferentiate());
  ASSERT_TRUE(succeeded(pm.run(bwd))) << diagnostics;

  InputGenerator gen(InputKind::Random, 42);
  std::vector<RefValue> args, seeds;
  for (Type t : fwd.getArgumentTypes())
    args.push_back(*gen.makeArgument(t));
  size_t numOut = fwd.getNumResults();
  for (Type t : bwd.getArgumentTypes().drop_front(args.size()))
    seeds.push_back(*gen.makeArgument(t));
  std::vector<RefValue> all = args;
  all.insert(all.end(), seeds.begin(), seeds.end());
  auto result = evaluate(bwd, all);
  ASSERT_TRUE(succeeded(result)) << diagnostics;
  ASSERT_EQ(result->size(), numOut + args.size());

  for (size_t k = 0; k < args.size(); ++k) {
    std::vector<double> analytic = (*result)[numOut + k].elements();
    ASSERT_EQ(int64_t(analytic.size()), int64_t(args[k].buffer->data.size()));
    for (size_t j = 0; j < analytic.size(); ++j) {
      double f[2];
      for (int sign = 0; sign < 2; ++sign) {
        std::vector<RefValue> shifted = args;
        shifted[k].buffer = std::make_shared<Buffer>(*args[k].buffer);
        shifted[k].buffer->data[j] += sign ? -c.step : c.step;
        auto out = evaluate(fwd, shifted);
        ASSERT_TRUE(succeeded(out)) << diagnostics;
        f[sign] = loss(*out, seeds);
      }
      double numeric = (f[0] - f[1]) / (2 * c.step);
      EXPECT_NEAR(analytic[j], numeric, c.tolerance * (1 + std::abs(numeric)))
          << c.name << ": d/d arg" << k << "[" << j << "]";
    }
  }

  // The gradient program compiled and fused by the JIT agrees.
  std::string text;
  llvm::raw_string_ostream os(text);
  backward->print(os);
  std::string error;
  auto prepared = strata::jit::PreparedFunction::fromSource(text, "f", error);
  ASSERT_TRUE(prepared) << error;
  std::vector<strata::jit::JitValue> jargs;
  for (const RefValue &v : all) {
    if (v.isStorage)
      jargs.push_back(strata::jit::JitValue::storage(strata::jit::DType::F64,
                                                     v.buffer->data));
    else
      jargs.push_back(strata::jit::JitValue::strided(
          strata::jit::DType::F64, v.layout.sizes, v.layout.strides,
          v.layout.offset, v.buffer->data));
  }
  auto run = prepared->run(jargs);
  ASSERT_TRUE(run.ok) << run.error;
  for (size_t k = numOut; k < result->size(); ++k) {
    std::vector<double> want = (*result)[k].elements(),
                        got = run.values[k].elements();
    ASSERT_EQ(want.size(), got.size());
    for (size_t j = 0; j < want.size(); ++j)
      EXPECT_NEAR(got[j], want[j], 1e-9 * (1 + std::abs(want[j])))
          << c.name << " (jit) result " << k << "[" << j << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOp, Differentiate, ::testing::ValuesIn(cases()),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });
} // namespace
