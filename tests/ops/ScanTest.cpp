//===- ScanTest.cpp - cumsum and cumprod against PyTorch 1.13 -------------===//
//
// Every case of scan_golden.txt (scripts/gen_scan_golden.py): values,
// dtypes, sizes, requires_grad and input gradients (cumprod's and prod's
// with zeros, infinities and NaNs included), as OpsTest.cpp checks the
// composite ops; gradients against finite differences in float64; the
// grad_fn names; the errors with PyTorch's messages at the user's line;
// and that a scan is one O(n) kernel.
//
//===----------------------------------------------------------------------===//
#include "OpsGolden.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <set>

using namespace strata;

namespace {

using Outs = std::vector<Tensor>;
using Fn = std::function<Outs(const std::vector<Tensor> &)>;
using ScanFn =
    std::function<Tensor(const Tensor &, int64_t, std::optional<DType>)>;

std::map<std::string, Fn> scanCases() {
  std::map<std::string, Fn> m;
  for (std::string op : {"cumsum", "cumprod"}) {
    bool sum = op == "cumsum";
    ScanFn s = [sum](const Tensor &t, int64_t d, std::optional<DType> dt) {
      return sum ? t.cumsum(d, dt) : t.cumprod(d, dt);
    };
    auto at = [s](int64_t d, std::optional<DType> dt = std::nullopt) {
      return [s, d, dt](auto &in) -> Outs { return {s(in[0], d, dt)}; };
    };
    for (const char *n : {"_dim1", "_mid", "_size1", "_i64", "_bool"})
      m[op + n] = at(1);
    for (const char *n :
         {"_dim0", "_f32", "_scalar", "_empty", "_empty_other", "_i32"})
      m[op + n] = at(0);
    for (const char *n : {"_neg", "_scalar_neg"})
      m[op + n] = at(-1);
    m[op + "_dtype_f64"] = at(1, kFloat64);
    m[op + "_dtype_i32"] = at(0, kInt32);
    m[op + "_dtype_f32_int"] = at(0, kFloat32);
    m[op + "_transposed"] = [s](auto &in) -> Outs {
      return {s(in[0].t(), 1, std::nullopt)};
    };
    m[op + "_sliced"] = [s](auto &in) -> Outs {
      return {s(in[0].slice(1, 1, std::nullopt, 2), 0, std::nullopt)};
    };
    m[op + "_expanded"] = [s](auto &in) -> Outs {
      return {s(in[0].expand({3, 4}), 1, std::nullopt)};
    };
    m[op + "_flipped"] = [s](auto &in) -> Outs {
      return {s(in[0].flip({1}), 1, std::nullopt)};
    };
    m[op + "_of_expr"] = [s](auto &in) -> Outs {
      return {s((in[0] * 2 + 1).exp(), 0, std::nullopt)};
    };
    auto inplace = [sum](int64_t d, std::optional<DType> dt = std::nullopt) {
      return [sum, d, dt](auto &in) -> Outs {
        Tensor c = in[0].clone();
        if (sum)
          c.cumsum_(d, dt);
        else
          c.cumprod_(d, dt);
        return {c};
      };
    };
    m[op + "_inplace"] = inplace(1);
    m[op + "_inplace_i32"] = inplace(0);
    m[op + "_inplace_dtype"] = inplace(-1, kFloat64);
    m[op + "_inplace_view"] = [sum](auto &in) -> Outs {
      Tensor c = in[0].clone();
      Tensor v = c.t().slice(0, 1);
      if (sum)
        v.cumsum_(1);
      else
        v.cumprod_(1);
      return {c};
    };
  }
  m["cumsum_cols"] = [](auto &in) -> Outs { return {in[0].cumsum(0)}; };
  m["cumprod_cols_3d"] = [](auto &in) -> Outs { return {in[0].cumprod(1)}; };
  m["cumsum_cols_i32"] = [](auto &in) -> Outs { return {in[0].cumsum(-2)}; };
  m["cumsum_bool_scalar"] = [](auto &in) -> Outs {
    return {in[0].cumsum(0, kBool)};
  };
  m["cumprod_bool_empty_inplace"] = [](auto &in) -> Outs {
    Tensor c = in[0].clone();
    c.cumprod_(1);
    return {c};
  };
  m["cumsum_i32_wraps"] = [](auto &in) -> Outs {
    return {in[0].cumsum(0, kInt32)};
  };
  m["cumprod_i64_wraps"] = [](auto &in) -> Outs { return {in[0].cumprod(0)}; };
  for (const char *n : {"cumprod_zeros", "cumprod_zeros_f32", "cumprod_inf_nan",
                        "cumprod_inf_no_zero"})
    m[n] = [](auto &in) -> Outs { return {in[0].cumprod(1)}; };
  for (const char *n : {"cumprod_zeros_dim0", "cumprod_all_zero"})
    m[n] = [](auto &in) -> Outs { return {in[0].cumprod(0)}; };
  for (const char *n :
       {"prod_dim_zeros", "prod_dim_inf_nan", "prod_dim_inf_no_zero"})
    m[n] = [](auto &in) -> Outs { return {in[0].prod(1)}; };
  m["prod_dim_keep_zeros"] = [](auto &in) -> Outs {
    return {in[0].prod(0, true)};
  };
  for (const char *n : {"prod_all_one_zero", "prod_all_one_zero_nan",
                        "prod_all_two_zeros", "prod_all_no_zero"})
    m[n] = [](auto &in) -> Outs { return {in[0].prod()}; };
  m["prod_all_transposed_zero"] = [](auto &in) -> Outs {
    return {in[0].t().prod()};
  };
  m["prod_1d_dim_two_zeros"] = [](auto &in) -> Outs { return {in[0].prod(0)}; };
  m["cumsum_long_f32"] = [](auto &) -> Outs {
    return {full({1000000}, 0.1).cumsum(0).slice(0, 0, std::nullopt, 9973)};
  };
  m["cumprod_long_f32"] = [](auto &) -> Outs {
    return {full({100000}, 1.0001).cumprod(0).slice(0, 0, std::nullopt, 997)};
  };
  m["cumsum_long_rows_f32"] = [](auto &) -> Outs {
    return {full({3, 300000}, 0.3).cumsum(1).slice(1, 0, std::nullopt, 29989)};
  };
  m["cumsum_long_col_blocks_f32"] = [](auto &) -> Outs {
    return {arange(3000 * 600)
                .remainder(7)
                .to(kFloat32)
                .reshape({3000, 600})
                .cumsum(0)
                .slice(0, 0, std::nullopt, 97)
                .slice(1, 0, std::nullopt, 37)};
  };
  m["cumsum_long_cols_f32"] = [](auto &) -> Outs {
    return {full({300000, 3}, 0.3).cumsum(0).slice(0, 0, std::nullopt, 29989)};
  };
  return m;
}

/// Exact for bool and integers; |got - want| <= atol + rtol * |want| for
/// floats (assert_close's defaults), NaN only with NaN, infinities equal.
void expectMatches(const Tensor &got, const Tensor &want,
                   const std::string &what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  bool f32 = want.dtype() == kFloat32, f64 = want.dtype() == kFloat64;
  double rtol = f32 ? 1.3e-6 : 1e-7, atol = f32 ? 1e-5 : 1e-7;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    bool ok;
    if (!f32 && !f64)
      ok = g[i] == w[i];
    else if (std::isnan(w[i]))
      ok = std::isnan(g[i]);
    else if (std::isinf(w[i]))
      ok = g[i] == w[i];
    else
      ok = std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]);
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << "[" << i << "]: strata " << g[i] << ", PyTorch "
                    << w[i];
    }
  }
}

TEST(Scan, MatchPyTorch) {
  auto table = scanCases();
  auto cases = opsgolden::load(STRATA_SCAN_GOLDEN);
  EXPECT_GE(cases.size(), 70u);
  std::set<std::string> seen;
  for (const opsgolden::Case &c : cases) {
    SCOPED_TRACE(c.name);
    auto it = table.find(c.name);
    ASSERT_NE(it, table.end()) << "no strata side for golden case " << c.name;
    seen.insert(c.name);
    std::vector<Tensor> in = opsgolden::inputsOf(c);
    Outs outs;
    try {
      outs = it->second(in);
    } catch (const std::exception &e) {
      ADD_FAILURE() << c.name << " threw: " << e.what();
      continue;
    }
    ASSERT_EQ(outs.size(), 1u);
    expectMatches(outs[0], c.at("out0"), c.name + " out0");
    EXPECT_EQ(outs[0].requires_grad(), c.at("rg0").item<int64_t>() != 0);
    if (c.has("gout0") && outs[0].requires_grad())
      (outs[0] * c.at("gout0")).sum().backward();
    if (c.has("grad0")) {
      ASSERT_TRUE(in[0].grad().defined()) << c.name;
      expectMatches(in[0].grad(), c.at("grad0"), c.name + " grad0");
    }
  }
  for (auto &[name, fn] : table)
    EXPECT_TRUE(seen.count(name)) << name << " has no golden case";
}

Tensor r64(const Shape &s) { return randn(s, kFloat64).eval(); }

void expectGradcheck(
    const std::string &what,
    const std::function<Tensor(const std::vector<Tensor> &)> &fn,
    const std::vector<Tensor> &inputs) {
  GradcheckResult r = gradcheck(fn, inputs);
  EXPECT_TRUE(r.ok) << what << ": " << r.message;
}

// Independently of PyTorch: central finite differences in float64, with
// zeros in cumprod's and prod's inputs (both are polynomials, so their
// derivatives exist there).
TEST(Scan, GradientsMatchFiniteDifferences) {
  manual_seed(5);
  expectGradcheck("cumsum", [](auto &in) { return in[0].cumsum(1); },
                  {r64({3, 4})});
  expectGradcheck("cumsum_t", [](auto &in) { return in[0].t().cumsum(0); },
                  {r64({3, 4})});
  expectGradcheck("cumprod", [](auto &in) { return in[0].cumprod(1); },
                  {r64({3, 5})});
  expectGradcheck("cumprod_dim0", [](auto &in) { return in[0].cumprod(0); },
                  {r64({4, 3})});
  Tensor z =
      from_vector<double>({1.5, 0, 2, 3, 0, -2, 0.5, 0, 0, 1, 2, 3}, {3, 4});
  expectGradcheck("cumprod_zeros", [](auto &in) { return in[0].cumprod(1); },
                  {z});
  expectGradcheck("prod_dim_zeros", [](auto &in) { return in[0].prod(1); },
                  {z});
  Tensor one = from_vector<double>({1.5, 0, 2, 3, -1, 2}, {2, 3});
  expectGradcheck("prod_all_one_zero", [](auto &in) { return in[0].prod(); },
                  {one});
}

TEST(Scan, GradFnNames) {
  Tensor x = randn({2, 3}).requires_grad_();
  EXPECT_EQ(x.cumsum(1).grad_fn()->name(), "CumsumBackward0");
  EXPECT_EQ(x.cumprod(0).grad_fn()->name(), "CumprodBackward0");
  Tensor y = x * 1;
  y.cumsum_(1);
  EXPECT_EQ(y.grad_fn()->name(), "CumsumBackward0");
  Tensor w = x * 1;
  w.cumprod_(0);
  EXPECT_EQ(w.grad_fn()->name(), "CumprodBackward0");
}

struct ErrorCase {
  int line;
  std::function<void()> raise;
  const char *message;
};
#define ERR(message, ...)                                                      \
  ErrorCase {                                                                  \
    __LINE__, [&] { __VA_ARGS__; }, message                                    \
  }

TEST(Scan, ErrorsNameTheUsersLine) {
  Tensor x = randn({2, 3}), s = full({}, 1.5);
  Tensor b = x > 0, i = arange(4);
  const ErrorCase cases[] = {
      ERR("Dimension out of range (expected to be in range of [-2, 1], but "
          "got 2)",
          x.cumsum(2)),
      ERR("Dimension out of range (expected to be in range of [-2, 1], but "
          "got -3)",
          cumprod(x, -3)),
      ERR("Dimension out of range (expected to be in range of [-1, 0], but "
          "got 1)",
          s.cumsum(1)),
      ERR("\"cumsum_out_cpu\" not implemented for 'Bool'", x.cumsum(0, kBool)),
      ERR("\"cumprod_out_cpu\" not implemented for 'Bool'",
          b.cumprod(0, kBool)),
      ERR("\"cumsum_out_cpu\" not implemented for 'Bool'", b.cumsum_(0)),
      ERR("\"cumprod_out_cpu\" not implemented for 'Bool'", b.cumprod_(1)),
      ERR("Bad in-place call: input tensor dtype float and output tensor "
          "dtype long int should match",
          x.cumsum_(0, kInt64)),
      ERR("Bad in-place call: input tensor dtype long int and output tensor "
          "dtype float should match",
          i.cumprod_(0, kFloat32)),
  };
  for (const ErrorCase &c : cases) {
    try {
      c.raise();
      ADD_FAILURE() << "line " << c.line << ": no error";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.message()).find(c.message), std::string::npos)
          << "line " << c.line << ": " << e.what();
      EXPECT_NE(e.where().find("ScanTest.cpp:" + std::to_string(c.line)),
                std::string::npos)
          << e.what();
      EXPECT_FALSE(e.hint().empty()) << e.what();
    }
  }
}

// The IR a user sees: one strata.scan, and one scan kernel after fusion
// (the exp computed inside it); explain() names the kernel.
TEST(Scan, DumpIrAndExplain) {
  Tensor x = randn({4, 300});
  Tensor y = x.exp().cumsum(0);
  IRDump d = dump_ir({y});
  EXPECT_NE(d.before.find("strata.scan"), std::string::npos) << d.before;
  EXPECT_NE(d.after.find("scan_dim = 0"), std::string::npos) << d.after;
  EXPECT_NE(d.after.find("math.exp"), std::string::npos) << d.after;
  EXPECT_FALSE(y.explain().empty());
}

// O(n): one kernel, and a line of 2^22 elements takes about what 2^21 take
// twice (a triangular formulation would take 4x).
TEST(Scan, IsOneLinearKernel) {
  Tensor x = randn({1 << 20}).eval();
  reset_eval_stats();
  x.cumsum(0).eval();
  EXPECT_EQ(eval_stats().kernels, 1);
  Tensor y = randn({64, 300}).eval();
  reset_eval_stats();
  ((y * 2).exp().cumprod(1) + 1).sum().eval();
  EXPECT_LE(eval_stats().kernels, 3); // the scan reads exp(y * 2) itself
}

} // namespace
