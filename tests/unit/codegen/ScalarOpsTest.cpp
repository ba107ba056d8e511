//===- ScalarOpsTest.cpp - the scalar math both backends share ------------===//
//
// strata/Target/ScalarOps.h and the runners' identity policy
// (jit/lib/Combiners.h): every op of ScalarOps.def is an arith or math op
// MLIR knows, names a C math function libm has, and is in the lit test
// that runs it through both emitters (tests/lit/Target/scalar-ops.mlir);
// the combiners' identities are the values written out here; the runners
// fill a reducing result exactly when the kernel does not start it.
//
//===----------------------------------------------------------------------===//
#include "strata/Target/ScalarOps.h"
#include "Combiners.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <vector>

using namespace strata;
using namespace strata::codegen;

namespace {

TEST(ScalarOps, EveryRowIsAnArithOrMathOpOfMlir) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::arith::ArithDialect, mlir::math::MathDialect>();
  std::set<std::string> names;
  for (const ScalarOpInfo &info : scalarOps()) {
    EXPECT_TRUE(mlir::RegisteredOperationName::lookup(info.name, &context))
        << info.name.str() << " is no op of the arith or math dialect";
    EXPECT_TRUE(names.insert(info.name.str()).second)
        << info.name.str() << " has two rows";
    EXPECT_EQ(scalarOpInfo(info.name), &info);
  }
  EXPECT_EQ(scalarOpInfo("math.sinh"), nullptr); // not a kernel body's op
}

TEST(ScalarOps, EveryLibmFunctionExistsInBothForms) {
  void *libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(libm, nullptr) << dlerror();
  int withLibm = 0;
  for (const ScalarOpInfo &info : scalarOps()) {
    if (info.libm.empty())
      continue;
    ++withLibm;
    std::string f64 = info.libm.str(), f32 = f64 + "f";
    EXPECT_NE(dlsym(libm, f64.c_str()), nullptr) << info.name.str();
    EXPECT_NE(dlsym(libm, f32.c_str()), nullptr) << info.name.str();
  }
  EXPECT_EQ(withLibm, 24); // the 20 of the math dialect with C's names,
                           // remf, roundeven, absf and powf
  dlclose(libm);
}

// A C math function's semantics are the op's: the functions the table
// names for the ops whose names differ from C's.
TEST(ScalarOps, RenamedFunctionsHaveTheOpsSemantics) {
  EXPECT_EQ(scalarOpInfo("math.roundeven")->libm, "rint");
  EXPECT_EQ(std::rint(2.5), 2.0); // half to even, not away from zero
  EXPECT_EQ(std::rint(-3.5), -4.0);
  EXPECT_EQ(scalarOpInfo("arith.remf")->libm, "fmod");
  EXPECT_EQ(std::fmod(-7.0, 3.0), -1.0); // the dividend's sign
  EXPECT_EQ(scalarOpInfo("math.absf")->libm, "fabs");
  EXPECT_EQ(scalarOpInfo("math.powf")->libm, "pow");
  EXPECT_EQ(scalarOpInfo("math.rsqrt")->libm, ""); // two steps, no function
}

TEST(ScalarOps, TheLitTestRunsEveryOpThroughBothEmitters) {
  std::ifstream in(STRATA_SOURCE_DIR "/tests/lit/Target/scalar-ops.mlir");
  ASSERT_TRUE(in) << "tests/lit/Target/scalar-ops.mlir";
  std::stringstream text;
  text << in.rdbuf();
  for (const ScalarOpInfo &info : scalarOps()) {
    std::string use = " " + info.name.str() + " ";
    EXPECT_NE(text.str().find(use), std::string::npos)
        << info.name.str()
        << " is in ScalarOps.def but no kernel of scalar-ops.mlir uses it";
  }
}

TEST(ScalarOps, CombinerIdentities) {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char *combiner;
    DType dtype;
    bool isFloat;
    double value;
    int64_t integer;
  } cases[] = {
      {"sum", DType::F32, true, 0.0, 0},
      {"prod", DType::F64, true, 1.0, 1},
      {"max", DType::F32, true, -inf, 0},
      {"min", DType::F64, true, inf, 0},
      {"sum", DType::I32, false, 0, 0},
      {"prod", DType::I64, false, 0, 1},
      {"max", DType::I32, false, 0, -2147483648LL},
      {"min", DType::I32, false, 0, 2147483647},
      {"max", DType::I64, false, 0, INT64_MIN},
      {"min", DType::I64, false, 0, INT64_MAX},
      {"sum", DType::Bool, false, 0, 0},
      {"prod", DType::Bool, false, 0, 1},
      {"max", DType::Bool, false, 0, 0}, // false < true
      {"min", DType::Bool, false, 0, 1},
  };
  for (const Case &c : cases) {
    CombinerIdentity id = combinerIdentity(c.combiner, c.dtype);
    SCOPED_TRACE(std::string(c.combiner) + " " +
                 runtime::dtypeInfo(c.dtype).name);
    EXPECT_EQ(id.isFloat, c.isFloat);
    if (c.isFloat)
      EXPECT_EQ(id.value, c.value);
    else
      EXPECT_EQ(id.integer, c.integer);
  }
}

TEST(IdentityPolicy, FilledExactlyWhenTheKernelDoesNotStartTheResult) {
  using jit::detail::ResultStart;
  using jit::detail::runnerFillsIdentity;
  // A result written, not combined, is never filled.
  EXPECT_FALSE(runnerFillsIdentity("", true, ResultStart::FromMemory));
  EXPECT_FALSE(runnerFillsIdentity("", false, ResultStart::InKernel));
  // CPU kernels combine into memory: filled first.
  EXPECT_TRUE(runnerFillsIdentity("sum", true, ResultStart::FromMemory));
  // CUDA kernels and BLAS start at the identity and write every element.
  EXPECT_FALSE(runnerFillsIdentity("max", true, ResultStart::InKernel));
  // No kernel runs (no points): the identity is the result, on both.
  EXPECT_TRUE(runnerFillsIdentity("prod", false, ResultStart::InKernel));
  EXPECT_TRUE(runnerFillsIdentity("min", false, ResultStart::FromMemory));
}

TEST(IdentityPolicy, FillWritesTheIdentityOfEachType) {
  std::vector<float> f(3, 7.0f);
  jit::detail::fillIdentity(f.data(), 3, DType::F32, "max");
  for (float v : f)
    EXPECT_TRUE(std::isinf(v) && v < 0);
  std::vector<int32_t> i(2, 7);
  jit::detail::fillIdentity(i.data(), 2, DType::I32, "min");
  EXPECT_EQ(i[1], 2147483647);
  std::vector<int64_t> l(2, 7);
  jit::detail::fillIdentity(l.data(), 2, DType::I64, "prod");
  EXPECT_EQ(l[0], 1);
  unsigned char b[2] = {7, 7};
  jit::detail::fillIdentity(b, 2, DType::Bool, "min");
  EXPECT_EQ(b[0], 1); // true, as one byte
  jit::detail::fillIdentity(b, 2, DType::Bool, "sum");
  EXPECT_EQ(b[1], 0);
}

TEST(IdentityPolicy, BoolPartialsMergeAsTheKernelsCombineI1) {
  // Kernels combine i1 in one bit: a sum is an or, a prod an and. The host
  // merge must write true as 1, never 2 (a bool byte of 2 is neither).
  unsigned char into[4] = {1, 1, 0, 0}, from[4] = {1, 0, 1, 0};
  jit::detail::mergePartial(DType::Bool, into, from, 4, "sum");
  EXPECT_EQ(std::vector<int>(into, into + 4), (std::vector<int>{1, 1, 1, 0}));
  unsigned char p[4] = {1, 1, 0, 0};
  jit::detail::mergePartial(DType::Bool, p, from, 4, "prod");
  EXPECT_EQ(std::vector<int>(p, p + 4), (std::vector<int>{1, 0, 0, 0}));
  unsigned char m[4] = {1, 1, 0, 0};
  jit::detail::mergePartial(DType::Bool, m, from, 4, "min");
  EXPECT_EQ(std::vector<int>(m, m + 4), (std::vector<int>{1, 0, 0, 0}));
}

} // namespace
