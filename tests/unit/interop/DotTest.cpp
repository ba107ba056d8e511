//===- DotTest.cpp - to_dot draws the recorded trace ----------------------===//
#include "strata/strata.h"

#include <gtest/gtest.h>

using namespace strata;

namespace {
int count(const std::string &s, const std::string &what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos;
       at = s.find(what, at + 1))
    ++n;
  return n;
}
} // namespace

TEST(Dot, DrawsTheTraceWithFoldedLayouts) {
  Tensor x = from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor y = (x.t() * 2).exp();
  std::string dot = to_dot({y});
  EXPECT_EQ(dot.rfind("digraph strata {", 0), 0u) << dot;
  EXPECT_NE(dot.find("shape=cylinder"), std::string::npos) << dot;
  // The transposed read is one edge labelled with the folded triple.
  EXPECT_NE(dot.find("[3,2] strides [1,3] offset 0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("exp : f32"), std::string::npos) << dot;
  EXPECT_NE(dot.find("DotTest.cpp:"), std::string::npos) << dot;
  EXPECT_EQ(count(dot, "tensor 0"), 1);
  // Deterministic, and a shared input is drawn once.
  EXPECT_EQ(to_dot({y}), dot);
  std::string two = to_dot({y, y + x.t()});
  EXPECT_EQ(count(two, "shape=cylinder"), 1) << two;
  EXPECT_EQ(dot.back(), '\n');
}

TEST(Dot, AutogradGraphAndBadPath) {
  Tensor x = arange(3, kFloat32).requires_grad_();
  Tensor y = (x * 2).sum();
  std::string dot = to_dot({y}, GraphKind::Autograd);
  EXPECT_NE(dot.find("SumBackward0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("MulBackward0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("AccumulateGrad"), std::string::npos) << dot;
  EXPECT_THROW(save_dot({x}, "/nonexistent-dir/x.dot"), Error);
}
