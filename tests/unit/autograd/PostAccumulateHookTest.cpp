//===- PostAccumulateHookTest.cpp - hooks after a leaf's gradient ---------===//
//
// Tensor::register_post_accumulate_grad_hook (PyTorch 2.1's): each hook
// runs once per backward() for each leaf that gets a gradient, after the
// gradient was added into .grad; as soon as the gradient is final, while
// the rest of backward still runs (the one gradient program between its
// kernels, or a long backward after the segment that last adds to it);
// never for a leaf without a gradient; with gradient accumulation and
// retain_graph; and a hook's error reaches backward()'s caller. Gradients
// are checked against the network differentiated by hand (loops here).
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

using namespace strata;

namespace {

std::vector<float> values(int64_t n, double scale, double shift) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i) + shift) *
                              scale);
  return v;
}

void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-4 * (1.0 + std::abs(want[i])))
        << what << " element " << i;
}

/// loss = relu(x w1) w2 summed, x [4, 3], w1 [3, 5], w2 [5, 2]; and its
/// gradients by hand.
struct Mlp {
  std::vector<float> x = values(12, 1.0, 0.1), v1 = values(15, 0.8, 0.5),
                     v2 = values(10, 0.9, 1.3);
  Tensor w1 = from_vector(v1, {3, 5}).requires_grad_();
  Tensor w2 = from_vector(v2, {5, 2}).requires_grad_();
  std::vector<double> g1 = std::vector<double>(15, 0.0),
                      g2 = std::vector<double>(10, 0.0);

  Mlp() {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j) {
        double h = 0;
        for (int k = 0; k < 3; ++k)
          h += double(x[i * 3 + k]) * v1[k * 5 + j];
        double dr = double(v2[j * 2]) + v2[j * 2 + 1];
        for (int c = 0; c < 2; ++c)
          g2[j * 2 + c] += std::max(h, 0.0);
        for (int k = 0; k < 3; ++k)
          g1[k * 5 + j] += h > 0 ? x[i * 3 + k] * dr : 0.0;
      }
  }
  Tensor loss() const {
    return from_vector(x, {4, 3}).matmul(w1).relu().matmul(w2).sum();
  }
  static std::vector<double> times(std::vector<double> v, double s) {
    for (double &e : v)
      e *= s;
    return v;
  }
};

/// A hook recording its calls and the .grad it saw.
struct Recorder {
  int calls = 0;
  std::vector<std::vector<float>> seen;
  unsigned on(const Tensor &leaf) {
    return leaf.register_post_accumulate_grad_hook([this](const Tensor &t) {
      ++calls;
      seen.push_back(t.grad().to_vector<float>());
    });
  }
};

TEST(PostAccumulateGradHook, OncePerLeafWithItsAccumulatedGradient) {
  Mlp m;
  Recorder r1, r2, unused, detached;
  r1.on(m.w1);
  r2.on(m.w2);
  Tensor u = ones({3}).requires_grad_(), d = ones({1}).requires_grad_();
  unused.on(u);
  detached.on(d);
  (m.loss() + d.detach().sum()).backward();
  EXPECT_EQ(r1.calls, 1);
  EXPECT_EQ(r2.calls, 1);
  EXPECT_EQ(unused.calls, 0) << "a leaf outside the graph";
  EXPECT_EQ(detached.calls, 0) << "a leaf read only through detach()";
  expectClose(r1.seen.at(0), m.g1, "w1's .grad in its hook");
  expectClose(r2.seen.at(0), m.g2, "w2's .grad in its hook");
  expectClose(m.w1.grad().to_vector<float>(), m.g1, "w1.grad()");
  EXPECT_FALSE(d.grad().defined());
}

TEST(PostAccumulateGradHook, RunsWhileTheGradientProgramStillRuns) {
  // w1 has no hook, so its gradient is accumulated after the program:
  // w2's hook, run between the program's kernels, sees none yet (were it
  // run after the program, the accumulation of every leaf would precede
  // it).
  Mlp m;
  int calls = 0;
  bool w1Accumulated = true;
  m.w2.register_post_accumulate_grad_hook([&](const Tensor &) {
    ++calls;
    w1Accumulated = m.w1.grad().defined();
  });
  m.loss().backward();
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(w1Accumulated);
  expectClose(m.w1.grad().to_vector<float>(), m.g1, "w1.grad()");
  expectClose(m.w2.grad().to_vector<float>(), m.g2, "w2.grad()");
}

TEST(PostAccumulateGradHook, GradientAccumulationAcrossTwoBackwards) {
  Mlp m;
  Recorder r2;
  r2.on(m.w2);
  m.loss().backward();
  m.loss().backward();
  ASSERT_EQ(r2.calls, 2);
  expectClose(r2.seen[0], m.g2, "after the first backward");
  expectClose(r2.seen[1], Mlp::times(m.g2, 2), "after the second");
}

TEST(PostAccumulateGradHook, RetainGraphFiresOnEachBackward) {
  Mlp m;
  Recorder r1;
  r1.on(m.w1);
  Tensor loss = m.loss();
  loss.backward(Tensor(), true);
  loss.backward();
  ASSERT_EQ(r1.calls, 2);
  expectClose(r1.seen[1], Mlp::times(m.g1, 2), "w1 after two backwards");
}

TEST(PostAccumulateGradHook, CreateGraphFiresOnce) {
  Mlp m;
  Recorder r1;
  r1.on(m.w1);
  m.loss().backward(Tensor(), std::nullopt, /*create_graph=*/true);
  ASSERT_EQ(r1.calls, 1);
  expectClose(r1.seen[0], m.g1, "w1 with create_graph");
}

TEST(PostAccumulateGradHook, RemovedHooksDoNotRun) {
  Mlp m;
  Recorder kept, removed;
  kept.on(m.w1);
  m.w1.remove_post_accumulate_grad_hook(removed.on(m.w1));
  m.loss().backward();
  EXPECT_EQ(kept.calls, 1);
  EXPECT_EQ(removed.calls, 0);
}

TEST(PostAccumulateGradHook, RegisteredOnLeavesRequiringGradOnly) {
  Tensor a = ones({2}).requires_grad_();
  auto hook = [](const Tensor &) {};
  try {
    (a * 2).register_post_accumulate_grad_hook(hook);
    FAIL() << "a non-leaf took a hook";
  } catch (const Error &e) {
    EXPECT_EQ(e.message(), "post accumulate grad hooks cannot be registered "
                           "on non-leaf tensors");
  }
  try {
    ones({2}).register_post_accumulate_grad_hook(hook);
    FAIL() << "a tensor not requiring grad took a hook";
  } catch (const Error &e) {
    EXPECT_EQ(e.message(),
              "cannot register a hook on a tensor that doesn't require "
              "gradient");
  }
}

TEST(PostAccumulateGradHook, ErrorReachesTheCallerAtItsBackwardLine) {
  Mlp m;
  unsigned h = m.w2.register_post_accumulate_grad_hook(
      [](const Tensor &) { throw std::runtime_error("boom"); });
  Tensor loss = m.loss();
  int line = 0;
  try {
    line = __LINE__ + 1;
    loss.backward();
    FAIL() << "the hook's error was lost";
  } catch (const Error &e) {
    EXPECT_NE(e.message().find("post-accumulate-grad hook"), std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("boom"), std::string::npos) << e.message();
    EXPECT_NE(
        e.where().find("PostAccumulateHookTest.cpp:" + std::to_string(line)),
        std::string::npos)
        << e.where();
  }
  // w2's gradient was accumulated whole before its hook; w1's not at all.
  expectClose(m.w2.grad().to_vector<float>(), m.g2, "w2.grad()");
  EXPECT_FALSE(m.w1.grad().defined());
  // The engine goes on as before.
  m.w2.remove_post_accumulate_grad_hook(h);
  m.loss().backward();
  expectClose(m.w1.grad().to_vector<float>(), m.g1, "w1.grad() after");
  expectClose(m.w2.grad().to_vector<float>(), Mlp::times(m.g2, 2),
              "w2.grad() after");
}

TEST(PostAccumulateGradHook, WritingATensorTheBackwardReadsIsAnError) {
  Mlp m;
  m.w2.register_post_accumulate_grad_hook([&](const Tensor &) {
    NoGradGuard noGrad;
    m.w1.mul_(2);
  });
  try {
    m.loss().backward();
    FAIL() << "the write went unnoticed";
  } catch (const Error &e) {
    EXPECT_NE(e.message().find("wrote in place to a tensor this backward "
                               "still reads"),
              std::string::npos)
        << e.message();
  }
  EXPECT_FALSE(m.w1.grad().defined());
}

TEST(PostAccumulateGradHook, LongBackwardFiresPerSegment) {
  // y = x * a * c^n * b over 16 elements: n + 2 ops in segments of 128,
  // b read in the last (first run), a in the first. b's hook runs before
  // the segments below it, a's after the last.
  const int64_t n = 733;
  const double c = 1.0 - 1.0 / 2000.0;
  std::vector<float> xv = values(16, 1.0, 0.2), av = values(16, 0.5, 0.9),
                     bv = values(16, 0.7, 2.1);
  Tensor x = from_vector(xv, {16});
  Tensor a = from_vector(av, {16}).requires_grad_();
  Tensor b = from_vector(bv, {16}).requires_grad_();
  int64_t atB = -1, atA = -1, start = backward_segments();
  bool aAccumulated = true;
  Recorder ra, rb;
  ra.on(a);
  rb.on(b);
  b.register_post_accumulate_grad_hook([&](const Tensor &) {
    atB = backward_segments();
    aAccumulated = a.grad().defined();
  });
  a.register_post_accumulate_grad_hook(
      [&](const Tensor &) { atA = backward_segments(); });
  Tensor y = x * a;
  for (int64_t i = 0; i < n; ++i)
    y = y * c;
  (y * b).sum().backward();
  int64_t end = backward_segments();
  ASSERT_GT(end - start, 2) << "ran as one program";
  EXPECT_EQ(ra.calls, 1);
  EXPECT_EQ(rb.calls, 1);
  EXPECT_FALSE(aAccumulated);
  EXPECT_LT(atB, atA) << "b's hook waited for the segments below";
  EXPECT_EQ(atA, end);
  std::vector<double> ga(16), gb(16);
  double cn = std::pow(static_cast<double>(static_cast<float>(c)), n);
  for (int i = 0; i < 16; ++i) {
    ga[i] = double(xv[i]) * bv[i] * cn;
    gb[i] = double(xv[i]) * av[i] * cn;
  }
  expectClose(ra.seen.at(0), ga, "a.grad in its hook");
  expectClose(rb.seen.at(0), gb, "b.grad in its hook");
}

TEST(PostAccumulateGradHook, LongBackwardHookErrorReachesTheCaller) {
  Tensor a = from_vector(values(16, 0.5, 0.4), {16}).requires_grad_();
  Tensor b = from_vector(values(16, 0.5, 1.4), {16}).requires_grad_();
  b.register_post_accumulate_grad_hook(
      [](const Tensor &) { throw std::runtime_error("segment boom"); });
  Tensor y = a * 1.0;
  for (int64_t i = 0; i < 611; ++i)
    y = y * 0.999;
  int line = 0;
  try {
    line = __LINE__ + 1;
    (y * b).sum().backward();
    FAIL() << "the hook's error was lost";
  } catch (const Error &e) {
    EXPECT_NE(e.message().find("segment boom"), std::string::npos);
    EXPECT_NE(e.where().find(":" + std::to_string(line)), std::string::npos)
        << e.where();
  }
  EXPECT_TRUE(b.grad().defined());
  EXPECT_FALSE(a.grad().defined());
}

} // namespace
