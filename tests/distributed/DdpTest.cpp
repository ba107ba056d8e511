//===- DdpTest.cpp - data-parallel training equals single-process training ===//
//
// Run as every rank (strata-launch --nproc-per-node N): the digits MLP
// (Linear(64, 128), ReLU, Linear(128, 10); cross_entropy; SGD with
// momentum) on scikit-learn's digits (DATA_DIR from scripts/make_digits.py,
// the first argument; exit 77 when absent) or, without an argument, a
// deterministic synthetic data set of digits' shape, each
// rank initialized from its own seed (the broadcast from rank 0 must make
// them equal), trained on its 1/N of every global batch of 64 through
// DistributedDataParallel (buckets of 16 KB: several all_reduces a step).
// Every rank also trains the same model alone on the combined batch and
// compares each step's loss (the ranks' average) within 1e-5 relative; at
// the end every rank's parameters must equal rank 0's bit for bit. Exits 1
// and says where otherwise.
//
//===----------------------------------------------------------------------===//
#include <strata/distributed.h>
#include <strata/strata.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace strata;
namespace dist = strata::distributed;
namespace F = strata::nn::functional;

namespace {

constexpr int64_t kFeatures = 64, kClasses = 10, kBatch = 64, kSteps = 15;

/// x in [0, 1) from a seeded generator; the label is the arg max of a fixed
/// random linear map of x (a learnable task).
void dataset(std::vector<float> &x, std::vector<int64_t> &y) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> w(kFeatures * kClasses);
  for (float &v : w)
    v = u(rng) - 0.5f;
  int64_t n = kBatch * kSteps;
  x.resize(n * kFeatures);
  y.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t f = 0; f < kFeatures; ++f)
      x[i * kFeatures + f] = std::floor(u(rng) * 17.0f) / 16.0f;
    int64_t best = 0;
    float bestScore = -1e30f;
    for (int64_t c = 0; c < kClasses; ++c) {
      float s = 0;
      for (int64_t f = 0; f < kFeatures; ++f)
        s += w[f * kClasses + c] * x[i * kFeatures + f];
      if (s > bestScore) {
        bestScore = s;
        best = c;
      }
    }
    y[i] = best;
  }
}

nn::Sequential makeModel(uint64_t seed) {
  manual_seed(seed);
  return nn::Sequential(nn::Linear(kFeatures, 128), nn::ReLU(),
                        nn::Linear(128, kClasses));
}

} // namespace

/// PyTorch's DDP with a frozen parameter (requires_grad false: not
/// reduced, its grad stays None, so weight decay leaves it alone), one no
/// rank uses (grad stays None) and one only rank 0 uses (every rank gets
/// the average: rank 0's gradient / world). Returns the failures.
int frozenAndUnused(int64_t rank, int64_t world) {
  nn::Sequential m(nn::Linear(2, 2), nn::Linear(2, 2), nn::Linear(2, 1));
  std::vector<Tensor> ps = m->parameters(); // w0 b0 w1 b1 w2 b2
  ps[0].requires_grad_(false);
  ps[1].requires_grad_(false);
  dist::DistributedDataParallel ddp(m);
  Tensor x = ones({3, 2});
  // Layer 1 unused everywhere; layer 2 used on rank 0 only.
  Tensor out = (ps[2] * 0).sum(); // w1: used by every rank, gradient 0
  if (rank == 0)
    out = out + (x.matmul(ps[4].t()) + ps[5]).sum();
  out.backward();
  ddp.sync_gradients();
  int failures = 0;
  auto check = [&](bool ok, const char *what) {
    if (!ok) {
      ++failures;
      std::printf("FAIL rank %lld: %s\n", static_cast<long long>(rank), what);
    }
  };
  check(!ps[0].grad().defined() && !ps[1].grad().defined(),
        "a frozen parameter got a gradient");
  check(!ps[3].grad().defined(), "a parameter no rank used got a gradient");
  check(ps[2].grad().defined(), "a parameter every rank used has no gradient");
  check(ps[4].grad().defined() && ps[5].grad().defined(),
        "a parameter rank 0 used has no gradient on this rank");
  if (ps[5].grad().defined()) // d/db2 of sum over 3 rows on rank 0: 3 / world
    check(std::abs(ps[5].grad().item<float>() - 3.0f / world) < 1e-6,
          "the gradient of a parameter rank 0 alone used is not 3 / world");
  return failures;
}

int main(int argc, char **argv) {
  int64_t rank = -1;
  std::string dataDir = argc > 1 ? argv[1] : "";
  if (!dataDir.empty() && !std::ifstream(dataDir + "/X_train.npy")) {
    std::printf("SKIPPED: no %s/X_train.npy (scripts/make_digits.py)\n",
                dataDir.c_str());
    return 77;
  }
  try {
    dist::init_process_group("gloo", "env://", std::chrono::seconds(30));
    rank = dist::get_rank();
    int64_t world = dist::get_world_size();
    if (kBatch % world != 0) {
      std::printf("world size %lld does not divide the batch\n",
                  static_cast<long long>(world));
      return 2;
    }
    Tensor x, y;
    if (dataDir.empty()) {
      std::vector<float> xv;
      std::vector<int64_t> yv;
      dataset(xv, yv);
      x = from_vector(xv, {kBatch * kSteps, kFeatures});
      y = from_vector(yv, {kBatch * kSteps});
    } else { // scikit-learn's digits, the first 15 batches of 64
      x = load(dataDir + "/X_train.npy").narrow(0, 0, kBatch * kSteps);
      y = load(dataDir + "/y_train.npy").narrow(0, 0, kBatch * kSteps);
    }

    nn::Sequential model = makeModel(100 + static_cast<uint64_t>(rank));
    dist::DistributedDataParallelOptions options;
    options.bucket_cap_bytes = 16 * 1024;
    dist::DistributedDataParallel ddp(model, options);
    optim::SGD opt(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));

    nn::Sequential reference = makeModel(100); // rank 0's initial values
    optim::SGD refOpt(reference->parameters(),
                      optim::SGDOptions(0.05).momentum(0.9));

    int64_t shard = kBatch / world;
    double worst = 0;
    int failures = 0;
    for (int64_t s = 0; s < kSteps; ++s) {
      float local;
      {
        Tensor loss = F::cross_entropy(
            model(x.narrow(0, s * kBatch + rank * shard, shard)),
            y.narrow(0, s * kBatch + rank * shard, shard));
        opt.zero_grad(/*set_to_none=*/true);
        loss.backward();
        local = loss.item<float>();
      }
      ddp.sync_gradients();
      opt.step();
      Tensor mean = from_vector(std::vector<double>{local}, {1});
      dist::all_reduce(mean, dist::ReduceOp::AVG);
      double ddpLoss = mean.item<double>();

      float single;
      {
        Tensor loss =
            F::cross_entropy(reference(x.narrow(0, s * kBatch, kBatch)),
                             y.narrow(0, s * kBatch, kBatch));
        refOpt.zero_grad(true);
        loss.backward();
        single = loss.item<float>();
      }
      refOpt.step();
      double rel = std::abs(ddpLoss - single) / std::abs(single);
      worst = std::max(worst, rel);
      if (rel > 1e-5) {
        ++failures;
        std::printf("FAIL step %lld: data-parallel loss %.8f, single-process "
                    "%.8f (relative %.2e)\n",
                    static_cast<long long>(s), ddpLoss, single, rel);
      }
      if (rank == 0)
        std::printf("step %lld loss %.6f (single process %.6f)\n",
                    static_cast<long long>(s), ddpLoss, single);
    }

    // Every rank's parameters equal rank 0's, bit for bit.
    std::vector<Tensor> flat;
    for (const Tensor &p : model->parameters())
      flat.push_back(p.detach().reshape({-1}));
    Tensor mine = cat(flat);
    Tensor all = empty({world * mine.numel()}, dtype(kFloat32));
    dist::all_gather_into_tensor(all, mine);
    std::vector<float> av = all.to_vector<float>();
    int64_t n = mine.numel();
    for (int64_t r = 1; r < world; ++r)
      for (int64_t i = 0; i < n; ++i)
        if (av[r * n + i] != av[i]) {
          ++failures;
          std::printf("FAIL rank %lld's parameter element %lld differs from "
                      "rank 0's: %.9g vs %.9g\n",
                      static_cast<long long>(r), static_cast<long long>(i),
                      av[r * n + i], av[i]);
          break;
        }
    std::vector<Tensor> refFlat;
    for (const Tensor &p : reference->parameters())
      refFlat.push_back(p.detach().reshape({-1}));
    double paramDiff = (cat(refFlat) - mine).abs().max().item<float>();
    std::printf("rank %lld: %lld steps on %lld ranks, %zu buckets, largest "
                "relative loss difference %.2e, largest parameter difference "
                "%.2e, %d failures\n",
                static_cast<long long>(rank), static_cast<long long>(kSteps),
                static_cast<long long>(world), ddp.buckets().size(), worst,
                paramDiff, failures);
    failures += frozenAndUnused(rank, world);
    dist::destroy_process_group();
    return failures ? 1 : 0;
  } catch (const std::exception &e) {
    std::printf("FAIL exception on rank %lld: %s\n",
                static_cast<long long>(rank), e.what());
    return 1;
  }
}
