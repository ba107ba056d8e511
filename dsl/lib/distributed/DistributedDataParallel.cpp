//===- DistributedDataParallel.cpp - gradients averaged across ranks ------===//
//
// torch.nn.parallel.DistributedDataParallel's reducer, after backward():
// parameters are grouped into buckets of one dtype, one device and about
// bucket_cap_bytes, in reverse order (the order backward produces their
// gradients, as PyTorch's); each bucket's gradients are flattened into one
// buffer (cat, a recorded copy), all-reduced with ReduceOp::AVG
// asynchronously, so packing the next bucket overlaps the previous one's
// communication, then copied back into each .grad. strata's backward() is
// one program without per-gradient hooks, so no bucket starts before it
// returns (docs/distributed.md).
//
//===----------------------------------------------------------------------===//
#include "Unchecked.h"

#include "strata/distributed.h"

#include "strata/strata.h"

#include <algorithm>

namespace strata {
namespace distributed {

DistributedDataParallel::DistributedDataParallel(
    std::shared_ptr<nn::Module> module, DistributedDataParallelOptions options,
    SourceLoc loc)
    : module_(std::move(module)) {
  if (!module_)
    throw Error("DistributedDataParallel: expected a module, but got a null "
                "pointer",
                "pass a module made with its holder (nn::Linear(...))", loc);
  if (!is_initialized())
    throw Error("DistributedDataParallel: Default process group has not been "
                "initialized, please make sure to call init_process_group.",
                "call strata::distributed::init_process_group() first", loc);
  if (options.bucket_cap_bytes <= 0)
    throw Error("DistributedDataParallel: bucket_cap_bytes must be positive, "
                "but got " +
                    std::to_string(options.bucket_cap_bytes),
                "the default is 25 MB, as PyTorch's bucket_cap_mb", loc);
  params_ = module_->parameters();
  verifyShapes(loc);
  if (options.broadcast_parameters) {
    std::vector<Work> works;
    for (const Tensor &p : params_)
      works.push_back(broadcast(p.detach(loc), 0, /*async_op=*/true, loc));
    for (Work &w : works)
      w.wait(loc);
  }
  std::vector<size_t> current;
  int64_t bytes = 0;
  for (size_t k = params_.size(); k-- > 0;) {
    const Tensor &p = params_[k];
    int64_t b = p.numel(loc) * p.element_size(loc);
    if (!current.empty() &&
        (bytes + b > options.bucket_cap_bytes ||
         p.dtype(loc) != params_[current.front()].dtype(loc) ||
         !(p.device(loc) == params_[current.front()].device(loc)))) {
      buckets_.push_back(std::move(current));
      current.clear();
      bytes = 0;
    }
    current.push_back(k);
    bytes += b;
  }
  if (!current.empty())
    buckets_.push_back(std::move(current));
}

void DistributedDataParallel::verifyShapes(const SourceLoc &loc) const {
  // Each rank's parameter list as (count, then dtype, rank and sizes of
  // each), all-gathered in two steps: the lengths, then the lists padded to
  // the longest.
  std::vector<int64_t> mine = {static_cast<int64_t>(params_.size())};
  for (const Tensor &p : params_) {
    mine.push_back(static_cast<int64_t>(p.dtype(loc)));
    mine.push_back(p.dim(loc));
    for (int64_t s : p.sizes(loc))
      mine.push_back(s);
  }
  int64_t world = get_world_size(loc);
  Tensor length =
      from_vector(std::vector<int64_t>{static_cast<int64_t>(mine.size())}, {1});
  Tensor lengths = empty({world}, dtype(kInt64));
  all_gather_into_tensor(lengths, length, false, loc);
  std::vector<int64_t> ls = lengths.to_vector<int64_t>();
  int64_t longest = *std::max_element(ls.begin(), ls.end());
  mine.resize(static_cast<size_t>(longest), -1);
  Tensor all = empty({world * longest}, dtype(kInt64));
  all_gather_into_tensor(all, from_vector(mine, {longest}), false, loc);
  std::vector<int64_t> av = all.to_vector<int64_t>();
  for (int64_t r = 1; r < world; ++r)
    if (!std::equal(av.begin(), av.begin() + longest, av.begin() + r * longest))
      throw Error("DistributedDataParallel: rank " + std::to_string(r) +
                      "'s module has parameters of other number, shapes or "
                      "dtypes than rank 0's (" +
                      std::to_string(av[r * longest]) + " and " +
                      std::to_string(av[0]) + " parameters)",
                  "every rank must wrap the same model", loc);
}

void DistributedDataParallel::sync_gradients(SourceLoc loc) {
  NoGradGuard noGrad;
  struct Pending {
    Tensor flat;
    Work work;
  };
  std::vector<Pending> pending;
  for (const std::vector<size_t> &bucket : buckets_) {
    std::vector<Tensor> grads;
    for (size_t k : bucket) {
      Tensor g = params_[k].grad(loc);
      grads.push_back(g.defined() ? g.reshape({-1}, loc)
                                  : zeros({params_[k].numel(loc)},
                                          params_[k].options(loc), loc));
    }
    Tensor flat = grads.size() == 1 ? grads[0].contiguous(loc).clone(loc)
                                    : cat(grads, 0, loc);
    // The buckets' shapes were checked across ranks at construction.
    detail::UncheckedGuard unchecked;
    Work work = all_reduce(flat, ReduceOp::AVG, /*async_op=*/true, loc);
    pending.push_back({flat, work});
  }
  for (size_t b = 0; b < buckets_.size(); ++b) {
    pending[b].work.wait(loc);
    int64_t offset = 0;
    for (size_t k : buckets_[b]) {
      Tensor &p = params_[k];
      int64_t n = p.numel(loc);
      Tensor avg =
          pending[b].flat.narrow(0, offset, n, loc).view(p.sizes(loc), loc);
      offset += n;
      Tensor g = p.grad(loc);
      if (g.defined())
        g.copy_(avg, loc);
      else
        p.mutable_grad(loc) = avg.clone(loc);
    }
  }
}

} // namespace distributed
} // namespace strata
