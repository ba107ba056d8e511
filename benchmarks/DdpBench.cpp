//===- DdpBench.cpp - the data-parallel step time on N ranks --------------===//
//
//   strata-launch --nproc-per-node N strata-bench-ddp [--steps S]
//       [--batch B] [--bucket-kb K] [--hidden H] [--no-overlap]
//
// The digits MLP (Linear(64, 128), ReLU, Linear(128, 10), SGD with
// momentum) through DistributedDataParallel, B samples per rank per step
// (weak scaling: N ranks train on N x B samples a step); after 10 warm-up
// steps, rank 0 prints the median step time over S steps (and the fastest:
// the cost without the other programs' interference) and the samples
// per second of the whole group. Scaling efficiency on N ranks =
// t(1) / t(N). --bucket-kb sets bucket_cap_bytes (default PyTorch's 25 MB:
// one bucket for this model; small buckets start during backward, as each
// fills) and --hidden the hidden layer's width (128); --no-overlap starts
// every bucket in sync_gradients(), after backward (the comparison).
//
//===----------------------------------------------------------------------===//
#include <strata/distributed.h>
#include <strata/strata.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace strata;
namespace dist = strata::distributed;
namespace F = strata::nn::functional;

int main(int argc, char **argv) {
  int64_t steps = 100, batch = 64, hidden = 128;
  dist::DistributedDataParallelOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--no-overlap")
      options.start_buckets_in_backward = false;
    else if (i + 1 == argc)
      break;
    else if (a == "--steps")
      steps = std::atoll(argv[++i]);
    else if (a == "--batch")
      batch = std::atoll(argv[++i]);
    else if (a == "--bucket-kb")
      options.bucket_cap_bytes = 1024 * std::atoll(argv[++i]);
    else if (a == "--hidden")
      hidden = std::atoll(argv[++i]);
  }
  dist::init_process_group("gloo", "env://", std::chrono::seconds(120));
  int64_t rank = dist::get_rank(), world = dist::get_world_size();
  manual_seed(0);
  nn::Sequential model(nn::Linear(64, hidden), nn::ReLU(),
                       nn::Linear(hidden, 10));
  dist::DistributedDataParallel ddp(model, options);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  manual_seed(1 + static_cast<uint64_t>(rank));
  Tensor x = rand({batch, 64});
  Tensor y = (rand({batch}) * 10).to(kInt64);
  std::vector<double> times;
  for (int64_t s = 0; s < steps + 10; ++s) {
    auto start = std::chrono::steady_clock::now();
    {
      Tensor loss = F::cross_entropy(model(x), y);
      opt.zero_grad(true);
      loss.backward();
      (void)loss.item<float>();
    }
    ddp.sync_gradients();
    opt.step();
    model->parameters()[0].data_ptr(); // the step's writes, evaluated
    if (s >= 10)
      times.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  std::sort(times.begin(), times.end());
  double ms = times[times.size() / 2];
  if (rank == 0)
    std::printf("data-parallel step: %lld ranks, batch %lld per rank, %zu "
                "buckets started %s: %.3f ms/step (median of %lld; fastest "
                "%.3f), %.0f samples/s\n",
                static_cast<long long>(world), static_cast<long long>(batch),
                ddp.buckets().size(),
                options.start_buckets_in_backward ? "during backward"
                                                  : "after it",
                ms, static_cast<long long>(steps), times.front(),
                1e3 * static_cast<double>(world * batch) / ms);
  dist::destroy_process_group();
  return 0;
}
