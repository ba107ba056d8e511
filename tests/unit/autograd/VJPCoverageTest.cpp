//===- VJPCoverageTest.cpp - every op that takes floats has a VJP ---------===//
//
// An op without a VJP builds and runs forward, and fails only when a
// backward() reaches it. This test walks every op the dialect registers (a
// new op is among them) and fails naming each one that takes tensors and
// has no VJPOpInterface: its rule is missing (StrataVJP.cpp for binary and
// other ops, where a `rule(XOp, ...)` is attached by its presence; the
// `vjp` field for unary ops). Ops that take no float tensors (integral and
// comparison ops, by their ODS dtype rule) and the few that are not
// differentiable by design (listed below with the reason) are exempt.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataAutodiff.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OpDefinition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace mlir;
using namespace strata::ir;

namespace {

/// Ops that read tensors and have no VJP by design, with the reason.
const std::map<std::string, std::string> kNotDifferentiable = {
    {"strata.detach", "detach() cuts the gradient: strata-differentiate "
                      "passes none through it"},
    {"strata.recorded", "strata-differentiate gives its gradient to its "
                        "recompute operand itself"},
    {"strata.kernel", "fused kernels exist only after strata-fuse, which "
                      "runs after strata-differentiate"},
    {"strata.yield", "a kernel's terminator"},
};

/// Whether registered op `op` is an elementwise op whose ODS dtype rule
/// admits no float tensor (Integral) or whose result is i1 (a comparison).
bool takesNoFloats(RegisteredOperationName op) {
  StringRef name = op.getStringRef().split('.').second; // no "strata."
  const ElementwiseDTypes *d = elementwiseDTypes(name.str());
  return d && (d->compare || d->rule == DTypeRule::Integral);
}

TEST(VJPCoverage, EveryOpThatTakesFloatTensorsHasAVJP) {
  MLIRContext context;
  context.loadDialect<StrataDialect>();
  std::vector<std::string> missing;
  int checked = 0;
  for (RegisteredOperationName op : context.getRegisteredOperations()) {
    if (op.getDialectNamespace() != "strata" ||
        op.hasTrait<OpTrait::ZeroOperands>())
      continue; // fill, arange: nothing to differentiate with respect to
    ++checked;
    std::string name = op.getStringRef().str();
    if (op.hasInterface<VJPOpInterface>() || takesNoFloats(op) ||
        kNotDifferentiable.count(name))
      continue;
    missing.push_back(name);
  }
  std::sort(missing.begin(), missing.end());
  std::string list;
  for (const std::string &name : missing)
    list += "\n  " + name;
  EXPECT_TRUE(missing.empty())
      << "these ops take float tensors and have no VJP, so a backward() "
         "through one fails with \"has no VJP\":"
      << list
      << "\nwrite its rule: `vjp` in StrataUnaryOps.td for a unary op, "
         "`rule(XOp, GradBuilder &, ArrayRef<Value>, Out &)` in "
         "codegen/lib/IR/StrataVJP.cpp for the others (attached by its "
         "presence), or list the op in kNotDifferentiable with the reason";
  EXPECT_GT(checked, 60) << "the dialect's ops were not found";
}

TEST(VJPCoverage, ExemptOpsExistAndHaveNoVJP) {
  MLIRContext context;
  context.loadDialect<StrataDialect>();
  for (const auto &[name, why] : kNotDifferentiable) {
    auto op = RegisteredOperationName::lookup(name, &context);
    ASSERT_TRUE(op.has_value()) << name << " is no op of the dialect any more: "
                                << "delete its line";
    EXPECT_FALSE(op->hasInterface<VJPOpInterface>())
        << name << " has a VJP now: delete its line";
  }
}

/// The ODS dtype rules the DSL reads (strata/IR/OpDTypes.h) are the ones
/// the ops declare: a float-only op is refused integers by the verifier.
TEST(VJPCoverage, DTypeRulesByName) {
  ASSERT_NE(elementwiseDTypes("atan2"), nullptr);
  EXPECT_EQ(elementwiseDTypes("atan2")->rule, DTypeRule::Float);
  EXPECT_EQ(elementwiseDTypes("div")->rule, DTypeRule::Float);
  EXPECT_EQ(elementwiseDTypes("sub")->rule, DTypeRule::Number);
  EXPECT_EQ(elementwiseDTypes("add")->rule, DTypeRule::Any);
  EXPECT_EQ(elementwiseDTypes("bitwise_or")->rule, DTypeRule::Integral);
  EXPECT_TRUE(elementwiseDTypes("le")->compare);
  EXPECT_FALSE(elementwiseDTypes("add")->compare);
  EXPECT_EQ(elementwiseDTypes("exp")->rule, DTypeRule::Float);
  EXPECT_EQ(elementwiseDTypes("bitwise_not")->rule, DTypeRule::Integral);
  EXPECT_EQ(elementwiseDTypes("matmul"), nullptr); // not elementwise
  EXPECT_EQ(elementwiseDTypes("no_such_op"), nullptr);
}

} // namespace
