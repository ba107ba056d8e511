//===- DdpOverlapTest.cpp - DDP buckets start during backward -------------===//
//
// Run as every rank (strata-launch --nproc-per-node N). The digits MLP's
// shape through DistributedDataParallel with one bucket per parameter:
// (1) a bucket's all_reduce starts while backward() still runs: a hook on
// each parameter, registered after DDP's, sees buckets started while some
// parameter has no gradient yet (set to none before backward); (2)
// gradient accumulation: two backward() calls before sync_gradients()
// average the summed gradients, equal to one process's gradients of the
// two combined batches (from rank 0's initial values, which DDP
// broadcast), within 1e-5 relative (absolute 1e-7 below 1e-2), on buckets
// rebuilt after (1) in rank 0's ready order (1b), the same on every rank;
// (4) layers registered in the reverse of their use: the buckets rebuilt
// in the ready order, the next step still one process's average; (3) every
// rank's gradients are equal bit for bit. Exits 1 and says where otherwise.
//
//===----------------------------------------------------------------------===//
#include <strata/distributed.h>
#include <strata/strata.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace strata;
namespace dist = strata::distributed;
namespace F = strata::nn::functional;

namespace {

constexpr int64_t kFeatures = 64, kClasses = 10, kBatch = 32;

nn::Sequential makeModel(uint64_t seed) {
  manual_seed(seed);
  return nn::Sequential(nn::Linear(kFeatures, 128), nn::ReLU(),
                        nn::Linear(128, kClasses));
}

/// Two layers registered in the reverse of the order they are used: the
/// gradients come ready first for the layer registered first, not in
/// reverse registration order (DDP's first buckets).
struct Swapped : nn::Module {
  std::shared_ptr<nn::LinearImpl> second, first;
  Swapped()
      : second(register_module("second", nn::Linear(128, kClasses))),
        first(register_module("first", nn::Linear(kFeatures, 128))) {}
  Tensor forward(const Tensor &x) {
    return second->forward(first->forward(x).relu());
  }
};

/// When a parameter's hook ran: buckets started, parameters with a .grad.
struct Call {
  size_t param;
  int64_t started, withGrad;
};

} // namespace

int main() {
  int64_t rank = -1;
  int failures = 0;
  try {
    dist::init_process_group("gloo", "env://", std::chrono::seconds(30));
    rank = dist::get_rank();
    int64_t world = dist::get_world_size();
    manual_seed(7); // the same data on every rank
    Tensor x = rand({2 * kBatch, kFeatures});
    Tensor y = (rand({2 * kBatch}) * kClasses).to(kInt64);
    int64_t shard = kBatch / world;
    auto mine = [&](int64_t m) {
      return std::pair{x.narrow(0, m * kBatch + rank * shard, shard),
                       y.narrow(0, m * kBatch + rank * shard, shard)};
    };

    nn::Sequential model = makeModel(100 + static_cast<uint64_t>(rank));
    dist::DistributedDataParallelOptions options;
    options.bucket_cap_bytes = 1; // one bucket per parameter
    dist::DistributedDataParallel ddp(model, options);
    std::vector<Tensor> params = model->parameters();

    // (1) Buckets start during backward.
    std::vector<Call> calls;
    std::vector<unsigned> handles;
    for (size_t k = 0; k < params.size(); ++k)
      handles.push_back(
          params[k].register_post_accumulate_grad_hook([&, k](const Tensor &) {
            int64_t withGrad = 0;
            for (const Tensor &p : params)
              withGrad += p.grad().defined();
            calls.push_back({k, ddp.buckets_started(), withGrad});
          }));
    for (Tensor &p : params)
      p.mutable_grad() = Tensor();
    {
      auto [xs, ys] = mine(0);
      F::cross_entropy(model(xs), ys).backward();
    }
    bool overlapped = false;
    std::string order;
    for (const Call &c : calls) {
      overlapped |= c.started > 0 && c.withGrad < int64_t(params.size());
      order += " p" + std::to_string(c.param) + "(" +
               std::to_string(c.started) + " started, " +
               std::to_string(c.withGrad) + " with .grad)";
    }
    if (rank == 0)
      std::printf("hooks in order:%s\n", order.c_str());
    if (calls.size() != params.size()) {
      ++failures;
      std::printf("FAIL %zu hook calls for %zu parameters\n", calls.size(),
                  params.size());
    }
    if (!overlapped) {
      ++failures;
      std::printf("FAIL no bucket started before backward finished\n");
    }
    std::vector<std::vector<size_t>> before = ddp.buckets();
    ddp.sync_gradients();
    for (size_t k = 0; k < params.size(); ++k)
      params[k].remove_post_accumulate_grad_hook(handles[k]);
    // (1b) The buckets are rebuilt in rank 0's ready order (one parameter
    // each here), the same on every rank; (2) then runs on them.
    std::vector<int64_t> rebuilt;
    for (const auto &bucket : ddp.buckets())
      for (size_t k : bucket)
        rebuilt.push_back(static_cast<int64_t>(k));
    std::vector<int64_t> readyOrder;
    for (const Call &c : calls)
      readyOrder.push_back(static_cast<int64_t>(c.param));
    if (rank == 0 && rebuilt != readyOrder) {
      ++failures;
      std::printf("FAIL the buckets were not rebuilt in the ready order\n");
    }
    Tensor mineOrder =
        from_vector(rebuilt, {static_cast<int64_t>(rebuilt.size())});
    Tensor orders = empty({world * mineOrder.numel()}, dtype(kInt64));
    dist::all_gather_into_tensor(orders, mineOrder);
    std::vector<int64_t> ov = orders.to_vector<int64_t>();
    for (int64_t r = 1; r < world; ++r)
      if (!std::equal(ov.begin(), ov.begin() + mineOrder.numel(),
                      ov.begin() + r * mineOrder.numel())) {
        ++failures;
        std::printf("FAIL rank %lld's buckets differ from rank 0's\n",
                    static_cast<long long>(r));
      }
    if (rank == 0) {
      std::string was, now;
      for (const auto &bucket : before)
        was += " p" + std::to_string(bucket.front());
      for (int64_t k : rebuilt)
        now += " p" + std::to_string(k);
      std::printf("buckets before:%s; rebuilt:%s\n", was.c_str(), now.c_str());
    }

    // (2) Two backwards, then one sync, against one process on both batches.
    nn::Sequential reference = makeModel(100);
    std::vector<Tensor> refParams = reference->parameters();
    for (Tensor &p : params)
      p.mutable_grad() = Tensor();
    for (int64_t m = 0; m < 2; ++m) {
      auto [xs, ys] = mine(m);
      F::cross_entropy(model(xs), ys).backward();
      F::cross_entropy(reference(x.narrow(0, m * kBatch, kBatch)),
                       y.narrow(0, m * kBatch, kBatch))
          .backward();
    }
    ddp.sync_gradients();
    double worst = 0;
    std::vector<Tensor> flat;
    for (size_t k = 0; k < params.size(); ++k) {
      std::vector<float> got = params[k].grad().to_vector<float>();
      std::vector<float> want = refParams[k].grad().to_vector<float>();
      for (size_t i = 0; i < got.size(); ++i) {
        double err = std::abs(double(got[i]) - want[i]) /
                     (1e-2 + std::abs(double(want[i])));
        worst = std::max(worst, err);
      }
      flat.push_back(params[k].grad().reshape({-1}));
    }
    if (worst > 1e-5) {
      ++failures;
      std::printf("FAIL rank %lld: accumulated gradients differ from one "
                  "process's by %.2e (relative)\n",
                  static_cast<long long>(rank), worst);
    }
    // (3) Every rank's gradients equal rank 0's.
    Tensor g = cat(flat);
    Tensor all = empty({world * g.numel()}, dtype(kFloat32));
    dist::all_gather_into_tensor(all, g);
    std::vector<float> av = all.to_vector<float>();
    int64_t n = g.numel();
    for (int64_t r = 1; r < world; ++r)
      for (int64_t i = 0; i < n; ++i)
        if (av[r * n + i] != av[i]) {
          ++failures;
          std::printf("FAIL rank %lld's gradient element %lld differs from "
                      "rank 0's\n",
                      static_cast<long long>(r), static_cast<long long>(i));
          break;
        }
    // (4) Layers registered in the reverse of their use: the rebuilt
    // buckets follow the ready order, not the initial reverse one, and the
    // next step's average is still one process's on both shards.
    manual_seed(5);
    auto swapped = std::make_shared<Swapped>();
    dist::DistributedDataParallel ddp2(swapped, options);
    std::vector<Tensor> sp = swapped->parameters();
    std::vector<std::vector<size_t>> initial = ddp2.buckets();
    std::vector<size_t> ready;
    std::vector<unsigned> hooks2;
    for (size_t k = 0; k < sp.size(); ++k)
      hooks2.push_back(sp[k].register_post_accumulate_grad_hook(
          [&, k](const Tensor &) { ready.push_back(k); }));
    {
      auto [xs, ys] = mine(0);
      F::cross_entropy(swapped->forward(xs), ys).backward();
    }
    ddp2.sync_gradients();
    for (size_t k = 0; k < sp.size(); ++k)
      sp[k].remove_post_accumulate_grad_hook(hooks2[k]);
    std::vector<size_t> order2;
    for (const auto &bucket : ddp2.buckets())
      order2.insert(order2.end(), bucket.begin(), bucket.end());
    std::vector<size_t> initialOrder;
    for (const auto &bucket : initial)
      initialOrder.insert(initialOrder.end(), bucket.begin(), bucket.end());
    if (rank == 0 && (order2 != ready || order2 == initialOrder)) {
      ++failures;
      std::printf("FAIL swapped layers: buckets not rebuilt in the ready "
                  "order\n");
    }
    manual_seed(5);
    auto swappedRef = std::make_shared<Swapped>();
    for (Tensor &p : sp)
      p.mutable_grad() = Tensor();
    {
      auto [xs, ys] = mine(1);
      F::cross_entropy(swapped->forward(xs), ys).backward();
    }
    ddp2.sync_gradients();
    F::cross_entropy(swappedRef->forward(x.narrow(0, kBatch, kBatch)),
                     y.narrow(0, kBatch, kBatch))
        .backward();
    std::vector<Tensor> rp = swappedRef->parameters();
    for (size_t k = 0; k < sp.size(); ++k) {
      std::vector<float> got = sp[k].grad().to_vector<float>();
      std::vector<float> want = rp[k].grad().to_vector<float>();
      for (size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, std::abs(double(got[i]) - want[i]) /
                                    (1e-2 + std::abs(double(want[i]))));
    }
    if (worst > 1e-5) {
      ++failures;
      std::printf("FAIL rank %lld: rebuilt buckets' average differs from one "
                  "process's by %.2e (relative)\n",
                  static_cast<long long>(rank), worst);
    }
    std::printf("rank %lld: %zu buckets, accumulated gradients within %.2e "
                "of one process's, %d failures\n",
                static_cast<long long>(rank), ddp.buckets().size(), worst,
                failures);
    dist::destroy_process_group();
    return failures ? 1 : 0;
  } catch (const std::exception &e) {
    std::printf("FAIL exception on rank %lld: %s\n",
                static_cast<long long>(rank), e.what());
    return 1;
  }
}
