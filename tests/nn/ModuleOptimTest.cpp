//===- ModuleOptimTest.cpp - nn modules and optimizers --------------------===//
//
// The optimizers' updates against PyTorch 1.13's (nn_golden.txt: given
// gradients, the parameters after each step), the fused update (one kernel
// per parameter, one program per step, compiled once), and the Module
// semantics LibTorch users rely on: names, order, modes, zero_grad,
// save/load, initialization bounds.
//
//===----------------------------------------------------------------------===//
#include "Golden.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <unistd.h>

using namespace strata;
namespace F = strata::nn::functional;

namespace {

const std::vector<golden::Case> &goldenCases() {
  static std::vector<golden::Case> cases = golden::load(STRATA_NN_GOLDEN);
  return cases;
}

std::unique_ptr<optim::Optimizer> makeOptimizer(const std::string &name,
                                                std::vector<Tensor> params) {
  using namespace optim;
  std::string n = name;
  if (n.ends_with("_f32")) // the same options over float32
    n.resize(n.size() - 4);
  if (n == "sgd")
    return std::make_unique<SGD>(params, SGDOptions(0.1));
  if (n == "sgd_momentum")
    return std::make_unique<SGD>(params, SGDOptions(0.1).momentum(0.9));
  if (n == "sgd_dampening_wd")
    return std::make_unique<SGD>(
        params,
        SGDOptions(0.05).momentum(0.8).dampening(0.3).weight_decay(0.01));
  if (n == "sgd_nesterov")
    return std::make_unique<SGD>(
        params,
        SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.1));
  if (n == "adam")
    return std::make_unique<Adam>(params, AdamOptions(0.01));
  if (n == "adam_wd_betas")
    return std::make_unique<Adam>(
        params,
        AdamOptions(0.02).betas({0.8, 0.99}).eps(1e-6).weight_decay(0.1));
  if (n == "adam_amsgrad")
    return std::make_unique<Adam>(params, AdamOptions(0.01).amsgrad(true));
  if (n == "adamw")
    return std::make_unique<AdamW>(params, AdamWOptions(0.01));
  if (n == "adamw_amsgrad")
    return std::make_unique<AdamW>(
        params, AdamWOptions(0.03).weight_decay(0.5).amsgrad(true));
  return nullptr;
}

TEST(Optim, UpdatesMatchPyTorch) {
  int checked = 0;
  for (const golden::Case &c : goldenCases()) {
    if (!c.has("p0"))
      continue;
    SCOPED_TRACE(c.name);
    std::vector<Tensor> params{c.at("p0").clone().requires_grad_(),
                               c.at("p1").clone().requires_grad_()};
    auto opt = makeOptimizer(c.name, params);
    ASSERT_TRUE(opt) << "no strata side for golden case " << c.name;
    bool f32 = params[0].dtype() == kFloat32;
    for (int s = 0; c.has("after" + std::to_string(s) + "_0"); ++s) {
      for (size_t k = 0; k < params.size(); ++k) {
        std::string g = "g" + std::to_string(s) + "_" + std::to_string(k);
        params[k].mutable_grad() = c.has(g) ? c.at(g).clone() : Tensor();
      }
      opt->step();
      for (size_t k = 0; k < params.size(); ++k) {
        std::vector<double> got = params[k].to_vector<double>();
        std::vector<double> want =
            c.at("after" + std::to_string(s) + "_" + std::to_string(k))
                .to_vector<double>();
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], want[i],
                      (f32 ? 2e-6 : 1e-13) * (1 + std::fabs(want[i])))
              << "step " << s << " param " << k << " element " << i;
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 18);
}

/// The MLP of the digits example.
nn::Sequential mlp() {
  return nn::Sequential(nn::Linear(64, 128), nn::ReLU(), nn::Linear(128, 10));
}

/// One training step of `model` on a fixed batch; returns eval_stats() of
/// optimizer.step() alone. The loss handle dies before the step: a live
/// loss keeps the forward's pending intermediates, which read the
/// parameters and are evaluated before the parameters are written.
EvalStats stepStats(nn::Sequential &model, optim::Optimizer &opt,
                    const Tensor &x, const Tensor &y) {
  {
    Tensor loss = F::cross_entropy(model(x), y);
    opt.zero_grad(/*set_to_none=*/true);
    loss.backward();
  }
  reset_eval_stats();
  opt.step();
  return eval_stats();
}

// Each parameter's update is fused: one kernel per parameter for SGD, two
// for the optimizers with state (a strata.kernel writes one storage: the
// new state comes from one kernel, the parameter's write reads it). The
// step is one program, compiled on the first steps only, even when the
// learning rate changes and Adam's bias corrections change every step.
TEST(Optim, StepIsFusedPerParameter) {
  manual_seed(1);
  Tensor x = rand({32, 64});
  Tensor y = from_vector(std::vector<int64_t>(32, 3));
  using namespace optim;
  struct Variant {
    const char *name;
    std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)> make;
    int64_t kernelsPerParameter;
  };
  std::vector<Variant> variants = {
      {"sgd", [](auto p) { return std::make_unique<SGD>(p, SGDOptions(0.1)); },
       1},
      {"sgd_momentum",
       [](auto p) {
         return std::make_unique<SGD>(p, SGDOptions(0.1).momentum(0.9));
       },
       2},
      {"sgd_nesterov_wd",
       [](auto p) {
         return std::make_unique<SGD>(
             p,
             SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(1e-4));
       },
       2},
      {"adam", [](auto p) { return std::make_unique<Adam>(p); }, 2},
      {"adamw_amsgrad",
       [](auto p) {
         return std::make_unique<AdamW>(p, AdamWOptions().amsgrad(true));
       },
       2},
  };
  for (const Variant &v : variants) {
    SCOPED_TRACE(v.name);
    nn::Sequential model = mlp();
    auto opt = v.make(model->parameters());
    stepStats(model, *opt, x, y); // first step (SGD: buffers start)
    stepStats(model, *opt, x, y); // first step with every state in place
    for (int s = 0; s < 3; ++s) {
      if (auto *sgd = dynamic_cast<SGD *>(opt.get()))
        sgd->options().lr(0.1 / (s + 2)); // a schedule: arguments, no compile
      EvalStats st = stepStats(model, *opt, x, y);
      EXPECT_EQ(st.programs, 1);
      EXPECT_EQ(st.kernels, 4 * v.kernelsPerParameter);
      EXPECT_EQ(st.compiles, 0);
    }
  }
}

TEST(Module, NamesOrderAndModes) {
  nn::Sequential model = mlp();
  auto named = model->named_parameters();
  std::vector<std::string> names;
  for (auto &[n, t] : named)
    names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "2.weight",
                                             "2.bias"}));
  EXPECT_EQ(named[0].second.sizes(), (Shape{128, 64}));
  EXPECT_EQ(named[3].second.sizes(), (Shape{10}));
  for (auto &[n, t] : named) {
    EXPECT_TRUE(t.requires_grad()) << n;
    EXPECT_TRUE(t.is_leaf()) << n;
    EXPECT_TRUE(t.is_materialized()) << n;
  }
  EXPECT_EQ(model->parameters().size(), 4u);
  EXPECT_EQ(model->children().size(), 3u);
  EXPECT_EQ((*model)[1]->name(), "ReLU");
  EXPECT_TRUE(model->is_training());
  model->eval();
  for (auto &c : model->children())
    EXPECT_FALSE(c->is_training());
  model->train();
  EXPECT_TRUE((*model)[2]->is_training());

  // A user module, as LibTorch's tutorials write one.
  struct NetImpl : nn::Module {
    NetImpl() : Module("Net") {
      fc1 = register_module("fc1", nn::Linear(4, 8));
      fc2 = register_module("fc2",
                            nn::Linear(nn::LinearOptions(8, 2).bias(false)));
      scale = register_parameter("scale", ones({2}));
    }
    Tensor forward(const Tensor &x) { return fc2(fc1(x).relu()) * scale; }
    nn::Linear fc1{nullptr}, fc2{nullptr};
    Tensor scale;
  };
  nn::ModuleHolder<NetImpl> net;
  names.clear();
  for (auto &[n, t] : net->named_parameters())
    names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"scale", "fc1.weight", "fc1.bias",
                                             "fc2.weight"}));
  Tensor out = net(ones({3, 4}));
  EXPECT_EQ(out.sizes(), (Shape{3, 2}));
  out.sum().backward();
  for (auto &p : net->parameters())
    EXPECT_TRUE(p.grad().defined());
  net->zero_grad();
  for (auto &p : net->parameters())
    EXPECT_EQ(p.grad().abs().sum().item<float>(), 0.0f);
  net->zero_grad(/*set_to_none=*/true);
  for (auto &p : net->parameters())
    EXPECT_FALSE(p.grad().defined());
}

// PyTorch's reset_parameters: U(-1/sqrt(in), 1/sqrt(in)) for Linear's
// weight and bias, N(0, 1) for Embedding; LayerNorm ones and zeros.
TEST(Module, Initialization) {
  manual_seed(5);
  nn::Linear fc(400, 300);
  double bound = 1 / std::sqrt(400.0);
  std::vector<float> w = fc->weight.to_vector<float>();
  double sum = 0, sq = 0;
  for (float v : w) {
    ASSERT_LE(std::fabs(v), bound);
    sum += v;
    sq += double(v) * v;
  }
  double n = static_cast<double>(w.size());
  // Mean 0 and variance bound^2 / 3, within 5 standard errors.
  EXPECT_NEAR(sum / n, 0, 5 * bound / std::sqrt(3 * n));
  EXPECT_NEAR(sq / n, bound * bound / 3,
              5 * bound * bound * 0.3 / std::sqrt(n));
  for (float v : fc->bias.to_vector<float>())
    ASSERT_LE(std::fabs(v), bound);
  nn::Embedding emb(300, 200);
  std::vector<float> e = emb->weight.to_vector<float>();
  sum = sq = 0;
  for (float v : e)
    sum += v, sq += double(v) * v;
  EXPECT_NEAR(sum / e.size(), 0, 5 / std::sqrt(e.size()));
  EXPECT_NEAR(sq / e.size(), 1, 5 * std::sqrt(2.0 / e.size()));
  // padding_idx (negative: from the end) starts as a row of zeros.
  nn::Embedding padded(nn::EmbeddingOptions(5, 3).padding_idx(-2));
  EXPECT_EQ(padded->options.padding_idx(), 3);
  std::vector<float> p = padded->weight.to_vector<float>();
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(p[r * 3 + c] == 0, r == 3) << r << " " << c;
  EXPECT_TRUE(padded->weight.is_leaf());
  EXPECT_TRUE(padded->weight.requires_grad());
  nn::LayerNorm ln(nn::LayerNormOptions({4}));
  EXPECT_EQ(ln->weight.to_vector<float>(), std::vector<float>(4, 1));
  EXPECT_EQ(ln->bias.to_vector<float>(), std::vector<float>(4, 0));
  nn::LayerNorm plain(nn::LayerNormOptions({4}).elementwise_affine(false));
  EXPECT_TRUE(plain->parameters().empty());
}

// nn::GELU: no parameters, LibTorch's options, the op's errors at the
// caller's line; values are against PyTorch in FunctionalTest.cpp.
TEST(Module, GELU) {
  nn::Sequential seq(nn::Linear(3, 4), nn::GELU(),
                     nn::GELU(nn::GELUOptions().approximate("tanh")));
  EXPECT_EQ(seq->parameters().size(), 2u);
  EXPECT_EQ((*seq)[1]->name(), "GELU");
  Tensor x = from_vector(std::vector<float>{-1, 0.5f, 3});
  nn::GELU exact, tanh(nn::GELUOptions().approximate("tanh"));
  EXPECT_EQ(exact->options.approximate(), "none");
  EXPECT_EQ(exact(x).to_vector<float>(), x.gelu().to_vector<float>());
  EXPECT_EQ(tanh(x).to_vector<float>(), x.gelu("tanh").to_vector<float>());
  EXPECT_NE(exact(x).to_vector<float>(), tanh(x).to_vector<float>());
  nn::GELU bad(nn::GELUOptions().approximate("fast"));
  int line = __LINE__ + 2;
  try {
    bad(x);
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(e.message().find("approximate argument must be either none or "
                               "tanh."),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.where().find("ModuleOptimTest.cpp:" + std::to_string(line)),
              std::string::npos)
        << e.where();
  }
}

TEST(Module, DropoutFollowsTheMode) {
  nn::Dropout drop(0.5);
  Tensor x = ones({1000});
  EXPECT_LT(drop(x).sum().item<float>(), 1000 * 1.5f);
  EXPECT_NE(drop(x).to_vector<float>(), x.to_vector<float>());
  drop->eval();
  EXPECT_EQ(drop(x).impl(), x.impl());
}

TEST(Module, SaveLoadRoundTrip) {
  std::string dir = (std::filesystem::temp_directory_path() /
                     ("strata-nn-" + std::to_string(::getpid())))
                        .string();
  manual_seed(11);
  nn::Sequential a = mlp();
  nn::save(a, dir);
  for (const char *f : {"0.weight", "0.bias", "2.weight", "2.bias"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + f + ".npy")) << f;
  nn::Sequential b = mlp(); // other values
  Tensor w = b->parameters()[0];
  optim::SGD opt(b->parameters(), optim::SGDOptions(0.1));
  nn::load(b, dir);
  auto pa = a->parameters(), pb = b->parameters();
  for (size_t i = 0; i < pa.size(); ++i)
    EXPECT_EQ(pa[i].to_vector<float>(), pb[i].to_vector<float>());
  // In place: the handle the optimizer holds sees the loaded values.
  EXPECT_EQ(opt.parameters()[0].to_vector<float>(), pa[0].to_vector<float>());
  EXPECT_TRUE(pb[0].is_leaf());
  EXPECT_TRUE(pb[0].requires_grad());
  // A module of another shape is refused, and left unchanged.
  nn::Sequential c(nn::Linear(64, 128), nn::ReLU(), nn::Linear(128, 5));
  std::vector<float> before = c->parameters()[0].to_vector<float>();
  EXPECT_THROW(nn::load(c, dir), Error);
  EXPECT_EQ(c->parameters()[0].to_vector<float>(), before);
  std::filesystem::remove_all(dir);
}

} // namespace
