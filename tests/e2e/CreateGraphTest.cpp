//===- CreateGraphTest.cpp - second derivatives (create_graph) ------------===//
//
// grad(..., create_graph = true) and backward(..., create_graph = true):
// first gradients and Hessian-vector products against PyTorch 1.13's
// (e2e/data/create_graph_golden.txt, written by
// scripts/gen_create_graph_golden.py), the first gradient's own gradient
// against central finite differences (gradcheck of the gradient), and the
// errors of what is not supported yet.
//
//===----------------------------------------------------------------------===//
#include "../ops/OpsGolden.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

using namespace strata;
namespace F = strata::nn::functional;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor> &)>;

/// The strata side of every case of gen_create_graph_golden.py.
std::map<std::string, Fn> cases() {
  std::map<std::string, Fn> m;
  for (std::string s : {"_f32", "_f64"}) {
    m["cube" + s] = [](auto &in) { return (in[0] * in[0] * in[0]).sum(); };
    m["tanh_mul" + s] = [](auto &in) {
      return ((in[0] * in[1]).tanh() * in[0].t().t()).sum();
    };
    m["matmul_tanh" + s] = [](auto &in) {
      return in[0].matmul(in[1]).tanh().sum();
    };
    m["mlp" + s] = [](auto &in) {
      return (in[0].matmul(in[1]) + in[2]).tanh().matmul(in[3]).pow(2).mean();
    };
    m["softmax_amax" + s] = [](auto &in) {
      return in[0].softmax(1).log().mean() + in[0].exp().amax();
    };
    m["views" + s] = [](auto &in) {
      return (in[0].t().reshape({-1}) * in[1].expand({2, 3}).reshape({-1}))
                 .sigmoid()
                 .sum() +
             in[0].slice(0, 1).slice(1, 0, 2, 2).exp().sum();
    };
    m["reductions" + s] = [](auto &in) {
      const Tensor &x = in[0];
      return x.sum(0).pow(2).sum() + x.mean(1).exp().sum() + x.var(1).sum() +
             x.prod(1).sum();
    };
    m["piecewise" + s] = [](auto &in) {
      const Tensor &x = in[0];
      return (x.relu().pow(3) + x.clamp(-0.5, 0.5).pow(2) +
              where(x > 0.2, x.sin(), x.cos() * x))
          .sum();
    };
    m["div_sqrt_log" + s] = [](auto &in) {
      const Tensor &x = in[0];
      return (x.abs() + 1).log().sum() +
             (x * x + 1).sqrt().div(in[1].exp()).sum();
    };
    m["cumsum" + s] = [](auto &in) {
      return in[0].cumsum(1).pow(2).sum() + in[0].cumprod(0).sum();
    };
    m["cross_entropy" + s] = [](auto &in) {
      return F::cross_entropy(in[0], in[1]);
    };
    m["gather" + s] = [](auto &in) {
      return in[0].gather(1, in[1]).pow(2).sum() * in[0].sum();
    };
    m["layer_norm" + s] = [](auto &in) {
      return F::layer_norm(
                 in[0], F::LayerNormFuncOptions({4}).weight(in[1]).bias(in[2]))
          .pow(2)
          .sum();
    };
    m["flip" + s] = [](auto &in) {
      const Tensor &x = in[0];
      return (x.flip({0}) * x).pow(2).sum() + (x.flip({0}).cumsum(0) * x).sum();
    };
    m["unfold_tril" + s] = [s](auto &in) {
      DType t = s == "_f32" ? kFloat32 : kFloat64;
      return in[0].unfold(0, 2, 1).pow(3).sum() + in[1].tril().pow(3).sum() +
             (in[0] * arange(6, t)).pow(2).sum();
    };
    m["prod_zero" + s] = [](auto &in) {
      return in[0].prod() + in[0].prod(1).pow(2).sum();
    };
    m["relu_abs" + s] = [](auto &in) {
      return in[0].relu().sum() + (in[0].abs() * in[0]).sum();
    };
  }
  return m;
}

/// |got - want| <= atol + rtol * |want| elementwise.
void expectClose(const Tensor &got, const Tensor &want, const std::string &what,
                 double rtol, double atol) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i)
    if (!(std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]))) {
      ++bad;
      ADD_FAILURE() << what << "[" << i << "]: strata " << g[i] << ", PyTorch "
                    << w[i];
    }
}

const std::vector<opsgolden::Case> &goldenCases() {
  static std::vector<opsgolden::Case> c =
      opsgolden::load(STRATA_CREATE_GRAPH_GOLDEN);
  return c;
}

/// The case's inputs as fresh leaves, the floating-point ones requiring
/// grad.
std::vector<Tensor> inputs(const opsgolden::Case &c) {
  std::vector<Tensor> in;
  for (int k = 0; c.has("in" + std::to_string(k)); ++k) {
    Tensor t = c.at("in" + std::to_string(k)).clone();
    if (t.dtype() == kFloat32 || t.dtype() == kFloat64)
      t.requires_grad_();
    in.push_back(t);
  }
  return in;
}

void checkCase(const opsgolden::Case &c, const Fn &fn);

TEST(CreateGraph, SecondDerivativesMatchPyTorch) {
  auto table = cases();
  std::set<std::string> seen;
  for (const opsgolden::Case &c : goldenCases()) {
    SCOPED_TRACE(c.name);
    auto it = table.find(c.name);
    ASSERT_NE(it, table.end()) << "no strata side for golden case " << c.name;
    seen.insert(c.name);
    try {
      checkCase(c, it->second);
    } catch (const Error &e) {
      ADD_FAILURE() << c.name << ": " << e.what();
    }
  }
  for (auto &[name, fn] : table)
    EXPECT_TRUE(seen.count(name)) << name << " has no golden case";
}

void checkCase(const opsgolden::Case &c, const Fn &fn) {
  {
    std::vector<Tensor> in = inputs(c);
    bool f32 = c.at("f").dtype() == kFloat32;
    double rtol = f32 ? 1e-4 : 1e-9, atol = f32 ? 1e-5 : 1e-10;
    Tensor f = fn(in);
    expectClose(f, c.at("f"), "f", rtol, atol);
    std::vector<Tensor> diff;
    std::vector<int> index;
    for (size_t k = 0; k < in.size(); ++k)
      if (in[k].requires_grad()) {
        diff.push_back(in[k]);
        index.push_back(static_cast<int>(k));
      }
    std::vector<Tensor> g =
        grad({f}, diff, {}, std::nullopt, /*create_graph=*/true);
    Tensor s;
    for (size_t k = 0; k < g.size(); ++k) {
      std::string j = std::to_string(index[k]);
      EXPECT_TRUE(g[k].requires_grad()) << "g" << j << " has no history";
      expectClose(g[k], c.at("g" + j), "g" + j, rtol, atol);
      Tensor term = (g[k] * c.at("c" + j)).sum();
      s = s.defined() ? s + term : term;
    }
    s.backward();
    for (int j : index) {
      std::string key = "h" + std::to_string(j);
      if (c.has(key))
        expectClose(in[j].grad(), c.at(key), key, rtol, atol);
      else
        EXPECT_FALSE(in[j].grad().defined()) << key << " should be None";
    }
  }
}

/// The gradient of the first gradient against central finite differences
/// of the first gradient (computed by strata's first-order backward, which
/// the rest of the suite checks): a wrong replay is caught without PyTorch.
TEST(CreateGraph, GradientOfTheGradientMatchesFiniteDifferences) {
  manual_seed(3);
  struct Case {
    const char *name;
    Shape wSizes;
    std::function<Tensor(const Tensor &, const Tensor &)> f;
  };
  std::vector<Case> fs = {
      {"tanh_matmul",
       {4, 2},
       [](const Tensor &x, const Tensor &w) {
         return x.matmul(w).tanh().pow(2).sum();
       }},
      {"softplus_views",
       {4},
       [](const Tensor &x, const Tensor &w) {
         return (x.t() * w.unsqueeze(1)).softplus().sum() +
                x.narrow(1, 1, 2).exp().mean();
       }},
      {"sigmoid_log_softmax",
       {4},
       [](const Tensor &x, const Tensor &w) {
         return (x.log_softmax(1) * w.sigmoid().unsqueeze(0)).sum();
       }},
  };
  for (const Case &c : fs) {
    SCOPED_TRACE(c.name);
    Tensor x = randn({3, 4}, kFloat64), w = randn(c.wSizes, kFloat64);
    const auto &f = c.f;
    // fn(x, w) = d f / d x, a function of both.
    // (gradcheck's finite differences call it with tensors that do not
    // require grad.)
    auto fn = [&](const std::vector<Tensor> &in) {
      AutoGradMode enable(true); // (its finite differences run without)
      Tensor x =
          in[0].requires_grad() ? in[0] : in[0].detach().requires_grad_();
      return grad({f(x, in[1])}, {x}, {}, std::nullopt, true)[0];
    };
    GradcheckResult r = gradcheck(fn, {x, w});
    EXPECT_TRUE(r.ok) << r.message;
  }
}

/// backward(create_graph) leaves .grad with a history: the second backward
/// accumulates the Hessian-vector product into the same .grad (PyTorch's
/// out-of-place accumulation: the first .grad tensor is not changed).
TEST(CreateGraph, BackwardCreateGraphAccumulates) {
  Tensor x = from_vector<double>({0.5, -1.0, 2.0}, {3}).requires_grad_();
  (x * x * x).sum().backward({}, std::nullopt, /*create_graph=*/true);
  Tensor g = x.grad();
  ASSERT_TRUE(g.requires_grad());
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0.75, 3.0, 12.0}));
  // A first-order backward adds into .grad in place, as PyTorch's
  // AccumulateGrad without grad mode: g is that tensor (3x^2 + 6x).
  g.sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(),
            (std::vector<double>{3.75, -3.0, 24.0}));
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{3.75, -3.0, 24.0}));
  // With create_graph the sum is recorded out of place: the .grad tensor
  // read before is unchanged, the new one has a history.
  Tensor y = from_vector<double>({1.0, 2.0}, {2}).requires_grad_();
  (y * y).sum().backward({}, std::nullopt, true);
  Tensor first = y.grad();
  (y * y * y).sum().backward({}, std::nullopt, true);
  EXPECT_EQ(first.to_vector<double>(), (std::vector<double>{2.0, 4.0}));
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{5.0, 16.0}));
  ASSERT_TRUE(y.grad().requires_grad());
  std::vector<Tensor> h = grad({y.grad().sum()}, {y}); // 2 + 6y
  EXPECT_EQ(h[0].to_vector<double>(), (std::vector<double>{8.0, 14.0}));
}

/// grad_outputs that require grad: the gradient is a function of them too.
TEST(CreateGraph, GradOutputsTakePart) {
  Tensor x = from_vector<double>({1.0, 2.0}, {2}).requires_grad_();
  Tensor v = from_vector<double>({3.0, -1.0}, {2}).requires_grad_();
  Tensor y = x.exp();
  Tensor g = grad({y}, {x}, {v}, std::nullopt, true)[0]; // v * exp(x)
  std::vector<Tensor> h = grad({g.sum()}, {x, v});
  EXPECT_NEAR(h[0].to_vector<double>()[0], 3.0 * std::exp(1.0), 1e-12);
  EXPECT_NEAR(h[0].to_vector<double>()[1], -std::exp(2.0), 1e-12);
  EXPECT_NEAR(h[1].to_vector<double>()[0], std::exp(1.0), 1e-12);
  EXPECT_NEAR(h[1].to_vector<double>()[1], std::exp(2.0), 1e-12);
}

/// A detach() still cuts in the recorded gradient: d/dw (x * w.detach())
/// = 0 in the second derivative, as PyTorch's.
TEST(CreateGraph, DetachCutsTheSecondDerivative) {
  Tensor x = from_vector<double>({1.0, 2.0}, {2}).requires_grad_();
  Tensor w = from_vector<double>({3.0, 4.0}, {2}).requires_grad_();
  Tensor f = (x * x * w.detach()).sum() + (x * w).sum();
  Tensor g = grad({f}, {x}, {}, false, true)[0]; // 2 x w + w
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{9.0, 20.0}));
  std::vector<Tensor> h = grad({g.sum()}, {w});
  EXPECT_EQ(h[0].to_vector<double>(), (std::vector<double>{1.0, 1.0}));
}

/// A third derivative, through a reversed scan (cumsum's gradient) and a
/// flip: f = sum(cumsum(x)^3) along a row of 3.
TEST(CreateGraph, ThirdDerivativeThroughScans) {
  Tensor x = from_vector<double>({1, 2, 3}, {3}).requires_grad_();
  Tensor g = grad({x.cumsum(0).pow(3).sum()}, {x}, {}, {}, true)[0];
  Tensor h = grad({g.sum()}, {x}, {}, {}, true)[0];
  Tensor k = grad({h.sum()}, {x})[0];
  // c = cumsum(x) = (1, 3, 6); g_i = sum_{j>=i} 3 c_j^2;
  // sum(g) = sum_j 3 (j+1) c_j^2; h_i = sum_{j>=i} 6 (j+1) c_j;
  // sum(h) = sum_j 6 (j+1)^2 c_j; k_i = sum_{j>=i} 6 (j+1)^2 = 84, 78, 54.
  EXPECT_EQ(k.to_vector<double>(), (std::vector<double>{84, 78, 54}));
}

/// The gradient of a piecewise-linear op requires grad (PyTorch's backward
/// reads a saved tensor that does), with a zero derivative.
TEST(CreateGraph, PiecewiseLinearGradientsRequireGrad) {
  Tensor x = from_vector<float>({-2, 0.5, 3}, {3}).requires_grad_();
  Tensor g = grad({x.relu().sum()}, {x}, {}, {}, true)[0];
  ASSERT_TRUE(g.requires_grad());
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{0, 1, 1}));
  EXPECT_EQ(grad({g.sum()}, {x})[0].to_vector<float>(),
            (std::vector<float>{0, 0, 0}));
  // (An empty input's gradient is a fill after strata's folding: it does
  // not require grad, where PyTorch's pow backward's would.)
  Tensor z = zeros({0, 3}, kFloat64).requires_grad_();
  Tensor gz = grad({z.pow(2).sum()}, {z}, {}, {}, true)[0];
  EXPECT_EQ(gz.sizes(), (Shape{0, 3}));
}

/// A write in no-grad mode into a tensor the gradient flows through keeps
/// its value and continues the old version's history (PyTorch's), under
/// create_graph too: y = 2x, then y *= 3 untracked (y is 6x, its history
/// 2x); f = sum(y^2): df/dx = 2 y * 2 = 24 x, and d/dx sum(4 y) through
/// the history = 8 (PyTorch's values).
TEST(CreateGraph, UntrackedWriteInsideTheGraph) {
  Tensor x = from_vector<double>({1.0, 2.0}, {2}).requires_grad_();
  Tensor y = x * 2;
  y.detach().mul_(3);
  Tensor g = grad({(y * y).sum()}, {x}, {}, {}, true)[0];
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{24.0, 48.0}));
  EXPECT_EQ(grad({g.sum()}, {x})[0].to_vector<double>(),
            (std::vector<double>{8.0, 8.0}));
}

/// A gradient with respect to a non-leaf (an intermediate).
TEST(CreateGraph, NonLeafTarget) {
  Tensor x = from_vector<double>({0.5, 1.5}, {2}).requires_grad_();
  Tensor h = x * 2;
  Tensor f = (h * h * h).sum();
  Tensor g = grad({f}, {h}, {}, std::nullopt, true)[0]; // 3 h^2 = 12 x^2
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{3.0, 27.0}));
  std::vector<Tensor> d = grad({g.sum()}, {x}); // 24 x
  EXPECT_EQ(d[0].to_vector<double>(), (std::vector<double>{12.0, 36.0}));
}

} // namespace

namespace {

/// retain_graph defaults to create_graph (PyTorch's): the forward graph
/// stays for a loss that reads both the output and its gradient.
TEST(CreateGraph, RetainGraphDefaultsToCreateGraph) {
  Tensor w = from_vector<double>({0.5, -1.0}, {2, 1}).requires_grad_();
  Tensor x = from_vector<double>({1, 2, 3, 4}, {2, 2}).requires_grad_();
  Tensor out = x.matmul(w).tanh();
  Tensor gx = grad({out.sum()}, {x}, {}, std::nullopt, true)[0];
  (out.pow(2).mean() + gx.pow(2).sum()).backward();
  ASSERT_TRUE(w.grad().defined());
  // With retain_graph = false the forward graph is freed, as PyTorch's.
  Tensor y = x.matmul(w).tanh();
  Tensor gy = grad({y.sum()}, {x}, {}, false, true)[0];
  EXPECT_THROW((y.sum() + gy.sum()).backward(), Error);
}

} // namespace

namespace {

// A create_graph gradient's graph reaches the forward's own ops through
// their saved tensors (x4 = x3 * x3's double backward reads x3, through
// x3's grad_fn): a backward through the gradient without retain_graph
// frees those ops, and a later backward through them raises, as PyTorch's
// engine does; one that reaches only ops not freed runs. Each case's
// outcome is what PyTorch 1.13 does with the same calls
// (torch.autograd.grad(..., create_graph=True), then .backward() /
// torch.autograd.grad of a function of the gradient and of the forward,
// each run in /usr/bin/python3); the values are PyTorch's too.

const char *const kSecond =
    "Trying to backward through the graph a second time";

/// "second time" when `f` raises it, "ok" when it runs; another error fails.
std::string outcome(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    std::string what = e.what();
    if (what.find(kSecond) != std::string::npos)
      return "second time";
    ADD_FAILURE() << "unexpected error: " << what;
    return what;
  }
  return "ok";
}

Tensor f64(std::vector<double> v, Shape sizes) {
  return from_vector<double>(std::move(v), std::move(sizes));
}

void expectNear(const Tensor &t, const std::vector<double> &want) {
  ASSERT_TRUE(t.defined());
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-9 * (1 + std::abs(want[i]))) << i;
}

/// The fuzz program of seed 12155034 (torch_fuzz.py --autograd 1): the
/// gradient's graph reaches x3's MulBackward0, which x8.backward() frees.
/// PyTorch: the seed's program, with x1 = ones; retain_graph=True on the
/// first backward (or on x9's, run first) keeps it: x0.grad 588, -1716.
TEST(CreateGraphFreed, BackwardOfTheGradientFreesTheForwardItReaches) {
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    bool retain = variant & 1, reversed = variant & 2;
    Tensor x0 = f64({0.5, -1.5}, {2, 1}).requires_grad_();
    Tensor x1 = ones({2, 3, 2, 2}, kFloat64);
    Tensor x3 = x1.detach() * x0;
    Tensor x5 = (x3 * x3).sum();
    Tensor x6 = grad({x5}, {x0}, {}, std::nullopt, true)[0];
    Tensor x8 = (x6 * x6).sum();
    std::string got;
    if (!reversed) {
      x8.backward({}, retain);
      got = outcome([&] { x3.sum().backward(); });
    } else {
      x3.sum().backward({}, retain);
      got = outcome([&] { x8.backward(); });
    }
    EXPECT_EQ(got, retain ? "ok" : "second time");
    if (retain)
      expectNear(x0.grad(), {588, -1716});
  }
}

/// Grad of grad, with and without retain_graph, then the forward again.
/// PyTorch: y = x.exp(); f = (y*y).sum(); g = grad(f, x, create_graph);
/// grad(g.sum(), x[, retain_graph=True]); f.backward().
TEST(CreateGraphFreed, GradOfGradThenTheForward) {
  for (bool retain : {false, true}) {
    SCOPED_TRACE(retain);
    Tensor x = f64({1, 2}, {2}).requires_grad_();
    Tensor y = x.exp();
    Tensor f = (y * y).sum();
    Tensor g = grad({f}, {x}, {}, std::nullopt, true)[0];
    grad({g.sum()}, {x}, {}, retain);
    EXPECT_EQ(outcome([&] { f.backward(); }), retain ? "ok" : "second time");
    if (retain)
      expectNear(x.grad(), {14.778112197861299, 109.19630006628849});
  }
}

/// Which forward ops the gradient reaches: exp saves its result (its own
/// node is reached), sin its input (a leaf: nothing of the forward is).
/// PyTorch: g = grad(y.sum(), x, create_graph); g.sum().backward();
/// y.sum().backward() for y = x.exp() (raises) and y = x.sin() (runs:
/// x.grad = -sin(x) + cos(x)).
TEST(CreateGraphFreed, OnlyTheOpsTheGradientReaches) {
  for (bool exp : {true, false}) {
    SCOPED_TRACE(exp);
    Tensor x = f64({1, 2}, {2}).requires_grad_();
    Tensor y = exp ? x.exp() : x.sin();
    Tensor f = y.sum();
    Tensor g = grad({f}, {x}, {}, std::nullopt, true)[0];
    g.sum().backward();
    EXPECT_EQ(outcome([&] { f.backward(); }), exp ? "second time" : "ok");
    if (!exp)
      expectNear(x.grad(), {-0.30116867893975674, -1.325444263372824});
  }
  // a = x.sin() (saves the leaf x), b = a * w (saves a and w): the
  // gradient w * cos(x) reaches leaves only. PyTorch: x.grad after
  // g.sum().backward(); b.sum().backward() is 0.26855..., 0.31255....
  Tensor x = f64({0.1, 0.2}, {2}).requires_grad_();
  Tensor w = f64({0.3, 0.4}, {2}).requires_grad_();
  Tensor b = x.sin() * w;
  Tensor g = grad({b.sum()}, {x}, {}, std::nullopt, true)[0];
  g.sum().backward();
  EXPECT_EQ(outcome([&] { b.sum().backward(); }), "ok");
  expectNear(x.grad(), {0.2685512245893592, 0.31255889881847215});
}

/// Outputs sharing the subgraph the gradient reaches: a = x * w, read by
/// the loss (a * a) and later by another output (through a view, or an op
/// above it whose own node was not freed). PyTorch: g = grad((a*a).sum(),
/// w, create_graph); g.sum().backward(); then (a*3).sum().backward(),
/// a.view(-1).sum().backward(), a.sin().sum().backward(): each raises.
TEST(CreateGraphFreed, AnotherOutputSharingTheSubgraph) {
  for (int reader = 0; reader < 3; ++reader) {
    SCOPED_TRACE(reader);
    Tensor x = f64({1, 2, 3, 4}, {2, 2}).requires_grad_();
    Tensor w = f64({0.5, 0.25, 2, 1}, {2, 2}).requires_grad_();
    Tensor a = x * w;
    Tensor v = a.view({-1});
    Tensor g = grad({(v * v).sum()}, {w}, {}, std::nullopt, true)[0];
    g.sum().backward();
    Tensor out = reader == 0   ? (a * 3).sum()
                 : reader == 1 ? v.sum()
                               : a.sin().sum();
    EXPECT_EQ(outcome([&] { out.backward(); }), "second time");
  }
}

/// In-place ops between the forward and the op whose gradient reads it:
/// a = x * w, then a.add_(1), a.mul_(2) or a[0:1].mul_(2); b = a * a.
/// PyTorch: g = grad(b.sum(), w, create_graph); g.sum().backward();
/// a.sum().backward() raises in each case.
TEST(CreateGraphFreed, InPlaceOpsInBetween) {
  for (int op = 0; op < 3; ++op) {
    SCOPED_TRACE(op);
    Tensor x = f64({1, 2}, {2}).requires_grad_();
    Tensor w = f64({3, 4}, {2}).requires_grad_();
    Tensor a = x * w;
    if (op == 0)
      a.add_(1);
    else if (op == 1)
      a.mul_(2);
    else
      a.narrow(0, 0, 1).mul_(2);
    Tensor g = grad({(a * a).sum()}, {w}, {}, std::nullopt, true)[0];
    g.sum().backward();
    EXPECT_EQ(outcome([&] { a.sum().backward(); }), "second time");
  }
}

/// backward(create_graph) leaves .grad with the graph; its backward frees
/// what it reaches. PyTorch: f = ((x*w)*(x*w)).sum();
/// f.backward(create_graph=True); w.grad.sum().backward(); f.backward()
/// raises.
TEST(CreateGraphFreed, BackwardCreateGraphThenItsGradThenTheForward) {
  Tensor x = f64({1, 2}, {2}).requires_grad_();
  Tensor w = f64({3, 4}, {2}).requires_grad_();
  Tensor a = x * w;
  Tensor f = (a * a).sum();
  f.backward({}, std::nullopt, true);
  Tensor gw = w.grad();
  w.mutable_grad() = Tensor();
  x.mutable_grad() = Tensor();
  gw.sum().backward();
  EXPECT_EQ(outcome([&] { f.backward(); }), "second time");
}

/// A third derivative's backward frees the second's graph and the
/// forward's. PyTorch: g = grad(y.sum(), x, create_graph); h = grad(g.sum(),
/// x, create_graph); h.sum().backward(); then g.sum().backward() (y = x^3)
/// and y.sum().backward() (y = exp(x * x)) raise.
TEST(CreateGraphFreed, ThirdDerivative) {
  for (bool forward : {false, true}) {
    SCOPED_TRACE(forward);
    Tensor x = f64({1, 2}, {2}).requires_grad_();
    Tensor y = forward ? (x * x).exp() : x * x * x;
    Tensor g = grad({y.sum()}, {x}, {}, std::nullopt, true)[0];
    Tensor h = grad({g.sum()}, {x}, {}, std::nullopt, true)[0];
    h.sum().backward();
    EXPECT_EQ(outcome([&] { (forward ? y : g).sum().backward(); }),
              "second time");
  }
}

/// grad() runs only the ops between its outputs and inputs: the gradient's
/// copy of an op on no path to them is not run, and frees nothing.
/// PyTorch: a = x * w; b = w.exp(); f = (a*a).sum() + (b*b).sum();
/// gw = grad(f, w, create_graph); grad(gw.sum(), x); then
/// b.sum().backward() runs and a.sum().backward() raises.
TEST(CreateGraphFreed, GradFreesOnlyThePathToItsInputs) {
  Tensor x = f64({1, 2}, {2}).requires_grad_();
  Tensor w = f64({3, 4}, {2}).requires_grad_();
  Tensor a = x * w, b = w.exp();
  Tensor f = (a * a).sum() + (b * b).sum();
  Tensor gw = grad({f}, {w}, {}, std::nullopt, true)[0];
  grad({gw.sum()}, {x});
  EXPECT_EQ(outcome([&] { b.sum().backward(); }), "ok");
  EXPECT_EQ(outcome([&] { a.sum().backward(); }), "second time");
}

/// retain_graph=false on the create_graph call itself frees the forward
/// the gradient reads (the earlier tests leave it to default to
/// create_graph, as PyTorch's callers do). PyTorch:
/// g = grad(f, x, retain_graph=False, create_graph=True); g.sum().backward()
/// raises for f = (x*x*x).sum() (g reads x*x, whose node ran), runs for
/// f = (x*x).sum() (g reads the leaf only): x.grad = 2, 2.
TEST(CreateGraphFreed, RetainGraphFalseOnTheGradient) {
  for (bool cube : {true, false}) {
    SCOPED_TRACE(cube);
    Tensor x = f64({1, 2}, {2}).requires_grad_();
    Tensor f = cube ? (x * x * x).sum() : (x * x).sum();
    Tensor g = grad({f}, {x}, {}, false, true)[0];
    EXPECT_EQ(outcome([&] { g.sum().backward(); }),
              cube ? "second time" : "ok");
    if (!cube)
      expectNear(x.grad(), {2, 2});
  }
}

/// Op by op, which of y = op(h) and h = x * x the gradient's graph reaches
/// (the ops PyTorch's backward formula saves and reads differentiably):
/// the first of each pair is whether grad(y.sum(), {h}) then raises (y's
/// op freed), the second grad(h.sum(), {x}) (h's op freed). PyTorch: for
/// each op, x = [0.5, 1.25] requiring grad, h = x * x, y = op(h);
/// g = grad(y.sum(), x, create_graph=True); g.sum().backward(); then
/// grad(y.sum(), [h]) and (afresh) grad(h.sum(), [x]).
/// (Not here: relu and abs, whose formulas PyTorch makes differentiable
/// in the saved tensor with a zero derivative, reach y's op (relu) and h's
/// op (both) in PyTorch; strata's gradient of them reads h and y only
/// through comparisons, and does not.)
TEST(CreateGraphFreed, WhichForwardOpsEachGradientReaches) {
  using Op = std::function<Tensor(const Tensor &)>;
  struct Case {
    const char *name;
    Op op;
    bool yFreed, hFreed;
  };
  std::vector<Case> cases = {
      {"exp", [](const Tensor &h) { return h.exp(); }, true, true},
      {"sin", [](const Tensor &h) { return h.sin(); }, false, true},
      {"tanh", [](const Tensor &h) { return h.tanh(); }, true, true},
      {"sigmoid", [](const Tensor &h) { return h.sigmoid(); }, true, true},
      {"sqrt", [](const Tensor &h) { return h.sqrt(); }, true, true},
      {"log", [](const Tensor &h) { return h.log(); }, false, true},
      {"pow2", [](const Tensor &h) { return h.pow(2); }, false, true},
      {"pow3", [](const Tensor &h) { return h.pow(3); }, false, true},
      {"mulself", [](const Tensor &h) { return h * h; }, false, true},
      {"reciprocal", [](const Tensor &h) { return 1.0 / h; }, true, true},
      {"mean", [](const Tensor &h) { return (h * h).mean(); }, false, true},
      {"cumsum", [](const Tensor &h) { return h.cumsum(0); }, false, false},
      {"cumprod", [](const Tensor &h) { return h.cumprod(0); }, true, true},
      {"amax", [](const Tensor &h) { return h.amax(0); }, false, false},
      {"matmul",
       [](const Tensor &h) { return h.unsqueeze(0).matmul(h.unsqueeze(1)); },
       false, true},
      {"softplus", [](const Tensor &h) { return h.softplus(); }, false, true},
      {"clone", [](const Tensor &h) { return h.clone() * h; }, false, true},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    for (bool ofY : {true, false}) {
      Tensor x = f64({0.5, 1.25}, {2}).requires_grad_();
      Tensor h = x * x;
      Tensor y = c.op(h);
      Tensor g = grad({y.sum()}, {x}, {}, std::nullopt, true)[0];
      ASSERT_TRUE(g.requires_grad());
      g.sum().backward();
      std::string got = outcome([&] {
        if (ofY)
          grad({y.sum()}, {h});
        else
          grad({h.sum()}, {x});
      });
      EXPECT_EQ(got, (ofY ? c.yFreed : c.hFreed) ? "second time" : "ok")
          << (ofY ? "y's op" : "h's op");
    }
  }
}

/// The forward's ops the gradient reaches are checked as PyTorch's engine
/// checks them when it runs them: their saved tensors' versions. PyTorch:
/// x = [1, 2] requiring grad, h = x * x; g = grad(y.sum(), x,
/// create_graph=True); then an in-place y.mul_(2); g.sum().backward()
/// raises "...modified by an inplace operation: [torch.DoubleTensor [2]],
/// which is output 0 of ExpBackward0, ..." for y = h.exp() (exp saves its
/// result), and runs for y = h.sin() (sin saves h, not y): x.grad =
/// -2.28527..., 10.80155....
TEST(CreateGraphFreed, SavedVersionsOfTheForwardItReaches) {
  for (bool exp : {true, false}) {
    SCOPED_TRACE(exp);
    Tensor x = f64({1, 2}, {2}).requires_grad_();
    Tensor h = x * x;
    Tensor y = exp ? h.exp() : h.sin();
    Tensor g = grad({y.sum()}, {x}, {}, std::nullopt, true)[0];
    y.mul_(2);
    std::string e;
    try {
      g.sum().backward();
    } catch (const Error &err) {
      e = err.what();
    }
    if (exp) {
      EXPECT_NE(e.find("modified by an inplace operation: "
                       "[torch.DoubleTensor [2]], which is output 0 of "
                       "ExpBackward0, is at version 1; expected version 0"),
                std::string::npos)
          << e;
    } else {
      EXPECT_EQ(e, "");
      expectNear(x.grad(), {-2.2852793274953065, 10.801552683199628});
    }
  }
}

} // namespace
