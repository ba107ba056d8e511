//===- train_digits.cpp - an MLP classifier on scikit-learn's digits
//-------===//
//
// Trains nn::Sequential(Linear(64, 128), ReLU(), Linear(128, 10)) with
// cross_entropy and SGD with momentum (or Adam) over shuffled mini-batches
// of the digits data set (8x8 images, 10 classes) and reports the loss per
// epoch and the test accuracy.
//
//   /usr/bin/python3 scripts/make_digits.py build/digits
//   build/bin/strata-train-digits build/digits [options]
//
// Options: --epochs N (10), --batch B (64), --lr LR (0.05 SGD, 1e-3 Adam),
// --momentum M (0.9), --optimizer sgd|adam (sgd), --seed S (0), --verbose
// (the loss of every step), --dump DIR (write DIR/init/*.npy, the initial
// parameters; DIR/order.npy, each epoch's sample order; DIR/losses.npy,
// every step's loss; DIR/accuracy.txt: what tests/nn/digits_vs_torch.py
// replays in PyTorch), --time STEPS (timing mode: STEPS steps on full
// batches after 5 warm-up steps; prints ms/step).
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace strata;
namespace F = strata::nn::functional;

namespace {

struct Config {
  std::string data, dump, optimizer = "sgd";
  int64_t epochs = 10, batch = 64, timeSteps = 0;
  double lr = -1, momentum = 0.9;
  uint64_t seed = 0;
  bool verbose = false;
};

[[noreturn]] void usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s DATA_DIR [--epochs N] [--batch B] [--lr LR] "
               "[--momentum M] [--optimizer sgd|adam] [--seed S] [--verbose] "
               "[--dump DIR] [--time STEPS]\n",
               argv0);
  std::exit(2);
}

Config parse(int argc, char **argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(argv[0]);
      return argv[++i];
    };
    if (a == "--epochs")
      c.epochs = std::stoll(value());
    else if (a == "--batch")
      c.batch = std::stoll(value());
    else if (a == "--lr")
      c.lr = std::stod(value());
    else if (a == "--momentum")
      c.momentum = std::stod(value());
    else if (a == "--optimizer")
      c.optimizer = value();
    else if (a == "--seed")
      c.seed = std::stoull(value());
    else if (a == "--dump")
      c.dump = value();
    else if (a == "--time")
      c.timeSteps = std::stoll(value());
    else if (a == "--verbose")
      c.verbose = true;
    else if (!a.empty() && a[0] != '-' && c.data.empty())
      c.data = a;
    else
      usage(argv[0]);
  }
  if (c.data.empty() || (c.optimizer != "sgd" && c.optimizer != "adam"))
    usage(argv[0]);
  if (c.lr < 0)
    c.lr = c.optimizer == "sgd" ? 0.05 : 1e-3;
  return c;
}

/// 0..n-1 shuffled by Fisher-Yates with a seeded mt19937_64 (written out,
/// not std::shuffle, so the order is the same with every standard library;
/// --dump saves it for the PyTorch replay anyway).
std::vector<int64_t> permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(n);
  for (int64_t i = 0; i < n; ++i)
    p[i] = i;
  std::mt19937_64 rng(seed);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(p[i], p[rng() % static_cast<uint64_t>(i + 1)]);
  return p;
}

/// The rows of x (n x f floats) and y in `order`, as new tensors.
std::pair<Tensor, Tensor> shuffled(const std::vector<float> &x,
                                   const std::vector<int64_t> &y, int64_t f,
                                   const std::vector<int64_t> &order) {
  std::vector<float> xs(x.size());
  std::vector<int64_t> ys(y.size());
  for (size_t r = 0; r < order.size(); ++r) {
    std::copy_n(x.begin() + order[r] * f, f, xs.begin() + r * f);
    ys[r] = y[order[r]];
  }
  int64_t n = static_cast<int64_t>(order.size());
  return {from_vector(xs, {n, f}), from_vector(ys, {n})};
}

/// Correct predictions of `model` on (x, y): the arg max of each row's
/// logits (the first one on ties, as torch.argmax) against the label.
int64_t correct(nn::Sequential &model, const Tensor &x,
                const std::vector<int64_t> &y) {
  NoGradGuard noGrad;
  model->eval();
  std::vector<float> logits = model(x).to_vector<float>();
  model->train();
  int64_t classes = static_cast<int64_t>(logits.size() / y.size()), hits = 0;
  for (size_t r = 0; r < y.size(); ++r) {
    const float *row = logits.data() + r * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (row[c] > row[best])
        best = c;
    hits += best == y[r];
  }
  return hits;
}

} // namespace

int main(int argc, char **argv) {
  Config cfg = parse(argc, argv);
  try {
    Tensor xTrain = load(cfg.data + "/X_train.npy");
    Tensor yTrain = load(cfg.data + "/y_train.npy");
    Tensor xTest = load(cfg.data + "/X_test.npy");
    std::vector<int64_t> yTest =
        load(cfg.data + "/y_test.npy").to_vector<int64_t>();
    int64_t n = xTrain.size(0), features = xTrain.size(1);
    std::vector<float> xv = xTrain.to_vector<float>();
    std::vector<int64_t> yv = yTrain.to_vector<int64_t>();

    manual_seed(cfg.seed);
    nn::Sequential model(nn::Linear(features, 128), nn::ReLU(),
                         nn::Linear(128, 10));
    if (!cfg.dump.empty())
      nn::save(model, cfg.dump + "/init");

    std::unique_ptr<optim::Optimizer> optimizer;
    if (cfg.optimizer == "sgd")
      optimizer = std::make_unique<optim::SGD>(
          model->parameters(),
          optim::SGDOptions(cfg.lr).momentum(cfg.momentum));
    else
      optimizer = std::make_unique<optim::Adam>(model->parameters(),
                                                optim::AdamOptions(cfg.lr));

    // One step. set_to_none: backward() then writes each gradient instead
    // of adding it to zeros (two kernels per parameter fewer). The loss is
    // read and let go before step(): a live loss keeps the forward's
    // pending intermediates, which read the parameters and would be
    // evaluated before step() writes them (docs/nn.md).
    auto trainStep = [&](const Tensor &x, const Tensor &y) {
      float value;
      {
        Tensor loss = F::cross_entropy(model(x), y);
        optimizer->zero_grad(/*set_to_none=*/true);
        loss.backward();
        value = loss.item<float>(); // computed by backward()
      }
      optimizer->step();
      return value;
    };

    if (cfg.timeSteps > 0) {
      // Full batches only: one program structure, compiled in the warm-up.
      auto [x, y] = shuffled(xv, yv, features, permutation(n, cfg.seed));
      int64_t batches = n / cfg.batch, warmup = 5;
      auto batchAt = [&](int64_t s) {
        int64_t k = (s % batches) * cfg.batch;
        return std::pair{x.narrow(0, k, cfg.batch), y.narrow(0, k, cfg.batch)};
      };
      for (int64_t s = 0; s < warmup; ++s) {
        auto [xb, yb] = batchAt(s);
        trainStep(xb, yb);
      }
      reset_eval_stats();
      std::clock_t cpuStart = std::clock(); // all threads of the process
      auto start = std::chrono::steady_clock::now();
      float last = 0;
      for (int64_t s = 0; s < cfg.timeSteps; ++s) {
        auto [xb, yb] = batchAt(s);
        last = trainStep(xb, yb);
      }
      double ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count() /
                  static_cast<double>(cfg.timeSteps);
      double cpuMs = 1e3 * static_cast<double>(std::clock() - cpuStart) /
                     CLOCKS_PER_SEC / static_cast<double>(cfg.timeSteps);
      EvalStats st = eval_stats();
      std::printf("strata: %.3f ms/step wall, %.3f ms/step CPU (batch %lld, "
                  "%lld steps, %s), "
                  "%.1f programs and %.1f kernels per step, %lld compiles "
                  "after warm-up, last loss %.4f\n",
                  ms, cpuMs, static_cast<long long>(cfg.batch),
                  static_cast<long long>(cfg.timeSteps), cfg.optimizer.c_str(),
                  static_cast<double>(st.programs) / cfg.timeSteps,
                  static_cast<double>(st.kernels) / cfg.timeSteps,
                  static_cast<long long>(st.compiles), last);
      return 0;
    }

    std::vector<int64_t> orders;
    std::vector<float> losses;
    for (int64_t epoch = 0; epoch < cfg.epochs; ++epoch) {
      std::vector<int64_t> order = permutation(n, cfg.seed * 1000 + epoch);
      orders.insert(orders.end(), order.begin(), order.end());
      auto [x, y] = shuffled(xv, yv, features, order);
      double sum = 0;
      int64_t steps = 0;
      for (int64_t k = 0; k < n; k += cfg.batch) {
        int64_t b = std::min(cfg.batch, n - k);
        float loss = trainStep(x.narrow(0, k, b), y.narrow(0, k, b));
        losses.push_back(loss);
        sum += loss;
        ++steps;
        if (cfg.verbose)
          std::printf("epoch %lld step %lld loss %.6f\n",
                      static_cast<long long>(epoch),
                      static_cast<long long>(losses.size() - 1), loss);
      }
      int64_t hits = correct(model, xTest, yTest);
      std::printf(
          "epoch %lld: mean loss %.4f, test accuracy %.2f%% (%lld/%zu)\n",
          static_cast<long long>(epoch), sum / steps,
          100.0 * hits / yTest.size(), static_cast<long long>(hits),
          yTest.size());
    }
    if (!cfg.dump.empty()) {
      int64_t epochs = cfg.epochs, steps = static_cast<int64_t>(losses.size());
      save(from_vector(orders, {epochs, n}), cfg.dump + "/order.npy");
      save(from_vector(losses, {steps}), cfg.dump + "/losses.npy");
      std::ofstream(cfg.dump + "/accuracy.txt")
          << correct(model, xTest, yTest) << " " << yTest.size() << "\n";
    }
  } catch (const Error &e) {
    std::fprintf(stderr, "strata-train-digits: %s\n", e.what());
    return 1;
  }
  return 0;
}
