//===- GradientTemplateTest.cpp - gradient programs run from templates ----===//
//
// A backward whose structure was seen before takes its program and the
// places of its arguments from a template (docs/design.md, "Gradient
// templates"). Each test runs a structure again and again with new values
// (leaf data, C++ numbers, scalars of in-place ops) and checks every
// gradient against the same derivative computed in plain C++, and that the
// template was used; and runs structures that differ only in what the
// program holds (a pow exponent, an offset, a dtype, a layout) in turn,
// each checked, so a template taken for the wrong structure shows. ctest
// runs the binary with STRATA_CHECK_TEMPLATES=1 too, which builds every
// templated program the long way and fails where the two differ.
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace strata;

namespace {

void expectNear(const std::vector<double> &got, const std::vector<double> &want,
                double tol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i])))
        << what << " at " << i;
}

TEST(GradientTemplates, ATrainingStepRunsFromItsTemplateWithNewValues) {
  // loss = s * sum(tanh(w * x + c)^2): new x, c and s every step.
  const int64_t n = 6;
  Tensor w = arange(n, TensorOptions(DType::F64)) * 0.1 - 0.2;
  w.requires_grad_(true);
  int64_t before = backward_templates();
  for (int step = 0; step < 12; ++step) {
    double c = 0.05 * step - 0.3, s = 1.0 + 0.25 * step;
    std::vector<double> xv(n);
    for (int64_t i = 0; i < n; ++i)
      xv[i] = std::sin(0.7 * i + step);
    Tensor x = from_vector(xv, {n});
    Tensor y = (w * x + c).tanh();
    ((y * y).sum() * s).backward();
    std::vector<double> wv = w.detach().to_vector<double>(), want(n);
    for (int64_t i = 0; i < n; ++i) {
      double t = std::tanh(wv[i] * xv[i] + c);
      want[i] = s * 2 * t * (1 - t * t) * xv[i];
    }
    expectNear(w.grad().to_vector<double>(), want, 1e-12,
               "step " + std::to_string(step));
    w.grad().zero_();
  }
  EXPECT_GE(backward_templates() - before, 10);
}

TEST(GradientTemplates, PowExponentsEachGetTheirOwnDerivative) {
  // Exponents the program holds (2, 3, 0.5, -1 select its code) and those
  // it takes as arguments (2.5, 1.7), in turn, twice.
  std::vector<double> xv{0.5, 1.25, 2.0, 3.5};
  for (int round = 0; round < 2; ++round)
    for (double e : {2.0, 3.0, 2.5, 0.5, 1.7, -1.0, 2.0, 2.5}) {
      Tensor x = from_vector(xv, {4}).requires_grad_(true);
      x.pow(e).sum().backward();
      std::vector<double> want;
      for (double v : xv)
        want.push_back(e * std::pow(v, e - 1));
      expectNear(x.grad().to_vector<double>(), want, 1e-12,
                 "exponent " + std::to_string(e));
    }
}

TEST(GradientTemplates, ReadsAtOtherOffsetsAndLayoutsGetTheirOwnGradients) {
  for (int round = 0; round < 2; ++round)
    for (int64_t k : {0, 3, 1, 3, 5, 0}) {
      Tensor x = zeros({8}, TensorOptions(DType::F64)).requires_grad_(true);
      (x.narrow(0, k, 3) * 2.0).sum().backward();
      std::vector<double> want(8, 0.0);
      for (int64_t i = k; i < k + 3; ++i)
        want[i] = 2.0;
      expectNear(x.grad().to_vector<double>(), want, 0,
                 "offset " + std::to_string(k));
    }
  // The same ops over a tensor and its transpose, and over f32 and f64.
  std::vector<double> mv{1, 2, 3, 4, 5, 6}, wv{0.5, -1, 2, 0.25, 3, -2};
  for (int round = 0; round < 3; ++round)
    for (bool transposed : {false, true})
      for (DType t : {DType::F32, DType::F64}) {
        Tensor m = from_vector(mv, {2, 3}).to(t).requires_grad_(true);
        Tensor wt = from_vector(wv, {3, 2}).to(t);
        Tensor read = transposed ? m.t() : m.view({3, 2});
        (read * wt).sum().backward();
        // d/dm[i][j] = the weight the element meets.
        std::vector<double> want(6);
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 3; ++j)
            want[i * 3 + j] = transposed ? wv[j * 2 + i] : wv[i * 3 + j];
        expectNear(m.grad().to_vector<double>(), want, 1e-6,
                   std::string(transposed ? "transposed " : "viewed ") +
                       (t == DType::F32 ? "f32" : "f64"));
      }
}

TEST(GradientTemplates, InPlaceStepsWithNewScalarsEachStep) {
  // h = x * 1; h.mul_(c); h.add_(d); loss = sum(h * h): c, d new each step.
  std::vector<double> xv{0.3, -1.2, 2.0};
  for (int step = 0; step < 10; ++step) {
    double c = 1.0 + 0.1 * step, d = 0.5 - 0.07 * step;
    Tensor x = from_vector(xv, {3}).requires_grad_(true);
    Tensor h = x * 1.0;
    h.mul_(c);
    h.add_(d);
    (h * h).sum().backward();
    std::vector<double> want;
    for (double v : xv)
      want.push_back(2 * (v * c + d) * c);
    expectNear(x.grad().to_vector<double>(), want, 1e-12,
               "step " + std::to_string(step));
  }
}

TEST(GradientTemplates, LongBackwardsInSegmentsWithAScalarPerOp) {
  // y = y * c_i, 2,000 ops, each c_i its own number: the segments repeat
  // one structure, each with its own scalars. Then again with other
  // numbers: a structure seen before runs as one program, from its
  // template the third time.
  for (int round = 0; round < 3; ++round) {
    const int64_t n = 2000;
    Tensor x = ones({4}, TensorOptions(DType::F64)).requires_grad_(true);
    Tensor y = x;
    double want = 1;
    for (int64_t i = 0; i < n; ++i) {
      double c = 1.0 + (((i * 7 + round) % 13) - 6) * 1e-3;
      y = y * c;
      want *= c;
    }
    int64_t before = backward_templates();
    y.sum().backward();
    expectNear(x.grad().to_vector<double>(), std::vector<double>(4, want),
               1e-12, "round " + std::to_string(round));
    if (round != 1) {
      EXPECT_GE(backward_templates() - before, round == 0 ? 5 : 1)
          << "round " << round;
    }
  }
}

} // namespace
