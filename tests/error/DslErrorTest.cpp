//===- DslErrorTest.cpp - every user error: strata::Error, op, fix, location
//===//
#include <strata/strata.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>

using namespace strata;

namespace {
/// Runs `f`, expects a strata::Error whose message contains `text`, with a
/// hint when `wantHint`, located in this file.
template <typename F>
void expectError(F f, const std::string &text, bool wantHint = true) {
  try {
    f();
    FAIL() << "no error; expected: " << text;
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    EXPECT_NE(e.where().find("DslErrorTest.cpp"), std::string::npos)
        << e.what();
    if (wantHint) {
      EXPECT_FALSE(e.hint().empty()) << e.what();
    }
  }
}
} // namespace

TEST(DslErrors, ViewAfterTranspose) {
  Tensor a = arange(12).view({3, 4});
  expectError([&] { a.t().view({12}); },
              "view size is not compatible with input tensor's size and "
              "stride");
}

TEST(DslErrors, WriteIntoExpanded) {
  expectError([] { ones({1}).expand({4}).add_(1); },
              "unsupported operation: more than one element of the "
              "written-to tensor refers to a single memory location. Please "
              "clone() the tensor before performing the operation.");
}

TEST(DslErrors, LeafRequiringGradInPlace) {
  Tensor x = ones({2}, requires_grad());
  expectError([&] { x.add_(1); },
              "a leaf Variable that requires grad is being used in an "
              "in-place operation.");
}

TEST(DslErrors, AlgebraMessages) {
  Tensor a = arange(12).view({3, 4});
  expectError([&] { a.select(2, 0); }, "Dimension out of range", false);
  expectError([&] { a.as_strided({4}, {4}, 0); }, "out of bounds");
  expectError([&] { a.t().t().t().t().expand({2, 4}); }, "expand", false);
  expectError([&] { a.add(arange(5)); }, "add");
}

TEST(DslErrors, ComputeMessages) {
  expectError([] { arange(3).mean(); }, "mean(): could not infer output dtype");
  expectError(
      [] {
        matmul(ones({2, 3}), ones({2, 3}));
      },
      "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)");
  expectError([] { ones({2}, kBool).neg(); }, "Negation, the `-` operator");
  expectError([] { where(ones({2}), ones({2}), ones({2})); },
              "where expected condition to be a boolean tensor");
  expectError([] { arange(3).add_(0.5); }, "can't be cast to the desired");
  expectError([] { ones({2}).item<float>(); },
              "a Tensor with 2 elements cannot be converted to Scalar");
  expectError([] { ones({2}).data_ptr<double>(); }, "expected scalar type");
  expectError([] { empty({-1}); }, "negative dimension");
  expectError(
      [] {
        from_vector(std::vector<float>{1, 2, 3}, {2, 2});
      },
      "is invalid for input of size 3");
}

TEST(DslErrors, NoCudaDevice) {
  // No usable driver (also on GPU machines): the runtime's reason.
  setenv("STRATA_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  expectError([] { ones({2}).to(Device::cuda()); }, "no CUDA device: ");
  expectError([] { memory_stats(Device::cuda()); }, "no CUDA device: ");
  expectError([] { zeros({2}, device(Device::cuda())); }, "no CUDA device: ");
  EXPECT_THROW(Tensor().sizes(), Error);
}

// Operators cannot take a defaulted std::source_location, yet their errors
// must still name the user's line: the located operand (LocatedTensor or a
// Scalar) is converted in the user's expression.
TEST(DslErrors, OperatorsNameTheUsersLine) {
  Tensor a = ones({3}), b = ones({4});
  auto expectLine = [](auto f, int line) {
    try {
      f();
      FAIL() << "no error";
    } catch (const Error &e) {
      std::string where = e.where();
      EXPECT_NE(where.find("DslErrorTest.cpp:" + std::to_string(line)),
                std::string::npos)
          << e.what();
    }
  };
  int line = __LINE__ + 1;
  expectLine([&] { (void)(a + b); }, line);
  line = __LINE__ + 1;
  expectLine([&] { (void)(a < b); }, line);
  line = __LINE__ + 1;
  expectLine([&] { (void)(a == b); }, line);
  Tensor flag = ones({2}).to(kBool);
  line = __LINE__ + 1;
  expectLine([&] { (void)(flag - 1); }, line);
  line = __LINE__ + 1;
  expectLine([&] { (void)(1 - flag); }, line);
  line = __LINE__ + 1;
  expectLine([&] { (void)(-flag); }, line);
  // PyTorch's messages (torch 1.13: `mask - 1` and `1 - mask` both raise).
  expectError([&] { (void)(flag - 1); },
              "Subtraction, the `-` operator, with a bool tensor is not "
              "supported.");
  expectError([&] { (void)(flag - flag); },
              "Subtraction, the `-` operator, with two bool tensors is not "
              "supported.");
}

// Metadata accessors on an undefined tensor name the caller's line, as
// every other op does.
TEST(DslErrors, MetadataOfAnUndefinedTensorNamesTheUsersLine) {
  Tensor u;
  auto expectHere = [](const std::function<void()> &f, int line,
                       const char *what) {
    try {
      f();
      ADD_FAILURE() << what << ": no error";
    } catch (const Error &e) {
      EXPECT_NE(e.message().find("undefined tensor"), std::string::npos)
          << what << ": " << e.what();
      std::string want = "DslErrorTest.cpp:" + std::to_string(line);
      EXPECT_NE(e.where().find(want), std::string::npos)
          << what << ": located at " << e.where() << ", expected " << want;
    }
  };
  // clang-format off
  expectHere([&] { (void)u.sizes(); }, __LINE__, "sizes");
  expectHere([&] { (void)u.strides(); }, __LINE__, "strides");
  expectHere([&] { (void)u.storage_offset(); }, __LINE__, "storage_offset");
  expectHere([&] { (void)u.dim(); }, __LINE__, "dim");
  expectHere([&] { (void)u.numel(); }, __LINE__, "numel");
  expectHere([&] { (void)u.dtype(); }, __LINE__, "dtype");
  expectHere([&] { (void)u.device(); }, __LINE__, "device");
  expectHere([&] { (void)u.options(); }, __LINE__, "options");
  expectHere([&] { (void)u.is_contiguous(); }, __LINE__, "is_contiguous");
  expectHere([&] { (void)u.element_size(); }, __LINE__, "element_size");
  expectHere([&] { (void)u.requires_grad(); }, __LINE__, "requires_grad");
  expectHere([&] { (void)u.is_leaf(); }, __LINE__, "is_leaf");
  expectHere([&] { (void)u._version(); }, __LINE__, "_version");
  expectHere([&] { (void)u.is_materialized(); }, __LINE__, "is_materialized");
  expectHere([&] { (void)u.explain(); }, __LINE__, "explain");
  // clang-format on
}
