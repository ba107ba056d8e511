//===- OutOpsTest.cpp - add_out, sub_out, ..., matmul_out against PyTorch -===//
//
// The `_out` forms against PyTorch 1.13 (out_golden.txt, written by
// scripts/gen_out_golden.py): out as the whole tensor, a transposed or
// narrowed view (the storage around it checked untouched), an empty tensor
// to be resized, and an exact alias of an input; dtypes widened into out.
// Then the errors (PyTorch's messages, checked with the interpreter, at
// the user's line) and what autograd allows.
//
//===----------------------------------------------------------------------===//
#include "OpsGolden.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

using namespace strata;

namespace {

const std::vector<opsgolden::Case> &cases() {
  static std::vector<opsgolden::Case> c = opsgolden::load(STRATA_OUT_GOLDEN);
  return c;
}

Tensor &callOut(const std::string &op, Tensor &out, const Tensor &a,
                const Tensor &b) {
  if (op == "add")
    return add_out(out, a, b);
  if (op == "sub")
    return sub_out(out, a, b);
  if (op == "mul")
    return mul_out(out, a, b);
  if (op == "div")
    return div_out(out, a, b);
  if (op == "add2")
    return add_out(out, a, b, 2);
  if (op == "sub2")
    return sub_out(out, a, b, 2);
  if (op == "addh")
    return add_out(out, a, b, 0.5);
  if (op == "matmul")
    return matmul_out(out, a, b);
  if (op == "mm")
    return mm_out(out, a, b);
  throw std::runtime_error("unknown op " + op);
}

void expectMatches(const Tensor &got, const Tensor &want,
                   const std::string &what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  bool f32 = want.dtype() == kFloat32, f64 = want.dtype() == kFloat64;
  double rtol = f32 ? 1.3e-6 : 1e-12, atol = f32 ? 1e-5 : 1e-12;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    bool ok = (!f32 && !f64)
                  ? g[i] == w[i]
                  : std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]);
    EXPECT_TRUE(ok) << what << "[" << i << "]: strata " << g[i] << ", PyTorch "
                    << w[i];
  }
}

TEST(OutOps, GoldenFileIsComplete) { EXPECT_GE(cases().size(), 240u); }

TEST(OutOps, MatchPyTorch) {
  for (const opsgolden::Case &c : cases()) {
    SCOPED_TRACE(c.name);
    size_t p1 = c.name.find(':'), p2 = c.name.find(':', p1 + 1);
    std::string op = c.name.substr(0, p1),
                kind = c.name.substr(p1 + 1, p2 - p1 - 1);
    Tensor a = c.at("in0").clone(), b = c.at("in1").clone();
    Tensor base = c.at("base").clone(), out;
    if (kind == "whole" || kind == "empty") {
      out = base;
    } else if (kind == "t") {
      out = base.t();
    } else if (kind == "narrow") {
      out = base.narrow(0, 1, base.size(0) - 2);
    } else {
      ASSERT_EQ(kind, "alias");
      base = a;
      out = a;
    }
    Tensor &r = callOut(op, out, a, b);
    EXPECT_EQ(&r, &out);
    expectMatches(kind == "empty" ? out : base, c.at("want"), c.name);
  }
}

TEST(OutOps, PendingInputsAndOutWriteInProgramOrder) {
  // Inputs still pending, out read before and after: the write is a new
  // version of out's storage, as copy_ makes.
  Tensor x = arange(6, kFloat32).view({2, 3}), out = zeros({2, 3});
  Tensor before = out * 1;
  add_out(out, x * 2, ones({3}));
  Tensor after = out + 0;
  EXPECT_EQ(before.to_vector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(after.to_vector<float>(), (std::vector<float>{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(out._version(), 1);
}

TEST(OutOps, OutRequiringGradIsWrittenUnderNoGrad) {
  Tensor w = zeros({3}).requires_grad_();
  {
    NoGradGuard g;
    mul_out(w, full({3}, 2.0f), full({3}, 3.0f));
  }
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(w.to_vector<float>(), std::vector<float>(3, 6.0f));
}

struct ErrorCase {
  int line;
  std::function<void()> raise;
  const char *message;
};
#define ERR(message, ...)                                                      \
  ErrorCase {                                                                  \
    __LINE__, [&] { __VA_ARGS__; }, message                                    \
  }

TEST(OutOps, ErrorsArePyTorchsAtTheUsersLine) {
  Tensor f = ones({3}), l = ones({3}, kInt64), g = ones({3}).requires_grad_();
  Tensor o = empty({3}), ol = empty({3}, kInt64), ob = empty({3}, kBool);
  Tensor og = empty({3}).requires_grad_(), x = arange(6, kFloat32);
  Tensor bo = ones({3}, kBool), m = ones({2, 3}), m2 = ones({3, 2});
  Tensor o22 = empty({2, 2}), o22l = empty({2, 2}, kInt64),
         o22d = empty({2, 2}, kFloat64);
  Tensor o2 = empty({2}), ex = empty({1}).expand({3});
  Tensor mg = ones({3, 2}).requires_grad_();
  std::vector<ErrorCase> errs = {
      ERR("add(): functions with out=... arguments don't support automatic "
          "differentiation, but one of the arguments requires grad.",
          add_out(o, g, f)),
      ERR("add(): functions with out=... arguments don't support",
          add_out(og, f, f)),
      ERR("div(): functions with out=... arguments", div_out(o, f, g)),
      ERR("mm(): functions with out=... arguments", mm_out(o22, m, mg)),
      ERR("result type Float can't be cast to the desired output type Long",
          mul_out(ol, f, f)),
      ERR("result type Float can't be cast to the desired output type Long",
          div_out(ol, l, l)),
      ERR("result type Float can't be cast to the desired output type Bool",
          mul_out(ob, f, f)),
      ERR("result type Long can't be cast to the desired output type Bool",
          add_out(ob, l, l)),
      ERR("Expected out tensor to have dtype float, but got long int instead",
          matmul_out(o22l, m, ones({3, 2}))),
      ERR("Expected out tensor to have dtype float, but got double instead",
          mm_out(o22d, m, ones({3, 2}))),
      ERR("unsupported operation: some elements of the input tensor and the "
          "written-to tensor refer to a single memory location.",
          [&] {
            Tensor out = x.narrow(0, 1, 3);
            add_out(out, x.narrow(0, 0, 3), x.narrow(0, 0, 3));
          }()),
      ERR("unsupported operation: more than one element of the written-to "
          "tensor refers to a single memory location.",
          add_out(ex, f, f)),
      ERR("For integral input tensors, argument alpha must not be a floating "
          "point number.",
          add_out(ol, l, l, 2.5)),
      ERR("Boolean alpha only supported for Boolean results.",
          add_out(o, f, f, true)),
      ERR("Subtraction, the `-` operator, with two bool tensors is not "
          "supported.",
          sub_out(ob, bo, bo)),
      ERR("self must be a matrix", mm_out(o22, ones({3}), m2)),
      ERR("mat2 must be a matrix", mm_out(o22, m, ones({3}))),
      ERR("expected scalar type Float but found Double",
          mm_out(o22, m, ones({3, 2}, kFloat64))),
      ERR("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x2)",
          mm_out(o22, m, ones({2, 2}))),
      // strata's own: a non-empty out of another shape (PyTorch resizes it
      // with a warning).
      ERR("add_out: out has shape [2], but the result has shape [3]",
          add_out(o2, f, f)),
      ERR("matmul_out: out has shape [3], but the result has shape [2, 2]",
          matmul_out(o, m, m2)),
  };
  for (const ErrorCase &c : errs) {
    SCOPED_TRACE(c.message);
    try {
      c.raise();
      ADD_FAILURE() << "no error; expected: " << c.message;
    } catch (const Error &e) {
      EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
      EXPECT_FALSE(e.hint().empty()) << e.what();
      std::string want = "OutOpsTest.cpp:" + std::to_string(c.line);
      EXPECT_NE(e.where().find(want), std::string::npos)
          << "located at " << e.where() << ", expected " << want;
    }
  }
}

TEST(OutOps, RefusedOutIsLeftUnchanged) {
  Tensor out = full({3}, 7.0f);
  EXPECT_THROW(add_out(out, ones({3}).requires_grad_(), ones({3})), Error);
  Tensor small = full({2}, 7.0f);
  EXPECT_THROW(add_out(small, ones({3}), ones({3})), Error);
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>(3, 7.0f));
  EXPECT_EQ(small.to_vector<float>(), std::vector<float>(2, 7.0f));
  EXPECT_EQ(out._version(), 0);
}

TEST(OutOps, EmptyViewIsNotResized) {
  // Only a tensor of its own is resized: an empty view of a storage is not
  // (it would need to grow its base).
  Tensor base = zeros({4});
  Tensor view = base.narrow(0, 0, 0);
  EXPECT_THROW(add_out(view, ones({2}), ones({2})), Error);
}

} // namespace
