//===- RoundingParityTest.cpp - PyTorch 1.13's roundings and edge values --===//
//
// Each case is the strata twin of a PyTorch program in
// scripts/gen_rounding_parity_golden.py, whose results (bits, the start of
// PyTorch 1.13's error message, grad_fn names) are
// rounding_parity_golden.txt: add/sub with alpha, in place too,
// index_add with alpha, and SGD and Adam (PyTorch's CPU kernels compute
// self + alpha * other as one fused multiply-add), clamp with NaN bounds, lerp
// by an int64 number or tensor, the grad_fn names of split/chunk/unbind's
// views, pow by a number on PyTorch's scalar loop, and arange with float steps
// (PyTorch's vectorized blocks).
//
//===----------------------------------------------------------------------===//
#include "GoldenBits.h"
#include "strata/nn.h"
#include "strata/optim.h"
#include "strata/strata.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace strata;
using golden::Case;
using golden::dyadic;

namespace {

const std::map<std::string, golden::Golden> &goldenCases() {
  static const std::map<std::string, golden::Golden> g =
      golden::readGolden(STRATA_ROUNDING_PARITY_GOLDEN);
  return g;
}

void expectCases(const std::vector<std::pair<std::string, Case>> &cases) {
  golden::expectCases(goldenCases(), cases);
}

/// The generator's f32s(n, seed): dyadic numbers.
Tensor f32s(int n, uint64_t seed) { return from_vector(dyadic(n, seed)); }
/// The generator's f64s(n, seed): dyadic numbers / 3 in double.
Tensor f64s(int n, uint64_t seed) {
  std::vector<double> v;
  for (float x : dyadic(n, seed))
    v.push_back(static_cast<double>(x) / 3.0);
  return from_vector(v);
}

const double kNan = std::nan("");

} // namespace

// torch.add/sub(a, b, alpha), add_/sub_: fma(b, +-alpha, a) in the
// tensors' type, broadcast and strided operands too.
TEST(RoundingParity, AddAndSubWithAlphaAreOneFusedMultiplyAdd) {
  const std::vector<Scalar> alphas = {0.37, -0.3, 1e-3, 3, -2, 1.0 / 3};
  std::vector<std::pair<std::string, Case>> cases;
  for (size_t k = 0; k < alphas.size(); ++k) {
    Scalar al = alphas[k];
    for (bool f64 : {false, true}) {
      auto make = [f64](int n, uint64_t seed) {
        return f64 ? f64s(n, seed) : f32s(n, seed);
      };
      auto a = [make] { return make(37, 1); };
      auto b = [make] { return make(37, 2); };
      std::string p = "alpha" + std::to_string(k) + "_" + (f64 ? "f64_" : "");
      cases.insert(cases.end(),
                   {{p + "add", [=] { return a().add(b(), al); }},
                    {p + "sub", [=] { return a().sub(b(), al); }},
                    {p + "add_bcast",
                     [=] {
                       return a().narrow(0, 0, 36).view({6, 6}).add(
                           b().narrow(0, 0, 6).view({1, 6}), al);
                     }},
                    {p + "sub_strided",
                     [=] {
                       return a()
                           .slice(0, std::nullopt, std::nullopt, 2)
                           .sub(b().narrow(0, 0, 19), al);
                     }},
                    {p + "add_",
                     [=] {
                       Tensor x = a();
                       x.add_(b(), al);
                       return x;
                     }},
                    {p + "sub_", [=] {
                       Tensor x = a();
                       x.sub_(b(), al);
                       return x;
                     }}});
    }
  }
  expectCases(cases);
}

// add_out/sub_out take the same path (OutOps.cpp).
TEST(RoundingParity, OutFormsWithAlpha) {
  expectCases({{"alpha0_add",
                [] {
                  Tensor out = empty({37});
                  return add_out(out, f32s(37, 1), f32s(37, 2), 0.37);
                }},
               {"alpha1_f64_sub", [] {
                  Tensor out = empty({37}, kFloat64);
                  return sub_out(out, f64s(37, 1), f64s(37, 2), -0.3);
                }}});
}

// index_add with alpha: on more than one dim one fma per element, index
// by index in order (IndexOps.cpp's layers; past 4 repeats of a target
// strata's scatter_add of alpha * source); a 1-d self rounds the product
// first, as PyTorch's `self[i] += src * alpha`.
TEST(RoundingParity, IndexAddWithAlpha) {
  auto run = [](int rows, bool f64, Scalar al, int64_t dim,
                std::vector<int64_t> idx) {
    return [=] {
      auto make = [f64](int n, uint64_t seed) {
        return f64 ? f64s(n, seed) : f32s(n, seed);
      };
      int64_t n = static_cast<int64_t>(idx.size());
      Tensor s = rows ? make(rows * 5, 4).view({rows, 5}) : make(9, 4);
      Tensor src = rows ? make(n * 5, 5).view({n, 5}) : make(n, 5);
      if (dim == 1) {
        s = s.t().contiguous();
        src = src.t().contiguous();
      }
      return s.index_add(dim, from_vector(idx), src, al);
    };
  };
  const std::vector<int64_t> idx = {3, 0, 5, 1, 7, 2};
  expectCases({
      {"index_add_2d", run(9, false, 0.37, 0, idx)},
      {"index_add_2d_f64", run(9, true, -1.0 / 3, 0, idx)},
      {"index_add_2d_dim1", run(9, false, 0.37, 1, idx)},
      {"index_add_2d_repeats", run(9, false, 0.37, 0, {3, 0, 3, 1, 3, 0, 2})},
      {"index_add_1d", run(0, false, 0.37, 0, idx)},
      {"index_add_2d_grads",
       [] {
         Tensor s = f32s(45, 4).view({9, 5}).requires_grad_();
         Tensor src = f32s(35, 5).view({7, 5}).requires_grad_();
         s.index_add(0, from_vector(std::vector<int64_t>{3, 0, 3, 1, 3, 0, 2}),
                     src, 0.37)
             .backward(f32s(45, 6).view({9, 5}));
         return cat({s.grad().reshape({-1}), src.grad().reshape({-1})});
       }},
  });
}

// SGD (weight decay, momentum, dampening, nesterov) and Adam/AdamW: each
// add(alpha) and addcmul of PyTorch's single-tensor step is one fma.
TEST(RoundingParity, OptimizersRoundAsPyTorch) {
  auto run = [](auto makeOptimizer) {
    return [makeOptimizer] {
      Tensor p = f32s(23, 6).requires_grad_();
      auto opt = makeOptimizer(p);
      for (uint64_t step = 0; step < 3; ++step) {
        opt.zero_grad();
        (p * f32s(23, 7 + step)).sum().backward();
        opt.step();
      }
      return p.detach();
    };
  };
  using optim::Adam;
  using optim::AdamOptions;
  using optim::AdamW;
  using optim::AdamWOptions;
  using optim::SGD;
  using optim::SGDOptions;
  expectCases({
      {"sgd", run([](Tensor p) { return SGD({p}, SGDOptions(0.1)); })},
      {"sgd_momentum",
       run([](Tensor p) { return SGD({p}, SGDOptions(0.1).momentum(0.9)); })},
      {"sgd_dampening_wd", run([](Tensor p) {
         return SGD(
             {p},
             SGDOptions(0.03).momentum(0.7).dampening(0.3).weight_decay(0.01));
       })},
      {"sgd_nesterov", run([](Tensor p) {
         return SGD(
             {p},
             SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(1e-3));
       })},
      {"adam", run([](Tensor p) { return Adam({p}, AdamOptions(0.01)); })},
      {"adam_wd", run([](Tensor p) {
         return Adam({p}, AdamOptions(0.01).weight_decay(0.1));
       })},
      {"adam_amsgrad", run([](Tensor p) {
         return Adam({p}, AdamOptions(0.01).betas({0.8, 0.99}).amsgrad(true));
       })},
      {"adamw", run([](Tensor p) { return AdamW({p}, AdamWOptions(0.01)); })},
  });
}

// A NaN bound: clamp with both bounds, clamp_min and clamp_max give NaN
// everywhere; clamp with one bound None keeps x (PyTorch 1.13); the
// gradient passes nowhere (no comparison with NaN holds).
TEST(RoundingParity, ClampWithNanBounds) {
  auto x = [](DType t = kFloat32) {
    return from_vector(
        std::vector<double>{-2., -0.5, 0., 0.5, 2., kNan, -0.0, 7.}, {},
        TensorOptions(t));
  };
  auto ints = [] { return tensor({int64_t{1}, int64_t{-2}, int64_t{3}}); };
  auto grads = [x](std::optional<Scalar> lo, std::optional<Scalar> hi) {
    return [=] {
      Tensor a = x().requires_grad_();
      a.clamp(lo, hi).backward(arange(1., 9.));
      return a.grad();
    };
  };
  auto inplace = [x](std::function<void(Tensor &)> f) {
    return [=] {
      Tensor a = x();
      f(a);
      return a;
    };
  };
  std::optional<Scalar> none;
  expectCases({
      {"clamp_min_nan", [=] { return x().clamp(kNan, none); }},
      {"clamp_max_nan", [=] { return x().clamp(none, kNan); }},
      {"clamp_nan_nan", [=] { return x().clamp(kNan, kNan); }},
      {"clamp_lo_nan", [=] { return x().clamp(kNan, 1.); }},
      {"clamp_hi_nan", [=] { return x().clamp(-1., kNan); }},
      {"clamp_crossed", [=] { return x().clamp(1., -1.); }},
      {"clamp_min_fn_nan", [=] { return x().clamp_min(kNan); }},
      {"clamp_max_fn_nan", [=] { return x().clamp_max(kNan); }},
      {"clamp_f64_lo_nan", [=] { return x(kFloat64).clamp(kNan, 1.); }},
      {"clamp_int_nan", [=] { return ints().clamp(kNan, 1); }},
      {"clamp_int_min_nan", [=] { return ints().clamp(kNan, none); }},
      {"clamp__lo_nan", inplace([](Tensor &a) { a.clamp_(kNan, 1.); })},
      {"clamp__min_nan", inplace([](Tensor &a) { a.clamp_(kNan, {}); })},
      {"clamp_min__nan", inplace([](Tensor &a) { a.clamp_min_(kNan); })},
      {"clamp_grad_lo_nan", grads(kNan, 1.)},
      {"clamp_grad_hi_nan", grads(-1., kNan)},
      {"clamp_grad_min_nan", grads(kNan, none)},
      {"clamp_grad_max_nan", grads(none, kNan)},
  });
}

// lerp by an int64 number: converted to the tensors' type once
// (static_cast<float>(int64_t)); start's gradient takes
// 1 - weight.toDouble(). An int64 (or f64) weight tensor is refused.
TEST(RoundingParity, LerpByInt64Weights) {
  const std::vector<int64_t> big = {
      (1LL << 53) + 1, (1LL << 60) + (1LL << 36) + 1,    INT64_MAX, INT64_MIN,
      (1LL << 24) + 1, -((1LL << 55) + (1LL << 31) + 1), 3,         -7};
  auto s = [](DType t) {
    return from_vector(std::vector<double>{0., 1., -2.5, 3.}, {},
                       TensorOptions(t));
  };
  auto e = [](DType t) {
    return from_vector(std::vector<double>{1., 3., 4., -0.5}, {},
                       TensorOptions(t));
  };
  std::vector<std::pair<std::string, Case>> cases;
  for (size_t k = 0; k < big.size(); ++k) {
    int64_t w = big[k];
    for (DType t : {kFloat32, kFloat64}) {
      std::string p =
          "lerp_int" + std::to_string(k) + (t == kFloat64 ? "_f64" : "");
      cases.push_back({p, [=] { return s(t).lerp(e(t), w); }});
      cases.push_back(
          {p + "_grads", [=] {
             Tensor a = s(t).requires_grad_(), b = e(t).requires_grad_();
             a.lerp(b, w).backward(from_vector(
                 std::vector<double>{1., -2., 0.5, 3.}, {}, TensorOptions(t)));
             return cat({a.grad(), b.grad()});
           }});
    }
  }
  auto i64s = [] {
    return tensor({int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}});
  };
  cases.insert(
      cases.end(),
      {{"lerp_i64_weight",
        [=] { return s(kFloat32).lerp(e(kFloat32), i64s()); }},
       {"lerp_i64_0d_weight",
        [=] {
          return s(kFloat32).lerp(e(kFloat32), full({}, int64_t{2}, kInt64));
        }},
       {"lerp__i64_weight",
        [=] {
          Tensor a = s(kFloat32);
          a.lerp_(e(kFloat32), i64s());
          return a;
        }},
       {"lerp_f64_weight",
        [=] { return s(kFloat32).lerp(e(kFloat32), s(kFloat64) + 1); }},
       {"lerp_i64_tensors", [] {
          return tensor({int64_t{1}, int64_t{2}})
              .lerp(tensor({int64_t{3}, int64_t{4}}), 2);
        }}});
  expectCases(cases);
}

// The grad_fn of each view split, split_with_sizes, chunk and unbind
// return is PyTorch's one node for all of them.
TEST(RoundingParity, MultiOutputViewNames) {
  using Views = std::function<std::vector<Tensor>(const Tensor &)>;
  auto names = [](Views f) {
    Tensor x = arange(12.).reshape({3, 4}).requires_grad_();
    std::vector<std::string> out;
    for (const Tensor &h : {x * 1, x})
      for (const Tensor &v : f(h))
        out.push_back(v.grad_fn() ? v.grad_fn()->name() : "None");
    return out;
  };
  const std::vector<std::pair<std::string, Views>> cases = {
      {"names_split", [](const Tensor &h) { return h.split(2, 1); }},
      {"names_split_one", [](const Tensor &h) { return h.split(4, 1); }},
      {"names_split_sizes",
       [](const Tensor &h) {
         return h.split(Shape{1, 3}, 1);
       }},
      {"names_split_with_sizes",
       [](const Tensor &h) {
         return h.split_with_sizes({2, 1}, 0);
       }},
      {"names_chunk", [](const Tensor &h) { return h.chunk(3, 1); }},
      {"names_chunk_one", [](const Tensor &h) { return h.chunk(1, 0); }},
      {"names_unbind", [](const Tensor &h) { return h.unbind(0); }},
      {"names_unbind1", [](const Tensor &h) { return h.unbind(1); }},
  };
  for (const auto &[name, f] : cases) {
    auto it = goldenCases().find(name);
    ASSERT_NE(it, goldenCases().end()) << name;
    EXPECT_EQ(names(f), it->second.values) << name;
  }
}

// pow(x, number) where PyTorch runs its scalar loop (fewer than 16 f32
// elements, strided ones): std::pow in double, rounded once.
TEST(RoundingParity, PowByANumber) {
  const std::vector<double> base = {0.,  -0.,  1.,   -1.,    2.,  -2., 0.5,
                                    3.7, -3.7, 1e-3, 123.25, 1e5, -8., 7.};
  const std::vector<double> exps = {2.2, 1.0 / 3, 1e-8, 0.1,    -0.1,
                                    7.3, -2.2,    1e30, -1e-30, 0.7};
  auto strided = [base](DType t) {
    std::vector<double> v;
    for (int r = 0; r < 3; ++r)
      v.insert(v.end(), base.begin(), base.end());
    return from_vector(v, {}, TensorOptions(t)).view({-1, 3}).select(1, 1);
  };
  std::vector<std::pair<std::string, Case>> cases;
  for (size_t k = 0; k < exps.size(); ++k) {
    double e = exps[k];
    std::string p = "pow" + std::to_string(k);
    cases.push_back(
        {p, [=] {
           return from_vector(base, {}, TensorOptions(kFloat32)).pow(e);
         }});
    cases.push_back({p + "_f64", [=] { return strided(kFloat64).pow(e); }});
    cases.push_back({p + "_strided", [=] { return strided(kFloat32).pow(e); }});
  }
  expectCases(cases);
}

// arange(start, end, step) in f32 and f64 as PyTorch 1.13's CPU kernel
// computes it (one thread): blocks of 2 x 8 (f32) or 2 x 4 (f64) elements
// from a base start + idx * step, the rest start + i * step, each a fused
// multiply-add in double.
TEST(RoundingParity, ArangeWithFloatSteps) {
  const std::vector<std::array<double, 3>> ranges = {
      {0, 1, 0.1},          {-3.7, 100.2, 0.37},  {0.1, 1000.3, 0.7},
      {1e7, 1e7 + 50, 0.3}, {-100, 100, 1.0 / 3}, {5, -5, -0.3},
      {0, 10, 1},           {0.5, 40, 1.25},      {2.5, 3, 0.01},
      {-1, 1, 1e-3}};
  std::vector<std::pair<std::string, Case>> cases;
  for (size_t k = 0; k < ranges.size(); ++k) {
    auto [a, b, s] = ranges[k];
    for (DType t : {kFloat32, kFloat64})
      cases.push_back(
          {"arange" + std::to_string(k) + (t == kFloat64 ? "_f64" : ""),
           [=] { return arange(a, b, s, TensorOptions(t)); }});
  }
  expectCases(cases);
}

// linspace in f32 and f64 as PyTorch 1.13's CPU kernel computes it (one
// thread): the first half start + step * i, the second end - step *
// (steps - 1 - i), each one fma in the dtype, but in blocks of 2 x 8 (f32)
// or 2 x 4 (f64) elements from the formula at the block's first index plus
// k * step; the last steps % 16 (8) elements their own formula.
TEST(RoundingParity, LinspaceBlocks) {
  const std::vector<std::array<double, 3>> ranges = {
      {0, 1, 10},           {-3.7, 100.2, 281}, {0.1, 1000.3, 1429},
      {1e7, 1e7 + 50, 167}, {5, -5, 33},        {-1, 1, 2001},
      {0.3, 0.7, 17}};
  std::vector<std::pair<std::string, Case>> cases;
  for (size_t k = 0; k < ranges.size(); ++k) {
    auto [a, b, n] = ranges[k];
    for (DType t : {kFloat32, kFloat64})
      cases.push_back(
          {"linspace" + std::to_string(k) + (t == kFloat64 ? "_f64" : ""), [=] {
             return linspace(a, b, static_cast<int64_t>(n), TensorOptions(t));
           }});
  }
  expectCases(cases);
}
