//===- OpsErrorTest.cpp - the composite ops' errors name the user's line --===//
//
// Each statement raises a strata::Error whose message contains PyTorch
// 1.13's text (checked with the interpreter for the cases PyTorch has) and
// whose location is this file at that statement's line, not a strata
// source file.
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

using namespace strata;
namespace F = strata::nn::functional;

namespace {

struct ErrorCase {
  int line;
  std::function<void()> raise;
  const char *message;
  bool hinted; ///< the error has a "how to fix" hint
};

#define ERR(message, ...)                                                      \
  ErrorCase {                                                                  \
    __LINE__, [&] { __VA_ARGS__; }, message, true                              \
  }
/// An error of an op this file does not add (no hint is required).
#define ERR_NOHINT(message, ...)                                               \
  ErrorCase {                                                                  \
    __LINE__, [&] { __VA_ARGS__; }, message, false                             \
  }

TEST(OpsErrors, MessagesAndUserLocations) {
  Tensor x = randn({2, 3});
  Tensor i = arange(6).view({2, 3});
  Tensor b = i > 2;
  Tensor z = full({}, 1.5);
  Tensor e0 = empty({0});
  Tensor row = randn({2, 0});
  const ErrorCase cases[] = {
      ERR("torch.cat(): expected a non-empty list of Tensors", cat({})),
      ERR("Sizes of tensors must match except in dimension 1. Expected size 2 "
          "but got size 3 for tensor number 1 in the list.",
          cat({x, randn({3, 3})}, 1)),
      ERR("Tensors must have same number of dimensions: got 2 and 3",
          cat({x, randn({2, 3, 1})})),
      ERR("zero-dimensional tensor (at position 0) cannot be concatenated",
          cat({z, z})),
      ERR("cat: Dimension out of range (expected to be in range of [-2, 1], "
          "but got 2)",
          cat({x, x}, 2)),
      ERR("stack expects a non-empty TensorList", stack({})),
      ERR("stack expects each tensor to be equal size, but got [2, 3] at "
          "entry 0 and [2, 4] at entry 1",
          stack({x, randn({2, 4})})),
      ERR("stack: Dimension out of range (expected to be in range of [-3, "
          "2], but got 3)",
          stack({x, x}, 3)),
      ERR("split expects split_size be non-negative, but got split_size=-1",
          x.split(-1)),
      ERR("split_size can only be 0 if dimension size is 0, but got "
          "dimension size of 2",
          x.split(0)),
      ERR("split_with_sizes expects split_sizes to sum exactly to 3 (input "
          "tensor's size at dimension 1), but got split_sizes=[1, 1]",
          x.split({1, 1}, 1)),
      ERR("split_with_sizes expects split_sizes have only non-negative "
          "entries, but got split_sizes=[1, -1, 1]",
          x.split({1, -1, 1}, 1)),
      ERR("split expects at least a 1-dimensional tensor", z.split(1)),
      ERR("chunk expects `chunks` to be greater than 0, got: 0", x.chunk(0)),
      ERR("chunk expects at least a 1-dimensional tensor", z.chunk(2)),
      ERR("unbind: Dimension out of range (expected to be in range of [-2, "
          "1], but got 2)",
          x.unbind(2)),
      ERR("Dimension specified as 0 but tensor has no dimensions", z.unbind(0)),
      ERR("Number of dimensions of repeat dims can not be smaller than number "
          "of dimensions of tensor",
          x.repeat({2})),
      ERR("Trying to create tensor with negative dimension -2: [-2, 6]",
          x.repeat({-1, 2})),
      ERR("shifts and dimensions must align. shifts: 2, dims:1",
          x.roll({1, 2}, {0})),
      ERR("roll: Dimension out of range (expected to be in range of [-2, 1], "
          "but got 3)",
          x.roll({1}, {3})),
      ERR("`shifts` required", x.roll(Shape{}, Shape{})),
      ERR("Dimension specified as 0 but tensor has no dimensions",
          z.roll(1, 0)),
      ERR("Dimension specified as -2 but tensor has no dimensions", z.tril()),
      ERR("Dimension out of range (expected to be in range of [-1, 0], but "
          "got -2)",
          arange(3).triu()),
      ERR("one_hot is only applicable to index tensor.", one_hot(x)),
      ERR("one_hot is only applicable to index tensor.",
          F::one_hot(i.to(kInt32), 6)),
      ERR("Class values must be smaller than num_classes.",
          one_hot(i.eval(), 3)),
      ERR("Class values must be non-negative.", one_hot(i.neg().eval())),
      ERR("Class values must be smaller than num_classes.", one_hot(i, -2)),
      ERR("Can not infer total number of classes from empty tensor.",
          one_hot(empty({0}, kInt64))),
      ERR("n must be greater or equal to 0, got -1", eye(-1)),
      ERR("m must be greater or equal to 0, got -1", eye(2, -1)),
      ERR("number of steps must be non-negative", linspace(0, 1, -1)),
      ERR("\"linspace_cpu\" not implemented for 'Bool'",
          linspace(0, 1, 5, kBool)),
      ERR("number of steps must be non-negative", logspace(0, 2, -3)),
      ERR("\"logspace_cpu\" not implemented for 'Bool'",
          logspace(0, 2, 3, 10.0, kBool)),
      ERR("std and var only support floating point and complex dtypes",
          i.var()),
      ERR("std and var only support floating point and complex dtypes",
          b.std({0})),
      ERR("var: Dimension out of range (expected to be in range of [-2, 1], "
          "but got 2)",
          x.var(2)),
      ERR("dim 0 appears multiple times in the list of dims", x.var({0, 0})),
      ERR("norm(): input dtype should be either floating point or complex. "
          "Got Long instead.",
          i.norm()),
      ERR("norm(): input dtype should be either floating point or complex. "
          "Got Bool instead.",
          b.norm(1)),
      ERR("dim 0 appears multiple times in the list of dims",
          x.norm(2, {0, 0})),
      ERR("logsumexp: Dimension out of range", x.logsumexp(2)),
      ERR("argmax(): Expected reduction dim 1 to have non-zero size.",
          row.argmax(1)),
      ERR("argmax(): Expected reduction dim to be specified for "
          "input.numel() == 0.",
          row.argmax()),
      ERR("argmin(): Expected reduction dim to be specified for "
          "input.numel() == 0.",
          e0.argmin()),
      ERR("\"argmax_cpu\" not implemented for 'Bool'", b.argmax()),
      ERR("\"argmin_cpu\" not implemented for 'Bool'", b.argmin(1)),
      ERR("argmax: Dimension out of range (expected to be in range of [-2, "
          "1], but got 2)",
          x.argmax(2)),
      ERR("max(): Expected reduction dim 1 to have non-zero size.", row.max(1)),
      ERR("min(): Expected reduction dim 1 to have non-zero size.", row.min(1)),
      ERR("max: Dimension out of range (expected to be in range of [-2, 1], "
          "but got 2)",
          x.max(2)),
      ERR("max(): Expected reduction dim to be specified for input.numel() "
          "== 0. Specify the reduction dim with the 'dim' argument.",
          row.max()),
      ERR("any: Dimension out of range (expected to be in range of [-2, 1], "
          "but got 2)",
          x.any(2)),
      ERR("all: Dimension out of range", x.all(-3)),
      ERR("result type torch.float32 can't be cast to the desired output "
          "type torch.int64",
          i += x),
      ERR("result type torch.float32 can't be cast to the desired output "
          "type torch.int64",
          i *= 2.5),
      ERR("The size of tensor a (3) must match the size of tensor b (4) at "
          "non-singleton dimension 1",
          x -= randn({2, 4})),
      // Numbers converted to the result type raise where they overflow it,
      // as PyTorch's checked conversion (x + 1e300 does not: a wrapped
      // number is no checked Scalar there).
      ERR("where: value cannot be converted to type int without overflow",
          where(b, i.to(kInt32), 3000000000LL)),
      ERR("where: value cannot be converted to type float without overflow",
          where(b, x, 1e300)),
      ERR("where: value cannot be converted to type float without overflow",
          where(b, 1e300, 2.0)),
      ERR("scatter: value cannot be converted to type int without overflow",
          i.to(kInt32).scatter(1, zeros({2, 1}, kInt64), 3000000000LL)),
      ERR("scatter: value cannot be converted to type float without overflow",
          x.scatter(1, zeros({2, 1}, kInt64), 1e300)),
      ERR("index_add: value cannot be converted to type float without "
          "overflow",
          x.index_add(0, zeros({1}, kInt64), ones({1, 3}), 1e300)),
      ERR("lerp: value cannot be converted to type float without overflow",
          x.lerp(x, 1e300)),
      ERR_NOHINT("sum: Dimension out of range", x.sum(2)),
      ERR_NOHINT("mean: Dimension out of range", x.mean(-3, true)),
  };
  for (const ErrorCase &c : cases) {
    SCOPED_TRACE(c.message);
    try {
      c.raise();
      ADD_FAILURE() << "line " << c.line << ": no error; expected "
                    << c.message;
    } catch (const Error &e) {
      EXPECT_NE(e.message().find(c.message), std::string::npos)
          << "line " << c.line << ": " << e.what();
      std::string want = "OpsErrorTest.cpp:" + std::to_string(c.line);
      EXPECT_NE(e.where().find(want), std::string::npos)
          << "line " << c.line << ": located at " << e.where();
      if (c.hinted) {
        EXPECT_FALSE(e.hint().empty()) << "line " << c.line << ": no hint";
      }
    }
  }
}

// An out-of-range index of a pending tensor is not evaluated for the check
// (documented): its row is all zeros.
TEST(OpsErrors, OneHotOfPendingIndicesIsNotChecked) {
  Tensor pending = arange(3) * 2; // 0, 2, 4: 4 is out of range for 3
  ASSERT_FALSE(pending.is_materialized());
  Tensor r = one_hot(pending, 3);
  EXPECT_EQ(r.to_vector<int64_t>(),
            (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 0, 0}));
}

// The overloads resolve as documented in Tensor.h.
TEST(OpsErrors, OverloadsPickTheDocumentedMeaning) {
  Tensor x = arange(12, kFloat64).view({3, 4});
  // One int is a dim; {} is every dim.
  EXPECT_EQ(x.sum(1).sizes(), (Shape{3}));
  EXPECT_EQ(x.sum({}, false).dim(), 0);
  EXPECT_EQ(x.mean({}, true).sizes(), (Shape{1, 1}));
  // An integer after the dims is a correction, a bool is `unbiased`.
  EXPECT_DOUBLE_EQ(x.var({1}, 2).to_vector<double>()[0], 5.0 / 2);
  EXPECT_DOUBLE_EQ(x.var({1}, true).to_vector<double>()[0], 5.0 / 3);
  EXPECT_DOUBLE_EQ(x.var({1}, false).to_vector<double>()[0], 5.0 / 4);
  EXPECT_EQ(x.var(1).sizes(), (Shape{3}));
  EXPECT_EQ(x.var().dim(), 0);
}

} // namespace
