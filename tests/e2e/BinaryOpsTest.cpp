//===- BinaryOpsTest.cpp - binary, ternary ops, prod against PyTorch ------===//
//
// Values, dtypes, gradients, grad_fn names and error messages of the binary
// and ternary ops of issue 20 (and isclose/allclose) against PyTorch 1.13's
// on the same inputs (tests/e2e/data/binary_golden.txt, written by
// scripts/gen_binary_golden.py; this test does not need torch): every
// dtype pair, broadcasting, transposed, sliced, 0-d and empty operands,
// NaN/inf/-0.0, integer extremes. Floats within assert_close's default
// tolerances with the sign of zero checked; integers exactly. Gradients
// also against finite differences in float64 (gradcheck), and the in-place
// forms against the out-of-place ones. The prod reduction too (zeros in its
// gradient).
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include "GoldenFacts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

using namespace strata;

namespace {

using goldenfacts::Golden;

/// PyTorch's fact `name` (GoldenFacts.h).
const Golden &fact(const std::string &name) {
  static const auto facts = goldenfacts::read(STRATA_BINARY_GOLDEN);
  return goldenfacts::find(facts, name);
}

std::string dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "float32";
  case DType::F64:
    return "float64";
  case DType::I32:
    return "int32";
  case DType::I64:
    return "int64";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

DType dtypeOf(const std::string &name) {
  static const std::map<std::string, DType> m = {{"bool", DType::Bool},
                                                 {"int32", DType::I32},
                                                 {"int64", DType::I64},
                                                 {"float32", DType::F32},
                                                 {"float64", DType::F64}};
  return m.at(name);
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

Tensor makeInts(const std::vector<int64_t> &v, DType t, const Shape &shape) {
  return from_vector<int64_t>(v, shape).to(t);
}

// The script's inputs (A, B, SPECIAL, EXTREME_*, W).
const std::vector<double> kA[3] = {
    {1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1},
    {-7, -5, -3, -1, 0, 1, 2, 3, 5, 7, 9, 11},
    {-7.5, -5.25, -3.0, -1.5, -0.0, 0.75, 2.0, 3.5, 5.0, 6.25, 9.5, 11.0}};
const std::vector<double> kB[3] = {
    {1, 1, 1, 1}, {3, -2, 5, -4}, {2.5, -1.75, 4.0, -3.0}};
const std::vector<double> kSpecial = {
    NAN, INFINITY, -INFINITY, -0.0, 0.0, 5.5, -5.5, 1e30, -3.0, 3.0, 7.0, -7.0};

int kindOf(DType t) { return t == DType::Bool ? 0 : isFloat(t) ? 2 : 1; }

Tensor weights(const Shape &shape) {
  std::vector<float> w;
  for (int i = 0; i < 12; ++i)
    w.push_back(0.5f + 0.25f * static_cast<float>(i));
  return from_vector<float>(w, shape);
}

Tensor floats34() { return make(kA[2], DType::F32, {3, 4}); }
Tensor floatRow() { return make(kB[2], DType::F32); }
Tensor ints34() { return make(kA[1], DType::I64, {3, 4}); }

/// assert_close with the dtype's default tolerances (NaN equal to NaN),
/// the sign of a zero checked (not a gradient's); integers and bool exact.
void expectClose(const Tensor &t, const std::string &name) {
  const Golden &g = fact(name);
  ASSERT_TRUE(g.error.empty()) << name << ": PyTorch raised " << g.error;
  EXPECT_EQ(dtypeName(t.dtype()), g.dtype) << name;
  std::vector<double> f;
  std::vector<int64_t> ints;
  goldenfacts::elements(t, f, ints);
  size_t n = isFloat(t.dtype()) ? f.size() : ints.size();
  ASSERT_EQ(n, g.values.size()) << name;
  double rtol = t.dtype() == DType::F32 ? 1.3e-6 : 1e-7;
  double atol = t.dtype() == DType::F32 ? 1e-5 : 1e-7;
  for (size_t k = 0; k < n; ++k) {
    const std::string &text = g.values[k];
    if (!isFloat(t.dtype())) {
      EXPECT_EQ(ints[k], std::strtoll(text.c_str(), nullptr, 10))
          << name << "[" << k << "]";
      continue;
    }
    double want = std::strtod(text.c_str(), nullptr), got = f[k];
    if (std::isnan(want) || std::isinf(want) || want == 0) {
      // (A gradient's zero may have either sign, as in assert_close.)
      bool sign = want != 0 || name.find(".grad") != std::string::npos ||
                  std::signbit(got) == std::signbit(want);
      bool same = std::isnan(want) ? std::isnan(got) : got == want && sign;
      EXPECT_TRUE(same) << name << "[" << k << "]: " << got << " vs " << want;
      continue;
    }
    EXPECT_LE(std::fabs(got - want), atol + rtol * std::fabs(want))
        << name << "[" << k << "]: " << got << " vs " << want;
  }
}

/// The op raises PyTorch's message (its first sentence).
void expectError(const std::function<void()> &f, const std::string &name) {
  const Golden &g = fact(name);
  ASSERT_FALSE(g.error.empty()) << name << ": PyTorch computed it";
  std::string want = g.error.substr(0, g.error.find(". ") + 1);
  try {
    f();
    ADD_FAILURE() << name << ": no error, expected " << want;
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos)
        << name << ": " << e.what();
  }
}

void check(const std::function<Tensor()> &f, const std::string &name) {
  if (fact(name).error.empty())
    expectClose(f(), name);
  else
    expectError(
        [&] { (void)f().contiguous().to(DType::F64).sum().item<double>(); },
        name);
}

void expectGradFn(const Tensor &t, const std::string &name) {
  ASSERT_TRUE(t.grad_fn()) << name;
  EXPECT_EQ(t.grad_fn()->name(), fact(name).gradFn) << name;
}

using BinaryFn = std::function<Tensor(const Tensor &, const Tensor &)>;
using ScalarFn = std::function<Tensor(const Tensor &, Scalar)>;

const std::map<std::string, BinaryFn> &ops() {
  static const std::map<std::string, BinaryFn> m = {
      {"atan2", [](const Tensor &a, const Tensor &b) { return a.atan2(b); }},
      {"fmod", [](const Tensor &a, const Tensor &b) { return fmod(a, b); }},
      {"remainder",
       [](const Tensor &a, const Tensor &b) { return a.remainder(b); }},
      {"floor_divide",
       [](const Tensor &a, const Tensor &b) { return floor_divide(a, b); }},
  };
  return m;
}

const std::map<std::string, ScalarFn> &scalarOps() {
  static const std::map<std::string, ScalarFn> m = {
      {"fmod", [](const Tensor &a, Scalar b) { return a.fmod(b); }},
      {"remainder", [](const Tensor &a, Scalar b) { return remainder(a, b); }},
      {"floor_divide",
       [](const Tensor &a, Scalar b) { return a.floor_divide(b); }},
  };
  return m;
}

class Binary : public testing::TestWithParam<std::string> {};

TEST_P(Binary, EveryDtypePairAgainstPyTorch) {
  const std::string op = GetParam();
  const BinaryFn &fn = ops().at(op);
  for (const char *da : {"bool", "int32", "int64", "float32", "float64"})
    for (const char *db : {"bool", "int32", "int64", "float32", "float64"}) {
      DType ta = dtypeOf(da), tb = dtypeOf(db);
      Tensor a = make(kA[kindOf(ta)], ta, {3, 4});
      Tensor b = make(kB[kindOf(tb)], tb);
      check([&] { return fn(a, b); }, op + "." + da + "." + db);
    }
}

TEST_P(Binary, SpecialValuesExtremesAndLayouts) {
  const std::string op = GetParam();
  const BinaryFn &fn = ops().at(op);
  for (DType t : {DType::F32, DType::F64}) {
    Tensor s = make(kSpecial, t);
    expectClose(fn(s.view({12, 1}), s.view({1, 12})),
                op + ".special." + dtypeName(t));
  }
  if (op != "atan2") {
    constexpr int64_t lo = INT64_MIN, hi = INT64_MAX;
    constexpr int64_t lo32 = INT32_MIN, hi32 = INT32_MAX;
    expectClose(fn(makeInts({lo, lo + 1, hi, -7, 7, 0}, DType::I64, {6, 1}),
                   makeInts({hi, lo, 3, -3, 2, 1}, DType::I64, {1, 6})),
                op + ".extreme.int64");
    expectClose(
        fn(makeInts({lo32, lo32 + 1, hi32, -7, 7, 0}, DType::I32, {6, 1}),
           makeInts({hi32, lo32, 3, -3, 2, 1}, DType::I32, {1, 6})),
        op + ".extreme.int32");
  }
  Tensor x = floats34();
  std::vector<double> b3;
  for (int i = 0; i < 3; ++i)
    b3.insert(b3.end(), kB[2].begin(), kB[2].end());
  Tensor y = make(b3, DType::F32, {4, 3});
  expectClose(fn(x.t(), y), op + ".t");
  std::vector<double> z = kA[2];
  for (int i = 0; i < 2; ++i)
    z.insert(z.end(), kB[2].begin(), kB[2].end());
  Tensor zt = make(z, DType::F32);
  expectClose(fn(x, zt.slice(0, std::nullopt, std::nullopt, 5).slice(0, 0, 4)),
              op + ".slice");
  expectClose(fn(make({-7.25}, DType::F32).view({}), x), op + ".zerod");
  expectClose(fn(ints34(), make({4}, DType::I64).view({})), op + ".zerod_int");
  expectClose(fn(empty({0, 4}), floatRow().view({1, 4})), op + ".empty");
}

TEST_P(Binary, NumbersAsTheSecondOperand) {
  const std::string op = GetParam();
  if (op == "atan2")
    GTEST_SKIP() << "atan2 takes tensors only (LibTorch has no Scalar form)";
  const ScalarFn &fn = scalarOps().at(op);
  Tensor ai = ints34();
  expectClose(fn(ai, 3), op + ".scalar.int");
  expectClose(fn(ai, -2), op + ".scalar.neg");
  expectClose(fn(ai, 2.5), op + ".scalar.float");
  expectClose(fn(ai.to(DType::I32), -3), op + ".scalar.int32");
  expectClose(fn(floats34(), -1.5), op + ".scalar.f32");
  expectClose(fn(make(kA[0], DType::Bool, {3, 4}), 2),
              op + ".scalar.bool_tensor");
  expectError([&] { fn(ai, 0); }, op + ".scalar.zero");
  expectClose(fn(ai, 0.0), op + ".scalar.zero_float");
}

TEST_P(Binary, GradientsAgainstPyTorchAndGradcheck) {
  const std::string op = GetParam();
  const BinaryFn &fn = ops().at(op);
  Tensor X = floats34().requires_grad_();
  Tensor Y = floatRow().requires_grad_();
  if (op == "floor_divide") {
    Tensor r = X.floor_divide(2.0);
    expectError([&] { r.sum().backward(); }, "floor_divide.backward");
    return;
  }
  Tensor r = fn(X, Y);
  expectGradFn(r, op + ".grad_fn");
  (r * weights({3, 4})).sum().backward();
  expectClose(X.grad(), op + ".grad.a");
  expectClose(Y.grad(), op + ".grad.b");
  if (op != "atan2")
    expectGradFn(scalarOps().at(op)(floats34().requires_grad_(), 2.5),
                 op + ".scalar.grad_fn");
  // Away from fmod/remainder's jumps (a / b an integer).
  Tensor a = floats34().to(DType::F64) + 0.013;
  Tensor b = floatRow().to(DType::F64) + 0.007;
  GradcheckResult g = gradcheck(
      [&](const std::vector<Tensor> &in) { return fn(in[0], in[1]); }, {a, b});
  EXPECT_TRUE(g.ok) << op << ": analytic " << g.analytic << " numeric "
                    << g.numeric << " at " << g.index;
}

TEST_P(Binary, InPlaceFormIsTheOpWrittenBack) {
  const std::string op = GetParam();
  std::map<std::string, std::function<void(Tensor &, const Tensor &)>> inplace =
      {
          {"atan2", [](Tensor &t, const Tensor &o) { t.atan2_(o); }},
          {"fmod", [](Tensor &t, const Tensor &o) { t.fmod_(o); }},
          {"remainder", [](Tensor &t, const Tensor &o) { t.remainder_(o); }},
          {"floor_divide",
           [](Tensor &t, const Tensor &o) { t.floor_divide_(o); }},
      };
  for (DType dt : {DType::F32, DType::I64}) {
    if (op == "atan2" && dt == DType::I64)
      continue;
    Tensor x = make(kA[kindOf(dt)], dt, {3, 4}), b = make(kB[kindOf(dt)], dt);
    Tensor y = x.clone();
    Tensor view = y.t(); // through a view: the base sees the write
    inplace.at(op)(view, b.view({4, 1}));
    Tensor want = ops().at(op)(x.t(), b.view({4, 1}));
    EXPECT_EQ(y.t().to(DType::F64).contiguous().to_vector<double>(),
              want.to(DType::F64).contiguous().to_vector<double>())
        << op << "_ " << dtypeName(dt);
    EXPECT_EQ(y._version(), 1) << op;
  }
  if (op != "atan2") {
    Tensor y = ints34();
    scalarOps().at(op)(y, 3); // out of place: y unchanged
    Tensor z = y.clone();
    if (op == "fmod")
      z.fmod_(3);
    else if (op == "remainder")
      z.remainder_(3);
    else
      z.floor_divide_(3);
    expectClose(z, op + ".scalar.int");
  }
  // An integer tensor cannot hold atan2's float result.
  Tensor i = ints34();
  EXPECT_THROW(i.atan2_(i), Error);
}

INSTANTIATE_TEST_SUITE_P(Ops, Binary,
                         testing::Values("atan2", "fmod", "remainder",
                                         "floor_divide"),
                         [](const auto &info) { return info.param; });

TEST(BinaryOps, RemainderOfANumberByATensor) {
  expectClose(remainder(5, make(kB[1], DType::I64)), "remainder.number_tensor");
}

TEST(BinaryOps, ZeroIntegerDivisorInATensorGivesZero) {
  // PyTorch raises ZeroDivisionError from its CPU kernel; strata's kernels
  // cannot raise, and give 0 (NumPy's value; docs/errors.md).
  Tensor a = make({7, -7, 5}, DType::I64), b = make({0, 0, 2}, DType::I64);
  EXPECT_EQ(a.fmod(b).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(a.remainder(b).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(a.floor_divide(b).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 2}));
  // INT64_MIN by -1 (PyTorch's kernels trap): wraps, remainder 0.
  Tensor m = makeInts({INT64_MIN}, DType::I64, {1});
  Tensor n = makeInts({-1}, DType::I64, {1});
  EXPECT_EQ(m.floor_divide(n).item<int64_t>(), INT64_MIN);
  EXPECT_EQ(m.fmod(n).item<int64_t>(), 0);
  EXPECT_EQ(m.remainder(n).item<int64_t>(), 0);
  EXPECT_EQ(m.to(DType::I32).floor_divide(n.to(DType::I32)).item<int32_t>(),
            0); // INT64_MIN wraps to 0 in int32
  Tensor m32 = makeInts({INT32_MIN}, DType::I32, {1});
  EXPECT_EQ(m32.floor_divide(n.to(DType::I32)).item<int32_t>(), INT32_MIN);
}

TEST(BinaryOps, LerpAgainstPyTorch) {
  Tensor s = floats34(), e = floatRow();
  std::map<std::string, double> w = {{"w0", 0.0}, {"w03", 0.3},   {"w07", 0.7},
                                     {"w1", 1.0}, {"wneg", -0.5}, {"w15", 1.5}};
  for (const auto &[name, v] : w)
    expectClose(s.lerp(e, v), "lerp.scalar." + name);
  Tensor wt = make({0.25, -0.5, 0.75}, DType::F32, {3, 1});
  expectClose(lerp(s, e, wt), "lerp.tensor");
  expectClose(s.to(DType::F64).lerp(e.to(DType::F64), 0.3), "lerp.f64");
  std::vector<double> b3;
  for (int i = 0; i < 3; ++i)
    b3.insert(b3.end(), kB[2].begin(), kB[2].end());
  expectClose(s.t().lerp(make(b3, DType::F32, {4, 3}), 0.6), "lerp.t");
  expectClose(lerp(make({2.0}, DType::F32).view({}), e, 0.25), "lerp.zerod");
  expectClose(lerp(empty({0, 4}), e, 0.25), "lerp.empty");
  Tensor sp = make(kSpecial, DType::F32);
  expectClose(lerp(sp.view({12, 1}), sp.view({1, 12}), 0.25), "lerp.special");
  expectClose(lerp(full({12}, 1.0), full({12}, 2.0), sp),
              "lerp.special_weight");
  Tensor ai = ints34();
  expectError([&] { ai.lerp(ai, 0.5); }, "lerp.int");
  expectError([&] { ai.lerp(ai, ai); }, "lerp.int_tensor");
  expectError([&] { s.lerp(e.to(DType::F64), 0.5); }, "lerp.end_dtype");
  expectError([&] { s.lerp(e, wt.to(DType::F64)); }, "lerp.weight_dtype");
  expectError(
      [&] {
        Tensor c = e.clone();
        c.lerp_(s, 0.5);
      },
      "lerp_.broadcast");
}

TEST(BinaryOps, LerpGradients) {
  Tensor S = floats34().requires_grad_(), E = floatRow().requires_grad_();
  Tensor r = lerp(S, E, 0.3);
  expectGradFn(r, "lerp.scalar.grad_fn");
  (r * weights({3, 4})).sum().backward();
  expectClose(S.grad(), "lerp.scalar.grad.start");
  expectClose(E.grad(), "lerp.scalar.grad.end");
  S = floats34().requires_grad_();
  E = floatRow().requires_grad_();
  Tensor W = make({0.25, -0.5, 0.75}, DType::F32, {3, 1}).requires_grad_();
  r = S.lerp(E, W);
  expectGradFn(r, "lerp.tensor.grad_fn");
  (r * weights({3, 4})).sum().backward();
  expectClose(S.grad(), "lerp.tensor.grad.start");
  expectClose(E.grad(), "lerp.tensor.grad.end");
  expectClose(W.grad(), "lerp.tensor.grad.weight");
  GradcheckResult g = gradcheck(
      [](const std::vector<Tensor> &in) { return lerp(in[0], in[1], in[2]); },
      {floats34().to(DType::F64), floatRow().to(DType::F64),
       make({0.25, -0.5, 0.75}, DType::F64, {3, 1})});
  EXPECT_TRUE(g.ok) << "lerp: analytic " << g.analytic << " numeric "
                    << g.numeric << " at " << g.index;
}

TEST(BinaryOps, LerpInPlace) {
  Tensor s = floats34(), e = floatRow();
  Tensor y = s.clone();
  y.lerp_(e, 0.3);
  expectClose(y, "lerp.scalar.w03");
  Tensor z = s.clone();
  z.lerp_(e, make({0.25, -0.5, 0.75}, DType::F32, {3, 1}));
  expectClose(z, "lerp.tensor");
}

TEST(BinaryOps, IscloseAllcloseAgainstPyTorch) {
  std::vector<double> near = {0.0,   0,    0, 0,    1e-9,  1e-5,
                              -6e-5, 1e25, 0, 3e-5, -1e-7, 1e-3};
  for (size_t i = 0; i < near.size(); ++i)
    near[i] = static_cast<double>(static_cast<float>(
        static_cast<float>(kSpecial[i]) + static_cast<float>(near[i])));
  for (DType t : {DType::F32, DType::F64}) {
    // The script adds in f32 (torch.tensor defaults), then converts.
    Tensor a = make(kSpecial, DType::F32).to(t).view({12, 1});
    Tensor b = make(near, t).view({1, 12});
    std::string n = "isclose." + dtypeName(t);
    expectClose(a.isclose(b), n);
    expectClose(isclose(a, b, 1e-05, 1e-08, true), n + ".equal_nan");
    expectClose(a.isclose(b, 1e-3, 1e-2), n + ".tol");
    expectClose(a.isclose(b, 0, 0), n + ".exact");
  }
  Tensor ai = ints34();
  Tensor bi = ai + make({0, 1, -2, 3}, DType::I64);
  expectClose(ai.isclose(bi), "isclose.int64");
  expectClose(ai.isclose(bi, 1e-05, 1.5), "isclose.int64.atol");
  expectClose(ai.isclose(bi, 0.5), "isclose.int64.rtol");
  expectClose(ai.to(DType::I32).isclose(bi.to(DType::I32), 1e-05, 2.0),
              "isclose.int32.atol");
  expectClose(makeInts({0, 5}, DType::I32, {2})
                  .isclose(makeInts({INT32_MIN, INT32_MAX}, DType::I32, {2})),
              "isclose.int32.wrap"); // |0 - INT32_MIN| in f32, no wrap
  expectClose(makeInts({(1 << 24) + 1, 7}, DType::I32, {2})
                  .isclose(makeInts({1 << 24, 8}, DType::I32, {2}), 0, 0.5),
              "isclose.int32.f32"); // 2^24 + 1 rounds to 2^24 in f32
  expectClose(makeInts({INT64_MAX, INT64_MIN, (1LL << 62) + 1}, DType::I64, {3})
                  .isclose(makeInts({INT64_MAX - 1, INT64_MIN, 1LL << 62},
                                    DType::I64, {3})),
              "isclose.int64.extreme");
  Tensor bb = make(kA[0], DType::Bool, {3, 4});
  expectClose(bb.isclose(bb.flip({1})), "isclose.bool");
  expectClose(bb.isclose(bb.flip({1}), 1e-05, 1.0), "isclose.bool.atol");
  Tensor x = floats34();
  expectClose(x.t().isclose(x.t() * (1 + 1e-6)), "isclose.t");
  expectClose(make({3.0}, DType::F32).view({}).isclose(x), "isclose.zerod");
  expectClose(empty({0, 4}).isclose(x.select(0, 0)), "isclose.empty");
  expectError([&] { x.isclose(x.to(DType::F64)); }, "isclose.dtype");
  expectError([&] { x.isclose(x, -1.0); }, "isclose.rtol");
  expectError([&] { x.isclose(x, 1e-5, -0.5); }, "isclose.atol");
  auto boolFact = [](const std::string &name) {
    return fact(name).values.at(0) == "1";
  };
  EXPECT_EQ(x.allclose(x + 1e-7), boolFact("allclose.true"));
  EXPECT_EQ(allclose(x, x + 1e-3), boolFact("allclose.false"));
  EXPECT_EQ(x.select(0, 0).allclose(x), boolFact("allclose.broadcast"));
  Tensor sp = make(kSpecial, DType::F32);
  EXPECT_EQ(sp.allclose(sp), boolFact("allclose.nan"));
  EXPECT_EQ(sp.allclose(sp, 1e-5, 1e-8, true), boolFact("allclose.equal_nan"));
  expectError([&] { (void)x.allclose(x.to(DType::F64)); }, "allclose.dtype");
}

TEST(Prod, ValuesAndDtypesAgainstPyTorch) {
  for (const char *dt : {"bool", "int32", "int64", "float32", "float64"}) {
    DType t = dtypeOf(dt);
    Tensor a = make(kA[kindOf(t)], t, {3, 4});
    expectClose(a.prod(), std::string("prod.all.") + dt);
    expectClose(a.prod(1), std::string("prod.dim1.") + dt);
  }
  Tensor x = floats34();
  expectClose(x.prod(0, true), "prod.dim0.keepdim");
  expectClose(x.prod(-1, true), "prod.neg_dim");
  expectClose(x.t().prod(1), "prod.t");
  expectClose(x.slice(1, std::nullopt, std::nullopt, 2).prod(0), "prod.slice");
  expectClose(make({-2.5}, DType::F32).view({}).prod(), "prod.zerod");
  expectClose(make({-2.5}, DType::F32).view({}).prod(0), "prod.zerod.dim");
  expectClose(empty({0, 3}).prod(0), "prod.empty");
  expectClose(empty({0, 3}).prod(), "prod.empty.all");
  expectClose(makeInts({1LL << 40, 1LL << 40, 3}, DType::I64, {3}).prod(),
              "prod.int64.wrap");
  expectClose(makeInts({1 << 20, 1 << 20, 3}, DType::I32, {3}).prod(),
              "prod.int32.wrap");
  expectClose(make(kSpecial, DType::F32, {3, 4}).prod(1), "prod.special");
}

TEST(Prod, GradientsWithZerosAgainstPyTorch) {
  const std::vector<double> zeros = {1.5,   -2.0, 0.5, 3.0, 2.0, 0.0,
                                     -1.25, 4.0,  0.0, 3.5, 0.0, -0.5};
  std::map<std::string, std::function<Tensor(const Tensor &)>> fns = {
      {"dim1", [](const Tensor &t) { return t.prod(1); }},
      {"dim0", [](const Tensor &t) { return t.prod(0, true); }},
      {"all", [](const Tensor &t) { return t.prod(); }},
      {"all_one_zero",
       [](const Tensor &t) { return t.slice(0, 0, 2).slice(1, 0, 3).prod(); }},
      {"t", [](const Tensor &t) { return t.t().prod(0); }},
  };
  for (const auto &[name, fn] : fns) {
    Tensor Z = make(zeros, DType::F32, {3, 4}).requires_grad_();
    Tensor r = fn(Z);
    expectGradFn(r, "prod.grad_fn." + name);
    Tensor w =
        arange(1.0, static_cast<double>(r.numel()) + 1, 1.0).view(r.sizes());
    (r * w).sum().backward();
    expectClose(Z.grad(), "prod.grad." + name);
  }
  Tensor X = floats34().requires_grad_();
  X.prod(1).sum().backward();
  expectClose(X.grad(), "prod.grad.nozeros");
  // float64 finite differences: no zeros, and a row with one zero.
  for (const std::vector<double> &v :
       {kA[2], std::vector<double>{1.5, -2.0, 0.5, 3.0, 2.0, 0.0, -1.25, 4.0,
                                   0.75, 3.5, 1.25, -0.5}}) {
    Tensor in = make(v, DType::F64, {3, 4});
    GradcheckResult g = gradcheck(
        [](const std::vector<Tensor> &t) { return t[0].prod(1); }, {in});
    EXPECT_TRUE(g.ok) << "prod: analytic " << g.analytic << " numeric "
                      << g.numeric << " at " << g.index;
  }
}

TEST(BinaryOps, ErrorsPointAtTheUsersLine) {
  int line = 0;
  try {
    line = __LINE__ + 1;
    ints34().fmod(0);
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(":" + std::to_string(line)),
              std::string::npos)
        << e.what();
    return;
  }
  FAIL() << "no error";
}

} // namespace
