//===- AutogradTest.cpp - the fluent autograd API against PyTorch ---------===//
//
// Gradients of a set of programs against PyTorch 1.13's (the golden file is
// written by scripts/gen_autograd_golden.py; this test does not need torch),
// PyTorch's autograd errors, accumulation, retain_grad, NoGradGuard, detach,
// grad_fn names (views included, against golden names from PyTorch), the
// non-leaf .grad() warning and gradcheck.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include <gtest/gtest.h>

#include <type_traits>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

using namespace strata;

namespace {

std::map<std::string, std::vector<float>> golden() {
  std::map<std::string, std::vector<float>> g;
  std::ifstream in(STRATA_AUTOGRAD_GOLDEN);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ls(line);
    std::string name;
    size_t n;
    ls >> name >> n;
    std::vector<float> v(n);
    for (float &e : v)
      ls >> e;
    g[name] = v;
  }
  return g;
}

Tensor leaf(std::vector<float> v, Shape shape = {}) {
  if (shape.empty())
    shape = {static_cast<int64_t>(v.size())};
  return from_vector<float>(v, shape).requires_grad_();
}

void expectGrad(const Tensor &t, const std::string &name) {
  static auto g = golden();
  ASSERT_TRUE(g.count(name)) << name;
  ASSERT_TRUE(t.grad().defined()) << name;
  std::vector<float> got = t.grad().to_vector<float>();
  ASSERT_EQ(got.size(), g[name].size()) << name;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], g[name][i], 1e-4 * (1 + std::abs(g[name][i])))
        << name << "[" << i << "]";
}

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(AutogradGolden, Elementwise) {
  Tensor x = leaf({1, 2, 3}), w = leaf({0.5, -1, 2});
  ((x * w).exp() + x.sigmoid() * x.tanh() - (x + 1).log() + x.sqrt() / w -
   x.neg().abs())
      .sum()
      .backward();
  expectGrad(x, "elementwise.x");
  expectGrad(w, "elementwise.w");
}

TEST(AutogradGolden, Broadcast) {
  std::vector<float> av;
  for (int i = 0; i < 6; ++i)
    av.push_back(0.1f * i - 0.2f);
  Tensor a = leaf(av, {2, 3}), b = leaf({1, -2, 0.5});
  (a * b + b).pow(2).mean().backward();
  expectGrad(a, "broadcast.a");
  expectGrad(b, "broadcast.b");
}

TEST(AutogradGolden, Reductions) {
  Tensor r = leaf({0.3, -1.2, 2.5, 0.7, 1.9, -0.4}, {2, 3});
  ((r.sum({1}) * r.mean({0}).sum()).sum() + r.amax({1}).sum() + r.mean())
      .backward();
  expectGrad(r, "reductions.r");
}

TEST(AutogradGolden, Matmul) {
  std::vector<float> av, bv;
  for (int i = 0; i < 6; ++i) {
    av.push_back(0.1f * i);
    bv.push_back(0.2f * i - 0.5f);
  }
  Tensor A = leaf(av, {2, 3}), B = leaf(bv, {3, 2});
  A.matmul(B).tanh().sum().backward();
  expectGrad(A, "matmul.A");
  expectGrad(B, "matmul.B");
}

TEST(AutogradGolden, Views) {
  Tensor v = leaf({0, 1, 2, 3, 4, 5}, {2, 3});
  ((v.t().slice(0, 0, 2) * 2.0).sum() + (v[1].expand({2, 3}) * v).sum() +
   v.transpose(0, 1).reshape({6}).slice(0, 1, std::nullopt, 2).pow(2).sum())
      .backward();
  expectGrad(v, "views.v");
}

TEST(AutogradGolden, InPlaceThroughView) {
  Tensor p = leaf({1, 2, 3, 4});
  Tensor q = p * 1.0;
  Tensor s = q.slice(0, 1, 3);
  s.mul_(3.0);
  (q * q).sum().backward();
  expectGrad(p, "inplace_view.p");
}

TEST(Autograd, LeafAndGradFn) {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_();
  EXPECT_TRUE(x.is_leaf());
  EXPECT_EQ(x.grad_fn(), nullptr);
  EXPECT_FALSE(x.grad().defined());
  Tensor y = x * 2;
  EXPECT_FALSE(y.is_leaf());
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  auto next = y.grad_fn()->next_functions();
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0]->name(), "AccumulateGrad");
  EXPECT_EQ(next[1], nullptr);
  y.sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_FALSE(y.grad().defined());
}

// Each view is its own node of the graph, named as PyTorch 1.13 names it
// (tests/e2e/data/grad_fn_golden.txt, scripts/gen_autograd_golden.py).
TEST(Autograd, ViewGradFnNames) {
  std::map<std::string, std::string> want;
  std::ifstream in(STRATA_GRAD_FN_GOLDEN);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#')
      want[line.substr(0, line.find(' '))] = line.substr(line.find(' ') + 1);
  Tensor x = randn({3, 4}).requires_grad_();
  Tensor w = randn({4, 3}).requires_grad_();
  std::vector<std::pair<std::string, Tensor>> cases = {
      {"t", x.t()},
      {"transpose", x.transpose(0, 1)},
      {"permute", x.permute({1, 0})},
      {"view", x.view({12})},
      {"reshape_view", x.reshape({12})},
      {"flatten", x.flatten()},
      {"slice", x.slice(0, 1, 3)},
      {"narrow", x.narrow(1, 1, 2)},
      {"select", x.select(0, 1)},
      {"expand", x.slice(0, 0, 1).expand({5, 4})},
      {"squeeze", x.slice(0, 0, 1).squeeze()},
      {"squeeze_dim", x.slice(0, 0, 1).squeeze(0)},
      {"unsqueeze", x.unsqueeze(0)},
      {"as_strided", x.as_strided({2, 2}, {1, 2})},
      {"diagonal", x.diagonal()},
      {"unfold", x.unfold(1, 2, 1)},
      {"flip", x.flip({0})},
      {"contiguous", x.t().contiguous()},
      {"view_of_nonleaf", (x * 2).t()},
      {"mul_of_view", x.t() * w},
      {"chain", x.t().unsqueeze(0).sum()}};
  ASSERT_EQ(want.size(), cases.size());
  for (auto &[name, t] : cases) {
    std::string got = format_graph(t);
    std::replace(got.begin(), got.end(), '\n', '|');
    got.pop_back();
    EXPECT_EQ(got, want[name]) << name;
  }
  // next_functions chain to the leaf's AccumulateGrad, which is x's.
  GradFnPtr tb = x.t().unsqueeze(0).grad_fn();
  ASSERT_EQ(tb->next_functions().size(), 1u);
  GradFnPtr acc = tb->next_functions()[0]->next_functions()[0];
  EXPECT_EQ(acc->name(), "AccumulateGrad");
  EXPECT_EQ(acc->variable().impl(), x.impl());
  // Gradients through views are unchanged by the extra nodes.
  (x.t() * w).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), w.t().contiguous().to_vector<float>());
}

// PyTorch's UserWarning for .grad() of a non-leaf, once per call site by
// default (on stderr), and an undefined tensor.
TEST(Autograd, NonLeafGradWarns) {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_();
  Tensor y = x * 2;
  y.sum().backward();
  std::vector<std::pair<std::string, std::string>> seen;
  set_warning_handler([&](const std::string &m, const std::string &where) {
    seen.push_back({m, where});
  });
  int line = __LINE__ + 1;
  EXPECT_FALSE(y.grad().defined());
  EXPECT_TRUE(x.grad().defined()); // a leaf: no warning
  set_warning_handler(nullptr);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first,
            "The .grad attribute of a Tensor that is not a leaf Tensor is "
            "being accessed. Its .grad attribute won't be populated during "
            "autograd.backward(). If you indeed want the .grad field to be "
            "populated for a non-leaf Tensor, use .retain_grad() on the "
            "non-leaf Tensor. If you access the non-leaf Tensor by mistake, "
            "make sure you access the leaf Tensor instead. See "
            "github.com/pytorch/pytorch/pull/30531 for more informations.");
  EXPECT_NE(seen[0].second.find("AutogradTest.cpp:" + std::to_string(line)),
            std::string::npos)
      << seen[0].second;
  // The default handler: on stderr, once for the same call site.
  testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i)
    EXPECT_FALSE(y.grad().defined());
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("UserWarning: The .grad attribute of a Tensor that is "
                     "not a leaf Tensor is being accessed."),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("UserWarning"), err.rfind("UserWarning")) << err;
  // retain_grad(): no warning, the gradient.
  Tensor z = x * 3;
  z.retain_grad();
  z.sum().backward();
  testing::internal::CaptureStderr();
  EXPECT_TRUE(z.grad().defined());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(Autograd, GraphChain) {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_();
  Tensor z = (x * 2).mean() + (x * 3).sum();
  EXPECT_EQ(format_graph(z),
            "AddBackward0 -> MeanBackward0 -> MulBackward0 -> AccumulateGrad\n"
            "AddBackward0 -> SumBackward0 -> MulBackward0 -> AccumulateGrad\n");
  std::string dot = to_dot({z}, GraphKind::Autograd);
  EXPECT_NE(dot.find("AccumulateGrad"), std::string::npos);
  EXPECT_EQ(x.exp().grad_fn()->name(), "ExpBackward0");
}

TEST(Autograd, AccumulationRetainGraphAndZero) {
  Tensor x = tensor({2.0f}).requires_grad_();
  Tensor y = x * x;
  y.backward({}, /*retain_graph=*/true);
  y.backward({}, true);
  EXPECT_FLOAT_EQ(x.grad().item<float>(), 8);
  x.mutable_grad().zero_();
  EXPECT_FLOAT_EQ(x.grad().item<float>(), 0);
  y.backward();
  EXPECT_FLOAT_EQ(x.grad().item<float>(), 4);
  std::string e = errorOf([&] { y.backward(); });
  EXPECT_NE(e.find("Trying to backward through the graph a second time"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("Specify retain_graph=True"), std::string::npos);
  x.mutable_grad() = Tensor();
  (x * 3).sum().backward();
  EXPECT_FLOAT_EQ(x.grad().item<float>(), 3);
  // LibTorch's idiom: x.grad() is a handle on the gradient, so an in-place
  // op on it writes the gradient itself (PyTorch: x.grad.zero_()).
  x.grad().zero_();
  EXPECT_FLOAT_EQ(x.grad().item<float>(), 0);
  x.grad().add_(5);
  (x * 3).sum().backward();
  EXPECT_FLOAT_EQ(x.grad().item<float>(), 8);
  static_assert(!std::is_assignable_v<Tensor &&, Tensor>,
                "assigning to a temporary (x.grad() = g) must not compile");
}

TEST(Autograd, SameStructureReusesGradientProgram) {
  Tensor a = tensor({1.0f, 2.0f, 3.0f}).requires_grad_();
  (a * a).sum().backward();
  int64_t compiles = backward_compiles();
  Tensor b = tensor({4.0f, 5.0f, 6.0f}).requires_grad_();
  (b * b).sum().backward();
  EXPECT_EQ(backward_compiles(), compiles);
  EXPECT_EQ(b.grad().to_vector<float>(), (std::vector<float>{8, 10, 12}));
}

// Two leaves whose gradients are one value get two buffers: accumulating
// into one does not change the other.
TEST(Autograd, GradientsDoNotAlias) {
  Tensor a = tensor({1.0f, 2.0f}).requires_grad_();
  Tensor b = tensor({3.0f, 4.0f}).requires_grad_();
  Tensor loss = ((a + b) * 2).sum();
  loss.backward();
  EXPECT_FLOAT_EQ(loss.item<float>(), 20); // kept from the gradient program
  a.mutable_grad().add_(1.0);
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(b.grad().to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_FALSE(a.grad().storage().is_alias_of(b.grad().storage()));
}

TEST(Autograd, NonScalarBackward) {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_();
  Tensor y = x * 2;
  std::string e = errorOf([&] { y.backward(); });
  EXPECT_NE(e.find("grad can be implicitly created only for scalar outputs"),
            std::string::npos);
  y.backward(ones_like(y));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 2}));
}

TEST(Autograd, RetainGrad) {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_();
  Tensor y = x * 3;
  y.retain_grad();
  EXPECT_TRUE(y.retains_grad());
  (y * y).sum().backward();
  EXPECT_EQ(y.grad().to_vector<float>(), (std::vector<float>{6, 12}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{18, 36}));
}

TEST(Autograd, NoGradGuardAndDetach) {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_();
  {
    NoGradGuard guard;
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    x.sub_(1.0); // an SGD step
  }
  Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.grad_fn(), nullptr);
  EXPECT_TRUE(d.storage().is_alias_of(x.storage()));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 1}));
}

TEST(Autograd, GradFunctionDoesNotAccumulate) {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_();
  Tensor h = x * x;
  std::vector<Tensor> g = grad({h.sum()}, {x, h});
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(g[1].to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_FALSE(x.grad().defined());
}

TEST(AutogradErrors, LeafInPlace) {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_();
  std::string e = errorOf([&] { x.add_(1.0); });
  EXPECT_NE(e.find("a leaf Variable that requires grad is being used in an "
                   "in-place operation."),
            std::string::npos);
}

TEST(AutogradErrors, SavedLeafModifiedUnderNoGrad) {
  // A leaf has no grad_fn: PyTorch's text has no ", which is output 0 of
  // ..." clause, and no comma before "is at version".
  Tensor x = tensor({1.0f}).requires_grad_();
  Tensor w = tensor({2.0f}).requires_grad_();
  Tensor y = x * w;
  {
    NoGradGuard guard;
    w.add_(1.0);
  }
  std::string e = errorOf([&] { y.sum().backward(); });
  EXPECT_NE(e.find("modified by an inplace operation: [torch.FloatTensor "
                   "[1]] is at version 1; expected version 0 instead. Hint:"),
            std::string::npos)
      << e;
}

TEST(AutogradErrors, TheLaterOpsStaleSavedTensorIsReported) {
  // a saved by three products, written after each: PyTorch's engine runs
  // the op created last first, so it reports x2's saved version (2), not
  // x1's (1); x3's is current.
  Tensor p = tensor({1.0, 2.0}).requires_grad_();
  Tensor d = tensor({3.0, 4.0}).requires_grad_();
  Tensor a = p * 1.0;
  a.mul_(2.0);
  Tensor x1 = a * d;
  a.mul_(2.0);
  Tensor x2 = a * d;
  a.mul_(2.0);
  Tensor x3 = a * d;
  Tensor s = x1 + x2;
  Tensor s2 = s + x3;
  std::string e = errorOf([&] { s2.sum().backward(); });
  EXPECT_NE(e.find("which is output 0 of MulBackward0, is at version 3; "
                   "expected version 2 instead."),
            std::string::npos)
      << e;
}

TEST(AutogradErrors, ASavedViewNamesAsStridedBackward) {
  // t = a.select(0, 2) * e saves the view; a written (through another
  // view, whole, or through the saved view itself) since: PyTorch names
  // the view's regenerated grad_fn, AsStridedBackward0, not the base's.
  for (int how = 0; how < 3; ++how) {
    Tensor p = tensor({1.0, 2.0, 3.0}).requires_grad_();
    Tensor e = tensor({4.0}).requires_grad_();
    Tensor a = p * 1.0;
    Tensor a2 = a.select(0, 2);
    Tensor t = a2 * e;
    if (how == 0)
      a.narrow(0, 0, 2).mul_(2.0);
    else if (how == 1)
      a.mul_(2.0);
    else
      a2.mul_(2.0);
    std::string err = errorOf([&] { t.sum().backward(); });
    EXPECT_NE(err.find("[torch.FloatTensor []], which is output 0 of "
                       "AsStridedBackward0, is at version 1; expected "
                       "version 0 instead."),
              std::string::npos)
        << "how=" << how << ": " << err;
  }
}

TEST(AutogradErrors, SavedTensorModified) {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_();
  Tensor a = x * 1;
  Tensor b = a * a;
  int line = __LINE__ + 1;
  a.add_(1.0);
  std::string e = errorOf([&] { b.sum().backward(); });
  EXPECT_NE(e.find("one of the variables needed for gradient computation has "
                   "been modified by an inplace operation: "
                   "[torch.FloatTensor [2]], which is output 0 of "
                   "AddBackward0, is at version 1; expected version 0 "
                   "instead. Hint:"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("AutogradTest.cpp:" + std::to_string(line)),
            std::string::npos)
      << e;
  set_detect_anomaly(true);
  e = errorOf([&] { b.sum().backward(); });
  set_detect_anomaly(false);
  EXPECT_NE(e.find("the forward op that saved it was recorded at"),
            std::string::npos)
      << e;
  // The safe alternative.
  Tensor c = x * 1;
  Tensor d = c * c;
  c = c + 1;
  d.sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 4}));
}

TEST(AutogradErrors, ExpandedWrite) {
  std::string e = errorOf([] { ones({1}).expand({4}).add_(1.0); });
  EXPECT_NE(e.find("more than one element of the written-to tensor"),
            std::string::npos);
}

TEST(Gradcheck, ZeroDimInputsAndOutputs) {
  // A 0-d output (x.sum()) and a 0-d input (a scalar weight), as PyTorch's
  // gradcheck takes them; the shapes used to come back 1-D.
  auto fn = [](const std::vector<Tensor> &x) {
    return ((x[0] * x[1]).tanh()).sum();
  };
  std::vector<Tensor> in = {tensor({0.1, 0.5, -0.3}),
                            tensor({0.7}).reshape({})};
  ASSERT_EQ(in[1].dim(), 0);
  GradcheckResult ok = gradcheck(fn, in);
  EXPECT_TRUE(ok.ok) << ok.message;
  // It still catches a wrong gradient through a 0-d output.
  GradcheckOptions wrong;
  wrong.analytic = [](const std::vector<Tensor> &x, const Tensor &g) {
    return std::vector<Tensor>{g * x[0] * 3.0};
  };
  GradcheckResult bad = gradcheck(
      [](const std::vector<Tensor> &x) { return (x[0] * x[0]).sum(); },
      {tensor({1.0, -2.0})}, wrong);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.index, 1); // the worst element: x1 = -2
  EXPECT_NEAR(bad.analytic, -6, 1e-9);
  EXPECT_NEAR(bad.numeric, -4, 1e-5);
}

TEST(Gradcheck, PassesAndFails) {
  auto fn = [](const std::vector<Tensor> &x) {
    return (x[0] * x[1]).tanh() + x[0].exp();
  };
  std::vector<Tensor> in = {tensor({0.1, 0.5, -0.3}), tensor({1.0, -2.0, 0.7})};
  GradcheckResult ok = gradcheck(fn, in);
  EXPECT_TRUE(ok.ok) << ok.message;
  // A custom function whose backward is wrong (d(x*x)/dx = 3x instead of 2x).
  GradcheckOptions wrong;
  wrong.analytic = [](const std::vector<Tensor> &x, const Tensor &g) {
    return std::vector<Tensor>{g * x[0] * 3.0};
  };
  GradcheckResult bad =
      gradcheck([](const std::vector<Tensor> &x) { return x[0] * x[0]; },
                {tensor({1.0, -2.0, 0.5})}, wrong);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.index, 1);
  EXPECT_NEAR(bad.analytic, -6, 1e-9);
  EXPECT_NEAR(bad.numeric, -4, 1e-5);
  EXPECT_NE(bad.message.find("Jacobian mismatch"), std::string::npos);
}

// A passing check reports its worst element by relative error: a diagonal
// element of the elementwise x * x, never an off-diagonal 0 / 0.
TEST(Gradcheck, WorstIsByRelativeError) {
  GradcheckResult r =
      gradcheck([](const std::vector<Tensor> &x) { return x[0] * x[0] * 0.5; },
                {tensor({0.3, -1.7, 2.9, 0.01})});
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.index, r.output) << r.message;
  const std::vector<double> x = {0.3, -1.7, 2.9, 0.01};
  ASSERT_GE(r.index, 0);
  EXPECT_NEAR(r.analytic, x[r.index], 1e-6); // x is f32
  EXPECT_LT(r.relative_error, 1e-6) << r.message;
  EXPECT_NE(r.message.find("relative error"), std::string::npos) << r.message;
}

// The training step of ((x.t() * w).relu()).sum() is one kernel (sibling
// fusion: the loss and both gradients, each in its leaf's layout), and its
// values match the closed form computed here element by element.
TEST(Autograd, TransposedProductStepIsOneKernel) {
  manual_seed(3);
  const int64_t n = 37, m = 53; // not multiples of the 8x8 / 16x16 tiles
  Tensor x = randn({m, n}).requires_grad_();
  Tensor w = randn({n, m}).requires_grad_();
  std::vector<float> xv = x.to_vector<float>(), wv = w.to_vector<float>();
  reset_eval_stats();
  Tensor loss = ((x.t() * w).relu()).sum();
  loss.backward();
  float l = loss.item<float>();
  std::vector<float> gx = x.grad().to_vector<float>();
  std::vector<float> gw = w.grad().to_vector<float>();
  // One kernel computes the loss and both gradients; the second rounds the
  // loss from its f64 accumulator (--strata-widen-sums), one element.
  EXPECT_EQ(eval_stats().kernels, 2);
  double expectLoss = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      // (x.t() * w)[i][j] = x[j][i] * w[i][j]
      float xe = xv[j * n + i], we = wv[i * m + j];
      float p = xe * we;
      expectLoss += p > 0 ? p : 0;
      EXPECT_FLOAT_EQ(gx[j * n + i], p > 0 ? we : 0) << i << "," << j;
      EXPECT_FLOAT_EQ(gw[i * m + j], p > 0 ? xe : 0) << i << "," << j;
    }
  EXPECT_NEAR(l, expectLoss, 1e-4 * (1 + std::abs(expectLoss)));
}

// The same step against finite differences, in float64.
TEST(Gradcheck, TransposedProductStep) {
  manual_seed(4);
  std::vector<Tensor> in = {randn({6, 5}, dtype(kFloat64)),
                            randn({5, 6}, dtype(kFloat64))};
  GradcheckResult r = gradcheck(
      [](const std::vector<Tensor> &v) {
        return ((v[0].t() * v[1]).relu() * 1.5 + v[0].t().exp()).sum();
      },
      in);
  EXPECT_TRUE(r.ok) << r.message;
}

// Evaluating a tensor between recording an in-place op on it and backward
// must not change the gradient: the op saved the destination's value from
// before the write (PyTorch 1.13's values in the comments).
TEST(Autograd, EvaluationBeforeBackwardKeepsSavedValues) {
  auto grads = [](bool evalFirst, int which) {
    Tensor b = from_vector<float>({1, 2, 3}).requires_grad_();
    Tensor p;
    switch (which) {
    case 0: // p = full(2); p.mul_(b): b.grad = 2
      p = full({3}, 2.0f);
      p.mul_(b);
      break;
    case 1: // p = ones * 4; p.div_(b): b.grad = -4 / b^2
      p = ones({3}) * 4;
      p.div_(b);
      break;
    case 2: // a write through a view of a pending tensor
      p = full({4}, 3.0f);
      p.narrow(0, 1, 3).mul_(b);
      break;
    default: // a detached pending non-leaf written with a grad operand
      p = (from_vector<float>({1, 1, 1}) * 2).detach();
      p.mul_(b);
      break;
    }
    if (evalFirst)
      p.eval();
    p.sum().backward();
    return b.grad().to_vector<float>();
  };
  std::vector<std::vector<float>> expected = {
      {2, 2, 2}, {-4, -1, -4.0f / 9}, {3, 3, 3}, {2, 2, 2}};
  for (int which = 0; which < 4; ++which)
    for (bool evalFirst : {false, true}) {
      SCOPED_TRACE("program " + std::to_string(which) +
                   (evalFirst ? " evaluated first" : ""));
      std::vector<float> g = grads(evalFirst, which);
      ASSERT_EQ(g.size(), expected[which].size());
      for (size_t i = 0; i < g.size(); ++i)
        EXPECT_NEAR(g[i], expected[which][i], 1e-6);
    }
}

// A leaf whose elements overlap in memory (detach().requires_grad_() of an
// expand), read as itself: one gradient per element, with the leaf's own
// (dense) strides (PyTorch: y.grad is all 2s, strides (4, 1)); read
// through a further view, the view is replayed over its elements
// (PyTorch: z.grad is [0, 2, 0]); through an as_strided, which addresses
// storage, it is a clear error (errors.md A17).
TEST(Autograd, OverlappingLeafReadAsItself) {
  for (bool pending : {true, false}) {
    Tensor base =
        pending ? ones({3, 1}) : from_vector<float>({1, 1, 1}, {3, 1});
    Tensor y = base.expand({3, 4}).detach().requires_grad_();
    (y * 2).sum().backward();
    EXPECT_EQ(y.grad().sizes(), (Shape{3, 4}));
    EXPECT_EQ(y.grad().strides(), (Shape{4, 1}));
    for (float v : y.grad().to_vector<float>())
      EXPECT_EQ(v, 2.0f);
  }
  Tensor z = ones({1}).expand({3}).detach().requires_grad_();
  (z.select(0, 1) * 2).backward();
  EXPECT_EQ(z.grad().to_vector<float>(), (std::vector<float>{0, 2, 0}));
  Tensor w = ones({1}).expand({3}).detach().requires_grad_();
  EXPECT_THROW((w.as_strided({3}, {0}, 0) * 2).sum().backward(), Error);
}

// grad() and retain_grad() with respect to views whose elements overlap
// (an expand, an overlapping unfold) and views of them: each element gets
// its own gradient, as in PyTorch 1.13 (values computed by hand; the
// fuzzer's regressions compare more shapes with PyTorch live).
TEST(Autograd, OverlappingViewTargets) {
  Tensor x = from_vector<double>({1, 2, 3}).requires_grad_();
  Tensor w = from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor e = x.expand({2, 3});
  std::vector<Tensor> g = grad({(e * w).sum()}, {e, x});
  EXPECT_EQ(g[0].sizes(), (Shape{2, 3}));
  EXPECT_EQ(g[0].to_vector<double>(), w.to_vector<double>());
  EXPECT_EQ(g[1].to_vector<double>(), (std::vector<double>{5, 7, 9}));

  // Retained, read through t() and select(): per element.
  Tensor r = x.expand({2, 3});
  r.retain_grad();
  (r.t() * w.t()).sum().add(r.select(0, 1).square().sum()).backward();
  EXPECT_EQ(r.grad().to_vector<double>(),
            (std::vector<double>{1, 2, 3, 4 + 2, 5 + 4, 6 + 6}));
  EXPECT_EQ(x.grad().to_vector<double>(),
            (std::vector<double>{5 + 2, 7 + 4, 9 + 6}));

  // An overlapping unfold: windows [0..2], [1..3], [2..4] of 5 elements.
  Tensor y = from_vector<double>({1, 2, 3, 4, 5}).requires_grad_();
  Tensor u = y.unfold(0, 3, 1);
  Tensor m = from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  std::vector<Tensor> gu = grad({(u.flip({1}) * m).sum()}, {u, y});
  EXPECT_EQ(gu[0].to_vector<double>(),
            (std::vector<double>{3, 2, 1, 6, 5, 4, 9, 8, 7}));
  EXPECT_EQ(gu[1].to_vector<double>(),
            (std::vector<double>{3, 2 + 6, 1 + 5 + 9, 4 + 8, 7}));
}

// retain_grad() hooks the grad_fn the tensor has: an in-place op on the
// tensor itself moves it to the new history, a write through a view of it
// does not (PyTorch 1.13's values; /tmp scripts in the commit message).
TEST(Autograd, RetainedBaseWrittenThroughAView) {
  Tensor x = from_vector<float>({1, 2, 3, 4}).requires_grad_();
  Tensor b = from_vector<float>({2, 2}).requires_grad_();
  Tensor base = x * 1;
  base.retain_grad();
  base.narrow(0, 1, 2).mul_(b);
  (base * base).sum().backward();
  EXPECT_EQ(base.grad().to_vector<float>(), (std::vector<float>{2, 16, 24, 8}));
  Tensor x2 = from_vector<float>({1, 2, 3}).requires_grad_();
  Tensor y = x2 * 1;
  y.retain_grad();
  y.add_(1);
  (y * y).sum().backward();
  EXPECT_EQ(y.grad().to_vector<float>(), (std::vector<float>{4, 6, 8}));
}

// next_functions in PyTorch's order and without the operands PyTorch takes
// as a Scalar or does not differentiate.
TEST(Autograd, NextFunctionsAsPyTorch) {
  auto names = [](const Tensor &t) {
    std::vector<std::string> out;
    for (const GradFnPtr &f : t.grad_fn()->next_functions())
      out.push_back(f ? f->name() : "None");
    return out;
  };
  using V = std::vector<std::string>;
  Tensor x = from_vector<float>({1, 2, 3, 4}).requires_grad_();
  Tensor bb = full({}, 3.0f).requires_grad_();
  Tensor base = x * 1;
  base.select(0, 1).mul_(bb);
  EXPECT_EQ(names(base), (V{"MulBackward0", "AccumulateGrad"}));
  Tensor z = zeros({4}).copy_(x);
  EXPECT_EQ(z.grad_fn()->name(), "CopyBackwards");
  EXPECT_EQ(names(z), (V{"None", "AccumulateGrad"}));
  EXPECT_EQ(names(x.pow(2)), (V{"AccumulateGrad"}));
  EXPECT_EQ(names(where(x > 2, x, x * 2)),
            (V{"AccumulateGrad", "MulBackward0"}));
  Tensor r = 1 - x;
  EXPECT_EQ(r.grad_fn()->name(), "RsubBackward1");
  EXPECT_EQ(names(r), (V{"AccumulateGrad"}));
  // A number on the left of + and *: x.add(2), x.mul(2.5), the tensor
  // first (PyTorch 1.13: (2.5 * x).grad_fn.next_functions ==
  // ((AccumulateGrad, 0), (None, 0)); 2 / x: MulBackward0 over
  // ReciprocalBackward0).
  EXPECT_EQ(names(2.5 * x), (V{"AccumulateGrad", "None"}));
  EXPECT_EQ(names(2 + x), (V{"AccumulateGrad", "None"}));
  EXPECT_EQ(names(2 / x), (V{"ReciprocalBackward0", "None"}));
  EXPECT_EQ((2.5 * x).to_vector<float>(), (x * 2.5).to_vector<float>());
}

// PyTorch's errors: grad() without inputs; reading the grad_fn of a view
// made in no-grad mode after its base was written with grad mode on.
TEST(Autograd, GradFnOfAStaleNoGradView) {
  Tensor x = from_vector<float>({1, 2, 3, 4}).requires_grad_();
  EXPECT_THROW(grad({(x * 2).sum()}, {}), Error);
  Tensor y = x * 1;
  Tensor v;
  {
    NoGradGuard guard;
    v = y.narrow(0, 0, 2);
  }
  y.narrow(0, 0, 2).mul_(x.narrow(0, 2, 2));
  EXPECT_THROW(v.grad_fn(), Error);
  EXPECT_THROW(v.is_leaf(), Error);
}

// Ops built of other ops show PyTorch's one node: its name and its inputs
// as next_functions, not the where and compares inside (PyTorch 1.13:
// x.clamp(0, 2).grad_fn.next_functions == ((AccumulateGrad, 0),)).
TEST(Autograd, CompositeOpsShowPyTorchsNode) {
  Tensor x = from_vector<double>({-1, 0.5, 3, 2, -2, 1}, {2, 3});
  x.requires_grad_();
  auto node = [](const Tensor &t) {
    std::vector<std::string> out{t.grad_fn()->name()};
    for (const GradFnPtr &f : t.grad_fn()->next_functions())
      out.push_back(f ? f->name() : "None");
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(node(x.clamp(0, 2)), (V{"ClampBackward1", "AccumulateGrad"}));
  EXPECT_EQ(node(x.clamp_min(0)), (V{"ClampMinBackward0", "AccumulateGrad"}));
  EXPECT_EQ(node(x.clamp_max(0)), (V{"ClampMaxBackward0", "AccumulateGrad"}));
  EXPECT_EQ(node(x.masked_fill(x > 0, 1.0)),
            (V{"MaskedFillBackward0", "AccumulateGrad"}));
  EXPECT_EQ(node(x.nan_to_num()), (V{"NanToNumBackward0", "AccumulateGrad"}));
  EXPECT_EQ(node(x.softmax(1)), (V{"SoftmaxBackward0", "AccumulateGrad"}));
  EXPECT_EQ(node(x.log_softmax(1)),
            (V{"LogSoftmaxBackward0", "AccumulateGrad"}));
  EXPECT_EQ(node((x * 2).clamp(0, 1)), (V{"ClampBackward1", "MulBackward0"}));
  // The gradient still flows through what the composite is made of.
  Tensor s = x.softmax(1);
  (s * from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3})).sum().backward();
  std::vector<double> sv = s.to_vector<double>(),
                      g = x.grad().to_vector<double>();
  for (int r = 0; r < 2; ++r) {
    double dot = 0;
    for (int c = 0; c < 3; ++c)
      dot += sv[r * 3 + c] * (r * 3 + c + 1);
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(g[r * 3 + c], sv[r * 3 + c] * (r * 3 + c + 1 - dot), 1e-12);
  }
}
