//===- train_digits_ddp.cpp - the digits MLP trained data-parallel --------===//
//
// train_digits.cpp's model and optimizer on N processes: each rank trains
// on its 1/N of every global batch, DistributedDataParallel averages the
// gradients, and every rank keeps the same parameters. Rank 0 prints the
// mean loss per epoch (averaged over the ranks) and the test accuracy.
//
//   /usr/bin/python3 scripts/make_digits.py build/digits
//   ddp=build/bin/strata-train-digits-ddp
//   build/bin/strata-launch --nproc-per-node 2 $ddp build/digits [--epochs N]
//
//===----------------------------------------------------------------------===//
#include <strata/distributed.h>
#include <strata/strata.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace strata;
namespace dist = strata::distributed;
namespace F = strata::nn::functional;

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR [--epochs N]\n", argv[0]);
    return 2;
  }
  std::string data = argv[1];
  int64_t epochs = argc >= 4 && std::string(argv[2]) == "--epochs"
                       ? std::atoll(argv[3])
                       : 10;
  try {
    dist::init_process_group("gloo", "env://");
    int64_t rank = dist::get_rank(), world = dist::get_world_size();

    Tensor x = load(data + "/X_train.npy"), y = load(data + "/y_train.npy");
    Tensor xTest = load(data + "/X_test.npy");
    Tensor yTest = load(data + "/y_test.npy");

    manual_seed(0); // rank 0's values are broadcast anyway
    nn::Sequential model(nn::Linear(64, 128), nn::ReLU(), nn::Linear(128, 10));
    dist::DistributedDataParallel ddp(model);
    optim::SGD optimizer(model->parameters(),
                         optim::SGDOptions(0.05).momentum(0.9));

    int64_t n = x.size(0), batch = 64, shard = batch / world;
    for (int64_t epoch = 0; epoch < epochs; ++epoch) {
      double sum = 0;
      int64_t steps = 0;
      for (int64_t k = 0; k + batch <= n; k += batch) {
        float local;
        {
          Tensor xb = x.narrow(0, k + rank * shard, shard);
          Tensor yb = y.narrow(0, k + rank * shard, shard);
          Tensor loss = F::cross_entropy(model(xb), yb);
          optimizer.zero_grad(/*set_to_none=*/true);
          loss.backward();
          local = loss.item<float>();
        }
        ddp.sync_gradients(); // the gradients, averaged over the ranks
        optimizer.step();
        sum += local;
        ++steps;
      }
      Tensor mean = from_vector(std::vector<double>{sum / steps}, {1});
      dist::all_reduce(mean, dist::ReduceOp::AVG);
      if (rank == 0) {
        NoGradGuard noGrad;
        Tensor hits = (model(xTest).argmax(1) == yTest).to(kFloat64).mean();
        std::printf("epoch %lld: mean loss %.4f, test accuracy %.2f%%\n",
                    static_cast<long long>(epoch), mean.item<double>(),
                    100.0 * hits.item<double>());
      }
    }
    dist::destroy_process_group();
  } catch (const Error &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
