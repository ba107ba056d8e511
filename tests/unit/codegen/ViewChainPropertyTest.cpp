//===- ViewChainPropertyTest.cpp - random view chains through the IR ------===//
//
// Seeded random chains of every view op, built as strata IR through the ODS
// builders (so result types come from type inference), then checked three
// ways that do not trust the code under test:
//  - the index oracle (tests/unit/support/IndexOracle.h) applies each op to
//    an explicit array of storage indices; over an arange storage the
//    reference evaluator must print exactly those indices;
//  - after --strata-fold-views every view is one strided_view of its root;
//  - after the full pipeline the evaluator gives the same values again.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataDialect.h"
#include "strata/Reference/Evaluator.h"
#include "strata/Transforms/Passes.h"
#include "support/IndexOracle.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <random>

using namespace strata;
using namespace strata::testing;
using namespace strata::ir;

namespace {

class ChainBuilder {
public:
  ChainBuilder(mlir::OpBuilder &b, std::mt19937_64 &rng) : b(b), rng(rng) {}

  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }

  /// Applies one random view op to (value, oracle) when the layout algebra
  /// accepts it; returns false when the chosen op does not apply.
  bool step(mlir::Value &value, Nd &oracle, std::string &trace) {
    auto type = value.getType().cast<StridedTensorType>();
    layout::Layout l = type.getLayout();
    int64_t rank = l.dim();
    auto loc = b.getUnknownLoc();
    auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
    // A dim, sometimes spelled negatively (the oracle takes it wrapped).
    auto dim = [&](int64_t &wrapped) {
      wrapped = pick(0, rank - 1);
      return pick(0, 1) ? wrapped : wrapped - rank;
    };
    mlir::Operation *op = nullptr;
    Nd next;
    switch (pick(0, 13)) {
    case 0: { // permute
      if (rank == 0)
        return false;
      Shape dims(rank);
      std::iota(dims.begin(), dims.end(), 0);
      std::shuffle(dims.begin(), dims.end(), rng);
      op = b.create<PermuteOp>(loc, value, b.getDenseI64ArrayAttr(dims));
      next = oPermute(oracle, dims);
      break;
    }
    case 1: { // transpose
      if (rank == 0)
        return false;
      int64_t w0, w1;
      int64_t d0 = dim(w0), d1 = dim(w1);
      op = b.create<TransposeOp>(loc, value, i64(d0), i64(d1));
      next = oTranspose(oracle, w0, w1);
      break;
    }
    case 2: { // slice with Python bounds and a step
      if (rank == 0)
        return false;
      int64_t w;
      int64_t d = dim(w), n = l.sizes[w];
      std::optional<int64_t> start, end;
      if (pick(0, 3))
        start = pick(-n - 1, n + 1);
      if (pick(0, 3))
        end = pick(-n - 1, n + 1);
      int64_t step = pick(1, 3);
      op = b.create<SliceOp>(loc, value, i64(d),
                             start ? i64(*start) : mlir::IntegerAttr(),
                             end ? i64(*end) : mlir::IntegerAttr(), i64(step));
      next = oSlice(oracle, w, start, end, step);
      break;
    }
    case 3: { // select
      int64_t w;
      if (rank == 0)
        return false;
      int64_t d = dim(w);
      if (l.sizes[w] == 0)
        return false;
      int64_t index = pick(0, l.sizes[w] - 1);
      op = b.create<SelectOp>(loc, value, i64(d), i64(index));
      next = oSelect(oracle, w, index);
      break;
    }
    case 4: { // narrow
      int64_t w;
      if (rank == 0)
        return false;
      int64_t d = dim(w);
      int64_t start = pick(0, l.sizes[w]);
      int64_t length = pick(0, l.sizes[w] - start);
      op = b.create<NarrowOp>(loc, value, i64(d), i64(start), i64(length));
      next = oSlice(oracle, w, start, start + length, 1);
      break;
    }
    case 5: { // expand size-1 dims and add a leading one
      Shape shape;
      if (pick(0, 1))
        shape.push_back(pick(1, 3));
      for (int64_t s : l.sizes)
        shape.push_back(s == 1 ? pick(1, 3) : (pick(0, 1) ? -1 : s));
      Shape concrete = shape;
      for (size_t i = 0; i < concrete.size(); ++i)
        if (concrete[i] == -1)
          concrete[i] = l.sizes[i - (shape.size() - l.sizes.size())];
      op = b.create<ExpandOp>(loc, value, b.getDenseI64ArrayAttr(shape));
      next = oExpand(oracle, concrete);
      break;
    }
    case 6: { // unsqueeze
      int64_t d = pick(-rank - 1, rank);
      op = b.create<UnsqueezeOp>(loc, value, i64(d));
      Shape shape = l.sizes;
      shape.insert(shape.begin() + (d < 0 ? d + rank + 1 : d), 1);
      next = oReshape(oracle, shape);
      break;
    }
    case 7: { // squeeze (all)
      op = b.create<SqueezeOp>(loc, value, mlir::DenseI64ArrayAttr());
      Shape shape;
      for (int64_t s : l.sizes)
        if (s != 1)
          shape.push_back(s);
      next = oReshape(oracle, shape);
      break;
    }
    case 8:   // view (only when strides allow it)
    case 9: { // reshape (a view or a copy)
      Shape shape = l.sizes;
      if (rank >= 2 && pick(0, 1)) { // merge two adjacent dims
        int64_t d = pick(0, rank - 2);
        shape[d] *= shape[d + 1];
        shape.erase(shape.begin() + d + 1);
      } else if (rank >= 1 && l.sizes[0] % 2 == 0 && l.sizes[0] > 0) {
        shape[0] /= 2;
        shape.insert(shape.begin(), 2);
      }
      Shape spelled = shape;
      if (!spelled.empty() && pick(0, 1))
        spelled[pick(0, spelled.size() - 1)] = -1;
      if (l.numel() == 0)
        spelled = shape; // -1 is ambiguous for numel 0
      bool isView = pick(0, 1);
      if (isView && !layout::view(l, spelled))
        return false;
      op =
          isView
              ? b.create<ViewOp>(loc, value, b.getDenseI64ArrayAttr(spelled))
                    .getOperation()
              : b.create<ReshapeOp>(loc, value, b.getDenseI64ArrayAttr(spelled))
                    .getOperation();
      next = oReshape(oracle, shape);
      break;
    }
    case 10: { // diagonal
      if (rank < 2)
        return false;
      int64_t w1, w2;
      int64_t d1 = dim(w1), d2 = dim(w2);
      if (w1 == w2)
        return false;
      int64_t offset = pick(-2, 2);
      op = b.create<DiagonalOp>(loc, value, i64(offset), i64(d1), i64(d2));
      next = oDiagonal(oracle, offset, w1, w2);
      break;
    }
    case 11: { // unfold (overlapping windows)
      if (rank == 0)
        return false;
      int64_t w;
      int64_t d = dim(w);
      int64_t size = pick(0, std::min<int64_t>(l.sizes[w], 3));
      int64_t step = pick(1, 2);
      op = b.create<UnfoldOp>(loc, value, i64(d), i64(size), i64(step));
      next = oUnfold(oracle, w, size, step);
      break;
    }
    case 12: { // flip
      if (rank == 0)
        return false;
      int64_t w;
      Shape dims{dim(w)};
      op = b.create<FlipOp>(loc, value, b.getDenseI64ArrayAttr(dims));
      next = oFlip(oracle, Shape{w});
      break;
    }
    case 13: { // contiguous: a view of a contiguous value, else a copy
      op = b.create<ContiguousOp>(loc, value);
      next = oracle;
      break;
    }
    }
    if (!op)
      return false;
    value = op->getResult(0);
    oracle = std::move(next);
    trace += " -> " + op->getName().getStringRef().str();
    return true;
  }

private:
  mlir::OpBuilder &b;
  std::mt19937_64 &rng;
};

struct Program {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  Nd expected; // storage indices of the chain's end, row-major
  std::string trace;
};

Program buildRandomProgram(mlir::MLIRContext &ctx, uint64_t seed) {
  std::mt19937_64 rng(seed);
  mlir::OpBuilder b(&ctx);
  Program p;
  p.module = mlir::ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(p.module->getBody());
  ChainBuilder chain(b, rng);

  Shape sizes;
  for (int64_t r = chain.pick(0, 4); r > 0; --r)
    sizes.push_back(chain.pick(0, 9) == 0 ? 0 : chain.pick(1, 4));
  layout::Layout rootLayout = layout::contiguous(sizes, chain.pick(0, 3));
  int64_t storageSize =
      rootLayout.offset + std::max<int64_t>(rootLayout.numel(), 1);
  auto f32 = b.getF32Type();
  auto storageType = StorageType::get(&ctx, storageSize, f32);
  auto func = b.create<mlir::func::FuncOp>(
      b.getUnknownLoc(), "chain", b.getFunctionType({storageType}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
  mlir::Value value = b.create<StridedViewOp>(
      b.getUnknownLoc(), StridedTensorType::get(f32, rootLayout),
      func.getArgument(0));
  Nd oracle = materialize(rootLayout);
  p.trace = "root " + layout::formatList(sizes);
  for (int64_t n = chain.pick(1, 8), tries = 0; n > 0 && tries < 64; ++tries)
    if (chain.step(value, oracle, p.trace))
      --n;
  // A compute op over the strided end of the chain, and the chain itself.
  mlir::Value negated = b.create<NegOp>(b.getUnknownLoc(), value);
  b.create<mlir::func::ReturnOp>(b.getUnknownLoc(),
                                 mlir::ValueRange{value, negated});
  func.setType(
      b.getFunctionType({storageType}, {value.getType(), negated.getType()}));
  p.expected = std::move(oracle);
  return p;
}

std::vector<double> evaluate(mlir::ModuleOp module) {
  auto func = *module.getOps<mlir::func::FuncOp>().begin();
  reference::InputGenerator inputs(reference::InputKind::Arange, 0);
  std::vector<reference::RefValue> args;
  for (mlir::Type t : func.getArgumentTypes())
    args.push_back(*inputs.makeArgument(t));
  auto results = reference::evaluate(func, args);
  EXPECT_TRUE(mlir::succeeded(results));
  if (mlir::failed(results))
    return {};
  std::vector<double> out = (*results)[0].elements();
  std::vector<double> neg = (*results)[1].elements();
  out.insert(out.end(), neg.begin(), neg.end());
  return out;
}

std::vector<double> expectedValues(const Nd &oracle) {
  std::vector<double> out(oracle.data.begin(), oracle.data.end());
  for (int64_t i : oracle.data)
    out.push_back(-static_cast<double>(i));
  return out;
}

/// True when every view left is a strided_view read straight off its root.
bool allViewsFolded(mlir::ModuleOp module) {
  bool folded = true;
  module.walk([&](mlir::Operation *op) {
    mlir::Value source = getViewSource(op);
    if (!source)
      return;
    if (!mlir::isa<StridedViewOp>(op) || getViewSource(source.getDefiningOp()))
      folded = false;
  });
  return folded;
}

class ViewChainProperty : public ::testing::Test {
protected:
  ViewChainProperty() {
    ctx.loadDialect<StrataDialect, mlir::func::FuncDialect>();
  }
  mlir::MLIRContext ctx;
};

TEST_F(ViewChainProperty, RandomChainsFoldAndRunExactly) {
  constexpr uint64_t kPrograms = 3000;
  int64_t checkedElements = 0;
  for (uint64_t seed = 0; seed < kPrograms; ++seed) {
    Program p = buildRandomProgram(ctx, seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + p.trace);
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*p.module)));
    std::vector<double> expected = expectedValues(p.expected);
    ASSERT_EQ(evaluate(*p.module), expected) << "as recorded";

    mlir::OwningOpRef<mlir::ModuleOp> folded = p.module->clone();
    mlir::PassManager foldPm(&ctx);
    foldPm.addNestedPass<mlir::func::FuncOp>(createFoldViews());
    ASSERT_TRUE(mlir::succeeded(foldPm.run(*folded)));
    ASSERT_TRUE(allViewsFolded(*folded));
    ASSERT_EQ(evaluate(*folded), expected) << "after fold-views";

    mlir::PassManager pm(&ctx);
    buildStrataPipeline(pm);
    ASSERT_TRUE(mlir::succeeded(pm.run(*p.module)));
    ASSERT_TRUE(mlir::succeeded(mlir::verify(*p.module)));
    ASSERT_EQ(evaluate(*p.module), expected) << "after the pipeline";
    checkedElements += static_cast<int64_t>(expected.size());
  }
  // Guard against a generator that degenerates into empty programs.
  EXPECT_GT(checkedElements, static_cast<int64_t>(kPrograms) * 4);
}

} // namespace
