//===- EdgeParityTest.cpp - an adversary's finds against PyTorch's values -===//
//
// Each case is the strata twin of a PyTorch program in
// scripts/gen_edge_parity_golden.py, whose results (bits, or the start of
// PyTorch 1.13's error message) are edge_parity_golden.txt: int64 numbers
// beside f32/f64 tensors (rounded once, as static_cast<float>(int64_t)) and
// int64 tensors at INT64_MIN/MAX; in-place writes into the views split,
// chunk and unbind return (refused with grad, as PyTorch's
// MULTI_OUTPUT_NODE); lerp by a number (1 - weight in double for start's
// gradient) and by a tensor, forward and gradients; the signs of zero in
// gradients through writes to views (CopySlices replaces the written part
// of the gradient, it adds nothing).
//
//===----------------------------------------------------------------------===//
#include "GoldenBits.h"
#include "strata/strata.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace strata;
using golden::Case;
using golden::dyadic;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// Runs `cases` against edge_parity_golden.txt: bit for bit, or the error.
void expectCases(const std::vector<std::pair<std::string, Case>> &cases) {
  static const std::map<std::string, golden::Golden> want =
      golden::readGolden(STRATA_EDGE_PARITY_GOLDEN);
  golden::expectCases(want, cases);
}

Tensor f32s(const std::vector<float> &v) { return from_vector(v); }
Tensor f64s(const std::vector<float> &v) {
  return from_vector(std::vector<double>(v.begin(), v.end()));
}

} // namespace

// x + v, clamp(v), fill_(v), where(c, x, v), x < v, ... with an int64 v: the
// number is converted to the tensor's float type once (x < v compares in
// f32 too); int64 tensors keep it exact, wrapping as PyTorch's.
TEST(EdgeParity, Int64NumbersBesideTensors) {
  const std::vector<int64_t> big = {(1LL << 60) + (1LL << 36) + 1,
                                    -((1LL << 60) + (1LL << 36) + 1),
                                    (1LL << 53) + 1,
                                    -((1LL << 53) + 1),
                                    (1LL << 24) + 1,
                                    (1LL << 55) + (1LL << 31) + 1,
                                    (1LL << 62) + (1LL << 38) + (1LL << 37),
                                    kMax,
                                    kMin};
  std::vector<std::pair<std::string, Case>> cases;
  for (size_t k = 0; k < big.size(); ++k) {
    int64_t v = big[k];
    float F = static_cast<float>(v);
    auto x = [F] { return f32s({0.f, 1.f, -2.5f, 0x1p60f, F, -F}); };
    auto c = [] { return tensor({true, false, true, false, true, false}); };
    std::string p = "big" + std::to_string(k) + "_";
    cases.insert(
        cases.end(),
        {{p + "add", [=] { return x() + v; }},
         {p + "sub", [=] { return x() - v; }},
         {p + "rsub", [=] { return v - x(); }},
         {p + "mul", [=] { return x() * v; }},
         {p + "div", [=] { return x() / v; }},
         {p + "rdiv", [=] { return v / x(); }},
         {p + "clamp_min", [=] { return x().clamp(v, std::nullopt); }},
         {p + "clamp_max", [=] { return x().clamp(std::nullopt, v); }},
         {p + "clamp", [=] { return x().clamp(v, v); }},
         {p + "fill_", [=] { return x().fill_(v); }},
         {p + "where_other", [=] { return where(c(), x(), v); }},
         {p + "where_self", [=] { return where(c(), v, x()); }},
         {p + "masked_fill", [=] { return x().masked_fill(c(), v); }},
         {p + "full", [=] { return full({2}, v, kFloat32); }},
         {p + "eq", [=] { return x() == v; }},
         {p + "ne", [=] { return x() != v; }},
         {p + "lt", [=] { return x() < v; }},
         {p + "le", [=] { return x() <= v; }},
         {p + "gt", [=] { return x() > v; }},
         {p + "ge", [=] { return x() >= v; }},
         {p + "add_alpha",
          [=] {
            Tensor out = empty({6});
            return add_out(out, x(), x(), v);
          }},
         {p + "add_", [=] { return x().add_(v); }},
         {p + "f64_add",
          [=] {
            return f64s({0.f, 1.f}) + v;
          }},
         {p + "f64_fill_", [=] { return zeros({2}, kFloat64).fill_(v); }},
         {p + "f64_eq",
          [=] {
            return from_vector(
                       std::vector<double>{static_cast<double>(v), 0}) == v;
          }},
         {p + "grad_mul",
          [=] {
            Tensor a = x().requires_grad_();
            (a * v).sum().backward();
            return a.grad();
          }},
         {p + "grad_div", [=] {
            Tensor a = x().requires_grad_();
            (a / v).sum().backward();
            return a.grad();
          }}});
  }
  const std::vector<int64_t> edge = {kMax, kMin, 0, -1, (1LL << 53) + 1};
  auto i = [edge] { return from_vector(edge); };
  auto c = [] { return tensor({true, false, true, false, true}); };
  for (size_t k = 0; k < edge.size(); ++k) {
    int64_t v = edge[k];
    std::string p = "edge" + std::to_string(k) + "_";
    cases.insert(cases.end(),
                 {{p + "add", [=] { return i() + v; }},
                  {p + "sub", [=] { return i() - v; }},
                  {p + "mul", [=] { return i() * v; }},
                  {p + "fill_", [=] { return i().fill_(v); }},
                  {p + "where", [=] { return where(c(), i(), v); }},
                  {p + "masked_fill", [=] { return i().masked_fill(c(), v); }},
                  {p + "full", [=] { return full({2}, v); }},
                  {p + "eq", [=] { return i() == v; }},
                  {p + "ne", [=] { return i() != v; }},
                  {p + "lt", [=] { return i() < v; }},
                  {p + "le", [=] { return i() <= v; }},
                  {p + "gt", [=] { return i() > v; }},
                  {p + "ge", [=] { return i() >= v; }}});
  }
  cases.insert(
      cases.end(),
      {{"edge_clamp", [=] { return i().clamp(kMin + 1, kMax - 1); }},
       {"edge_clamp_min", [=] { return i().clamp(kMax, std::nullopt); }},
       {"edge_clamp_max", [=] { return i().clamp(std::nullopt, kMin); }}});
  expectCases(cases);
}

// The outputs of split, split_with_sizes, chunk and unbind (and views of
// them) may not be written in place with grad, nor read after their base
// was (PyTorch's CreationMeta::MULTI_OUTPUT_NODE); in no-grad mode, or
// when nothing requires grad, they may.
TEST(EdgeParity, InPlaceWritesIntoMultiOutputViews) {
  auto X = [] { return tensor({1.5f, -2.f, 0.5f, 3.f}).requires_grad_(); };
  std::vector<std::pair<std::string, Case>> cases = {
      {"multi1", [&] { return (X() * 1).split(2)[0].mul_(2); }},
      {"multi2", [&] { return (X() * 1).chunk(2)[1].add_(1); }},
      {"multi3",
       [&] {
         return (X() * 1).split(Shape{1, 3})[1].add_(1);
       }},
      {"multi4", [&] { return (X() * 1).unbind()[3].add_(1); }},
      {"multi5",
       [&] {
         Tensor x = X(), h = x * 1;
         auto p = h.split(2);
         {
           NoGradGuard g;
           p[0].mul_(2);
         }
         h.sum().backward();
         return x.grad();
       }},
      {"multi6",
       [&] {
         Tensor h = tensor({1.f, 2.f, 3.f, 4.f});
         h.split(2)[0].mul_(2);
         return h;
       }},
      {"multi7",
       [&] {
         Tensor h = zeros({4});
         return h.split(2)[0].copy_(X().narrow(0, 0, 2));
       }},
      {"multi8", [&] { return (X() * 1).split(2)[0].narrow(0, 0, 1).mul_(2); }},
      {"multi9", [&] { return (X() * 1).split(2)[0][0].mul_(2); }},
      {"multi10",
       [&] {
         Tensor h = X() * 1;
         auto p = h.split(2);
         h.mul_(2);
         return p[0].sum();
       }},
      {"multi11",
       [&] {
         Tensor x = X(), h = x * 1;
         auto p = h.split(2);
         p[0].detach().mul_(2);
         h.sum().backward();
         return x.grad();
       }},
      {"multi12", [&] { return (X() * 1).split(2)[0].view({2}).mul_(2); }},
      {"multi13", [&] { return X().split(2)[0].mul_(2); }},
      {"multi14",
       [&] {
         Tensor h = X() * 1;
         auto p = h.split(2);
         p[1].detach().mul_(2);
         return p[0] * 1;
       }},
      {"multi15",
       [&] {
         return (X() * 1).view({2, 2}).unbind(1)[0].mul_(2);
       }},
      {"multi16",
       [&] {
         Tensor h = X() * 1;
         auto p = h.split(2);
         h.mul_(2);
         return p[0].add_(1);
       }},
      {"multi17", [&] { return (X() * 1).split(4)[0].zero_(); }},
      {"multi18",
       [&] {
         Tensor h = X().detach();
         auto p = h.split(2);
         h.requires_grad_();
         return p[0].mul_(2);
       }},
      {"multi19",
       [&] {
         Tensor h = X() * 1;
         std::vector<Tensor> p;
         {
           NoGradGuard g;
           p = h.split(2);
         }
         return p[0].mul_(2);
       }},
      {"multi20", [&] {
         Tensor h = tensor({1.f, 2.f, 3.f, 4.f});
         auto p = h.split(2);
         h.mul_(2);
         return p[0] * 1;
       }}};
  // (PyTorch's cases that run return nothing: `ok`.)
  for (const char *ok :
       {"multi1", "multi2", "multi3", "multi4", "multi7", "multi8", "multi9",
        "multi10", "multi12", "multi13", "multi14", "multi15", "multi16",
        "multi17", "multi18", "multi19"})
    for (auto &[name, run] : cases)
      if (name == ok)
        run = [f = run] {
          f();
          return Tensor();
        };
  expectCases(cases);
}

// lerp by a number and by a tensor, f32 and f64: the forward (PyTorch's two
// fused forms either side of weight 0.5) and every gradient bit for bit;
// start's gradient by a number is g * (1 - weight) with 1 - weight in
// double (w = 1.17: -0.17f, not 1 - 1.17f).
TEST(EdgeParity, LerpForwardAndGradients) {
  const int n = 37;
  std::vector<float> s0 = dyadic(n, 1), e0 = dyadic(n, 2), g0 = dyadic(n, 4),
                     wt = dyadic(n, 3);
  std::copy_n(std::begin({0.f, -0.f, 1.f, -1.f}), 4, s0.begin());
  std::copy_n(std::begin({-0.f, -0.f, 1.f, 3.f}), 4, e0.begin());
  for (float &w : wt)
    w /= 262144.0f; // 2^18: weights in [-2, 2)
  const std::vector<Scalar> weights = {
      1.17,       0.3,       0.7,  2.1,        -0.45,
      0.5,        1.0 / 3,   1e-8, 1 - 1e-8,   -3.7,
      0.49999997, 0.5000001, 1e30, int64_t{7}, int64_t{-2}};
  std::vector<std::pair<std::string, Case>> cases;
  for (size_t k = 0; k < weights.size(); ++k) {
    Scalar w = weights[k];
    std::string p = "lerp" + std::to_string(k) + "_";
    auto make = [](const std::vector<float> &v, bool f64) {
      return f64 ? f64s(v) : f32s(v);
    };
    auto fwd = [=](bool f64) { return make(s0, f64).lerp(make(e0, f64), w); };
    auto grads = [=](bool f64) {
      Tensor s = make(s0, f64).requires_grad_();
      Tensor e = make(e0, f64).requires_grad_();
      s.lerp(e, w).backward(make(g0, f64));
      return cat({s.grad(), e.grad()});
    };
    cases.insert(cases.end(), {{p + "fwd", [=] { return fwd(false); }},
                               {p + "grads", [=] { return grads(false); }},
                               {p + "inplace",
                                [=] {
                                  Tensor s = f32s(s0).requires_grad_();
                                  Tensor h = s * 1;
                                  h.lerp_(f32s(e0), w);
                                  h.sum().backward();
                                  return cat({h.detach(), s.grad()});
                                }},
                               {p + "f64_fwd", [=] { return fwd(true); }},
                               {p + "f64_grads", [=] { return grads(true); }}});
  }
  auto tensorWeight = [=](bool f64) {
    auto make = [f64](const std::vector<float> &v) {
      return f64 ? f64s(v) : f32s(v);
    };
    Tensor s = make(s0).requires_grad_(), e = make(e0).requires_grad_(),
           w = make(wt).requires_grad_();
    Tensor r = s.lerp(e, w);
    r.backward(make(g0));
    return cat({r.detach(), s.grad(), e.grad(), w.grad()});
  };
  cases.insert(cases.end(),
               {{"lerp_tensor", [=] { return tensorWeight(false); }},
                {"lerp_tensor_f64", [=] { return tensorWeight(true); }},
                {"lerp_create_graph", [=] {
                   Tensor s = f32s(s0).requires_grad_(), e = f32s(e0);
                   Tensor g = grad({(s.lerp(e, 1.17) * s).sum()}, {s}, {},
                                   std::nullopt, true)[0];
                   Tensor h = grad({(g * g).sum()}, {s})[0];
                   return cat({g.detach(), h});
                 }}});
  expectCases(cases);
}

// -0.0 in gradients through in-place writes to views: PyTorch's CopySlices
// replaces the written elements of the incoming gradient with the in-place
// op's gradient (no +0.0 added in, nor added to the rest); copy_'s value's
// reads of those elements add to its zeros, as any other read.
TEST(EdgeParity, SignedZerosThroughWritesToViews) {
  auto run = [](std::function<void(Tensor &)> write,
                std::vector<float> seed) -> Case {
    return [=] {
      Tensor x = tensor({1.f, 2.f}).requires_grad_();
      Tensor h = x * 1;
      write(h);
      if (seed.empty())
        h.sum().backward();
      else
        h.backward(f32s(seed));
      return x.grad();
    };
  };
  auto sel = [](Tensor &h) { h[0].mul_(-0.0); };
  auto nar = [](Tensor &h) { h.narrow(0, 0, 1).mul_(-0.0); };
  std::vector<std::pair<std::string, Case>> cases = {
      {"nz_sel", run(sel, {})},
      {"nz_narrow", run(nar, {})},
      {"nz_whole", run([](Tensor &h) { h.mul_(-0.0); }, {})},
      {"nz_sel_gm0", run(sel, {1.f, -0.f})},
      {"nz_narrow_gm0",
       run([](Tensor &h) { h.narrow(0, 0, 1).mul_(2.0); }, {1.f, -0.f})},
      {"nz_zero_sel", run([](Tensor &h) { h[0].zero_(); }, {-1.f, -0.f})},
      {"nz_sel_neg_seed", run(sel, {-0.f, -0.f})},
      {"nz_add_sel", run([](Tensor &h) { h[1].add_(1); }, {-0.f, -0.f})},
      {"nz_copy_same",
       run([](Tensor &h) { h[0].copy_(h[0] * 2); }, {1.f, -0.f})},
      {"nz_copy_negzero",
       run([](Tensor &h) { h.narrow(0, 0, 1).copy_(h.narrow(0, 0, 1) * -0.0); },
           {1.f, -0.f})},
      {"nz_neg_sel",
       [] {
         Tensor x = tensor({-0.f, 2.f}).requires_grad_();
         Tensor h = x.neg();
         h[1].mul_(-0.0);
         (h * 1).sum().backward();
         return x.grad();
       }},
      {"nz_create_graph",
       [] {
         Tensor x = tensor({1.f, 2.f}).requires_grad_();
         Tensor h = x * x;
         h[0].mul_(-0.0);
         Tensor g =
             grad({h}, {x}, {tensor({1.f, -0.f})}, std::nullopt, true)[0];
         Tensor h2 = grad({g.sum()}, {x})[0];
         return cat({g.detach(), h2});
       }},
      {"nz_2d",
       [] {
         Tensor x = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3})
                        .requires_grad_();
         Tensor h = x * 1;
         h.select(1, 1).mul_(-0.0);
         h.narrow(1, 2, 1).mul_(0.0);
         h.backward(from_vector(std::vector<float>{1, -0.f, -0.f, -0.f, 2, -1},
                                {2, 3}));
         return x.grad();
       }},
      {"nz_twice", [] {
         Tensor x = tensor({1.f, 2.f, 3.f}).requires_grad_();
         Tensor h = x * 1;
         h[1].mul_(-1.0);
         h.narrow(0, 1, 2).mul_(-0.0);
         h.backward(tensor({-0.f, 1.f, -0.f}));
         return x.grad();
       }}};
  expectCases(cases);
}
