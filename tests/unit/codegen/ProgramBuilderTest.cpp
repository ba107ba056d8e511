//===- ProgramBuilderTest.cpp - strata programs built op by op ------------===//
//
// ir::Program (strata/IR/ProgramBuilder.h) against MLIR's own parser: a
// program built op by op must be the module the same program written as
// text parses to; its key must tell apart what differs and nothing else;
// bad programs give the verifier's diagnostics.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/Parse.h"
#include "strata/IR/ProgramModule.h"
#include "strata/IR/StrataDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace strata;
using ir::Attribute;
using ir::Element;
using ir::Program;
using ir::ValueType;

namespace {

ValueType tensor(layout::Shape sizes, Element e = Element::F32) {
  return ValueType::tensor(layout::contiguous(sizes), e);
}

std::string printed(mlir::ModuleOp m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os);
  return os.str();
}

/// A program using every kind of attribute, a storage argument, a view, a
/// write and a recorded value.
Program sample(double fillValue = 2.5, int64_t offset = 1) {
  Program p;
  Program::Value s = p.argument(ValueType::storageOf(8, Element::F32));
  Program::Value x = p.argument(tensor({2, 3}));
  Program::Value v = p.stridedView(s, {{2, 3}, {3, 1}, offset});
  Program::Value c =
      p.op("fill", {}, tensor({}), {Attribute::f64("value", fillValue)});
  Program::Value k =
      p.op("fill", {}, tensor({}, Element::I64), {Attribute::i64("value", 7)});
  Program::Value a = p.op("add", {x, v}, tensor({2, 3}));
  Program::Value m = p.op("mul", {a, c}, tensor({2, 3}));
  Program::Value r =
      p.op("sum", {m}, tensor({2, 1}),
           {Attribute::array("dims", {1}), Attribute::unit("keepdim")});
  Program::Value q =
      p.op("scan", {m}, tensor({2, 3}),
           {Attribute::i64("dim", 1), Attribute::string("combiner", "sum")});
  Program::Value w =
      p.op("write", {q, v}, ValueType::storageOf(8, Element::F32));
  Program::Value e = p.op("exp", {x}, tensor({2, 3}));
  Program::Value d =
      p.op("recorded", {e, x}, tensor({2, 3}), {Attribute::unit("value_only")});
  p.returns({r, w, d, k});
  p.functionAttribute(Attribute::array("strata.wrt", {1}));
  return p;
}

const char *kSampleText = R"(
func.func @main(%s: !strata.storage<8xf32>,
                %x: !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>)
    -> (!strata.tensor<2x1xf32, strided<[1, 1], offset: 0>>,
        !strata.storage<8xf32>,
        !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>,
        !strata.tensor<i64, strided<[], offset: 0>>)
    attributes {strata.wrt = array<i64: 1>} {
  %v = strata.strided_view %s : !strata.storage<8xf32>
      -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 1>>
  %c = strata.fill 2.5 : !strata.tensor<f32, strided<[], offset: 0>>
  %k = strata.fill 7 : !strata.tensor<i64, strided<[], offset: 0>>
  %a = strata.add %x, %v : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>,
      !strata.tensor<2x3xf32, strided<[3, 1], offset: 1>>
      -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %m = strata.mul %a, %c : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>,
      !strata.tensor<f32, strided<[], offset: 0>>
      -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %r = strata.sum %m dims [1] keepdim
      : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
      -> !strata.tensor<2x1xf32, strided<[1, 1], offset: 0>>
  %q = strata.scan %m dim 1 "sum"
      : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
      -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %w = strata.write %q into %v
      : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>,
        !strata.tensor<2x3xf32, strided<[3, 1], offset: 1>>
      -> !strata.storage<8xf32>
  %e = strata.exp %x : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
      -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %d = strata.recorded %e as %x {value_only}
      : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  return %r, %w, %d, %k : !strata.tensor<2x1xf32, strided<[1, 1], offset: 0>>,
      !strata.storage<8xf32>,
      !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>,
      !strata.tensor<i64, strided<[], offset: 0>>
}
)";

TEST(ProgramBuilder, BuildsTheModuleItsTextParsesTo) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<ir::StrataDialect, mlir::func::FuncDialect>();
  auto parsed = ir::parseSourceString(kSampleText, &context);
  ASSERT_TRUE(parsed);
  std::string error;
  auto built = ir::buildModule(sample(), context, error);
  ASSERT_TRUE(built) << error;
  EXPECT_EQ(printed(*built), printed(*parsed));
  // print() is that module's text.
  EXPECT_EQ(sample().print(false), printed(*parsed));
}

TEST(ProgramBuilder, KeyTellsApartWhatDiffersOnly) {
  EXPECT_EQ(sample().key(), sample().key());
  EXPECT_NE(sample(2.5).key(), sample(3.5).key());       // an attribute value
  EXPECT_NE(sample(2.5, 1).key(), sample(2.5, 2).key()); // a layout's offset
  // An operand, an element type, an op's name, a unit attribute.
  auto one = [](Element e, const char *op, bool keepdim, bool swap) {
    Program p;
    Program::Value a = p.argument(tensor({4}, e));
    Program::Value b = p.argument(tensor({4}, e));
    Program::Value c = p.op(op, {swap ? b : a, a}, tensor({4}, e));
    std::vector<Attribute> attrs{Attribute::array("dims", {0})};
    if (keepdim)
      attrs.push_back(Attribute::unit("keepdim"));
    p.returns({p.op("sum", {c},
                    tensor(keepdim ? layout::Shape{1} : layout::Shape{}, e),
                    std::move(attrs))});
    return p.key();
  };
  std::string base = one(Element::F32, "add", false, false);
  EXPECT_NE(base, one(Element::F64, "add", false, false));
  EXPECT_NE(base, one(Element::F32, "mul", false, false));
  EXPECT_NE(base, one(Element::F32, "add", true, false));
  EXPECT_NE(base, one(Element::F32, "add", false, true));
  // Source positions are not structure.
  Program p, q;
  for (Program *r : {&p, &q}) {
    Program::Value a = r->argument(tensor({4}));
    r->returns({r->op("neg", {a}, tensor({4}), {},
                      {"user.cpp", r == &p ? 3u : 9u, 1})});
  }
  EXPECT_EQ(p.key(), q.key());
}

TEST(ProgramBuilder, PrintsSourcePositions) {
  Program p;
  Program::Value a = p.argument(tensor({4}));
  p.returns({p.op("neg", {a}, tensor({4}), {}, {"model.cpp", 42, 7})});
  std::string text = p.print();
  EXPECT_NE(text.find("loc(\"model.cpp\":42:7)"), std::string::npos) << text;
  EXPECT_EQ(p.print(false).find("model.cpp"), std::string::npos);
}

TEST(ProgramBuilder, AnInvalidProgramGivesTheVerifiersDiagnostics) {
  // add's result laid out unlike its operands: the layout algebra's
  // result layout is [1, 2], not the transposed [1, 4] given here.
  Program p;
  Program::Value a = p.argument(tensor({2, 2}));
  p.returns(
      {p.op("add", {a, a}, ValueType::tensor({{2, 2}, {1, 4}, 0}, Element::F32),
            {}, {"user.cpp", 5, 2})});
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  std::string error;
  EXPECT_FALSE(ir::buildModule(p, context, error));
  EXPECT_NE(error.find("not valid strata IR"), std::string::npos) << error;
  EXPECT_NE(error.find("user.cpp\":5:2"), std::string::npos) << error;
  EXPECT_NE(error.find("strata.add"), std::string::npos) << error;
  // Printed for a bug report: the diagnostics, then the generic form.
  std::string text = p.print();
  EXPECT_NE(text.find("not valid strata IR"), std::string::npos) << text;
  EXPECT_NE(text.find("\"strata.add\""), std::string::npos) << text;
}

TEST(ProgramBuilder, AnUnknownOpIsAnError) {
  Program p;
  Program::Value a = p.argument(tensor({4}));
  p.returns({p.op("frobnicate", {a}, tensor({4}))});
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  std::string error;
  EXPECT_FALSE(ir::buildModule(p, context, error));
  EXPECT_EQ(error, "no op strata.frobnicate");
}

TEST(ProgramBuilder, ElementNamesRoundTrip) {
  for (Element e : {Element::F32, Element::F64, Element::I32, Element::I64,
                    Element::Bool}) {
    Element back = Element::F32;
    ASSERT_TRUE(runtime::dtypeOfIr(runtime::dtypeInfo(e).ir, back));
    EXPECT_EQ(back, e);
  }
  Element none;
  EXPECT_FALSE(runtime::dtypeOfIr("bf16", none));
  EXPECT_EQ(ir::internName(std::string("sum")), ir::internName("sum"));
}

} // namespace
