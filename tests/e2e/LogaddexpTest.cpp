//===- LogaddexpTest.cpp - logaddexp against PyTorch (CPU, CUDA, autograd) ===//
//
// torch.logaddexp's values, dtypes, messages, grad_fn name and gradients
// against PyTorch 1.13's on the same inputs (tests/e2e/data/
// logaddexp_golden.txt, written by scripts/gen_logaddexp_golden.py; this
// test does not need torch): every dtype pair (integers and bool refused,
// mixed ones promoted), NaN/+-inf/+-0 and values beyond exp's range,
// transposed, sliced, 0-d and empty operands, gradients (also against
// finite differences: gradcheck in float64), the CUDA kernels (on the
// simulator: ctest cudasim-logaddexp) and the naive formula of
// STRATA_LOGADDEXP_NAIVE=1 (ctest logaddexp-naive).
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include "strata/JIT/CudaJit.h"

#include "GoldenFacts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

using namespace strata;

namespace {

using goldenfacts::Golden;

/// PyTorch's fact `name` (GoldenFacts.h).
const Golden &fact(const std::string &name) {
  static const auto facts = goldenfacts::read(STRATA_LOGADDEXP_GOLDEN);
  return goldenfacts::find(facts, name);
}

const std::map<std::string, DType> kDTypes = {{"bool", DType::Bool},
                                              {"int32", DType::I32},
                                              {"int64", DType::I64},
                                              {"float32", DType::F32},
                                              {"float64", DType::F64}};

std::string dtypeName(DType t) {
  for (const auto &[name, dt] : kDTypes)
    if (dt == t)
      return name;
  return "?";
}

bool isFloat(DType t) { return t == DType::F32 || t == DType::F64; }

/// The script's `tensor(values, dt, shape)`.
Tensor make(const std::vector<double> &v, DType t, const Shape &shape = {}) {
  Shape s = shape.empty() ? Shape{static_cast<int64_t>(v.size())} : shape;
  if (isFloat(t))
    return from_vector<double>(v, s).to(t);
  std::vector<int64_t> i(v.begin(), v.end());
  return from_vector<int64_t>(i, s).to(t);
}

// The script's inputs (A, B, SPECIAL, LARGE, W).
const std::vector<double> kA[3] = {
    {1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1},
    {-7, -5, -3, -1, 0, 1, 2, 3, 5, 7, 9, 11},
    {-7.5, -5.25, -3.0, -1.5, -0.0, 0.75, 2.0, 3.5, 5.0, 6.25, 9.5, 11.0}};
const std::vector<double> kB[3] = {
    {1, 1, 0, 1}, {3, -2, 5, -4}, {2.5, -1.75, 4.0, -3.0}};
const std::vector<double> kSpecial = {
    NAN, INFINITY, -INFINITY, -0.0, 0.0, 5.5, -5.5, 1e30, -3.0, 3.0, 7.0, -7.0};
const std::vector<double> kLarge = {-1e4, -1000, -100, -88, 0,    88,
                                    89,   100,   709,  710, 1000, 1e4};

int kindOf(DType t) { return t == DType::Bool ? 0 : isFloat(t) ? 2 : 1; }

Tensor floats34() { return make(kA[2], DType::F32, {3, 4}); }

/// assert_close with the dtype's default tolerances (NaN equal to NaN, an
/// infinity exactly, the sign of a value's zero checked where both are 0).
void expectClose(const Tensor &t, const std::string &name) {
  const Golden &g = fact(name);
  ASSERT_TRUE(g.error.empty()) << name << ": PyTorch raised " << g.error;
  ASSERT_TRUE(isFloat(t.dtype())) << name;
  EXPECT_EQ(dtypeName(t.dtype()), g.dtype) << name;
  std::vector<double> got = t.contiguous().to(DType::F64).to_vector<double>();
  ASSERT_EQ(got.size(), g.values.size()) << name;
  double rtol = t.dtype() == DType::F32 ? 1.3e-6 : 1e-7;
  double atol = t.dtype() == DType::F32 ? 1e-5 : 1e-7;
  for (size_t k = 0; k < got.size(); ++k) {
    double want = std::strtod(g.values[k].c_str(), nullptr);
    if (std::isnan(want) || std::isinf(want)) {
      bool same = std::isnan(want) ? std::isnan(got[k]) : got[k] == want;
      EXPECT_TRUE(same) << name << "[" << k << "]: " << got[k] << " vs "
                        << want;
      continue;
    }
    // (PyTorch computes log(1 + exp(-|a - b|)), strata log1p: logaddexp(-100,
    // 0) is 0 there, 3.7e-44 here, both within atol.)
    if (want == 0 && got[k] == 0 && name.find(".grad") == std::string::npos) {
      EXPECT_EQ(std::signbit(got[k]), std::signbit(want))
          << name << "[" << k << "]: the sign of zero";
    }
    EXPECT_LE(std::fabs(got[k] - want), atol + rtol * std::fabs(want))
        << name << "[" << k << "]: " << got[k] << " vs " << want;
  }
}

/// `f` raises PyTorch's message.
void expectError(const std::function<void()> &f, const std::string &name) {
  const Golden &g = fact(name);
  ASSERT_FALSE(g.error.empty()) << name << ": PyTorch computed it";
  try {
    f();
    ADD_FAILURE() << name << ": no error, expected " << g.error;
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(g.error), std::string::npos)
        << name << ": " << e.what();
  }
}

/// The grid of every pair of `values`: logaddexp(values[i], values[j]).
Tensor grid(const std::vector<double> &values, DType t, const Device &d) {
  Tensor s = make(values, t).to(d);
  return strata::logaddexp(s.view({12, 1}), s.view({1, 12}));
}

bool naive() {
  const char *v = std::getenv("STRATA_LOGADDEXP_NAIVE");
  return v && std::strcmp(v, "1") == 0;
}

TEST(Logaddexp, EveryDtypePairAgainstPyTorch) {
  for (const auto &[da, ta] : kDTypes)
    for (const auto &[db, tb] : kDTypes) {
      Tensor a = make(kA[kindOf(ta)], ta, {3, 4});
      Tensor b = make(kB[kindOf(tb)], tb);
      std::string name = "logaddexp." + da + "." + db;
      if (fact(name).error.empty())
        expectClose(a.logaddexp(b), name);
      else
        expectError([&] { (void)a.logaddexp(b); }, name);
    }
}

TEST(Logaddexp, SpecialAndLargeValues) {
  // Under STRATA_LOGADDEXP_NAIVE=1 (ctest logaddexp-naive): PyTorch's
  // log(exp(a) + exp(b)), inf beyond exp's range.
  std::string prefix = naive() ? "logaddexp.naive." : "logaddexp.";
  for (DType t : {DType::F32, DType::F64}) {
    expectClose(grid(kSpecial, t, kCPU), prefix + "special." + dtypeName(t));
    expectClose(grid(kLarge, t, kCPU), prefix + "large." + dtypeName(t));
  }
}

TEST(Logaddexp, LayoutsZeroDAndEmpty) {
  Tensor x = floats34();
  std::vector<double> b3, z = kA[2];
  for (int i = 0; i < 3; ++i)
    b3.insert(b3.end(), kB[2].begin(), kB[2].end());
  expectClose(x.t().logaddexp(make(b3, DType::F32, {4, 3})), "logaddexp.t");
  for (int i = 0; i < 2; ++i)
    z.insert(z.end(), kB[2].begin(), kB[2].end());
  Tensor zt = make(z, DType::F32);
  expectClose(
      x.logaddexp(zt.slice(0, std::nullopt, std::nullopt, 5).slice(0, 0, 4)),
      "logaddexp.slice");
  Tensor zerod = make({-7.25}, DType::F32).view({});
  expectClose(zerod.logaddexp(x), "logaddexp.zerod");
  Tensor r = zerod.logaddexp(make({2.5}, DType::F32).view({}));
  EXPECT_EQ(r.dim(), 0);
  expectClose(r, "logaddexp.zerod2");
  expectClose(make(kA[1], DType::I64, {3, 4})
                  .logaddexp(make({0.5}, DType::F32).view({})),
              "logaddexp.zerod_int");
  Tensor e = empty({0, 4}).logaddexp(make(kB[2], DType::F32).view({1, 4}));
  EXPECT_EQ(e.sizes(), (Shape{0, 4}));
  expectClose(e, "logaddexp.empty");
}

TEST(Logaddexp, GradientsAgainstPyTorchAndGradcheck) {
  Tensor X = floats34().requires_grad_();
  Tensor Y = make(kB[2], DType::F32).requires_grad_();
  Tensor r = X.logaddexp(Y);
  ASSERT_TRUE(r.grad_fn());
  EXPECT_EQ(r.grad_fn()->name(), fact("logaddexp.grad_fn").gradFn);
  std::vector<float> w;
  for (int i = 0; i < 12; ++i)
    w.push_back(0.5f + 0.25f * static_cast<float>(i));
  (r * from_vector<float>(w, {3, 4})).sum().backward();
  expectClose(X.grad(), "logaddexp.grad.a");
  expectClose(Y.grad(), "logaddexp.grad.b");
  // Each pair of special values, one element per pair (PyTorch: NaN where
  // both are the same infinity).
  Tensor s = make(kSpecial, DType::F64);
  Tensor SX = s.view({12, 1}).expand({12, 12}).clone().requires_grad_();
  Tensor SY = s.view({1, 12}).expand({12, 12}).clone().requires_grad_();
  SX.logaddexp(SY).sum().backward();
  expectClose(SX.grad(), "logaddexp.grad.special.a");
  expectClose(SY.grad(), "logaddexp.grad.special.b");
  // Finite differences, broadcast operands, far apart and close together.
  Tensor a = floats34().to(DType::F64) * 0.3;
  Tensor b = make(kB[2], DType::F64).view({1, 4});
  GradcheckResult g = gradcheck(
      [](const std::vector<Tensor> &in) { return in[0].logaddexp(in[1]); },
      {a, b});
  EXPECT_TRUE(g.ok) << "analytic " << g.analytic << " numeric " << g.numeric
                    << " at " << g.index;
}

TEST(Logaddexp, Cuda) {
  std::string why = jit::cudaUnavailableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
  for (DType t : {DType::F32, DType::F64}) {
    Tensor r = grid(kSpecial, t, Device::cuda());
    ASSERT_TRUE(r.device().is_cuda());
    expectClose(r.to(kCPU), "logaddexp.special." + dtypeName(t));
    expectClose(grid(kLarge, t, Device::cuda()).to(kCPU),
                "logaddexp.large." + dtypeName(t));
  }
  Tensor X = floats34().to(Device::cuda()).requires_grad_();
  Tensor Y = make(kB[2], DType::F32).to(Device::cuda()).requires_grad_();
  std::vector<float> w;
  for (int i = 0; i < 12; ++i)
    w.push_back(0.5f + 0.25f * static_cast<float>(i));
  (X.logaddexp(Y) * from_vector<float>(w, {3, 4}).to(Device::cuda()))
      .sum()
      .backward();
  expectClose(X.grad().to(kCPU), "logaddexp.grad.a");
  expectClose(Y.grad().to(kCPU), "logaddexp.grad.b");
}

} // namespace
