//===- RandomBlobTest.cpp - random factories and in-place ops; from_blob -===//
//
// strata's generator is not PyTorch's, so values are checked by what they
// must satisfy (range, integrality, a permutation, sample moments within
// 6 standard errors, determinism under manual_seed); dtypes, defaults and
// every error are PyTorch 1.13's (its messages are quoted in the cases).
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

using namespace strata;

namespace {

/// The message of the strata::Error `f` throws ("" when none), which must
/// name this file (the user's line).
template <typename F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("RandomBlobTest.cpp"), std::string::npos) << what;
    return what;
  }
  return "";
}

void expectError(const std::string &what, const std::string &part) {
  EXPECT_NE(what.find(part), std::string::npos)
      << "expected \"" << part << "\" in: " << what;
}

double mean(const std::vector<double> &v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

double variance(const std::vector<double> &v) {
  double m = mean(v), s = 0;
  for (double x : v)
    s += (x - m) * (x - m);
  return s / (v.size() - 1);
}

TEST(Random, RandintRangeDtypeAndDeterminism) {
  manual_seed(7);
  Tensor a = randint(-3, 5, {4000});
  EXPECT_EQ(a.dtype(), kInt64); // PyTorch's default for randint
  std::vector<int64_t> v = a.to_vector<int64_t>();
  std::vector<int> seen(8, 0);
  for (int64_t x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 5);
    ++seen[x + 3];
  }
  for (int c : seen) // each of 8 values ~500 times
    EXPECT_GT(c, 350);
  manual_seed(7);
  EXPECT_EQ(randint(-3, 5, {4000}).to_vector<int64_t>(), v);
  // One bound, other dtypes (PyTorch: randint(10, (3,), dtype=float32)).
  Tensor f = randint(10, {3, 2}, kFloat32);
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(f.sizes(), (Shape{3, 2}));
  for (float x : f.to_vector<float>())
    EXPECT_EQ(x, std::floor(x));
  Tensor b = randint(0, 2, {100}, kBool);
  EXPECT_EQ(b.dtype(), kBool);
  // Full int64 range without overflow.
  Tensor wide = randint(INT64_MIN, INT64_MAX, {16});
  EXPECT_EQ(wide.numel(), 16);
  EXPECT_EQ(randint(5, {0}).numel(), 0);
}

TEST(Random, RandintErrorsArePyTorchs) {
  // random_ expects 'from' to be less than 'to', but got from=5 >= to=5
  expectError(errorOf([] { randint(5, 5, {2}); }),
              "random_ expects 'from' to be less than 'to', but got from=5 "
              ">= to=5");
  // to - 1 is out of bounds for bool
  expectError(errorOf([] { randint(0, 3, {2}, kBool); }),
              "to - 1 is out of bounds for bool");
  expectError(errorOf([] { randint(0, int64_t{1} << 40, {2}, kInt32); }),
              "to - 1 is out of bounds for int");
  expectError(errorOf([] { randint(-(int64_t{1} << 40), 3, {2}, kInt32); }),
              "from is out of bounds for int");
  expectError(errorOf([] { randint(3, {-1}); }),
              "Trying to create tensor with negative dimension -1");
}

TEST(Random, RandpermIsAPermutation) {
  manual_seed(11);
  Tensor p = randperm(1000);
  EXPECT_EQ(p.dtype(), kInt64);
  std::vector<int64_t> v = p.to_vector<int64_t>();
  std::vector<int64_t> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i)
    ASSERT_EQ(sorted[i], i);
  std::vector<int64_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(v, identity);
  EXPECT_EQ(randperm(0).numel(), 0);
  EXPECT_EQ(randperm(5, kFloat32).dtype(), kFloat32);
  // Trying to create tensor with negative dimension -1: [-1]
  expectError(errorOf([] { randperm(-1); }),
              "Trying to create tensor with negative dimension -1: [-1]");
  // n is too large for result tensor type: 'Float'
  expectError(errorOf([] { randperm((int64_t{1} << 24) + 2, kFloat32); }),
              "n is too large for result tensor type: 'Float'");
}

TEST(Random, InPlaceInitializers) {
  manual_seed(3);
  Tensor w = empty({200, 100});
  w.uniform_(-0.5, 0.25);
  std::vector<double> u = w.to_vector<double>();
  for (double x : u) {
    ASSERT_GE(x, -0.5);
    ASSERT_LT(x, 0.25);
  }
  double n = u.size();
  // Uniform(-0.5, 0.25): mean -0.125, variance 0.75^2 / 12.
  EXPECT_NEAR(mean(u), -0.125, 6 * 0.75 / std::sqrt(12 * n));
  EXPECT_NEAR(variance(u), 0.75 * 0.75 / 12, 0.002);

  Tensor g = zeros({20000}, kFloat64);
  EXPECT_EQ(&g.normal_(2.0, 3.0), &g); // returns itself, as add_ does
  std::vector<double> z = g.to_vector<double>();
  EXPECT_NEAR(mean(z), 2.0, 6 * 3.0 / std::sqrt(z.size()));
  EXPECT_NEAR(std::sqrt(variance(z)), 3.0, 0.1);

  Tensor b = zeros({10000}, kInt64);
  b.bernoulli_(0.25);
  std::vector<double> bv = b.to_vector<double>();
  for (double x : bv)
    ASSERT_TRUE(x == 0 || x == 1);
  EXPECT_NEAR(mean(bv), 0.25, 6 * std::sqrt(0.25 * 0.75 / bv.size()));

  // Through a view: only the viewed elements change.
  Tensor m = zeros({4, 6});
  m.narrow(1, 2, 3).uniform_(1, 2);
  std::vector<float> mv = m.to_vector<float>();
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c) {
      float x = mv[r * 6 + c];
      if (c >= 2 && c < 5)
        EXPECT_TRUE(x >= 1 && x < 2) << x;
      else
        EXPECT_EQ(x, 0.0f);
    }
  EXPECT_EQ(m._version(), 1);

  // Deterministic under manual_seed.
  manual_seed(99);
  Tensor a1 = empty({50}).normal_();
  manual_seed(99);
  Tensor a2 = empty({50}).normal_();
  EXPECT_EQ(a1.to_vector<float>(), a2.to_vector<float>());
}

TEST(Random, InPlaceInitializerErrorsArePyTorchs) {
  // "check_uniform_bounds" not implemented for 'Long'
  expectError(errorOf([] { zeros({3}, kInt64).uniform_(); }),
              "\"check_uniform_bounds\" not implemented for 'Long'");
  // "normal_kernel_cpu" not implemented for 'Bool'
  expectError(errorOf([] { zeros({3}, kBool).normal_(); }),
              "\"normal_kernel_cpu\" not implemented for 'Bool'");
  // uniform_ expects to return a [from, to) range, but found from=2 > to=1
  expectError(errorOf([] { zeros({3}).uniform_(2, 1); }),
              "uniform_ expects to return a [from, to) range, but found "
              "from=2 > to=1");
  // normal expects std >= 0.0, but found std -1
  expectError(errorOf([] { zeros({3}).normal_(0, -1); }),
              "normal expects std >= 0.0, but found std -1");
  // bernoulli_ expects p to be in [0, 1], but got p=2
  expectError(errorOf([] { zeros({3}).bernoulli_(2); }),
              "bernoulli_ expects p to be in [0, 1], but got p=2");
  // a leaf Variable that requires grad is being used in an in-place
  // operation.
  expectError(errorOf([] { zeros({3}).requires_grad_().uniform_(); }),
              "a leaf Variable that requires grad is being used in an "
              "in-place operation");
  // Under no-grad mode the initializer idiom works.
  Tensor w = zeros({3}).requires_grad_();
  {
    NoGradGuard noGrad;
    w.uniform_(-1, 1);
  }
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(w.is_leaf());
}

TEST(Random, BernoulliOfProbabilities) {
  manual_seed(5);
  Tensor p = from_vector<double>({0, 1, 0.5}).expand({4000, 3});
  Tensor s = p.bernoulli();
  EXPECT_EQ(s.dtype(), kFloat64);
  EXPECT_FALSE(s.requires_grad());
  std::vector<double> v = s.to_vector<double>();
  double ones = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i % 3 == 0)
      ASSERT_EQ(v[i], 0);
    else if (i % 3 == 1)
      ASSERT_EQ(v[i], 1);
    else
      ones += v[i];
  }
  EXPECT_NEAR(ones / 4000, 0.5, 6 * std::sqrt(0.25 / 4000));
  // "bernoulli_tensor_cpu_p_" not implemented for 'Long'
  expectError(errorOf([] {
                from_vector<int64_t>({1, 0}).bernoulli();
              }),
              "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'");
  // Expected p_in >= 0 && p_in <= 1 to be true, but got false.
  expectError(errorOf([] {
                from_vector<float>({0.5f, 2}).bernoulli();
              }),
              "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
}

TEST(FromBlob, WrapsWithoutACopyAndWritesBack) {
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  Tensor t = from_blob(data.data(), {2, 3});
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(t.strides(), (Shape{3, 1}));
  EXPECT_TRUE(t.is_leaf());
  EXPECT_EQ(t.data_ptr<float>(), data.data()); // no copy
  EXPECT_EQ(t.sum().item<float>(), 21.0f);
  // The user's writes are seen by what is recorded after them.
  data[0] = 10;
  EXPECT_EQ(t.sum().item<float>(), 30.0f);
  // strata's in-place writes land in the user's memory once read.
  t.mul_(2);
  EXPECT_EQ(t.to_vector<float>()[5], 12.0f);
  t.data_ptr<float>();
  EXPECT_EQ(data[5], 12.0f);
  EXPECT_EQ(data[0], 20.0f);
  // Strides: the columns of a row-major 3x4 buffer, as a 4x3 tensor.
  std::vector<double> m(12);
  std::iota(m.begin(), m.end(), 0.0);
  Tensor c = from_blob(m.data(), {4, 3}, {1, 4}, kFloat64);
  EXPECT_EQ(c.strides(), (Shape{1, 4}));
  EXPECT_EQ(c.to_vector<double>(),
            (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  // requires_grad through the options: a leaf whose gradient is computed.
  std::vector<double> x = {1, 2, 3};
  Tensor l =
      from_blob(x.data(), {3}, TensorOptions(kFloat64).requires_grad(true));
  (l * l).sum().backward();
  EXPECT_EQ(l.grad().to_vector<double>(), (std::vector<double>{2, 4, 6}));
  // Integers and 0-d.
  int64_t one = 42;
  Tensor s = from_blob(&one, {}, kInt64);
  EXPECT_EQ(s.item<int64_t>(), 42);
}

TEST(FromBlob, DeleterRunsOnceWhenTheLastViewIsGone) {
  int calls = 0;
  float *buffer = new float[4]{1, 2, 3, 4};
  {
    Tensor v;
    {
      Tensor t = from_blob(buffer, {4}, [&](void *p) {
        ++calls;
        delete[] static_cast<float *>(p);
      });
      v = t.narrow(0, 1, 2);
    }
    EXPECT_EQ(calls, 0); // the view keeps the memory alive
    EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{2, 3}));
  }
  EXPECT_EQ(calls, 1);
}

TEST(FromBlob, BadInputIsAClearError) {
  float f[4] = {};
  expectError(errorOf([&] {
                from_blob(f, {2, 2}, {2});
              }),
              "from_blob: 1 strides for 2 sizes");
  expectError(errorOf([&] { from_blob(f, {2}, {-1}); }),
              "from_blob: negative stride -1");
  expectError(errorOf([&] { from_blob(nullptr, {2}); }),
              "from_blob: a null pointer for 2 elements");
  expectError(errorOf([&] { from_blob(f, {-2}); }),
              "Trying to create tensor with negative dimension -2");
  // An empty blob may be null.
  EXPECT_EQ(from_blob(nullptr, {0, 3}).numel(), 0);
}

} // namespace
