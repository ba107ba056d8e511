//===- DistributedDataParallel.cpp - gradients averaged across ranks ------===//
//
// torch.nn.parallel.DistributedDataParallel's reducer: parameters are
// grouped into buckets of one dtype, one device and about
// bucket_cap_bytes, in reverse order (the order backward produces their
// gradients, as PyTorch's). Each parameter has a post-accumulate-grad hook
// (AutogradHooks.cpp) that marks it ready; when every gradient of the next
// bucket to start is ready, the bucket's gradients are flattened into one
// buffer (cat, a recorded copy) and all-reduced with ReduceOp::AVG
// asynchronously (gloo's worker thread), while backward runs on.
// Buckets start in order, so every rank issues the same collectives in the
// same order even where a parameter gets no gradient on some rank (its
// bucket, and those after it, then start in sync_gradients()). A
// parameter ready a second time before sync_gradients() is a second
// backward (gradient accumulation): the buckets started hold the first's
// gradients, so they are started again. sync_gradients() starts the
// buckets still waiting, waits for each and copies the averages back into
// the .grads. After the first sync_gradients(), the buckets are regrouped
// in the order rank 0's gradients became ready in that iteration
// (broadcast, so every rank regroups alike: PyTorch's rebuild_buckets), so
// that a bucket no longer waits for a gradient the program computes late
// while later ones are ready.
//
//===----------------------------------------------------------------------===//
#include "Unchecked.h"

#include "strata/distributed.h"

#include "strata/strata.h"

#include <algorithm>

namespace strata {
namespace distributed {

struct DistributedDataParallel::Reducer {
  std::vector<Tensor> params;
  std::vector<std::vector<size_t>> buckets;
  SourceLoc loc; // (of the constructor: the collectives started by hooks)
  std::vector<size_t> bucketOf;
  /// (parameter index, hook handle) of each hooked parameter.
  std::vector<std::pair<size_t, unsigned>> handles;
  /// This round (since the last sync_gradients()): the parameters ready,
  /// each bucket's parameters not ready, the buckets started (in order).
  std::vector<bool> ready;
  std::vector<size_t> waiting;
  /// The first iteration's ready order (until the buckets are rebuilt).
  std::vector<size_t> firstOrder;
  std::vector<bool> seen;
  bool rebuilt = false;
  struct Started {
    Tensor flat;
    Work work;
  };
  std::vector<Started> started;
  /// Started by an earlier backward of the round (waited for, unused; the
  /// buffer kept until then: gloo writes it through a raw pointer).
  std::vector<Started> stale;

  ~Reducer() {
    for (auto [k, handle] : handles)
      params[k].remove_post_accumulate_grad_hook(handle);
    // (Their buffers must outlive the collectives still writing them.)
    for (auto *list : {&stale, &started})
      for (Started &s : *list)
        try {
          s.work.wait(loc);
        } catch (const std::exception &) {
          // (The group's error; a destructor has no one to tell.)
        }
  }
  void reset() {
    ready.assign(params.size(), false);
    waiting.clear();
    for (const auto &b : buckets)
      waiting.push_back(b.size());
    started.clear();
  }
  /// The hook of parameter `k`.
  void markReady(size_t k) {
    if (!rebuilt && !seen[k]) {
      seen[k] = true;
      firstOrder.push_back(k);
    }
    if (ready[k]) {
      for (Started &s : started)
        stale.push_back(std::move(s));
      reset();
    }
    ready[k] = true;
    --waiting[bucketOf[k]];
    while (started.size() < buckets.size() && waiting[started.size()] == 0)
      start(loc);
  }
  /// Packs the next bucket and starts its all_reduce.
  void start(const SourceLoc &at) {
    NoGradGuard noGrad;
    std::vector<Tensor> grads, used;
    for (size_t k : buckets[started.size()]) {
      Tensor g = params[k].grad(at);
      grads.push_back(g.defined() ? g.reshape({-1}, at)
                                  : zeros({params[k].numel(at)},
                                          params[k].options(at), at));
      // Whether this rank has a gradient for it (PyTorch's local_used_map):
      // averaged with the gradients, 0 means no rank used the parameter.
      used.push_back(
          full({1}, g.defined() ? 1.0 : 0.0, params[k].options(at), at));
    }
    grads.insert(grads.end(), used.begin(), used.end());
    Tensor flat = cat(grads, 0, at);
    // The buckets' shapes were checked across ranks at construction.
    detail::UncheckedGuard unchecked;
    Work work = all_reduce(flat, ReduceOp::AVG, /*async_op=*/true, at);
    started.push_back({flat, work});
  }
};

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
  options_ = options;
  reducer_ = std::make_shared<Reducer>();
  Reducer &r = *reducer_;
  r.params = params_;
  r.loc = loc;
  r.seen.assign(params_.size(), false);
  std::vector<size_t> reverse;
  for (size_t k = params_.size(); k-- > 0;)
    reverse.push_back(k);
  makeBuckets(reverse);
  std::weak_ptr<Reducer> weak = reducer_;
  for (size_t k = 0; k < params_.size() && options.start_buckets_in_backward;
       ++k)
    if (params_[k].requires_grad(loc))
      r.handles.push_back({k, params_[k].register_post_accumulate_grad_hook(
                                  [weak, k](const Tensor &) {
                                    if (auto reducer = weak.lock())
                                      reducer->markReady(k);
                                  },
                                  loc)});
}

void DistributedDataParallel::makeBuckets(const std::vector<size_t> &order) {
  buckets_.clear();
  std::vector<size_t> current;
  int64_t bytes = 0;
  for (size_t k : order) {
    const Tensor &p = params_[k];
    if (!p.requires_grad()) // frozen: PyTorch's DDP leaves it alone
      continue;
    int64_t b = p.numel() * p.element_size();
    if (!current.empty() &&
        (bytes + b > options_.bucket_cap_bytes ||
         p.dtype() != params_[current.front()].dtype() ||
         !(p.device() == params_[current.front()].device()))) {
      buckets_.push_back(std::move(current));
      current.clear();
      bytes = 0;
    }
    current.push_back(k);
    bytes += b;
  }
  if (!current.empty())
    buckets_.push_back(std::move(current));
  Reducer &r = *reducer_;
  r.buckets = buckets_;
  r.bucketOf.assign(params_.size(), 0);
  for (size_t b = 0; b < buckets_.size(); ++b)
    for (size_t k : buckets_[b])
      r.bucketOf[k] = b;
  r.reset();
}

void DistributedDataParallel::rebuildBuckets(const SourceLoc &loc) {
  Reducer &r = *reducer_;
  r.rebuilt = true;
  // Rank 0's order, then the parameters it saw no gradient for (in the
  // buckets' order so far); every rank holds the same parameters, so the
  // lists have one length, and the broadcast makes them one list.
  std::vector<int64_t> order(r.firstOrder.begin(), r.firstOrder.end());
  for (const auto &bucket : buckets_)
    for (size_t k : bucket)
      if (!r.seen[k])
        order.push_back(static_cast<int64_t>(k));
  Tensor t = from_vector(order, {static_cast<int64_t>(order.size())});
  broadcast(t, 0, /*async_op=*/false, loc);
  std::vector<int64_t> agreed = t.to_vector<int64_t>();
  makeBuckets(std::vector<size_t>(agreed.begin(), agreed.end()));
  r.firstOrder.clear();
  r.firstOrder.shrink_to_fit();
}

int64_t DistributedDataParallel::buckets_started() const {
  return static_cast<int64_t>(reducer_->started.size());
}

namespace {

/// The first parameter where two ranks' lists (count, then dtype, rank and
/// sizes of each) differ, in words.
std::string firstDifference(const int64_t *a, const int64_t *b, int64_t r) {
  auto describe = [](const int64_t *p) {
    std::string t = toString(static_cast<DType>(p[0])) + " [";
    for (int64_t d = 0; d < p[1]; ++d)
      t += (d ? ", " : "") + std::to_string(p[2 + d]);
    return t + "]";
  };
  int64_t n = std::min(a[0], b[0]);
  const int64_t *pa = a + 1, *pb = b + 1;
  for (int64_t k = 0; k < n; ++k) {
    if (!std::equal(pa, pa + 2 + pa[1], pb) || pa[1] != pb[1])
      return "parameter " + std::to_string(k) + " is " + describe(pa) +
             " on rank 0 and " + describe(pb) + " on rank " + std::to_string(r);
    pa += 2 + pa[1];
    pb += 2 + pb[1];
  }
  return "the first " + std::to_string(n) + " agree";
}

} // namespace

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
                      std::to_string(av[0]) + " parameters; " +
                      firstDifference(&av[0], &av[r * longest], r) + ")",
                  "every rank must wrap the same model", loc);
}

void DistributedDataParallel::sync_gradients(SourceLoc loc) {
  NoGradGuard noGrad;
  Reducer &r = *reducer_;
  struct Reset {
    Reducer &r;
    ~Reset() {
      r.stale.clear();
      r.reset();
    }
  } reset{r};
  while (r.started.size() < buckets_.size())
    r.start(loc);
  for (Reducer::Started &s : r.stale)
    s.work.wait(loc);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Reducer::Started &bucket = r.started[b];
    bucket.work.wait(loc);
    int64_t total = 0;
    for (size_t k : buckets_[b])
      total += params_[k].numel(loc);
    std::vector<double> used =
        bucket.flat
            .narrow(0, total, static_cast<int64_t>(buckets_[b].size()), loc)
            .to(Device::cpu(), loc)
            .to(kFloat64, loc)
            .to_vector<double>();
    int64_t offset = 0;
    for (size_t i = 0; i < buckets_[b].size(); ++i) {
      Tensor &p = params_[buckets_[b][i]];
      int64_t n = p.numel(loc);
      Tensor avg =
          bucket.flat.narrow(0, offset, n, loc).view(p.sizes(loc), loc);
      offset += n;
      Tensor g = p.grad(loc);
      if (g.defined())
        g.copy_(avg, loc);
      else if (used[i] > 0) // used on another rank: the average of theirs
        p.mutable_grad(loc) = avg.clone(loc);
      // Used on no rank: its gradient stays undefined, as PyTorch's.
    }
  }
  // (The hooks saw the first iteration's order; without them, no order.)
  if (options_.rebuild_buckets && !r.rebuilt && !r.handles.empty())
    rebuildBuckets(loc);
}

} // namespace distributed
} // namespace strata
