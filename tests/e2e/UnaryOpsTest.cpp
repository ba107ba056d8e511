//===- UnaryOpsTest.cpp - the unary and bitwise ops against PyTorch -------===//
//
// Values, gradients, dtypes and error messages of every unary op of
// StrataUnaryOps.td (and the DSL's clamp, nan_to_num and logical/bitwise
// ops) against PyTorch 1.13's on the same inputs (tests/e2e/data/
// unary_golden.txt, written by scripts/gen_unary_golden.py; this test does
// not need torch; read by GoldenFacts.h), through a transposed view and an
// expanded one, with assert_close's default tolerances (integers and bool
// exactly, int64 beyond 2^53 too); gradients also against finite
// differences in float64 (gradcheck), and the in-place forms.
//
//===----------------------------------------------------------------------===//
#include "GoldenFacts.h"
#include "strata/strata.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>

using namespace strata;

namespace {

using goldenfacts::Golden;

const std::map<std::string, Golden> &golden() {
  static const auto facts = goldenfacts::read(STRATA_UNARY_GOLDEN);
  return facts;
}

/// PyTorch's fact `name` (GoldenFacts.h).
const Golden &fact(const std::string &name) {
  return goldenfacts::find(golden(), name);
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

bool isFloat(DType t) { return t == DType::F32 || t == DType::F64; }

/// Whether `t` holds the values and dtype of the fact `name`:
/// torch.testing.assert_close's rule with its defaults for the dtype (NaN
/// equal to NaN); integers and bool exactly, as int64.
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
    std::string where = name + "[" + std::to_string(k) + "]";
    if (!isFloat(t.dtype())) {
      EXPECT_EQ(ints[k], goldenfacts::exactInt(g.values[k], where)) << where;
      continue;
    }
    double want = std::strtod(g.values[k].c_str(), nullptr), got = f[k];
    if (std::isnan(want) || std::isinf(want)) {
      EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want)
          << where << ": " << got << " vs " << want;
      continue;
    }
    EXPECT_LE(std::fabs(got - want), atol + rtol * std::fabs(want))
        << where << ": " << got << " vs " << want;
  }
}

/// The op raises PyTorch's message (its first sentence: strata moves the
/// advice into the hint).
void expectError(const std::function<Tensor()> &f, const std::string &name) {
  const Golden &g = fact(name);
  ASSERT_FALSE(g.error.empty()) << name << ": PyTorch computed it";
  std::string want = g.error.substr(0, g.error.find(". ") + 1);
  try {
    std::vector<double> fs;
    std::vector<int64_t> is;
    goldenfacts::elements(f(), fs, is);
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
    expectError(f, name);
}

using UnaryFn = std::function<Tensor(const Tensor &)>;

/// The ops of scripts/gen_unary_golden.py's OPS, as the DSL spells them.
const std::map<std::string, UnaryFn> &ops() {
  static const std::map<std::string, UnaryFn> m = {
      {"sin", [](const Tensor &x) { return x.sin(); }},
      {"cos", [](const Tensor &x) { return x.cos(); }},
      {"tan", [](const Tensor &x) { return x.tan(); }},
      {"asin", [](const Tensor &x) { return x.asin(); }},
      {"acos", [](const Tensor &x) { return x.acos(); }},
      {"atan", [](const Tensor &x) { return x.atan(); }},
      {"sinh", [](const Tensor &x) { return x.sinh(); }},
      {"cosh", [](const Tensor &x) { return x.cosh(); }},
      {"exp2", [](const Tensor &x) { return x.exp2(); }},
      {"expm1", [](const Tensor &x) { return x.expm1(); }},
      {"log2", [](const Tensor &x) { return x.log2(); }},
      {"log10", [](const Tensor &x) { return x.log10(); }},
      {"log1p", [](const Tensor &x) { return x.log1p(); }},
      {"rsqrt", [](const Tensor &x) { return x.rsqrt(); }},
      {"reciprocal", [](const Tensor &x) { return x.reciprocal(); }},
      {"square", [](const Tensor &x) { return x.square(); }},
      {"sign", [](const Tensor &x) { return x.sign(); }},
      {"floor", [](const Tensor &x) { return x.floor(); }},
      {"ceil", [](const Tensor &x) { return x.ceil(); }},
      {"round", [](const Tensor &x) { return x.round(); }},
      {"trunc", [](const Tensor &x) { return x.trunc(); }},
      {"erf", [](const Tensor &x) { return x.erf(); }},
      {"gelu", [](const Tensor &x) { return x.gelu(); }},
      {"gelu_tanh", [](const Tensor &x) { return x.gelu("tanh"); }},
      {"silu", [](const Tensor &x) { return x.silu(); }},
      {"softplus", [](const Tensor &x) { return x.softplus(); }},
      {"clamp", [](const Tensor &x) { return x.clamp(-0.5, 0.5); }},
      {"clamp_min", [](const Tensor &x) { return x.clamp_min(0.5); }},
      {"clamp_max", [](const Tensor &x) { return x.clamp_max(0.5); }},
      {"nan_to_num", [](const Tensor &x) { return x.nan_to_num(); }},
      {"logical_not", [](const Tensor &x) { return x.logical_not(); }},
      {"relu", [](const Tensor &x) { return x.relu(); }},
      {"exp", [](const Tensor &x) { return x.exp(); }},
      {"abs", [](const Tensor &x) { return x.abs(); }},
      {"neg", [](const Tensor &x) { return x.neg(); }},
  };
  return m;
}

/// X [3, 4] of the op's golden input: op.t is op(X.t()) in float32.
Tensor inputOf(const std::string &op) {
  // The script's inputs, recovered from the golden f64 results would be
  // circular: recompute them as the script does.
  auto lin = [](double lo, double hi) {
    std::vector<float> v;
    for (int i = 0; i < 12; ++i)
      v.push_back(static_cast<float>(lo + (hi - lo) * i / 11));
    return v;
  };
  std::vector<float> wide = lin(-2.75, 3.0), v;
  std::map<std::string, std::vector<float>> domains = {
      {"tan", lin(-1.2, 1.3)},       {"asin", lin(-0.95, 0.9)},
      {"acos", lin(-0.95, 0.9)},     {"expm1", lin(-1e-3, 2.0)},
      {"log2", lin(0.1, 5.0)},       {"log10", lin(0.1, 5.0)},
      {"log1p", lin(-0.9, 1e-4)},    {"rsqrt", lin(0.1, 5.0)},
      {"sign", lin(-2.5, 3.0)},      {"floor", lin(-2.5, 3.0)},
      {"ceil", lin(-2.5, 3.0)},      {"round", lin(-2.5, 3.0)},
      {"trunc", lin(-2.5, 3.0)},     {"softplus", lin(-25.0, 30.0)},
      {"clamp", lin(-2.5, 3.0)},     {"clamp_min", lin(-2.5, 3.0)},
      {"clamp_max", lin(-2.5, 3.0)}, {"logical_not", lin(-2.5, 3.0)}};
  if (domains.count(op)) {
    v = domains[op];
  } else if (op == "reciprocal") {
    for (float w : wide)
      v.push_back(std::fabs(w) > 0.1 ? w : 0.5f);
  } else if (op == "nan_to_num") {
    v = {NAN, INFINITY, -INFINITY};
    v.insert(v.end(), wide.begin() + 3, wide.end());
  } else {
    v = wide;
  }
  return from_vector<float>(v, {3, 4});
}

Tensor weights(const Shape &shape) {
  std::vector<float> w;
  for (int i = 0; i < 12; ++i)
    w.push_back(0.5f + 0.25f * static_cast<float>(i));
  return from_vector<float>(w, shape);
}

Tensor ints() {
  return from_vector<int64_t>({-5, -3, -2, -1, 0, 1, 2, 3, 4, 5, 7, 9}, {3, 4});
}

Tensor bools() {
  std::vector<int64_t> b;
  for (int i = 0; i < 3; ++i)
    b.insert(b.end(), {1, 0, 0, 1});
  return from_vector<int64_t>(b, {3, 4}).to(DType::Bool);
}

class Unary : public testing::TestWithParam<std::string> {};

TEST_P(Unary, ValuesGradientsDtypesAgainstPyTorch) {
  const std::string op = GetParam();
  const UnaryFn &fn = ops().at(op);
  Tensor x = inputOf(op);

  // A transposed view, and the gradient back through it.
  Tensor X = x.clone().requires_grad_();
  Tensor y = fn(X.t());
  expectClose(y, op + ".t");
  if (golden().count(op + ".t.grad")) {
    (y * weights({4, 3})).sum().backward();
    expectClose(X.grad(), op + ".t.grad");
  }
  // An expanded (stride-0) view: the gradient sums over the copies.
  Tensor v = x[1].clone().requires_grad_();
  y = fn(v.expand({3, 4}));
  expectClose(y, op + ".expand");
  if (golden().count(op + ".expand.grad")) {
    (y * weights({3, 4})).sum().backward();
    expectClose(v.grad(), op + ".expand.grad");
  }
  expectClose(fn(x.to(DType::F64)), op + ".f64");
  check([&] { return fn(ints()); }, op + ".i64");
  check([&] { return fn(bools()); }, op + ".bool");
}

TEST_P(Unary, GradcheckInFloat64) {
  const std::string op = GetParam();
  if (!golden().count(op + ".t.grad") || op == "nan_to_num")
    GTEST_SKIP() << op << " has no gradient to check (or no finite input)";
  Tensor x = inputOf(op).to(DType::F64);
  // Away from the kinks (clamp's bounds, floor's steps, relu's 0), where
  // finite differences straddle them.
  x = x + 0.013;
  GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor> &in) { return ops().at(op)(in[0]); }, {x});
  EXPECT_TRUE(r.ok) << op << ": analytic " << r.analytic << " numeric "
                    << r.numeric << " at " << r.index;
}

TEST_P(Unary, InPlaceFormIsTheOpWrittenBack) {
  const std::string op = GetParam();
  if (op.rfind("clamp", 0) == 0 || op == "gelu_tanh" || op == "softplus")
    GTEST_SKIP() << op << "_ takes arguments (ClampInPlaceWithOneBound) or "
                 << "PyTorch has none (softplus)";
  Tensor x = inputOf(op);
  Tensor y = x.clone();
  Tensor view = y.t(); // through a view: the base sees the write
  std::map<std::string, std::function<void(Tensor &)>> inplace = {
      {"sin", [](Tensor &t) { t.sin_(); }},
      {"cos", [](Tensor &t) { t.cos_(); }},
      {"tan", [](Tensor &t) { t.tan_(); }},
      {"asin", [](Tensor &t) { t.asin_(); }},
      {"acos", [](Tensor &t) { t.acos_(); }},
      {"atan", [](Tensor &t) { t.atan_(); }},
      {"sinh", [](Tensor &t) { t.sinh_(); }},
      {"cosh", [](Tensor &t) { t.cosh_(); }},
      {"exp2", [](Tensor &t) { t.exp2_(); }},
      {"expm1", [](Tensor &t) { t.expm1_(); }},
      {"log2", [](Tensor &t) { t.log2_(); }},
      {"log10", [](Tensor &t) { t.log10_(); }},
      {"log1p", [](Tensor &t) { t.log1p_(); }},
      {"rsqrt", [](Tensor &t) { t.rsqrt_(); }},
      {"reciprocal", [](Tensor &t) { t.reciprocal_(); }},
      {"square", [](Tensor &t) { t.square_(); }},
      {"sign", [](Tensor &t) { t.sign_(); }},
      {"floor", [](Tensor &t) { t.floor_(); }},
      {"ceil", [](Tensor &t) { t.ceil_(); }},
      {"round", [](Tensor &t) { t.round_(); }},
      {"trunc", [](Tensor &t) { t.trunc_(); }},
      {"erf", [](Tensor &t) { t.erf_(); }},
      {"gelu", [](Tensor &t) { t.gelu_(); }},
      {"silu", [](Tensor &t) { t.silu_(); }},
      {"nan_to_num", [](Tensor &t) { t.nan_to_num_(); }},
      {"logical_not", [](Tensor &t) { t.logical_not_(); }},
      {"relu", [](Tensor &t) { t.relu_(); }},
      {"exp", [](Tensor &t) { t.exp_(); }},
      {"abs", [](Tensor &t) { t.abs_(); }},
      {"neg", [](Tensor &t) { t.neg_(); }},
  };
  inplace.at(op)(view);
  // logical_not_ of a float tensor writes 0/1 floats.
  Tensor want = ops().at(op)(x.t());
  std::vector<float> got = y.t().contiguous().to_vector<float>();
  std::vector<float> w = want.to(DType::F32).contiguous().to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(got[i] == w[i] || (std::isnan(got[i]) && std::isnan(w[i])))
        << op << "_[" << i << "]";
  EXPECT_EQ(y._version(), 1) << op;
}

std::vector<std::string> opNames() {
  std::vector<std::string> names;
  for (const auto &[name, fn] : ops())
    names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Ops, Unary, testing::ValuesIn(opNames()),
                         [](const auto &info) { return info.param; });

TEST(UnaryOps, FloatOpOfAnIntegerTensorInPlaceFails) {
  Tensor i = ints();
  try {
    i.sin_();
    FAIL() << "no error";
  } catch (const Error &e) {
    // PyTorch: "result type Float can't be cast to the desired output type
    // Long"; strata names the dtypes as torch.float32 (docs/errors.md).
    EXPECT_NE(std::string(e.what()).find(
                  "sin_: result type torch.float32 can't be cast to the "
                  "desired output type torch.int64"),
              std::string::npos)
        << e.what();
  }
}

TEST(UnaryOps, Int64BeyondTwoTo53Exactly) {
  // Values a double rounds (2^53 + 1 is 2^53 there): PyTorch's results are
  // written and compared as int64, so an op through double would fail.
  const int64_t p53 = (int64_t{1} << 53) + 1;
  const int64_t max = std::numeric_limits<int64_t>::max();
  Tensor big = from_vector<int64_t>(
      {p53, -p53, (int64_t{1} << 62) + 3, -max, max, 3 * p53}, {6});
  for (const char *op :
       {"neg", "abs", "sign", "floor", "ceil", "round", "trunc", "relu"})
    expectClose(ops().at(op)(big), std::string(op) + ".i64_big");
  expectClose(big.bitwise_not(), "bitwise_not.i64_big");
}

TEST(UnaryOps, ClampInPlaceWithOneBound) {
  Tensor x = inputOf("clamp");
  Tensor a = x.clone(), b = x.clone(), c = x.clone();
  a.clamp_(-0.5, 0.5);
  b.clamp_min_(0.5);
  c.clamp_max_(0.5);
  expectClose(a.t(), "clamp.t");
  expectClose(b.t(), "clamp_min.t");
  expectClose(c.t(), "clamp_max.t");
}

TEST(UnaryOps, BitwiseAndLogicalAgainstPyTorch) {
  Tensor row = from_vector<int64_t>({3, -1, 6, 0}, {4});
  Tensor b = bools(), bf = b.flip({1});
  std::map<std::string, std::function<Tensor(const Tensor &, const Tensor &)>>
      binary = {
          {"bitwise_and",
           [](const Tensor &p, const Tensor &q) { return p.bitwise_and(q); }},
          {"bitwise_or",
           [](const Tensor &p, const Tensor &q) { return p.bitwise_or(q); }},
          {"bitwise_xor",
           [](const Tensor &p, const Tensor &q) { return p.bitwise_xor(q); }},
          {"logical_and",
           [](const Tensor &p, const Tensor &q) { return p.logical_and(q); }},
          {"logical_or",
           [](const Tensor &p, const Tensor &q) { return p.logical_or(q); }},
          {"logical_xor",
           [](const Tensor &p, const Tensor &q) { return p.logical_xor(q); }},
      };
  for (const auto &[op, fn] : binary) {
    check([&] { return fn(ints(), row); }, op + ".i64");
    check([&] { return fn(b, bf); }, op + ".bool");
    check([&] { return fn(ints().to(DType::I32), row); }, op + ".mixed");
    check([&] { return fn(ints().to(DType::F32), row); }, op + ".float");
  }
  check([] { return ints().bitwise_and(6); }, "bitwise_and.scalar");
  check([] { return ints().bitwise_or(6); }, "bitwise_or.scalar");
  check([] { return ints().bitwise_xor(6); }, "bitwise_xor.scalar");
  check([] { return ints().bitwise_not(); }, "bitwise_not.i64");
  check([] { return bools().bitwise_not(); }, "bitwise_not.bool");
  check([] { return ints().to(DType::F32).bitwise_not(); },
        "bitwise_not.float");
}

TEST(UnaryOps, NanInfMaskedFillWhereWithNumbers) {
  Tensor special =
      from_vector<float>({NAN, INFINITY, -INFINITY, 0.0f, -1.5f, 2.0f}, {2, 3});
  expectClose(special.isnan(), "isnan.f32");
  expectClose(special.isinf(), "isinf.f32");
  expectClose(special.isfinite(), "isfinite.f32");
  expectClose(ints().isnan(), "isnan.i64");
  expectClose(ints().isinf(), "isinf.i64");
  expectClose(ints().isfinite(), "isfinite.i64");
  Tensor mask = from_vector<int64_t>({1, 0, 1, 0}, {4}).to(DType::Bool);
  Tensor x = inputOf("sin").requires_grad_();
  Tensor y = x.masked_fill(mask, -7.5);
  expectClose(y, "masked_fill.f32");
  (y * weights({3, 4})).sum().backward();
  expectClose(x.grad(), "masked_fill.grad");
  expectClose(ints().masked_fill(mask, 2.7), "masked_fill.i64");
  Tensor z = inputOf("sin");
  z.masked_fill_(mask, -7.5);
  expectClose(z, "masked_fill.f32");
  Tensor m = bools();
  expectClose(where(m, 1.5, ints()), "where.scalar_tensor");
  expectClose(where(m, ints(), 2), "where.tensor_scalar");
  expectClose(where(m, 1, 2), "where.int_int");
  expectClose(where(m, 1.0, 2), "where.float_int");
}

TEST(UnaryOps, ErrorsPointAtTheUsersLine) {
  int line = 0;
  try {
    line = __LINE__ + 1;
    ints().gelu();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(":" + std::to_string(line)),
              std::string::npos)
        << e.what();
    return;
  }
  FAIL() << "no error";
}

} // namespace
