//===- SegmentedBackwardTest.cpp - long backwards run in segments ---------===//
//
// backward() of a graph of more than 256 ops runs as segments of 128 ops
// (AutogradEngine.cpp, backwardInSegments; docs/design.md "Deep
// programs"): each segment's gradient program reads the values it needs
// from the segments below as leaves, and seeds them with its gradients.
// Every gradient here is checked against the same network differentiated
// by hand in double precision (a loop in the test), not against strata's
// other backward path; what the segments must keep of PyTorch's engine
// (its checks of saved tensors, retain_graph) is checked by its messages.
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include "../../../dsl/lib/WriteLocs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace strata;

namespace {

void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 double rel, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], rel * (1.0 + std::abs(want[i])))
        << what << " element " << i;
}

/// Expects some backward to have run in segments before it goes.
struct ExpectSegmented {
  int64_t before = backward_segments();
  ~ExpectSegmented() {
    EXPECT_GT(backward_segments(), before) << "ran as one program";
  }
};

std::vector<float> values(int64_t n, double scale, double shift) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(std::sin(0.7 * i + shift) * scale);
  return v;
}

TEST(SegmentedBackward, ChainAndItsRepeatedSegmentsCompileOnce) {
  // y = x * c^n: the segments between the first and the last have one
  // structure, so a longer chain of the same step prepares at most the
  // one new (shorter) segment at the leaves.
  for (int64_t n : {3000, 6000}) {
    int64_t before = backward_compiles(), segments = backward_segments();
    double c = 1.0 - 1.0 / 3000.0;
    Tensor x = from_vector(values(16, 1.0, 0.3), {16}).requires_grad_();
    Tensor y = x;
    for (int64_t i = 0; i < n; ++i)
      y = y * c;
    y.sum().backward();
    std::vector<double> want(16, std::pow(static_cast<float>(c), n));
    expectClose(x.grad().to_vector<float>(), want, 1e-4,
                "n=" + std::to_string(n));
    EXPECT_EQ(backward_segments() - segments, (n + 1 + 127) / 128);
    if (n == 3000) {
      EXPECT_LE(backward_compiles() - before, 4) << "n=3000";
    } else {
      EXPECT_LE(backward_compiles() - before, 1)
          << "a longer chain of the same step prepared new segments";
    }
  }
}

TEST(SegmentedBackward, RecurrentCellWithAWeightReadEverywhere) {
  ExpectSegmented segmented;
  // h <- tanh(h * w + b_t), n steps, loss = sum(h_n): w is read by every
  // segment, so its gradient is the sum of every segment's part.
  const int64_t n = 1500, d = 8;
  std::vector<float> h0 = values(d, 0.5, 0.1), w0 = values(d, 1.1, 0.9);
  Tensor h = from_vector(h0, {d}).requires_grad_();
  Tensor w = from_vector(w0, {d}).requires_grad_();
  Tensor s = h;
  std::vector<std::vector<float>> bias(n);
  for (int64_t t = 0; t < n; ++t) {
    bias[t] = values(d, 0.2, 0.01 * t);
    s = (s * w + from_vector(bias[t], {d})).tanh();
  }
  s.sum().backward();
  // By hand: forward values in double, then the adjoints.
  std::vector<std::vector<double>> hs(n + 1, std::vector<double>(d));
  for (int64_t i = 0; i < d; ++i)
    hs[0][i] = h0[i];
  for (int64_t t = 0; t < n; ++t)
    for (int64_t i = 0; i < d; ++i)
      hs[t + 1][i] = std::tanh(hs[t][i] * w0[i] + bias[t][i]);
  std::vector<double> g(d, 1.0), gw(d, 0.0);
  for (int64_t t = n; t-- > 0;)
    for (int64_t i = 0; i < d; ++i) {
      double pre = g[i] * (1 - hs[t + 1][i] * hs[t + 1][i]);
      gw[i] += pre * hs[t][i];
      g[i] = pre * w0[i];
    }
  expectClose(h.grad().to_vector<float>(), g, 1e-4, "dh0");
  expectClose(w.grad().to_vector<float>(), gw, 1e-3, "dw");
}

TEST(SegmentedBackward, SkipConnectionsAcrossSegments) {
  ExpectSegmented segmented;
  // y_{t+1} = y_t * a + y_{t-300} * b: reads reach 300 steps back, across
  // segment boundaries, so a boundary gets gradients from two segments.
  const int64_t n = 1400, lag = 300, d = 4;
  const double a = 0.999, b = 0.002;
  std::vector<float> x0 = values(d, 1.0, 0.4);
  Tensor x = from_vector(x0, {d}).requires_grad_();
  std::vector<Tensor> ys{x};
  for (int64_t t = 0; t < n; ++t) {
    Tensor next = ys.back() * a;
    if (t >= lag)
      next = next + ys[t - lag] * b;
    ys.push_back(next);
  }
  Tensor last = ys.back();
  ys.resize(1); // (the graph keeps what backward needs)
  (last * last).sum().backward();
  // By hand (the recurrence is linear in x: the same adjoint per element).
  std::vector<double> coef(n + 1, 0.0); // y_t = coef_t * x
  coef[0] = 1;
  for (int64_t t = 0; t < n; ++t)
    coef[t + 1] = coef[t] * static_cast<float>(a) +
                  (t >= lag ? coef[t - lag] * static_cast<float>(b) : 0.0);
  std::vector<double> want(d);
  for (int64_t i = 0; i < d; ++i)
    want[i] = 2 * coef[n] * x0[i] * coef[n];
  expectClose(x.grad().to_vector<float>(), want, 1e-3, "dx");
}

TEST(SegmentedBackward, ViewsAndDetachedReadsBetweenSegments) {
  ExpectSegmented segmented;
  // y <- y.t() * m + y.detach() * 1e-3 on a 4x4 tensor: the transposed read
  // crosses boundaries as a view of the value below; the detached read
  // passes no gradient.
  const int64_t n = 1200, r = 4;
  std::vector<float> x0 = values(r * r, 1.0, 0.2), m0(r * r);
  for (int64_t i = 0; i < r * r; ++i)
    m0[i] = static_cast<float>(0.999 + 0.0005 * std::cos(i));
  Tensor x = from_vector(x0, {r, r}).requires_grad_();
  Tensor m = from_vector(m0, {r, r});
  Tensor y = x;
  for (int64_t t = 0; t < n; ++t)
    y = y.t() * m + y.detach() * 1e-3;
  y.sum().backward();
  // d y_{t+1}[i][j] / d y_t[j][i] = m[i][j] (the detached term adds none).
  std::vector<double> g(r * r, 1.0);
  for (int64_t t = 0; t < n; ++t) {
    std::vector<double> prev(r * r);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < r; ++j)
        prev[j * r + i] = g[i * r + j] * m0[i * r + j];
    g = prev;
  }
  expectClose(x.grad().to_vector<float>(), g, 1e-3, "dx");
}

TEST(SegmentedBackward, SecondBackwardNeedsRetainGraph) {
  ExpectSegmented segmented;
  const int64_t n = 1000;
  Tensor x = ones({4}).requires_grad_();
  Tensor y = x;
  for (int64_t t = 0; t < n; ++t)
    y = (y * 0.999).sin();
  Tensor loss = y.sum();
  loss.backward({}, true);
  std::vector<float> once = x.grad().to_vector<float>();
  loss.backward(); // retained: runs again, and accumulates
  std::vector<float> twice = x.grad().to_vector<float>();
  std::vector<double> want(once.begin(), once.end());
  for (double &v : want)
    v *= 2;
  expectClose(twice, want, 1e-6, "accumulated");
  // By hand: d sin(0.999 y)/dy = 0.999 cos(0.999 y).
  double v = 1, dv = 1;
  for (int64_t t = 0; t < n; ++t) {
    dv *= static_cast<float>(0.999) * std::cos(static_cast<float>(0.999) * v);
    v = std::sin(static_cast<float>(0.999) * v);
  }
  expectClose(once, std::vector<double>(4, dv), 1e-4, "first backward");
  try {
    loss.backward();
    FAIL() << "a third backward through freed saved tensors ran";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("Trying to backward through the "
                                         "graph a second time"),
              std::string::npos)
        << e.what();
  }
}

TEST(SegmentedBackward, AnInPlaceWriteToASavedTensorIsRefused) {
  ExpectSegmented segmented;
  // sin saves its input: writing that input in place after the forward
  // makes PyTorch's backward refuse, whichever segment the op is in; and
  // nothing is accumulated.
  const int64_t n = 1500;
  Tensor x = ones({4}).requires_grad_();
  Tensor y = x * 1.0;
  Tensor saved;
  for (int64_t t = 0; t < n; ++t) {
    if (t == 200)
      saved = y;
    y = y.sin() * 1.0;
  }
  Tensor loss = y.sum();
  saved.add_(1.0);
  try {
    loss.backward();
    FAIL() << "backward ran over a tensor modified in place";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("modified by an inplace operation"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(x.grad().defined());
}

TEST(SegmentedBackward, RetainedTensorsInALongGraph) {
  // A retained non-leaf gets its gradient in a long graph too (such a
  // graph runs as one program).
  const int64_t n = 1200;
  const double c = 0.9995;
  int64_t segments = backward_segments();
  Tensor x = ones({4}).requires_grad_();
  Tensor y = x;
  Tensor mid;
  for (int64_t t = 0; t < n; ++t) {
    y = y * c;
    if (t == 599) {
      mid = y;
      mid.retain_grad();
    }
  }
  y.sum().backward();
  double cf = static_cast<float>(c);
  expectClose(mid.grad().to_vector<float>(),
              std::vector<double>(4, std::pow(cf, n - 600)), 1e-4, "mid");
  EXPECT_EQ(backward_segments(), segments) << "a retained tensor segmented";
  expectClose(x.grad().to_vector<float>(),
              std::vector<double>(4, std::pow(cf, n)), 1e-4, "x");
}

TEST(SegmentedBackward, DoubleAndMixedLeaves) {
  ExpectSegmented segmented;
  // f64 throughout, and two leaves: one read at the start, one near the
  // end (in the last segment only).
  const int64_t n = 2000;
  Tensor x = full({3}, 2.0, TensorOptions(kFloat64).requires_grad(true));
  Tensor z = full({3}, 3.0, TensorOptions(kFloat64).requires_grad(true));
  Tensor y = x;
  for (int64_t t = 0; t < n; ++t) {
    y = y * 0.9999;
    if (t == n - 10)
      y = y * z;
  }
  y.sum().backward();
  double p = std::pow(0.9999, n);
  for (double v : x.grad().to_vector<double>())
    EXPECT_NEAR(v, p * 3.0, 1e-12);
  for (double v : z.grad().to_vector<double>())
    EXPECT_NEAR(v, p * 2.0, 1e-12);
}

TEST(SegmentedBackward, InPlaceWritesWholeAndThroughViews) {
  // h = x * 1, then per step a write of all of h and one through a view
  // of half of it: the segments' boundaries are older versions of h's
  // storage. Checked after backward: the gradient, h's value, and the
  // value of a clone taken from an old version mid-way (pending until
  // read: it reads a version the boundaries' evaluation did not compute).
  ExpectSegmented segmented;
  const int64_t n = 700, d = 8;
  std::vector<float> x0 = values(d, 1.0, 0.5);
  Tensor x = from_vector(x0, {d}).requires_grad_();
  Tensor h = x * 1.0;
  Tensor snapshot;
  std::vector<double> value(x0.begin(), x0.end()), grad(d, 1.0), snapshotWant;
  for (int64_t t = 0; t < n; ++t) {
    double c = 1.0 - 0.0002 * static_cast<double>(t % 7);
    int64_t at = t % (d / 2);
    h.mul_(0.9995).add_(0.001);
    h.narrow(0, at, d / 2).mul_(c);
    for (int64_t i = 0; i < d; ++i) {
      double m = static_cast<float>(0.9995) *
                 (i >= at && i < at + d / 2 ? static_cast<float>(c) : 1.0f);
      value[i] = (value[i] * static_cast<float>(0.9995) + 0.001f) *
                 (m / static_cast<float>(0.9995));
      grad[i] *= m;
    }
    if (t == n / 2) {
      snapshot = h.clone();
      snapshotWant = value;
    }
  }
  (h * 1.0).sum().backward();
  expectClose(x.grad().to_vector<float>(), grad, 1e-4, "dx");
  expectClose(h.to_vector<float>(), value, 1e-4, "h");
  expectClose(snapshot.to_vector<float>(), snapshotWant, 1e-4, "snapshot");
}

TEST(SegmentedBackward, AnInPlaceChainAddsNoZeros) {
  // h.mul_(-1) and h.add_(0.5), 601 times, then (h * 0).sum(): each
  // gradient is +0 times (-1)^301, -0.0 in PyTorch 1.13 (checked with
  // /usr/bin/python3: torch.signbit(x.grad) is all True), whose in-place
  // ops give the version they replaced no zero gradient to add (-0.0 +
  // 0.0 would be +0.0). And no zero-fill kernel per op: a 128-op
  // segment's gradient is a few kernels (it was one per op).
  ExpectSegmented segmented;
  const int64_t n = 601, d = 8;
  Tensor x = ones({d}, TensorOptions().requires_grad(true));
  Tensor h = x * 1.0;
  for (int64_t t = 0; t < n; ++t)
    (t % 2 == 0) ? h.mul_(-1.0) : h.add_(0.5);
  Tensor loss = (h * 0.0).sum();
  reset_eval_stats();
  loss.backward();
  int64_t kernels = eval_stats().kernels;
  for (float g : x.grad().to_vector<float>()) {
    EXPECT_EQ(g, 0.0f);
    EXPECT_TRUE(std::signbit(g)) << "+0.0: a zero was added";
  }
  EXPECT_LT(kernels, n / 8) << "kernels run by the backward";
}

TEST(SegmentedBackward, AStructureSeenBeforeRunsAsOneProgram) {
  // The same long graph three times (a training loop's steps): segments
  // the first time, one program prepared the second, found prepared the
  // third; the gradient the same each time.
  const int64_t n = 900;
  std::vector<int64_t> segments, compiles;
  for (int step = 0; step < 3; ++step) {
    segments.push_back(backward_segments());
    compiles.push_back(backward_compiles());
    Tensor x = from_vector(values(8, 1.0, 0.25), {8}).requires_grad_();
    Tensor y = x;
    for (int64_t t = 0; t < n; ++t)
      y = (y * 0.999).sin() * 1.0001;
    y.sum().backward();
    double v0 = values(8, 1.0, 0.25)[3], g = 1;
    for (int64_t t = 0; t < n; ++t) {
      float pre = static_cast<float>(v0) * static_cast<float>(0.999);
      g *= static_cast<float>(0.999) * std::cos(pre) *
           static_cast<float>(1.0001);
      v0 = std::sin(pre) * static_cast<float>(1.0001);
    }
    EXPECT_NEAR(x.grad().to_vector<float>()[3], g, 1e-4 * (1 + std::abs(g)))
        << "step " << step;
  }
  segments.push_back(backward_segments());
  compiles.push_back(backward_compiles());
  EXPECT_GT(segments[1], segments[0]) << "first step: not in segments";
  EXPECT_EQ(segments[2], segments[1]) << "second step: not one program";
  EXPECT_EQ(segments[3], segments[2]) << "third step: not one program";
  EXPECT_EQ(compiles[3], compiles[2]) << "third step: prepared again";
}

TEST(SegmentedBackward, LargeTensorsRunAsOneProgram) {
  // Past 16,384 elements the kernels outweigh the pipeline: one program.
  int64_t segments = backward_segments();
  Tensor x = ones({20000}).requires_grad_();
  Tensor y = x;
  for (int64_t t = 0; t < 600; ++t)
    y = y * 0.999;
  y.sum().backward();
  EXPECT_EQ(backward_segments(), segments);
  EXPECT_NEAR(x.grad().to_vector<float>()[19999],
              std::pow(static_cast<float>(0.999), 600), 1e-4);
}

TEST(SegmentedBackward, ASavedTensorWrittenThenDroppedIsRefused) {
  // exp saves its result; writing it in place, then dropping the last
  // handle to it (`h = h - 1`, as a loop does), must still make backward
  // refuse, as PyTorch's saved variable keeps the version counter alive:
  // in one program (3 ops) and in segments (a 300-step loop).
  for (int64_t n : {1, 300}) {
    Tensor x = from_vector<float>({0.1f, 0.2f, 0.3f}, {3}).requires_grad_();
    Tensor h = x;
    for (int64_t i = 0; i < n; ++i) {
      h = (h * 0.5).exp();
      if (i == n / 2)
        h.add_(1.0);
      h = h - 1.0;
    }
    try {
      h.sum().backward();
      FAIL() << "n=" << n << ": backward ran over a result written in place";
    } catch (const Error &e) {
      std::string what = e.what();
      EXPECT_NE(what.find("modified by an inplace operation: [torch."
                          "FloatTensor [3]], which is output 0 of "
                          "ExpBackward0, is at version 1; expected version 0"),
                std::string::npos)
          << what;
    }
    EXPECT_FALSE(x.grad().defined());
  }
}

} // namespace

// A tensor written in place every step of a long run (a parameter, a
// .grad) keeps the locations of its recent writes only (8 bytes a write
// grew without bound: a creep of RSS over 10^5 training steps); backward's
// error still names the write after the saved version.
TEST(SegmentedBackward, WriteLocationsAreBounded) {
  strata::detail::WriteLocs locs;
  SourceLoc here = SourceLoc::current();
  for (int64_t v = 0; v < 100000; ++v)
    locs.push(here);
  EXPECT_EQ(locs.madeAfter(0), nullptr);
  EXPECT_NE(locs.madeAfter(99999), nullptr);
  EXPECT_EQ(locs.madeAfter(100000), nullptr);
  EXPECT_NE(locs.madeAfter(100000 - int64_t(strata::detail::WriteLocs::kKept)),
            nullptr);
  // Through the API: 10^4 writes, then a saved version and one more write,
  // whose line the error names.
  Tensor x = ones({2}).requires_grad_();
  Tensor w = zeros({2});
  for (int i = 0; i < 10000; ++i)
    w.add_(1);
  Tensor y = x * w;
  int line = __LINE__ + 1;
  w.add_(1);
  try {
    y.sum().backward();
    ADD_FAILURE() << "backward through a modified saved tensor ran";
  } catch (const Error &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("modified in place at"), std::string::npos) << what;
    EXPECT_NE(what.find(":" + std::to_string(line)), std::string::npos) << what;
  }
}

TEST(SegmentedBackward, UntrackedWritesInALongChain) {
  // Writes through a detach() alias and under no_grad change h's values
  // without history (an untracked write passes its gradient to the
  // version it wrote over): the whole backward ran as one program (10^5
  // writes after one such write: 3.2 s, segments 0.3 s). Closed forms:
  // h_k = h_{k-1} c + d (+ the untracked additions), dh/dx = c^n,
  // dh/dc = sum_k h_{k-1} c^(n-k), over the values the writes made.
  const int n = 1200;
  const double c0 = 0.999, d = 0.01;
  std::vector<double> hs;
  double v = 0.5;
  for (int i = 0; i < n; ++i) {
    if (i % 100 == 50)
      v += 1.0; // h.detach().add_(1)
    if (i % 150 == 70)
      v += 0.5; // no_grad h.add_(0.5)
    hs.push_back(v);
    v = v * c0 + d;
  }
  double dc = 0;
  for (int k = 1; k <= n; ++k)
    dc += hs[k - 1] * std::pow(c0, n - k);
  Tensor x = full({4}, 0.5, TensorOptions().requires_grad(true));
  Tensor c = full({4}, c0, TensorOptions().requires_grad(true));
  Tensor h = x * 1.0;
  for (int i = 0; i < n; ++i) {
    if (i % 100 == 50)
      h.detach().add_(1.0);
    if (i % 150 == 70) {
      NoGradGuard guard;
      h.add_(0.5);
    }
    h.mul_(c);
    h.add_(d);
  }
  {
    ExpectSegmented segmented;
    h.sum().backward();
  }
  expectClose(h.to_vector<float>(), std::vector<double>(4, v), 1e-4, "h");
  expectClose(x.grad().to_vector<float>(),
              std::vector<double>(4, std::pow(c0, n)), 1e-4, "x.grad");
  expectClose(c.grad().to_vector<float>(), std::vector<double>(4, dc), 1e-3,
              "c.grad");
}

TEST(SegmentedBackward, PostAccumulateHooksInOneProgramsOrder) {
  // h = x * w * w * ...: PyTorch (AccumulateGrad hooks) and one program
  // run x's hook first, which sees no w.grad, then w's, which sees x's.
  // In segments w was hooked first: it had been seen in a higher segment.
  for (int n : {100, 300, 1000}) {
    Tensor x = tensor({1.0f}).requires_grad_();
    Tensor w = tensor({0.5f}).requires_grad_();
    std::string order;
    w.register_post_accumulate_grad_hook(
        [&](const Tensor &) { order += x.grad().defined() ? "w(x) " : "w "; });
    x.register_post_accumulate_grad_hook(
        [&](const Tensor &) { order += w.grad().defined() ? "x(w) " : "x "; });
    Tensor h = x;
    for (int i = 0; i < n; ++i)
      h = h * w;
    int64_t before = backward_segments();
    h.sum().backward();
    EXPECT_EQ(order, "x w(x) ") << "n=" << n;
    EXPECT_EQ(backward_segments() > before, n > 128) << "n=" << n;
  }
}

TEST(SegmentedBackward, PostAccumulateHooksInPyTorchsEngineOrder) {
  // h = h * w for n steps, h + x_k.tanh() added at steps 0, n/3, 2n/3:
  // PyTorch runs a leaf's hooks once the backward of the first op that
  // read it ran, the op created last first: x2, x1, x0, then w (whose
  // first reader, the first h * w, came before x0's tanh). Each hook sees
  // the leaves hooked before it. Strata ran them as its kernels made the
  // gradients (x1, x2, w, x0 at n = 30; w before x0 in segments), and a
  // second backward after retain_graph in another order. Checked as one
  // program and in segments, twice each.
  for (int n : {3, 30, 300}) {
    Tensor w = tensor({0.9f, 1.01f}).requires_grad_();
    std::vector<Tensor> x;
    for (int k = 0; k < 3; ++k)
      x.push_back(tensor({0.1f * k, 0.2f}).requires_grad_());
    Tensor h = ones({2});
    for (int i = 0; i < n; ++i) {
      h = h * w;
      if (i % (n / 3) == 0 && i / (n / 3) < 3)
        h = h + x[i / (n / 3)].tanh();
    }
    std::string order;
    auto hook = [&](const std::string &name) {
      order += name + "(";
      for (int k = 0; k < 3; ++k)
        order += x[k].grad().defined() ? "1" : "0";
      order += w.grad().defined() ? "1) " : "0) ";
    };
    for (int k = 0; k < 3; ++k)
      x[k].register_post_accumulate_grad_hook(
          [&, k](const Tensor &) { hook("x" + std::to_string(k)); });
    w.register_post_accumulate_grad_hook([&](const Tensor &) { hook("w"); });
    Tensor out = h.sum();
    out.backward(Tensor(), true);
    EXPECT_EQ(order, "x2(0010) x1(0110) x0(1110) w(1111) ") << "n=" << n;
    order.clear();
    out.backward();
    EXPECT_EQ(order, "x2(1111) x1(1111) x0(1111) w(1111) ")
        << "n=" << n << ", second backward";
  }
}
