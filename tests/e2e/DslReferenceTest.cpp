//===- DslReferenceTest.cpp - the DSL's results against the reference evaluator
//===//
//
// Each case builds a long chain (views, compute, in-place writes through
// views) from arange/full only, so the recorded program has no arguments;
// the program dump_ir() returns is run by the reference evaluator and its
// last result (the requested tensor's root) must equal what the DSL
// computed through the JIT.
//
//===----------------------------------------------------------------------===//
#include "strata/JIT/Jit.h"
#include "strata/Reference/Evaluator.h"
#include <strata/strata.h>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <functional>
#include <gtest/gtest.h>

using namespace strata;

namespace {
void expectMatchesReference(const std::function<Tensor()> &build) {
  Tensor y = build().contiguous();
  std::string ir = dump_ir({y}).before;
  ASSERT_FALSE(ir.empty());
  mlir::MLIRContext context;
  jit::loadDialects(context);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(ir, &context);
  ASSERT_TRUE(module) << ir;
  auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
  auto results = reference::evaluate(func, {});
  ASSERT_TRUE(mlir::succeeded(results)) << ir;
  std::vector<double> expected = results->back().elements();
  std::vector<double> got = y.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size()) << ir;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], 1e-5 * (1 + std::abs(expected[i])))
        << "element " << i << "\n"
        << ir;
}
} // namespace

TEST(DslE2E, LongViewAndComputeChain) {
  expectMatchesReference([] {
    Tensor a = arange(24, kFloat32).view({2, 3, 4});
    Tensor b = a.permute({2, 0, 1}).flip({0}).slice(2, 1, 3);
    return (b * 0.5 + a.transpose(0, 2).narrow(1, 0, 2)).relu().sum({1}) -
           b.amax({1});
  });
}

TEST(DslE2E, InPlaceThroughViewsOfPendingRoot) {
  expectMatchesReference([] {
    Tensor z = zeros({4, 5}, kFloat64);
    z.select(1, 2).add_(arange(4, kFloat64));
    z.t()[0].fill_(3.0);
    z.slice(0, 1, 3).mul_(2);
    return z * z.diagonal().sum();
  });
}

TEST(DslE2E, DtypesAndPromotion) {
  expectMatchesReference([] {
    Tensor i = arange(12, kInt32).view({3, 4});
    Tensor f = full({4}, 0.25);
    return where(i > 5, i + f, (i * 2).to(kFloat32)).mean({0}, true);
  });
}

TEST(DslE2E, MatmulOfViews) {
  expectMatchesReference([] {
    Tensor a = arange(12, kFloat32).view({3, 4});
    return a.matmul(a.t().flip({1})) + a.sum();
  });
}

TEST(DslE2E, ZeroSize) {
  Tensor e = zeros({0, 3});
  EXPECT_EQ((e + 1).sum({0}).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(e.t().sizes(), (Shape{3, 0}));
}
