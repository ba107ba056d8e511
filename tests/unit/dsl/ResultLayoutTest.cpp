//===- ResultLayoutTest.cpp - layouts of compute results through the DSL --===//
//
// The strides PyTorch 1.13 gives each result below (printed by
// `/usr/bin/python3 -c 'import torch; ...'` for the same expressions; the
// rules themselves are checked against ~1,100 PyTorch cases in
// tests/unit/runtime/ResultLayoutTest.cpp), and the values read back in
// logical order, which a kernel writing the wrong storage order would get
// wrong.
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <gtest/gtest.h>

using namespace strata;
using S = std::vector<int64_t>;

namespace {
/// 3x4 and 4x3 tensors holding 0..11 in row-major order.
Tensor a34() { return arange(12, TensorOptions(DType::F32)).reshape({3, 4}); }
Tensor b43() { return arange(12, TensorOptions(DType::F32)).reshape({4, 3}); }

std::vector<float> logical(const Tensor &t) { return t.to_vector<float>(); }

TEST(ResultLayout, ElementwiseFollowsTheInput) {
  Tensor a = a34();
  Tensor t = a.t();
  EXPECT_EQ((t + 1).strides(), (S{1, 4}));
  EXPECT_EQ(t.neg().strides(), (S{1, 4}));
  EXPECT_EQ(t.relu().strides(), (S{1, 4}));
  EXPECT_EQ((t > 3).strides(), (S{1, 4}));
  EXPECT_EQ(t.pow(2).strides(), (S{1, 4}));
  EXPECT_EQ(t.abs().exp().strides(), (S{1, 4}));
  // Values in logical order: element (i, j) of a.t() + 1 is a[j][i] + 1.
  std::vector<float> v = logical(t + 1), want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      want.push_back(static_cast<float>(j * 4 + i + 1));
  EXPECT_EQ(v, want);
}

TEST(ResultLayout, PowByANumberIsUnary) {
  // PyTorch's pow(Tensor, Scalar) is a unary TensorIterator (a dense input's
  // strides, size-1 dims included); x + 1 and pow by a 0-d tensor are
  // binary, with a 0-d operand. PyTorch 1.13: (2, 1), (1, 1), (2, 1).
  Tensor a = zeros({2, 1}).permute({1, 0});
  EXPECT_EQ(a.strides(), (S{1, 1}));
  EXPECT_EQ(a.pow(2).strides(), (S{2, 1}));
  EXPECT_EQ((a + 1).strides(), (S{1, 1}));
  EXPECT_EQ(a.neg().strides(), (S{2, 1}));
  EXPECT_EQ(logical(a.pow(2)), std::vector<float>(2, 0.0f));
}

TEST(ResultLayout, RowMajorGradientOfASize1Result) {
  // The gradient of y runs through a cast that keeps the stride of a size-1
  // dim (preserve_format); the gradient returned is still row-major.
  // PyTorch 1.13: y.grad == 30, x.grad has strides (6, 3, 1).
  Tensor x = ones({5, 2, 3}).requires_grad_();
  Tensor y = full({}, 0.625, TensorOptions(DType::F64)).requires_grad_();
  (x.transpose(2, -1) + y).sum().backward();
  EXPECT_EQ(y.grad().item<double>(), 30.0);
  EXPECT_EQ(x.grad().strides(), (S{6, 3, 1}));
}

TEST(ResultLayout, FirstOperandLeads) {
  Tensor a = a34(), b = b43();
  Tensor l = a.t() + b, r = b + a.t();
  EXPECT_EQ(l.strides(), (S{1, 4}));
  EXPECT_EQ(r.strides(), (S{3, 1}));
  EXPECT_EQ(logical(l), logical(r));
  EXPECT_EQ(where(a.t() > 3, a.t(), b).strides(), (S{1, 4}));
  EXPECT_EQ((a.t().sigmoid() + b).strides(), (S{1, 4}));
}

TEST(ResultLayout, ChannelsLastAndBroadcast) {
  Tensor x = zeros({2, 3, 4, 5}).permute({0, 2, 3, 1});
  EXPECT_EQ((x + 1).strides(), (S{60, 5, 1, 20}));
  Tensor e = zeros({3, 1}).expand({3, 4});
  EXPECT_EQ((e + 1).strides(), (S{4, 1}));
  EXPECT_EQ(e.clone().strides(), (S{4, 1}));
}

TEST(ResultLayout, CloneAndToPreserveFormat) {
  Tensor a = a34();
  EXPECT_EQ(a.t().clone().strides(), (S{1, 4}));
  EXPECT_EQ(a.t().to(DType::F64).strides(), (S{1, 4}));
  EXPECT_EQ(a.t().slice(0, 0, 4, 2).clone().strides(), (S{1, 2}));
  EXPECT_EQ(a.t().contiguous().strides(), (S{3, 1}));
  EXPECT_EQ(a.t().reshape({12}).strides(), (S{1}));
  Tensor f = a.t().flatten(1, 1);
  EXPECT_EQ(f.strides(), (S{1, 4}));
  EXPECT_EQ(f.data_ptr(), a.data_ptr()); // the tensor itself
  EXPECT_EQ(logical(a.t().clone()), logical(a.t().contiguous()));
}

TEST(ResultLayout, ReductionsAreContiguous) {
  Tensor a = a34();
  EXPECT_EQ(a.t().sum({0}).strides(), (S{1}));
  EXPECT_EQ(a.t().sum({0}, true).strides(), (S{3, 1}));
  EXPECT_EQ(a.t().sum({1}, true).strides(), (S{1, 1}));
  Tensor x = zeros({2, 3, 4, 5}).permute({0, 2, 3, 1});
  EXPECT_EQ(x.sum({1}, true).strides(), (S{15, 15, 3, 1}));
}

TEST(ResultLayout, LeafGradKeepsTheLeafsStrides) {
  // PyTorch's AccumulateGrad: x.grad has x's strides when x is dense.
  Tensor x = a34().t().detach().requires_grad_();
  (x * 2).sum().backward();
  EXPECT_EQ(x.grad().strides(), (S{1, 4}));
  EXPECT_EQ(logical(x.grad()), std::vector<float>(12, 2.0f));
  // Not dense (a.t()[::2]): contiguous, as PyTorch.
  Tensor y = a34().t().slice(0, 0, 4, 2).detach().requires_grad_();
  (y * 2).sum().backward();
  EXPECT_EQ(y.grad().strides(), (S{3, 1}));
}
} // namespace
