//===- EvaluatorTest.cpp - the reference evaluator's API ------------------===//
//
// What the lit tests (tests/lit/Reference) can't see through strata-run's
// 6-digit printing: exact rounding, buffer sharing and immutability, the
// pinned input stream, argument checking and the printing edge cases.
//
//===----------------------------------------------------------------------===//
#include "strata/Reference/Evaluator.h"

#include "strata/IR/StrataDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace strata::reference;

namespace {
class EvaluatorTest : public ::testing::Test {
protected:
  EvaluatorTest() {
    context.loadDialect<strata::ir::StrataDialect, func::FuncDialect>();
  }

  /// Parses `source` (one function) and returns it; fails the test if the
  /// IR does not parse or verify.
  func::FuncOp parse(const char *source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << source;
    if (!module)
      return {};
    return *module->getOps<func::FuncOp>().begin();
  }

  /// Evaluates `func`, collecting diagnostics in `errors`.
  FailureOr<std::vector<RefValue>> run(func::FuncOp func,
                                       ArrayRef<RefValue> args) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      errors += d.str() + "\n";
      return success();
    });
    return evaluate(func, args);
  }

  Type f32() { return FloatType::getF32(&context); }
  Type i32() { return IntegerType::get(&context, 32); }
  Type i1() { return IntegerType::get(&context, 1); }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string errors;
};

const char *kWrite = R"mlir(
func.func @w(%s: !strata.storage<6xf32>) -> (!strata.storage<6xf32>, !strata.tensor<2xf32, strided<[3], offset: 1>>) {
  %d = strata.strided_view %s : !strata.storage<6xf32> -> !strata.tensor<2xf32, strided<[3], offset: 1>>
  %v = strata.fill 0.1 : !strata.tensor<f32, strided<[], offset: 0>>
  %s1 = strata.write %v into %d : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<2xf32, strided<[3], offset: 1>> -> !strata.storage<6xf32>
  return %s1, %d : !strata.storage<6xf32>, !strata.tensor<2xf32, strided<[3], offset: 1>>
}
)mlir";
} // namespace

TEST_F(EvaluatorTest, RoundsToTheElementType) {
  EXPECT_EQ(roundToElementType(0.1, f32()), static_cast<double>(0.1f));
  EXPECT_NE(roundToElementType(0.1, f32()), 0.1);
  EXPECT_EQ(roundToElementType(0.1, FloatType::getF64(&context)), 0.1);
  EXPECT_EQ(roundToElementType(-2.7, i32()), -2);
  EXPECT_EQ(roundToElementType(2.7, i32()), 2);
  EXPECT_EQ(roundToElementType(2147483648.0, i32()), -2147483648.0);
  EXPECT_EQ(roundToElementType(4294967298.0, i32()), 2);
  EXPECT_EQ(roundToElementType(NAN, i32()), 0);
  EXPECT_EQ(roundToElementType(1e300, IntegerType::get(&context, 64)),
            static_cast<double>(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(roundToElementType(0.25, i1()), 1);
  EXPECT_EQ(roundToElementType(-0.0, i1()), 0);
  EXPECT_EQ(roundToElementType(NAN, i1()), 1);
}

TEST_F(EvaluatorTest, RandomInputsFollowTheDocumentedStream) {
  // SplitMix64's published outputs for seed 0.
  InputGenerator g(InputKind::Random, 0);
  EXPECT_EQ(g.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(g.next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(g.next(), 0x06C45D188009454Full);

  std::string whyNot;
  InputGenerator floats(InputKind::Random, 0);
  auto arg = floats.makeArgument(
      strata::ir::StorageType::get(&context, 2, f32()), whyNot);
  ASSERT_TRUE(succeeded(arg));
  double u = static_cast<double>(0xE220A8397B1DCDAFull >> 11) * 0x1p-53;
  EXPECT_EQ(arg->buffer->data[0],
            static_cast<double>(static_cast<float>(-2.0 + 4.0 * u)));
  for (double x : arg->buffer->data)
    EXPECT_TRUE(x >= -2 && x < 2);

  InputGenerator ints(InputKind::Random, 0);
  auto iarg = ints.makeArgument(
      strata::ir::StorageType::get(&context, 1, i32()), whyNot);
  ASSERT_TRUE(succeeded(iarg));
  EXPECT_EQ(iarg->buffer->data[0],
            static_cast<double>(
                static_cast<int64_t>(0xE220A8397B1DCDAFull % 11) - 5));
}

TEST_F(EvaluatorTest, ArangeTensorArgumentsCoverTheirExtent) {
  std::string whyNot;
  InputGenerator g(InputKind::Arange, 0);
  auto type =
      strata::ir::StridedTensorType::get(&context, {2, 3}, f32(), {1, 2}, 3);
  auto arg = g.makeArgument(type, whyNot);
  ASSERT_TRUE(succeeded(arg));
  EXPECT_EQ(arg->buffer->data.size(), 9u); // 3 + 1*1 + 2*2 + 1
  EXPECT_EQ(arg->elements(), (std::vector<double>{3, 5, 7, 4, 6, 8}));
  EXPECT_TRUE(failed(g.makeArgument(f32(), whyNot)));
  EXPECT_NE(whyNot.find("expected a strata storage or tensor"),
            std::string::npos);
}

TEST_F(EvaluatorTest, WriteMakesANewVersionAndViewsShareBuffers) {
  func::FuncOp func = parse(kWrite);
  ASSERT_TRUE(func);
  RefValue s = RefValue::storage(f32(), {0, 1, 2, 3, 4, 5});
  auto results = run(func, {s});
  ASSERT_TRUE(succeeded(results)) << errors;
  ASSERT_EQ(results->size(), 2u);
  const RefValue &s1 = (*results)[0], &view = (*results)[1];
  double tenth = static_cast<double>(0.1f);
  EXPECT_TRUE(s1.isStorage);
  EXPECT_EQ(s1.buffer->data, (std::vector<double>{0, tenth, 2, 3, tenth, 5}));
  // The argument's buffer is the old version, untouched, and the view of it
  // shares it rather than copying.
  EXPECT_EQ(s.buffer->data, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(view.buffer.get(), s.buffer.get());
  EXPECT_NE(s1.buffer.get(), s.buffer.get());
  EXPECT_EQ(view.elements(), (std::vector<double>{1, 4}));
}

TEST_F(EvaluatorTest, RejectsMismatchedArguments) {
  func::FuncOp func = parse(kWrite);
  ASSERT_TRUE(func);
  EXPECT_TRUE(failed(run(func, {})));
  EXPECT_NE(errors.find("expected 1 arguments, got 0"), std::string::npos)
      << errors;
  errors.clear();
  EXPECT_TRUE(failed(run(func, {RefValue::storage(f32(), {0, 1, 2})})));
  EXPECT_NE(errors.find("argument 0 does not match its type"),
            std::string::npos)
      << errors;
  errors.clear();
  EXPECT_TRUE(
      failed(run(func, {RefValue::fresh(f32(), {6}, {0, 1, 2, 3, 4, 5})})));
  EXPECT_NE(errors.find("argument 0 does not match"), std::string::npos);
  errors.clear();
  EXPECT_TRUE(failed(run(func, {RefValue{}})));
  EXPECT_NE(errors.find("argument 0 does not match"), std::string::npos);
}

TEST_F(EvaluatorTest, RejectsTensorArgumentsOutsideTheirBuffer) {
  // A type whose layout addresses storage before index 0 cannot even be
  // written (the type verifier rejects it: invalid/compute.mlir); a valid
  // type over a buffer that is too short is the evaluator's to refuse.
  func::FuncOp func = parse(R"mlir(
func.func @f(%t: !strata.tensor<3xf32, strided<[-1], offset: 2>>) -> !strata.tensor<3xf32, strided<[-1], offset: 2>> {
  return %t : !strata.tensor<3xf32, strided<[-1], offset: 2>>
}
)mlir");
  ASSERT_TRUE(func);
  std::string whyNot;
  InputGenerator g(InputKind::Arange, 0);
  FailureOr<RefValue> arg = g.makeArgument(func.getArgumentTypes()[0], whyNot);
  ASSERT_TRUE(succeeded(arg)) << whyNot;
  EXPECT_EQ(arg->buffer->data.size(), 3u);
  RefValue t = RefValue::storage(f32(), {0, 1});
  t.layout = {{3}, {-1}, 2};
  t.isStorage = false;
  EXPECT_TRUE(failed(run(func, {t})));
  EXPECT_NE(errors.find("argument 0 addresses storage indices [0, 2], "
                        "outside its root of 2 elements"),
            std::string::npos)
      << errors;
}

TEST_F(EvaluatorTest, PrintsEdgeCases) {
  EXPECT_EQ(formatElement(-0.0, f32()), "-0");
  EXPECT_EQ(formatElement(1e6, f32()), "1e+06");
  EXPECT_EQ(formatElement(123456.7, f32()), "123457");
  EXPECT_EQ(formatElement(-std::nan(""), f32()), "nan");
  EXPECT_EQ(formatElement(-INFINITY, f32()), "-inf");
  EXPECT_EQ(formatElement(1, i1()), "true");
  EXPECT_EQ(formatElement(-7, i32()), "-7");

  EXPECT_EQ(formatElements(RefValue::fresh(f32(), {}, {2.5})), "2.5");
  EXPECT_EQ(formatElements(RefValue::fresh(f32(), {2, 0}, {})), "[ [], [] ]");
  EXPECT_EQ(formatElements(RefValue::fresh(f32(), {0, 3}, {})), "[]");
  EXPECT_EQ(formatElements(RefValue::fresh(i32(), {2, 1, 2}, {1, 2, 3, 4})),
            "[ [ [1, 2] ], [ [3, 4] ] ]");
  RefValue v = RefValue::fresh(f32(), {3}, {1, 2, 3});
  EXPECT_EQ(formatDescription(v), "f32 sizes [3] strides [1] offset 0");
  EXPECT_EQ(formatDescription(RefValue::storage(i1(), {1, 0})),
            "storage i1 size 2");
}
