//===- IndexOpsTest.cpp - the index ops against PyTorch 1.13 --------------===//
//
// Values, dtypes, sizes, requires_grad and input gradients of every case of
// index_golden.txt (scripts/gen_index_golden.py; each case's strata side
// below mirrors the Python lambda of the same name), finite-difference
// gradient checks, the errors (PyTorch's messages at the user's line), the
// cost (one kernel per gather, no one-hot), and scatter_add's duplicates
// adding up deterministically on several threads.
//
//===----------------------------------------------------------------------===//
#include "OpsGolden.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

using namespace strata;

namespace {

using Outs = std::vector<Tensor>;
using Fn = std::function<Outs(const std::vector<Tensor> &)>;

/// The strata side of gen_index_golden.py's value_sized_cases().
template <typename One> void valueSizedCases(One &one) {
  auto nonzero = [](const Outs &in) { return in[0].nonzero(); };
  for (const char *name :
       {"nonzero_f64_nan_negzero", "nonzero_f32", "nonzero_i32_3d",
        "nonzero_bool", "nonzero_0d", "nonzero_0d_zero", "nonzero_all_zero",
        "nonzero_empty"})
    one(name, nonzero);
  one("nonzero_i64_edges",
      [](const Outs &in) { return strata::nonzero(in[0]); });
  one("nonzero_t", [](const Outs &in) { return in[0].t().nonzero(); });
  one("nonzero_strided", [](const Outs &in) {
    return in[0].slice(1, std::nullopt, std::nullopt, 2).nonzero();
  });
  one("nonzero_expanded", [](const Outs &in) {
    return in[0].expand({3, 4}).nonzero();
  });
  one("nonzero_pending",
      [](const Outs &in) { return (in[0] > 0.3).nonzero(); });
  one("argwhere", [](const Outs &in) { return strata::argwhere(in[0]); });
  one("argwhere_method_bool", [](const Outs &in) { return in[0].argwhere(); });
  auto select = [](const Outs &in) { return in[0].masked_select(in[1]); };
  for (const char *name :
       {"masked_select_same", "masked_select_mask_broadcast",
        "masked_select_self_broadcast", "masked_select_both_broadcast",
        "masked_select_0d_self", "masked_select_0d_mask",
        "masked_select_0d_mask_false", "masked_select_0d_both",
        "masked_select_none", "masked_select_empty", "masked_select_f32",
        "masked_select_i64", "masked_select_i32", "masked_select_bool"})
    one(name, select);
  one("masked_select_fn",
      [](const Outs &in) { return strata::masked_select(in[0], in[1]); });
  one("masked_select_t",
      [](const Outs &in) { return in[0].t().masked_select(in[1]); });
  one("masked_select_strided", [](const Outs &in) {
    return in[0]
        .slice(1, std::nullopt, std::nullopt, 2)
        .masked_select(in[1].slice(0, std::nullopt, std::nullopt, 2));
  });
  one("masked_select_expanded_self", [](const Outs &in) {
    return in[0].expand({3, 4}).masked_select(in[1]);
  });
  one("masked_select_expanded_mask", [](const Outs &in) {
    return in[0].masked_select(in[1].expand({3, 4}));
  });
  one("masked_select_pending",
      [](const Outs &in) { return (in[0] * 2).exp().masked_select(in[1]); });
  one("masked_select_by_self",
      [](const Outs &in) { return in[0].masked_select(in[0] > 0); });
}

std::map<std::string, Fn> indexCases() {
  std::map<std::string, Fn> m;
  auto one = [&](const char *name, std::function<Tensor(const Outs &)> f) {
    m[name] = [f](const Outs &in) -> Outs { return {f(in)}; };
  };
  one("gather_dim0", [](const Outs &in) { return in[0].gather(0, in[1]); });
  one("gather_dim_neg", [](const Outs &in) { return in[0].gather(-1, in[1]); });
  one("gather_t", [](const Outs &in) { return in[0].t().gather(0, in[1]); });
  one("gather_expanded_index", [](const Outs &in) {
    return in[0].gather(1, in[1].expand({3, 4}));
  });
  one("gather_f32", [](const Outs &in) { return in[0].gather(1, in[1]); });
  one("gather_3d_dim1", [](const Outs &in) { return in[0].gather(1, in[1]); });
  one("gather_i64", [](const Outs &in) { return in[0].gather(0, in[1]); });
  one("gather_i32", [](const Outs &in) { return in[0].gather(1, in[1]); });
  one("gather_bool", [](const Outs &in) { return in[0].gather(1, in[1]); });
  one("gather_0d", [](const Outs &in) { return in[0].gather(0, in[1]); });
  one("gather_empty", [](const Outs &in) { return in[0].gather(0, in[1]); });
  one("index_select_0",
      [](const Outs &in) { return in[0].index_select(0, in[1]); });
  one("index_select_1",
      [](const Outs &in) { return in[0].index_select(1, in[1]); });
  one("index_select_i32",
      [](const Outs &in) { return in[0].index_select(0, in[1]); });
  one("index_select_t",
      [](const Outs &in) { return in[0].t().index_select(0, in[1]); });
  one("index_select_0d_index",
      [](const Outs &in) { return index_select(in[0], 1, in[1]); });
  one("index_select_expanded", [](const Outs &in) {
    return in[0].expand({3, 4}).index_select(0, in[1]);
  });
  one("index_select_f32_neg",
      [](const Outs &in) { return in[0].index_select(-1, in[1]); });
  one("index_select_i64",
      [](const Outs &in) { return in[0].index_select(0, in[1]); });
  one("index_select_bool",
      [](const Outs &in) { return in[0].index_select(1, in[1]); });
  one("index_select_empty",
      [](const Outs &in) { return in[0].index_select(0, in[1]); });
  one("scatter_src",
      [](const Outs &in) { return in[0].scatter(0, in[1], in[2]); });
  one("scatter_src_larger",
      [](const Outs &in) { return in[0].scatter(1, in[1], in[2]); });
  one("scatter_value",
      [](const Outs &in) { return in[0].scatter(1, in[1], 2.5); });
  one("scatter_value_i64",
      [](const Outs &in) { return in[0].scatter(0, in[1], 7); });
  one("scatter_t",
      [](const Outs &in) { return in[0].t().scatter(0, in[1], in[2]); });
  one("scatter_add_dups",
      [](const Outs &in) { return in[0].scatter_add(0, in[1], in[2]); });
  one("scatter_add_f32",
      [](const Outs &in) { return in[0].scatter_add(1, in[1], in[2]); });
  one("scatter_add_t_src",
      [](const Outs &in) { return in[0].scatter_add(1, in[1], in[2].t()); });
  one("scatter_add_i32",
      [](const Outs &in) { return in[0].scatter_add(0, in[1], in[2]); });
  one("scatter_add_bool",
      [](const Outs &in) { return in[0].scatter_add(1, in[1], in[2]); });
  one("index_add_alpha",
      [](const Outs &in) { return in[0].index_add(0, in[1], in[2], 2); });
  one("index_add_dim1",
      [](const Outs &in) { return in[0].index_add(1, in[1], in[2]); });
  one("index_add_i64",
      [](const Outs &in) { return in[0].index_add(0, in[1], in[2], 3); });
  one("index_add_1d_i32_index",
      [](const Outs &in) { return in[0].index_add(0, in[1], in[2]); });
  one("index_add_t",
      [](const Outs &in) { return in[0].t().index_add(0, in[1], in[2]); });
  one("scatter_inplace", [](const Outs &in) {
    Tensor c = in[0].clone();
    c.scatter_(0, in[1], in[2]);
    return c;
  });
  one("scatter_value_inplace", [](const Outs &in) {
    Tensor c = in[0].clone();
    c.scatter_(1, in[1], -1.0);
    return c;
  });
  one("scatter_add_inplace", [](const Outs &in) {
    Tensor c = in[0].clone();
    c.scatter_add_(0, in[1], in[2]);
    return c;
  });
  one("index_add_inplace", [](const Outs &in) {
    Tensor c = in[0].clone();
    c.index_add_(0, in[1], in[2]);
    return c;
  });
  valueSizedCases(one);
  return m;
}

/// torch.testing.assert_close: exact for ints and bools, rtol/atol by dtype.
void expectMatches(const Tensor &got, const Tensor &want,
                   const std::string &what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  std::vector<double> g = got.to(DType::F64).to_vector<double>(),
                      w = want.to(DType::F64).to_vector<double>();
  bool f32 = want.dtype() == DType::F32;
  bool exact = !(f32 || want.dtype() == DType::F64);
  double rtol = f32 ? 1.3e-6 : 1e-7, atol = f32 ? 1e-5 : 1e-7;
  for (size_t i = 0; i < g.size(); ++i) {
    bool ok = exact ? g[i] == w[i]
                    : std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]);
    EXPECT_TRUE(ok) << what << "[" << i << "]: strata " << g[i] << ", PyTorch "
                    << w[i];
  }
}

TEST(IndexOps, MatchPyTorch) {
  auto table = indexCases();
  std::vector<opsgolden::Case> cases = opsgolden::load(STRATA_INDEX_GOLDEN);
  EXPECT_GE(cases.size(), 76u);
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
    const Tensor &out = outs[0];
    expectMatches(out, c.at("out0"), c.name + " out0");
    EXPECT_EQ(out.requires_grad(), c.at("rg0").item<int64_t>() != 0);
    if (c.has("gout0") && out.requires_grad())
      (out * c.at("gout0")).sum().backward();
    for (size_t i = 0; i < in.size(); ++i) {
      std::string key = "grad" + std::to_string(i);
      if (!c.has(key))
        continue;
      if (!in[i].grad().defined()) {
        for (double v : c.at(key).to_vector<double>())
          EXPECT_EQ(v, 0.0) << c.name << " " << key << " undefined";
        continue;
      }
      expectMatches(in[i].grad(), c.at(key), c.name + " " + key);
    }
  }
  for (auto &[name, fn] : table)
    EXPECT_TRUE(seen.count(name)) << name << " has no golden case";
}

TEST(IndexOps, GradientsMatchFiniteDifferences) {
  Tensor x = randn({4, 3}, TensorOptions(DType::F64));
  Tensor i = from_vector<int64_t>({3, 0, 0, 2, 1}, {5});
  Tensor src = randn({5, 3}, TensorOptions(DType::F64));
  auto check = [](const char *what, std::function<Tensor(const Outs &)> f,
                  const Outs &in) {
    GradcheckResult r = gradcheck(f, in);
    EXPECT_TRUE(r.ok) << what << ": input " << r.input << " element "
                      << r.index;
  };
  check("index_select",
        [&](const Outs &in) { return in[0].index_select(0, i); }, {x});
  check("index_add",
        [&](const Outs &in) { return in[0].index_add(0, i, in[1], 2.0); },
        {x, src});
  // masked_select of a transpose: PyTorch 1.13's own gradient is wrong
  // there (gen_index_golden.py), so finite differences are the reference.
  Tensor mask =
      from_vector(std::vector<bool>{true, false, true, true, true, true, false,
                                    false, true, false, true, true},
                  {3, 4});
  check("masked_select_t",
        [&](const Outs &in) { return in[0].t().masked_select(mask); }, {x});
  check("masked_select_broadcast_self",
        [&](const Outs &in) {
          return in[0].masked_select(mask.unsqueeze(0).expand({2, 3, 4}));
        },
        {randn({4}, TensorOptions(DType::F64))});
  Tensor gi = from_vector<int64_t>({2, 0, 1, 1, 0, 3}, {2, 3});
  check("gather", [&](const Outs &in) { return in[0].gather(0, gi); }, {x});
  check("scatter_add",
        [&](const Outs &in) { return in[0].scatter_add(0, gi, in[1]); },
        {x, randn({2, 3}, TensorOptions(DType::F64))});
}

/// A (line, message) pair: the error's text holds both.
void expectError(const std::function<void()> &f, const std::string &message,
                 int line) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const Error &e) {
    std::string what = e.what();
    EXPECT_NE(what.find(message), std::string::npos) << what;
    EXPECT_NE(what.find("IndexOpsTest.cpp:" + std::to_string(line)),
              std::string::npos)
        << what;
  }
}

TEST(IndexOps, ErrorsArePyTorchsAtTheUsersLine) {
  Tensor x = zeros({3, 4});
  Tensor i24 = zeros({2, 4}, TensorOptions(DType::I64));
  // clang-format off
  expectError([&] { x.gather(0, i24.to(DType::I32)); }, "gather(): Expected dtype int64 for index", __LINE__);
  expectError([&] { x.gather(0, zeros({2}, TensorOptions(DType::I64))); }, "Index tensor must have the same number of dimensions as input tensor", __LINE__);
  expectError([&] { x.gather(0, zeros({2, 5}, TensorOptions(DType::I64))); }, "Size does not match at dimension 1 expected index [2, 5] to be smaller than self [3, 4] apart from dimension 0", __LINE__);
  expectError([&] { x.gather(0, full({2, 4}, 3, TensorOptions(DType::I64))); }, "index 3 is out of bounds for dimension 0 with size 3", __LINE__);
  expectError([&] { x.gather(0, full({2, 4}, -1, TensorOptions(DType::I64))); }, "index -1 is out of bounds for dimension 0 with size 3", __LINE__);
  // A pending index is evaluated for the check (PyTorch's sync).
  expectError([&] { x.gather(0, i24 + 7); }, "index 7 is out of bounds for dimension 0 with size 3", __LINE__);
  expectError([&] { x.gather(2, i24); }, "Dimension out of range (expected to be in range of [-2, 1], but got 2)", __LINE__);
  expectError([&] { x.scatter(0, i24.to(DType::I32), ones({2, 4})); }, "scatter(): Expected dtype int64 for index", __LINE__);
  expectError([&] { x.scatter(0, i24, ones({2, 4}, TensorOptions(DType::F64))); }, "scatter(): Expected self.dtype to be equal to src.dtype", __LINE__);
  expectError([&] { x.scatter(0, zeros({2, 5}, TensorOptions(DType::I64)), ones({2, 4})); }, "Expected index [2, 5] to be smaller than self [3, 4] apart from dimension 0 and to be smaller size than src [2, 4]", __LINE__);
  expectError([&] { x.scatter_add(0, full({2, 4}, 7, TensorOptions(DType::I64)), ones({3, 4})); }, "index 7 is out of bounds for dimension 0 with size 3", __LINE__);
  expectError([&] { x.index_select(0, from_vector<double>({0, 2})); }, "index_select(): Expected dtype int32 or int64 for index", __LINE__);
  expectError([&] { x.index_select(0, zeros({1, 2}, TensorOptions(DType::I64))); }, "index_select(): Index is supposed to be a vector", __LINE__);
  expectError([&] { x.index_select(0, from_vector<int64_t>({0, 3})); }, "index out of range in self", __LINE__);
  expectError([&] { x.index_select(0, from_vector<int64_t>({0, -1})); }, "index out of range in self", __LINE__);
  expectError([&] { x.index_add(0, from_vector<int64_t>({0, 3}), ones({2, 4})); }, "index out of range in self", __LINE__);
  expectError([&] { x.index_add(0, from_vector<int64_t>({0, 2}), ones({3, 4})); }, "index_add_(): Number of indices (2) should be equal to source.size(dim): (3), for dim: 0", __LINE__);
  expectError([&] { x.index_add(0, from_vector<int64_t>({0, 2}), ones({2, 4}, TensorOptions(DType::F64))); }, "index_add_(): self (Float) and source (Double) must have the same scalar type", __LINE__);
  expectError([&] { x.masked_select(zeros({3, 4}, TensorOptions(DType::I64))); }, "masked_select: expected BoolTensor or ByteTensor for mask", __LINE__);
  expectError([&] { x.masked_select(zeros({3, 4})); }, "masked_select: expected BoolTensor or ByteTensor for mask", __LINE__);
  expectError([&] { x.masked_select(ones({2}, TensorOptions(DType::Bool))); }, "masked_select: The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 1", __LINE__);
  expectError([&] { masked_select(x, ones({2, 1, 1}, TensorOptions(DType::Bool)).expand({2, 2, 4})); }, "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1", __LINE__);
  expectError([&] { Tensor().nonzero(); }, "undefined tensor", __LINE__);
  // clang-format on
}

// The values that size the result are read at the call: nonzero evaluates
// its input (with its pending producers, one kernel), masked_select only
// its mask; self stays pending and fuses with what reads the result.
TEST(IndexOps, ValueSizedOpsReadOnlyWhatSizesTheResult) {
  Tensor x = from_vector<double>({1, -2, 3, -4, 5, 0}, {2, 3});
  x.eval();
  Tensor scaled = x * 2;
  Tensor mask = x > 0;
  reset_eval_stats();
  Tensor picked = scaled.masked_select(mask);
  EXPECT_TRUE(mask.is_materialized());
  EXPECT_FALSE(scaled.is_materialized());
  EXPECT_FALSE(picked.is_materialized());
  EXPECT_EQ(eval_stats().kernels, 1); // the mask
  EXPECT_EQ(picked.to_vector<double>(), (std::vector<double>{2, 6, 10}));

  Tensor pending = (x * 3).sub(x);
  reset_eval_stats();
  Tensor where = pending.nonzero();
  EXPECT_EQ(eval_stats().kernels, 1); // x * 3 - x != 0, fused
  EXPECT_TRUE(where.is_materialized());
  EXPECT_EQ(where.to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 0, 1, 0, 2, 1, 0, 1, 1}));
  EXPECT_FALSE(where.requires_grad());

  // A large, sparse input: one pass, PyTorch's row-major order.
  Tensor big = zeros({1000, 1000}, TensorOptions(DType::I32));
  big.narrow(0, 999, 1).narrow(1, 7, 1).fill_(5);
  big.narrow(0, 3, 1).narrow(1, 999, 1).fill_(-1);
  EXPECT_EQ(big.nonzero().to_vector<int64_t>(),
            (std::vector<int64_t>{3, 999, 999, 7}));
  EXPECT_EQ(big.masked_select(big != 0).to_vector<int32_t>(),
            (std::vector<int32_t>{-1, 5}));
}

TEST(IndexOps, OneKernelPerGatherNoOneHot) {
  Tensor table = randn({1000, 64});
  Tensor idx = from_vector<int64_t>({5, 999, 0, 5});
  table.eval();
  reset_eval_stats();
  Tensor rows = table.index_select(0, idx);
  rows.eval();
  EXPECT_EQ(eval_stats().kernels, 1);
  std::vector<float> t = table.to_vector<float>(), r = rows.to_vector<float>();
  for (int j = 0; j < 64; ++j)
    EXPECT_EQ(r[64 + j], t[999 * 64 + j]);
}

TEST(IndexOps, ScatterAddDuplicatesAreDeterministicOnThreads) {
  // 2^16 float additions into 8 slots: a racy or reordered accumulation
  // would differ from run to run and from the serial sum.
  int64_t n = 1 << 16;
  std::vector<int64_t> iv(n);
  std::vector<float> sv(n);
  for (int64_t k = 0; k < n; ++k) {
    iv[k] = (k * 7) % 8;
    sv[k] = 1.0f / static_cast<float>(1 + k % 97);
  }
  Tensor index = from_vector(iv), src = from_vector(sv);
  std::vector<float> first;
  for (int run = 0; run < 3; ++run) {
    Tensor r = zeros({8}).scatter_add(0, index, src);
    std::vector<float> v = r.to_vector<float>();
    if (run == 0)
      first = v;
    EXPECT_EQ(v, first);
  }
  std::vector<float> serial(8, 0.0f);
  for (int64_t k = 0; k < n; ++k)
    serial[iv[k]] += sv[k];
  EXPECT_EQ(first, serial); // row-major order, as PyTorch's CPU kernel
}

} // namespace
