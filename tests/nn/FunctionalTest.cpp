//===- FunctionalTest.cpp - nn::functional against PyTorch and finite diffs
//===//
//
// Values and gradients of every composite op against PyTorch 1.13's
// (nn_golden.txt, written by scripts/gen_nn_golden.py), and the gradients
// against central finite differences (strata::gradcheck), so a wrong
// formula and a wrong derivative are each caught without trusting strata.
//
//===----------------------------------------------------------------------===//
#include "Golden.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

using namespace strata;
namespace F = strata::nn::functional;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor> &)>;

/// The strata side of every functional case of gen_nn_golden.py.
std::map<std::string, Fn> functionalCases() {
  std::map<std::string, Fn> m;
  m["softmax_dim1"] = [](auto &in) { return F::softmax(in[0], 1); };
  m["softmax_dim0"] = [](auto &in) { return F::softmax(in[0], 0); };
  m["softmax_3d_last"] = [](auto &in) { return in[0].softmax(-1); };
  m["softmax_large"] = [](auto &in) { return in[0].softmax(1); };
  m["softmax_f32"] = [](auto &in) { return in[0].softmax(1); };
  m["log_softmax_dim1"] = [](auto &in) { return F::log_softmax(in[0], 1); };
  m["log_softmax_dim0"] = [](auto &in) { return in[0].log_softmax(0); };
  m["log_softmax_large"] = [](auto &in) { return in[0].log_softmax(1); };
  m["log_softmax_1d"] = [](auto &in) { return in[0].log_softmax(0); };
  const std::pair<const char *, nn::Reduction> reds[] = {
      {"mean", kMean}, {"sum", kSum}, {"none", kNone}};
  for (auto [name, r] : reds) {
    std::string s = name;
    m["ce_idx_" + s] = [r](auto &in) {
      return F::cross_entropy(in[0], in[1],
                              F::CrossEntropyFuncOptions().reduction(r));
    };
    m["ce_idx_ls_" + s] = [r](auto &in) {
      return F::cross_entropy(
          in[0], in[1],
          F::CrossEntropyFuncOptions().reduction(r).label_smoothing(0.1));
    };
    m["ce_idx_weight_ls_ignore_" + s] = [r](auto &in) {
      return F::cross_entropy(in[0], in[1],
                              F::CrossEntropyFuncOptions()
                                  .weight(in[2])
                                  .reduction(r)
                                  .label_smoothing(0.2)
                                  .ignore_index(2));
    };
    m["ce_prob_" + s] = [r](auto &in) {
      return F::cross_entropy(in[0], in[1],
                              F::CrossEntropyFuncOptions().reduction(r));
    };
    m["ce_prob_weight_ls_" + s] = [r](auto &in) {
      return F::cross_entropy(in[0], in[1],
                              F::CrossEntropyFuncOptions()
                                  .weight(in[2])
                                  .reduction(r)
                                  .label_smoothing(0.3));
    };
    m["nll_" + s] = [r](auto &in) {
      return F::nll_loss(in[0], in[1], F::NLLLossFuncOptions().reduction(r));
    };
    m["nll_weight_" + s] = [r](auto &in) {
      return F::nll_loss(in[0], in[1],
                         F::NLLLossFuncOptions().weight(in[2]).reduction(r));
    };
    m["mse_" + s] = [r](auto &in) { return F::mse_loss(in[0], in[1], r); };
    m["l1_" + s] = [r](auto &in) { return F::l1_loss(in[0], in[1], r); };
    m["bce_logits_" + s] = [r](auto &in) {
      return F::binary_cross_entropy_with_logits(
          in[0], in[1],
          F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(r));
    };
  }
  m["ce_idx_weight_mean"] = [](auto &in) {
    return F::cross_entropy(in[0], in[1],
                            F::CrossEntropyFuncOptions().weight(in[2]));
  };
  m["ce_idx_ignore_inrange_mean"] = [](auto &in) {
    return F::cross_entropy(in[0], in[1],
                            F::CrossEntropyFuncOptions().ignore_index(2));
  };
  m["ce_idx_3d_mean"] = [](auto &in) { return F::cross_entropy(in[0], in[1]); };
  m["ce_idx_3d_ls_none"] = [](auto &in) {
    return F::cross_entropy(
        in[0], in[1],
        F::CrossEntropyFuncOptions().reduction(kNone).label_smoothing(0.1));
  };
  m["ce_idx_1d"] = [](auto &in) { return F::cross_entropy(in[0], in[1]); };
  m["ce_idx_large"] = [](auto &in) { return F::cross_entropy(in[0], in[1]); };
  m["ce_idx_f32"] = [](auto &in) { return F::cross_entropy(in[0], in[1]); };
  m["mse_broadcast"] = [](auto &in) { return F::mse_loss(in[0], in[1]); };
  m["bce_logits_weight_posweight"] = [](auto &in) {
    return F::binary_cross_entropy_with_logits(
        in[0], in[1],
        F::BinaryCrossEntropyWithLogitsFuncOptions().weight(in[2]).pos_weight(
            in[3]));
  };
  m["linear_bias"] = [](auto &in) { return F::linear(in[0], in[1], in[2]); };
  m["linear_nobias"] = [](auto &in) { return F::linear(in[0], in[1]); };
  m["linear_3d"] = [](auto &in) { return F::linear(in[0], in[1], in[2]); };
  m["layer_norm_affine"] = [](auto &in) {
    return F::layer_norm(
        in[0], F::LayerNormFuncOptions({5}).weight(in[1]).bias(in[2]));
  };
  m["layer_norm_plain"] = [](auto &in) {
    return F::layer_norm(in[0], F::LayerNormFuncOptions({5}));
  };
  m["layer_norm_2d"] = [](auto &in) {
    return F::layer_norm(
        in[0],
        F::LayerNormFuncOptions({3, 4}).weight(in[1]).bias(in[2]).eps(1e-3));
  };
  m["embedding"] = [](auto &in) {
    // The module's forward over the golden table (its weight handle
    // replaced, so the gradient reaches in[0]).
    nn::Embedding emb(6, 3);
    emb->weight = in[0];
    return emb(in[1]);
  };
  for (const char *name : {"embedding_fn", "embedding_i32_f32", "embedding_0d",
                           "embedding_empty", "embedding_3d_dups"})
    m[name] = [](auto &in) { return F::embedding(in[1], in[0]); };
  m["embedding_padding"] = [](auto &in) {
    return F::embedding(in[1], in[0], F::EmbeddingFuncOptions().padding_idx(2));
  };
  m["embedding_padding_neg"] = [](auto &in) {
    // Through the module too: its forward is the functional op.
    nn::Embedding emb(nn::EmbeddingOptions(5, 2).padding_idx(-1));
    emb->weight = in[0];
    return emb(in[1]);
  };
  m["embedding_padding_unused"] = [](auto &in) {
    return F::embedding(in[1], in[0], F::EmbeddingFuncOptions().padding_idx(0));
  };
  m["gelu_module"] = [](auto &in) { return nn::GELU()(in[0]); };
  m["gelu_module_tanh"] = [](auto &in) {
    return nn::GELU(nn::GELUOptions().approximate("tanh"))(in[0]);
  };
  m["gelu_module_f32_t"] = [](auto &in) { return nn::GELU()(in[0].t()); };
  m["embedding_views"] = [](auto &in) {
    return F::embedding(in[1].t(), in[0].t());
  };
  return m;
}

/// |got - want| <= atol + rtol * |want| elementwise, NaN only with NaN.
void expectClose(const Tensor &got, const Tensor &want, const std::string &what,
                 double rtol, double atol) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    bool ok = std::isnan(w[i])
                  ? std::isnan(g[i])
                  : std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]);
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << "[" << i << "]: strata " << g[i] << ", PyTorch "
                    << w[i];
    }
  }
}

const std::vector<golden::Case> &goldenCases() {
  static std::vector<golden::Case> cases = golden::load(STRATA_NN_GOLDEN);
  return cases;
}

TEST(NNFunctional, MatchesPyTorch) {
  auto table = functionalCases();
  std::set<std::string> seen;
  for (const golden::Case &c : goldenCases()) {
    if (!c.has("out"))
      continue; // an optimizer case
    SCOPED_TRACE(c.name);
    auto it = table.find(c.name);
    ASSERT_NE(it, table.end()) << "no strata side for golden case " << c.name;
    seen.insert(c.name);
    std::vector<Tensor> in = opsgolden::inputsOf(c);
    Tensor out = it->second(in);
    const Tensor &want = c.at("out");
    bool f32 = want.dtype() == kFloat32;
    double rtol = f32 ? 2e-6 : 1e-11, atol = f32 ? 1e-6 : 1e-12;
    ASSERT_EQ(out.dtype(), want.dtype());
    expectClose(out, want, c.name + " value", rtol, atol);
    if (c.has("gout"))
      out.backward(c.at("gout"));
    else
      out.backward();
    for (size_t k = 0; k < in.size(); ++k) {
      std::string key = "grad" + std::to_string(k);
      if (!c.has(key))
        continue;
      ASSERT_TRUE(in[k].grad().defined()) << key;
      expectClose(in[k].grad(), c.at(key), c.name + " " + key, rtol, atol);
    }
  }
  for (auto &[name, fn] : table)
    EXPECT_TRUE(seen.count(name)) << name << " has no golden case";
}

/// gradcheck of `fn` at `inputs` (float64), with the worst element shown.
void expectGradcheck(const Fn &fn, const std::vector<Tensor> &inputs) {
  GradcheckResult r = gradcheck(fn, inputs);
  EXPECT_TRUE(r.ok) << r.message;
}

Tensor r64(const Shape &s, double scale = 1) {
  return (randn(s, kFloat64) * scale).eval();
}

TEST(NNFunctional, GradientsMatchFiniteDifferences) {
  manual_seed(7);
  Tensor target = from_vector(std::vector<int64_t>{0, 3, 1, 3, -100, 2});
  expectGradcheck([](auto &in) { return in[0].softmax(1); }, {r64({3, 4})});
  expectGradcheck([](auto &in) { return in[0].log_softmax(0); },
                  {r64({3, 4}, 3)});
  expectGradcheck(
      [&](auto &in) {
        return F::cross_entropy(
            in[0], target,
            F::CrossEntropyFuncOptions().label_smoothing(0.15).weight(
                from_vector(std::vector<double>{1, 2, 0.5, 1.5})));
      },
      {r64({6, 4})});
  expectGradcheck(
      [](auto &in) {
        return F::cross_entropy(in[0], in[1].softmax(1),
                                F::CrossEntropyFuncOptions().reduction(kSum));
      },
      {r64({3, 5}), r64({3, 5})});
  expectGradcheck(
      [](auto &in) {
        return F::binary_cross_entropy_with_logits(
            in[0], in[1],
            F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(
                full({4}, 1.7, kFloat64)));
      },
      {r64({3, 4}, 4), rand({3, 4}, kFloat64)});
  expectGradcheck([](auto &in) { return F::mse_loss(in[0], in[1]); },
                  {r64({3, 4}), r64({3, 4})});
  expectGradcheck([](auto &in) { return F::l1_loss(in[0], in[1], kSum); },
                  {r64({3, 4}), r64({3, 4})});
  expectGradcheck(
      [](auto &in) {
        return F::layer_norm(
            in[0], F::LayerNormFuncOptions({4}).weight(in[1]).bias(in[2]));
      },
      {r64({3, 4}, 2), r64({4}), r64({4})});
  expectGradcheck([](auto &in) { return F::linear(in[0], in[1], in[2]); },
                  {r64({2, 3}), r64({4, 3}), r64({4})});
}

// A planted error must show: the check above is not vacuous.
TEST(NNFunctional, GradcheckCatchesAWrongDerivative) {
  manual_seed(8);
  GradcheckOptions o;
  o.analytic = [](const std::vector<Tensor> &in, const Tensor &g) {
    Tensor y = in[0].softmax(1);
    return std::vector<Tensor>{y * g}; // drops the -y * sum(g * y) term
  };
  GradcheckResult r =
      gradcheck([](auto &in) { return in[0].softmax(1); }, {r64({3, 4})}, o);
  EXPECT_FALSE(r.ok);
}

// Stability: logits of 10^4 give finite losses and gradients, where the
// naive log(softmax(x)) would give -inf and NaN.
TEST(NNFunctional, StableForLargeLogits) {
  Tensor x = from_vector(std::vector<float>{1e4f, -1e4f, 0, 5e3f}, {2, 2})
                 .requires_grad_();
  Tensor t = from_vector(std::vector<int64_t>{1, 0});
  Tensor loss = F::cross_entropy(x, t);
  loss.backward();
  EXPECT_FLOAT_EQ(loss.item<float>(), (2e4f + 5e3f) / 2);
  for (float g : x.grad().to_vector<float>())
    EXPECT_TRUE(std::isfinite(g));
  Tensor b = F::binary_cross_entropy_with_logits(
      from_vector(std::vector<float>{1e4f, -1e4f}),
      from_vector(std::vector<float>{0, 1}), kNone);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1e4f, 1e4f}));
}

TEST(NNFunctional, DropoutMasksAndScales) {
  manual_seed(3);
  Tensor x = ones({200, 100}).requires_grad_();
  Tensor y = F::dropout(x, 0.3);
  std::vector<float> v = y.to_vector<float>();
  int64_t zeros = 0;
  for (float e : v) {
    if (e == 0)
      ++zeros;
    else
      EXPECT_FLOAT_EQ(e, 1 / 0.7f);
  }
  // 20,000 Bernoulli(0.3) draws: the count is within 5 sigma (~324).
  EXPECT_NEAR(static_cast<double>(zeros), 6000, 330);
  // The gradient is the same mask and scale.
  y.sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), v);
  // Not training, p = 0: the input itself; p = 1: zeros.
  EXPECT_EQ(F::dropout(x, F::DropoutFuncOptions(0.5).training(false)).impl(),
            x.impl());
  EXPECT_EQ(F::dropout(x, 0.0).impl(), x.impl());
  EXPECT_EQ(F::dropout(x, 1.0).sum().item<float>(), 0.0f);
  // Reproducible with the generator's seed.
  manual_seed(3);
  EXPECT_EQ(F::dropout(ones({200, 100}), 0.3).to_vector<float>(), v);
}

} // namespace
