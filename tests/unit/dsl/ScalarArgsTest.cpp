//===- ScalarArgsTest.cpp - scalars are program arguments -----------------===//
//
// A program's cache key is its structure: the C++ scalars of `x * lr + c`,
// `fill_(v)` and clamp-like bounds are arguments of the compiled program,
// so a new value every step compiles nothing (eval_stats().compiles), and
// each step's values match plain C++ (or PyTorch's, recorded below). A
// scalar whose value selects code (a pow exponent of sqrt, a product, a
// reciprocal) stays a constant: such an exponent is a program of its own;
// any other exponent is an argument.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace strata;

namespace {

TEST(ScalarArgs, ScheduleOf100StepsCompilesOnce) {
  manual_seed(3);
  Tensor x = rand({1000});
  std::vector<float> xv = x.to_vector<float>();
  int64_t before = eval_stats().compiles;
  for (int step = 0; step < 100; ++step) {
    // A learning-rate schedule and a bias that change every step.
    double lr = 0.1 * std::pow(0.97, step), bias = 0.25 * step - 3;
    std::vector<float> got = (x * lr + bias).relu().to_vector<float>();
    ASSERT_EQ(got.size(), xv.size());
    for (size_t i = 0; i < xv.size(); i += 97) {
      float want = xv[i] * static_cast<float>(lr) + static_cast<float>(bias);
      EXPECT_FLOAT_EQ(got[i], want > 0 ? want : 0) << step << " " << i;
    }
  }
  EXPECT_EQ(eval_stats().compiles - before, 1);
}

TEST(ScalarArgs, FillsAndIntegerScalarsAreArguments) {
  int64_t before = eval_stats().compiles;
  for (int64_t v = 0; v < 20; ++v) {
    Tensor t = zeros({8}, kInt64);
    t.fill_(v * 1000003);
    std::vector<int64_t> got = (t + (v - 7)).to_vector<int64_t>();
    for (int64_t g : got)
      EXPECT_EQ(g, v * 1000003 + v - 7);
    Tensor f = ones({5}, kFloat64) * (0.1 * v);
    EXPECT_EQ(f.to_vector<double>()[4], 0.1 * v);
  }
  // One program for the fill-and-add, one for the f64 product.
  EXPECT_EQ(eval_stats().compiles - before, 2);
}

TEST(ScalarArgs, FullOfAnyShapeIsOneProgramForEveryValue) {
  Tensor w = tensor({1.5f, -2.0f, 0.25f, 4.0f, 8.0f, -1.0f});
  std::vector<float> wv = w.to_vector<float>();
  int64_t before = eval_stats().compiles;
  for (int k = 0; k < 12; ++k) {
    double v = 0.37 * k - 2;
    // Read, alone, and through a narrow at offset k (uniform: one program).
    std::vector<float> prod = (w * full({6}, v)).to_vector<float>();
    std::vector<float> alone = full({2, 3}, v).to_vector<float>();
    float part = (ones({20}).narrow(0, k, 6) * v).sum().item<float>();
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(prod[i], wv[i] * static_cast<float>(v));
      EXPECT_EQ(alone[i], static_cast<float>(v));
    }
    EXPECT_FLOAT_EQ(part, 6 * static_cast<float>(v));
  }
  // The product, the fill alone, the narrowed sum.
  EXPECT_EQ(eval_stats().compiles - before, 3);
  // Written into at offset k: the offset is the write's, not dropped.
  for (int k = 0; k < 12; ++k) {
    Tensor z = zeros({16});
    z.narrow(0, k, 2).fill_(k + 1);
    std::vector<float> zv = z.to_vector<float>();
    for (int i = 0; i < 16; ++i)
      EXPECT_EQ(zv[i], i == k || i == k + 1 ? k + 1.0f : 0.0f) << k << " " << i;
  }
  // Empty and size-1 shapes keep PyTorch's strides (torch.full(s, v)
  // .stride()); on [0, 1] a product's inferred layout is not the fill's,
  // and the fill keeps its value in the program (a fuzzer's find).
  struct Want {
    Shape sizes, strides;
  } wants[] = {{{0, 1}, {1, 1}}, {{1, 0}, {1, 1}}, {{2, 0, 3}, {3, 3, 1}},
               {{1, 1}, {1, 1}}, {{3, 1}, {1, 1}}, {{0}, {1}}};
  for (const Want &w : wants) {
    Tensor f = full(w.sizes, -1.0);
    f.eval();
    EXPECT_EQ(f.strides(), w.strides);
    EXPECT_EQ(f.sizes(), w.sizes);
  }
  // Values a fill must keep exactly: -0.0, NaN, int64 beyond 2^53.
  EXPECT_TRUE(std::signbit(full({3}, -0.0).to_vector<float>()[2]));
  EXPECT_TRUE(std::isnan(full({3}, NAN).to_vector<float>()[1]));
  int64_t big = (int64_t{1} << 62) + 1;
  EXPECT_EQ(full({4}, big, kInt64).to_vector<int64_t>()[3], big);
  EXPECT_EQ((full({4}, big, kInt64) + 0).to_vector<int64_t>()[0], big);
}

TEST(ScalarArgs, FlippedReadOfAFill) {
  // A read of a fill at a negative stride reaches back from its offset:
  // it is given the lowest offset in bounds, not 0 (a torch fuzzer's find,
  // program 2244: full, flip, cumsum). One program for every k and value.
  std::vector<float> c =
      full({3}, 2.75).flip({0}).cumsum(-1).to_vector<float>();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], 2.75f);
  EXPECT_EQ(c[1], 5.5f);
  EXPECT_EQ(c[2], 8.25f);
  int64_t before = eval_stats().compiles;
  for (int k = 0; k < 10; ++k) {
    double v = 0.5 * k - 1;
    std::vector<float> got =
        (full({4, 5}, v).flip({0, 1}).narrow(1, k % 3, 3) + 1)
            .to_vector<float>();
    ASSERT_EQ(got.size(), 12u);
    for (float g : got)
      EXPECT_EQ(g, static_cast<float>(v) + 1) << k;
  }
  EXPECT_EQ(eval_stats().compiles - before, 1);
}

TEST(ScalarArgs, ArangeStartAndStepAreArguments) {
  // Position ids of a decoder step: `arange(past, past + n)`, a new start
  // every step. One program per dtype, every start.
  Tensor w = tensor({0.5f, 1.0f, 2.0f, 4.0f, 8.0f, 16.0f});
  w.eval();
  int64_t before = eval_stats().compiles;
  for (int k = 0; k < 12; ++k) {
    double start = 0.37 * k - 1, step = 0.25 + k;
    std::vector<float> got =
        (arange(start, start + 6 * step, step, kFloat32) * w)
            .to_vector<float>();
    ASSERT_EQ(got.size(), 6u);
    for (int i = 0; i < 6; ++i) // start + i * step in f64 (one fma), f32
      EXPECT_EQ(got[i], static_cast<float>(std::fma(i, step, start)) *
                            w.to_vector<float>()[i]);
    int64_t big = (int64_t{1} << 60) + 3 * k;
    std::vector<int64_t> ids =
        (arange(big, big + 5 * k + 5, k + 1) + 1).to_vector<int64_t>();
    ASSERT_EQ(ids.size(), 5u);
    for (int i = 0; i < 5; ++i) // exact in int64
      EXPECT_EQ(ids[i], big + i * (k + 1) + 1);
  }
  EXPECT_EQ(eval_stats().compiles - before, 2);
}

TEST(ScalarArgs, PowExponentsStayInTheKey) {
  Tensor x = tensor({-INFINITY, 4.0f, 9.0f});
  int64_t before = eval_stats().compiles;
  std::vector<float> h = x.pow(0.5).to_vector<float>();
  EXPECT_TRUE(std::isnan(h[0])); // sqrt, as PyTorch, not C's pow
  EXPECT_EQ(h[1], 2.0f);
  std::vector<float> q = x.pow(2.0).to_vector<float>();
  EXPECT_EQ(q[2], 81.0f);
  EXPECT_EQ(eval_stats().compiles - before, 2);
}

// torch 1.13's torch.pow(x, e) (/usr/bin/python3), bit patterns, for the x
// of PowExponentIsAnArgument: e = 1 + k / 10 (f32 and f64) and e = 1 + k
// (f32), k = 0..9. Made by:
//   x = [-2.5, -0.0, 0.0, 0.3, 1.7, 3.14159, inf, 1e-3]
//   torch.pow(torch.tensor(x, dtype=...), e), each value's bits.
const uint32_t kTenths32[10][8] = {
    {0xc0200000, 0x80000000, 0x00000000, 0x3e99999a, 0x3fd9999a, 0x40490fd0,
     0x7f800000, 0x3a83126f},
    {0xffc00000, 0x00000000, 0x00000000, 0x3e882d48, 0x3fe57554, 0x4061726e,
     0x7f800000, 0x3a03621c},
    {0xffc00000, 0x00000000, 0x00000000, 0x3e7175cd, 0x3ff1f67d, 0x407cca2b,
     0x7f800000, 0x3983b1f9},
    {0xffc00000, 0x00000000, 0x00000000, 0x3e561226, 0x3fff261a, 0x408db96d,
     0x7f800000, 0x39040206},
    {0xffc00000, 0x00000000, 0x00000000, 0x3e3dc9d7, 0x400686d6, 0x409ee9b8,
     0x7f800000, 0x38845244},
    {0xffc00000, 0x00000000, 0x00000000, 0x3e2842a8, 0x400ddb9c, 0x40b22fb0,
     0x7f800000, 0x3804a2b3},
    {0xffc00000, 0x00000000, 0x00000000, 0x3e152c9f, 0x401596a9, 0x40c7cc10,
     0x7f800000, 0x3784f353},
    {0xffc00000, 0x00000000, 0x00000000, 0x3e0440d0, 0x401dbd90, 0x40e0076a,
     0x7f800000, 0x37054424},
    {0xffc00000, 0x00000000, 0x00000000, 0x3dea80bf, 0x40265631, 0x40fb3320,
     0x7f800000, 0x36859526},
    {0xffc00000, 0x00000000, 0x00000000, 0x3dcfe71f, 0x402f66bf, 0x410cd538,
     0x7f800000, 0x3605e659},
};
const uint64_t kTenths64[10][8] = {
    {0xc004000000000000, 0x8000000000000000, 0x0000000000000000,
     0x3fd3333333333333, 0x3ffb333333333333, 0x400921f9f01b866e,
     0x7ff0000000000000, 0x3f50624dd2f1a9fc},
    {0x7ff8000000000000, 0x0000000000000000, 0x0000000000000000,
     0x3fd105a8e6ed2c75, 0x3ffcaeaa717c7c6b, 0x400c2e4db22256f1,
     0x7ff0000000000000, 0x3f406c436388750e},
    {0x7ff8000000000000, 0x0000000000000000, 0x0000000000000000,
     0x3fce2eb9881431f9, 0x3ffe3ecf98239818, 0x400f994540e44f90,
     0x7ff0000000000000, 0x3f30763f01e8e5b0},
    {0x7ff8000000000000, 0x0000000000000000, 0x0000000000000000,
     0x3fcac2449f53f2b0, 0x3fffe4c32630d4d8, 0x4011b72d81ae506a,
     0x7ff0000000000000, 0x3f208040b1c10b11},
    {0x7ff8000000000000, 0x0000000000000000, 0x0000000000000000,
     0x3fc7b93abf4b50dd, 0x4000d0daa9bc1f6d, 0x4013dd36e0661959,
     0x7ff0000000000000, 0x3f108a4876c13123},
    {0x7ff8000000000000, 0x0000000000000000, 0x0000000000000000,
     0x3fc50854f2c3d222, 0x4001bb7375f7abf9, 0x401645f5ecca64f9,
     0x7ff0000000000000, 0x3f009456549be1bd},
    {0x7ff8000000000000, 0x0000000000000000, 0x0000000000000000,
     0x3fc2a593bd9b8511, 0x4002b2d51b7b5ebe, 0x4018f981df06579e,
     0x7ff0000000000000, 0x3ef09e6a4f05e626},
    {0x7ff8000000000000, 0x0000000000000000, 0x0000000000000000,
     0x3fc08819f76d9f8d, 0x4003b7b1f59f3e83, 0x401c00ed2306594b,
     0x7ff0000000000000, 0x3ee0a88469b64865},
    {0x7ff8000000000000, 0x0000000000000000, 0x0000000000000000,
     0x3fbd5017b9c942f9, 0x4004cac617fa777a, 0x401f6663cfdbdcfe,
     0x7ff0000000000000, 0x3ed0b2a4a8665481},
    {0x7ff8000000000000, 0x0000000000000000, 0x0000000000000000,
     0x3fb9fce3bab66369, 0x4005ecd7d5fcc1d2, 0x40219aa6e8874fb9,
     0x7ff0000000000000, 0x3ec0bccb0ed19a1a},
};
const uint32_t kWhole32[10][8] = {
    {0xc0200000, 0x80000000, 0x00000000, 0x3e99999a, 0x3fd9999a, 0x40490fd0,
     0x7f800000, 0x3a83126f},
    {0x40c80000, 0x00000000, 0x00000000, 0x3db851ec, 0x4038f5c3, 0x411de9d6,
     0x7f800000, 0x358637be},
    {0xc17a0000, 0x80000000, 0x00000000, 0x3cdd2f1c, 0x409d374c, 0x41f80cb4,
     0x7f800000, 0x30897061},
    {0x421c4000, 0x00000000, 0x00000000, 0x3c04b5de, 0x4105a235, 0x42c2d14b,
     0x7f800000, 0x2b8cbcce},
    {0xc2c35000, 0x80000000, 0x00000000, 0x3b1f40a5, 0x41632d5a, 0x4399025d,
     0x7f800000, 0x26901d7f},
    {0x43742400, 0x00000000, 0x00000000, 0x3a3f1a60, 0x41c119c0, 0x4470589c,
     0x7f800000, 0x219392f1},
    {0xc4189680, 0x80000000, 0x00000000, 0x396552da, 0x422422b0, 0x453cc46b,
     0x7f800000, 0x1c971da4},
    {0x44bebc20, 0x00000000, 0x00000000, 0x3889981d, 0x428b83e3, 0x461441e1,
     0x7f800000, 0x179abe19},
    {0xc56e6b28, 0x80000000, 0x00000000, 0x37a51cf0, 0x42ed2d02, 0x46e8e1c4,
     0x7f800000, 0x129e74d6},
    {0x461502f9, 0x00000000, 0x00000000, 0x36c622ba, 0x43499975, 0x47b6e7a5,
     0x7f800000, 0x0da24265},
};

TEST(ScalarArgs, PowExponentIsAnArgument) {
  std::vector<double> xs = {-2.5, -0.0, 0.0, 0.3, 1.7, 3.14159, INFINITY, 1e-3};
  Tensor x32 = from_vector(std::vector<float>(xs.begin(), xs.end()), {8});
  Tensor x64 = from_vector(xs, {8});
  auto check32 = [](const std::vector<float> &got, const uint32_t *want,
                    double e) {
    for (int i = 0; i < 8; ++i)
      if (std::isnan(std::bit_cast<float>(want[i])))
        EXPECT_TRUE(std::isnan(got[i])) << e << " " << i;
      else
        EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), want[i])
            << e << " " << i << ": " << got[i];
  };
  // A schedule of exponents 1.0, 1.1, ..., 1.9: in f32 two programs, the
  // exponents f32 holds (1.0, 1.5: powf) and those it does not (passed in
  // f64: pow in f64, rounded once); in f64 one.
  int64_t before = eval_stats().compiles;
  for (int k = 0; k < 10; ++k)
    check32(x32.pow(1.0 + k / 10.0).to_vector<float>(), kTenths32[k],
            1.0 + k / 10.0);
  EXPECT_EQ(eval_stats().compiles - before, 2);
  before = eval_stats().compiles;
  for (int k = 0; k < 10; ++k) {
    std::vector<double> got = x64.pow(1.0 + k / 10.0).to_vector<double>();
    for (int i = 0; i < 8; ++i)
      if (std::isnan(std::bit_cast<double>(kTenths64[k][i])))
        EXPECT_TRUE(std::isnan(got[i])) << k << " " << i;
      else
        EXPECT_EQ(std::bit_cast<uint64_t>(got[i]), kTenths64[k][i])
            << k << " " << i;
  }
  EXPECT_EQ(eval_stats().compiles - before, 1);
  // Whole exponents 1..10: 2 and 3 are products (programs of their own),
  // the others one program. (On a 2x4 view: not the programs above.)
  Tensor x24 = x32.view({2, 4});
  before = eval_stats().compiles;
  for (int k = 0; k < 10; ++k)
    check32(x24.pow(1.0 + k).to_vector<float>(), kWhole32[k], 1.0 + k);
  EXPECT_EQ(eval_stats().compiles - before, 3);
  // Integer powers: every exponent one program (checked by plain C++).
  Tensor xi = from_vector(std::vector<int64_t>{-3, -1, 0, 2, 7, 1000}, {6});
  before = eval_stats().compiles;
  for (int64_t k = 0; k < 10; ++k) {
    std::vector<int64_t> got = xi.pow(k).to_vector<int64_t>();
    std::vector<int64_t> base = xi.to_vector<int64_t>();
    for (size_t i = 0; i < base.size(); ++i) {
      uint64_t want = 1; // (wrapping, as the kernel's)
      for (int64_t j = 0; j < k; ++j)
        want *= static_cast<uint64_t>(base[i]);
      EXPECT_EQ(got[i], static_cast<int64_t>(want)) << k << " " << i;
    }
  }
  EXPECT_EQ(eval_stats().compiles - before, 1);
}

TEST(ScalarArgs, ClampBoundsAndOtherScalarsAreArguments) {
  // A new bound, slope or weight every step: one program each, values by
  // plain C++.
  std::vector<float> xv = {-3.0f, -0.5f, 0.0f, 0.25f, 1.5f, 4.0f, NAN};
  std::vector<float> ev = {1.0f, 2.0f, -1.0f, 0.5f, 0.0f, 8.0f, 3.0f};
  Tensor x = from_vector(xv, {7}), end = from_vector(ev, {7});
  Tensor mask = x > 0.1;
  mask.eval();
  struct Case {
    const char *what;
    Tensor (*op)(const Tensor &, const Tensor &, const Tensor &, double);
    float (*want)(float, float, bool, double);
  } cases[] = {
      {"clamp",
       [](const Tensor &x, const Tensor &, const Tensor &, double v) {
         return x.clamp(-v, v);
       },
       [](float x, float, bool, double v) {
         float lo = static_cast<float>(-v), hi = static_cast<float>(v);
         return std::isnan(x) ? x : std::min(std::max(x, lo), hi);
       }},
      {"clamp_min",
       [](const Tensor &x, const Tensor &, const Tensor &, double v) {
         return x.clamp_min(v);
       },
       [](float x, float, bool, double v) {
         return std::isnan(x) ? x : std::max(x, static_cast<float>(v));
       }},
      {"clamp_max",
       [](const Tensor &x, const Tensor &, const Tensor &, double v) {
         return x.clamp_max(v);
       },
       [](float x, float, bool, double v) {
         return std::isnan(x) ? x : std::min(x, static_cast<float>(v));
       }},
      {"masked_fill",
       [](const Tensor &x, const Tensor &, const Tensor &m, double v) {
         return x.masked_fill(m, v);
       },
       [](float x, float, bool m, double v) {
         return m ? static_cast<float>(v) : x;
       }},
      {"where",
       [](const Tensor &x, const Tensor &, const Tensor &m, double v) {
         return where(m, x, v);
       },
       [](float x, float, bool m, double v) {
         return m ? x : static_cast<float>(v);
       }},
      {"nan_to_num",
       [](const Tensor &x, const Tensor &, const Tensor &, double v) {
         return x.nan_to_num(v);
       },
       [](float x, float, bool, double v) {
         return std::isnan(x) ? static_cast<float>(v) : x;
       }},
      {"lerp",
       [](const Tensor &x, const Tensor &e, const Tensor &, double v) {
         return x.lerp(e, v);
       },
       [](float x, float e, bool, double v) {
         // PyTorch's lerp: weight < 0.5 from the start, else from the end.
         float w = static_cast<float>(v);
         return std::abs(w) < 0.5f ? x + w * (e - x) : e - (e - x) * (1 - w);
       }},
  };
  for (const Case &c : cases) {
    int64_t before = eval_stats().compiles;
    for (int k = 0; k < 10; ++k) {
      double v = 0.3 + 0.17 * k;
      std::vector<float> got = c.op(x, end, mask, v).to_vector<float>();
      ASSERT_EQ(got.size(), xv.size());
      for (size_t i = 0; i < xv.size(); ++i) {
        float want = c.want(xv[i], ev[i], xv[i] > 0.1f, v);
        if (std::isnan(want))
          EXPECT_TRUE(std::isnan(got[i])) << c.what << " " << k << " " << i;
        else // (lerp: a contracted multiply-add is a last bit apart)
          EXPECT_FLOAT_EQ(got[i], want) << c.what << " " << k << " " << i;
      }
    }
    EXPECT_EQ(eval_stats().compiles - before, 1) << c.what;
  }
}

TEST(ScalarArgs, GradientProgramsTakeSizedFillsAndAranges) {
  // A sized fill and an arange inside the differentiated graph, new values
  // every step: one gradient program each. By hand: d/dx sum(x * f * x) =
  // 2 x f, d/dx sum(x * (a + x)) = a + 2 x.
  std::vector<float> xv = {-1.5f, -0.25f, 0.5f, 2.0f, 3.0f};
  int64_t before = backward_compiles();
  for (int k = 0; k < 10; ++k) {
    double v = 0.37 * k - 1;
    Tensor x = from_vector(xv, {5}).requires_grad_();
    (x * full({5}, v) * x).sum().backward();
    std::vector<float> g = x.grad().to_vector<float>();
    for (size_t i = 0; i < xv.size(); ++i)
      EXPECT_FLOAT_EQ(g[i], 2 * xv[i] * static_cast<float>(v)) << k << " " << i;
  }
  EXPECT_EQ(backward_compiles() - before, 1);
  before = backward_compiles();
  for (int k = 0; k < 10; ++k) {
    Tensor x = from_vector(xv, {5}).requires_grad_();
    (x * (arange(k, k + 10, 2, kFloat32) + x)).sum().backward();
    std::vector<float> g = x.grad().to_vector<float>();
    for (size_t i = 0; i < xv.size(); ++i)
      EXPECT_FLOAT_EQ(g[i], static_cast<float>(k + 2 * i) + 2 * xv[i])
          << k << " " << i;
  }
  EXPECT_EQ(backward_compiles() - before, 1);
}

TEST(ScalarArgs, BackwardWithAScheduleCompilesOnce) {
  // Scalars inside the differentiated graph (a loss weight annealed every
  // step, a temperature, a shift) are arguments of the gradient program
  // too: 50 steps of new values prepare it once. Checked against the
  // gradient by hand: d/dx sum(relu(x * w + b) * lam) = w * lam where
  // x * w + b > 0; and w.pow(2)'s exponent stays in the key (one program).
  std::vector<float> xv = {-1.5f, -0.25f, 0.5f, 2.0f};
  int64_t before = backward_compiles();
  for (int step = 0; step < 50; ++step) {
    double w = 0.5 + 0.01 * step, b = 0.02 * step - 0.5,
           lam = std::pow(0.9, step);
    Tensor x = from_vector(xv, {4}).requires_grad_();
    Tensor loss = ((x * w + b).relu() * lam).sum() + x.pow(2.0).sum() * 0.5;
    loss.backward();
    std::vector<float> g = x.grad().to_vector<float>();
    for (size_t i = 0; i < xv.size(); ++i) {
      float pre = xv[i] * static_cast<float>(w) + static_cast<float>(b);
      double want =
          (pre > 0 ? static_cast<float>(w) * static_cast<float>(lam) : 0.0) +
          xv[i];
      EXPECT_NEAR(g[i], want, 1e-5 * (1 + std::abs(want)))
          << "step " << step << " element " << i;
    }
  }
  EXPECT_EQ(backward_compiles() - before, 1);
}

// torch 1.13's gradients of sum(x.pow(e) * w) (/usr/bin/python3), bit
// patterns, for PowExponentInABackwardIsAnArgument. Made by:
//   xs = [-2.5, -0.0, 0.0, 0.3, 1.7, 3.14159, inf, 1e-3]
//   w = [0.5, -1.0, 2.0, 1.5, -0.25, 3.0, 1.0, -2.0]
//   x = torch.tensor(xs, dtype=..., requires_grad=True)
//   (x.pow(e) * torch.tensor(w, dtype=...)).sum().backward(); x.grad's bits
// e = [1.25, 1.75, 2.25, 0.75, -0.25, -1.25, 2.75]
const uint32_t kGradValue32[7][8] = {
    {0xffc00000, 0x80000000, 0x00000000, 0x3fb19eb0, 0xbeb6b284, 0x409fc29d,
     0x7f800000, 0xbee39ea9},
    {0xffc00000, 0x80000000, 0x00000000, 0x3f883374, 0xbf26bee8, 0x4146379c,
     0x7f800000, 0xbca13c08},
    {0xffc00000, 0x80000000, 0x00000000, 0x3f3fd459, 0xbf8bc372, 0x41e1db02,
     0x7f800000, 0xba51c63e},
    {0xffc00000, 0xff800000, 0x7f800000, 0x3fc292a4, 0xbe28259f, 0x3fd852fe,
     0x00000000, 0xc106f640},
    {0xffc00000, 0x7f800000, 0xff800000, 0xbfd83128, 0x3d03e145, 0xbe379f31,
     0x80000000, 0x452fbb4e},
    {0xffc00000, 0x7f800000, 0xff800000, 0xc1e13333, 0x3dc1f0ed, 0xbe921f29,
     0x80000000, 0x4b568423},
    {0xffc00000, 0x80000000, 0x00000000, 0x3f006b06, 0xbfdeb983, 0x4274a392,
     0x7f800000, 0xb801b985},
};
// e = [1.1, 1.3, 0.7, 2.9, -1.7, 0.1]
const uint32_t kGradWide32[6][8] = {
    {0xffc00000, 0x80000000, 0x00000000, 0x3fbb3e42, 0xbe947919, 0x406cd098,
     0x7f800000, 0xbf8d2264},
    {0xffc00000, 0x80000000, 0x00000000, 0x3fadeebe, 0xbec31d22, 0x40aff01b,
     0x7f800000, 0xbea79691},
    {0xffc00000, 0xff800000, 0x7f800000, 0x3fc0de84, 0xbe18d401, 0x3fbeabbf,
     0x00000000, 0xc131edf5},
    {0xffc00000, 0x80000000, 0x00000000, 0x3ee21826, 0xbffe54fc, 0x429927e0,
     0x7f800000, 0xb742279b},
    {0xffc00000, 0x7f800000, 0xff800000, 0xc283a057, 0x3dcfbbce, 0xbe6d7266,
     0x80000000, 0x4dcc1a51},
    {0xffc00000, 0xff800000, 0x7f800000, 0x3ee2f622, 0xbc7e124d, 0x3ddb49f5,
     0x00000000, 0xc2c87993},
};
// e = [1.1, 1.3, 1.25, 0.7, 2.9, -1.7]
const uint64_t kGrad64[6][8] = {
    {0x7ff8000000000000, 0x8000000000000000, 0x0000000000000000,
     0x3ff767c83d861d22, 0xbfd28f22fe235f91, 0x400d9a12f2b63dda,
     0x7ff0000000000000, 0xbff1a44c63eb95bf},
    {0x7ff8000000000000, 0x8000000000000000, 0x0000000000000000,
     0x3ff5bdd7c174352f, 0xbfd863a44a6193b5, 0x4015fe03630f24b2,
     0x7ff0000000000000, 0xbfd4f2d221aa130c},
    {0x7ff8000000000000, 0x8000000000000000, 0x0000000000000000,
     0x3ff633d60010ca31, 0xbfd6d650920e3252, 0x4013f853a3c11eee,
     0x7ff0000000000000, 0xbfdc73d51c54470f},
    {0x7ff8000000000000, 0xfff0000000000000, 0x7ff0000000000000,
     0x3ff81bd088d53358, 0xbfc31a802076da3d, 0x3ff7d577ffb0bf00,
     0x0000000000000000, 0xc0263dbeaa540baf},
    {0x7ff8000000000000, 0x8000000000000000, 0x0000000000000000,
     0x3fdc430474a658e9, 0xbfffca9f5cae7f70, 0x405324fbe9acc04c,
     0x7ff0000000000000, 0xbee844f33be31f72},
    {0x7ff8000000000000, 0x7ff0000000000000, 0xfff0000000000000,
     0xc050740aef4cba7d, 0x3fb9f779d60a43b9, 0xbfcdae4cd6b3e9ea,
     0x8000000000000000, 0x41b9834a5002907f},
};

TEST(ScalarArgs, PowExponentInABackwardIsAnArgument) {
  // The exponent of a pow under autograd is an argument of the gradient
  // program too, where neither it nor the VJP's `exponent - 1` selects the
  // code: a schedule of exponents f32 holds is one gradient program, one
  // of exponents it does not (in f64, with e - 1 in f64 as PyTorch's
  // double Scalar) another; f64 one. Each gradient is PyTorch's to the bit.
  std::vector<double> xs = {-2.5, -0.0, 0.0, 0.3, 1.7, 3.14159, INFINITY, 1e-3};
  std::vector<double> ws = {0.5, -1.0, 2.0, 1.5, -0.25, 3.0, 1.0, -2.0};
  auto run32 = [&](const std::vector<double> &es, const uint32_t(*want)[8]) {
    int64_t before = backward_compiles();
    for (size_t k = 0; k < es.size(); ++k) {
      Tensor x = from_vector(std::vector<float>(xs.begin(), xs.end()), {8})
                     .requires_grad_();
      Tensor w = from_vector(std::vector<float>(ws.begin(), ws.end()), {8});
      (x.pow(es[k]) * w).sum().backward();
      std::vector<float> got = x.grad().to_vector<float>();
      for (int i = 0; i < 8; ++i)
        if (std::isnan(std::bit_cast<float>(want[k][i])))
          EXPECT_TRUE(std::isnan(got[i])) << es[k] << " " << i;
        else
          EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), want[k][i])
              << "e = " << es[k] << ", element " << i << ": " << got[i];
    }
    return backward_compiles() - before;
  };
  EXPECT_EQ(run32({1.25, 1.75, 2.25, 0.75, -0.25, -1.25, 2.75}, kGradValue32),
            1);
  EXPECT_EQ(run32({1.1, 1.3, 0.7, 2.9, -1.7, 0.1}, kGradWide32), 1);
  std::vector<double> es64 = {1.1, 1.3, 1.25, 0.7, 2.9, -1.7};
  int64_t before = backward_compiles();
  for (size_t k = 0; k < es64.size(); ++k) {
    Tensor x = from_vector(xs, {8}).requires_grad_();
    (x.pow(es64[k]) * from_vector(ws, {8})).sum().backward();
    std::vector<double> got = x.grad().to_vector<double>();
    for (int i = 0; i < 8; ++i)
      if (std::isnan(std::bit_cast<double>(kGrad64[k][i])))
        EXPECT_TRUE(std::isnan(got[i])) << es64[k] << " " << i;
      else
        EXPECT_EQ(std::bit_cast<uint64_t>(got[i]), kGrad64[k][i])
            << "e = " << es64[k] << ", element " << i << ": " << got[i];
  }
  EXPECT_EQ(backward_compiles() - before, 1);
  // Exponents whose `exponent - 1` selects the code (1.5: a sqrt, 4: a
  // cube, 0: 1 / x) stay constants: each is a program of its own.
  before = backward_compiles();
  for (double e : {1.5, 4.0, 0.0, 1.5}) {
    Tensor x =
        from_vector(std::vector<float>{0.25f, 2.0f}, {2}).requires_grad_();
    x.pow(e).sum().backward();
    std::vector<float> got = x.grad().to_vector<float>();
    for (int i = 0; i < 2; ++i) {
      float xv = i == 0 ? 0.25f : 2.0f;
      double want = e == 0 ? 0.0 : e * std::pow(double(xv), e - 1);
      EXPECT_NEAR(got[i], want, 1e-6 * (1 + std::abs(want))) << e;
    }
  }
  EXPECT_EQ(backward_compiles() - before, 3);
}

TEST(ScalarArgs, ZeroDimFillsReturnedAreArguments) {
  // A 0-d fill that is returned (full({}, v).item(), or saved for backward
  // as pow's tensor exponent) is `ones * v` of its argument, as a sized one:
  // one program for every value, each value exact (signed zero, inf, the
  // int64 edges, which a double cannot hold).
  int64_t before = eval_stats().compiles;
  for (double v : {0.25, -0.0, double(INFINITY), -3.4e38, 1e-45, 7.0}) {
    float got = full({}, v, kFloat32).item<float>();
    EXPECT_EQ(std::bit_cast<uint32_t>(got),
              std::bit_cast<uint32_t>(static_cast<float>(v)))
        << v;
  }
  EXPECT_EQ(eval_stats().compiles - before, 1);
  before = eval_stats().compiles;
  for (int64_t v : {int64_t(0), std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min(), int64_t(-7)})
    EXPECT_EQ(full({}, v, kInt64).item<int64_t>(), v);
  EXPECT_EQ(eval_stats().compiles - before, 1);
  // pow by a 0-d tensor under autograd (the exponent is saved): torch
  // 1.13's forward and gradient bits (/usr/bin/python3:
  // x = torch.tensor([0.3, 1.7], requires_grad=True);
  // y = x.pow(torch.full((), e)); y.sum().backward()).
  const uint32_t want[3][4] = {
      {0x3e882d47, 0x3fe57554, 0x3f79a858, 0x3f947919},
      {0x3e561227, 0x3fff2619, 0x3f67e8fe, 0x3fc31d22},
      {0x3d1eb42d, 0x40861455, 0x3eb28ab3, 0x40d4f31c}};
  int64_t compiles = 0;
  for (int k = 0; k < 3; ++k) {
    double e = std::vector<double>{1.1, 1.3, 2.7}[k];
    Tensor x =
        from_vector(std::vector<float>{0.3f, 1.7f}, {2}).requires_grad_();
    Tensor y = x.pow(full({}, e));
    y.sum().backward();
    std::vector<float> f = y.to_vector<float>(),
                       g = x.grad().to_vector<float>();
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(std::bit_cast<uint32_t>(f[i]), want[k][i]) << e << " " << i;
      EXPECT_EQ(std::bit_cast<uint32_t>(g[i]), want[k][2 + i]) << e << " " << i;
    }
    int64_t now = eval_stats().compiles + backward_compiles();
    if (k > 0) {
      EXPECT_EQ(now, compiles) << "e = " << e << " compiled";
    }
    compiles = now;
  }
}

TEST(ScalarArgs, SecondDerivativesThroughNumberExponents) {
  // create_graph's replay shares one fill between the pow, the eq and the
  // mul of the VJP: an f64 exponent argument (2.3 of an f32 base) made the
  // next gradient program invalid IR; it stays a constant where others
  // read it. torch 1.13 (/usr/bin/python3): x = [0.5, 2] (f32),
  // y = (x.pow(2.3) * x).sum(), g = grad(y, x, create_graph=True),
  // (g * g).sum().backward(): x.grad = [0x1.0865dp+2, 0x1.2fb696p+9].
  Tensor x = from_vector(std::vector<float>{0.5f, 2.0f}, {2}).requires_grad_();
  Tensor y = (x.pow(2.3) * x).sum();
  std::vector<Tensor> g = grad({y}, {x}, {}, std::nullopt, true);
  (g[0] * g[0]).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(),
            (std::vector<float>{0x1.0865dp+2f, 0x1.2fb696p+9f}));
  // pow(x, 0)'s gradient is zeros_like(x) with no graph (PyTorch's
  // pow_backward), so a second derivative at x = 0 is not NaN: for
  // y = sum(x^0 + x * x), d/dx sum(g) = 2 everywhere (torch: [2, 2, 2]).
  Tensor z =
      from_vector(std::vector<float>{0.0f, 0.5f, 2.0f}, {3}).requires_grad_();
  Tensor yz = (z.pow(0.0) + z * z).sum();
  std::vector<Tensor> gz = grad({yz}, {z}, {}, std::nullopt, true);
  gz[0].sum().backward();
  EXPECT_EQ(z.grad().to_vector<float>(), (std::vector<float>{2, 2, 2}));
}

TEST(ScalarArgs, CreateGraphWithAScheduleCompilesOnce) {
  // A gradient penalty whose weight changes every step: with create_graph
  // the gradient is replayed as recorded ops, whose scalars are arguments
  // of the programs that evaluate them. Checked by hand: for
  // y = sum(c * x^3), g = 3c x^2 and d/dx sum(g^2) = 36 c^2 x^3.
  std::vector<float> xv = {-1.5f, -0.25f, 0.5f, 2.0f};
  int64_t compiles = 0;
  for (int step = 0; step < 12; ++step) {
    double c = 0.5 + 0.125 * step;
    Tensor x = from_vector(xv, {4}).requires_grad_();
    Tensor y = (x * x * x * c).sum();
    std::vector<Tensor> g = grad({y}, {x}, {}, std::nullopt, true);
    (g[0] * g[0]).sum().backward();
    std::vector<float> got = x.grad().to_vector<float>();
    for (size_t i = 0; i < xv.size(); ++i) {
      double want = 36 * c * c * xv[i] * xv[i] * xv[i];
      EXPECT_NEAR(got[i], want, 1e-5 * (1 + std::abs(want)))
          << "step " << step << " element " << i;
    }
    int64_t now = backward_compiles() + eval_stats().compiles;
    if (step >= 1) {
      EXPECT_EQ(now, compiles) << "step " << step << " compiled";
    }
    compiles = now;
  }
}

} // namespace

TEST(ScalarArgs, ArangesOfOneLengthAndAnotherDTypeAreOtherPrograms) {
  // An arange's bounds are i64 or f64 arguments whatever its dtype: the
  // dtype is in the key (a returned f64 range once ran the f32 program).
  auto expectRange = [](Tensor t, DType want) {
    ASSERT_EQ(t.dtype(), want);
    std::vector<double> got = t.to(kFloat64).to_vector<double>();
    ASSERT_EQ(got.size(), 4u);
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(got[i], 0.25 * static_cast<double>(i)) << "element " << i;
  };
  expectRange(arange(0.0, 1.0, 0.25, kFloat32), kFloat32);
  expectRange(arange(0.0, 1.0, 0.25, kFloat64), kFloat64);
  expectRange(arange(0.0, 1.0, 0.25, kFloat64).narrow(0, 0, 4), kFloat64);
  auto expectInts = [](Tensor t, DType want) {
    ASSERT_EQ(t.dtype(), want);
    std::vector<int64_t> got = t.to(kInt64).to_vector<int64_t>();
    ASSERT_EQ(got.size(), 4u);
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(got[i], i) << "element " << i;
  };
  expectInts(arange(0, 4, 1, kInt64), kInt64);
  expectInts(arange(0, 4, 1, kInt32), kInt32);
  expectInts(arange(0, 4, 1, kInt64), kInt64);
}

TEST(ScalarArgs, AnInt64NumberRoundsOnceToFloat) {
  // 2^60 + 2^36 + 1 to f32: PyTorch rounds the int64 once (up, to
  // 2^60 + 2^37: 1152921642045800448, /usr/bin/python3); through a double
  // first it rounds to 2^60 + 2^36, then to even, 2^60. The factories.
  const int64_t v = (int64_t(1) << 60) + (int64_t(1) << 36) + 1;
  const float want = static_cast<float>(v);
  ASSERT_EQ(static_cast<double>(want), 1152921642045800448.0);
  EXPECT_EQ(full({1}, v, kFloat32).to_vector<float>()[0], want);
  EXPECT_EQ(full_like(zeros({1}), v).to_vector<float>()[0], want);
  // Open: a C++ number beside an f32 tensor (`x + v`, `x / v`, clamp
  // bounds, fill_) is still held as a double (a pow exponent must stay
  // exact, and shares that node).
}
