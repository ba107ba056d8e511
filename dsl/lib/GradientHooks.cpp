//===- GradientHooks.cpp - leaves' gradients accumulated as they are made -===//
//
// A backward() whose leaves have post-accumulate-grad hooks
// (AutogradHooks.cpp) asks the JIT's runner to report each returned value
// once final (RunOptions::onReturnReady: after the last kernel that makes
// it). Once every wrt gradient a hooked leaf sums is made, the leaf's
// gradient is accumulated into .grad and its hooks run, between the
// program's kernels. Assumes: the program's arguments are not written by
// anyone while it runs; a hook that writes one (an in-place op on a
// storage the backward reads, such as a parameter, or on a .grad the
// forward read) stops the run with an error before another kernel reads
// it, and a leaf whose .grad is such an argument is accumulated after the
// run instead. Guarantees: each hooked leaf is accumulated and hooked once;
// a hook that throws stops the run (the leaves done before keep their
// whole gradients, the others are untouched).
//
//===----------------------------------------------------------------------===//
#include "GradientRun.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

using namespace strata;
using namespace strata::detail;

namespace strata::detail::engine {

Tensor GradientRun::wrtGradient(size_t j, jit::JitValue v) {
  if (j < g.leafArgs.size() && leafWindow[j].second >= 0)
    widenGradient(v, leafWindow[j].first, g.leafArgs[j].node->rootNumel, loc);
  return fromJit(v, static_cast<DType>(v.dtype), loc);
}

bool GradientRun::argumentWritten() const {
  for (const auto &[weak, version] : argRoots)
    if (auto root = weak.lock(); root && root->version != version)
      return true;
  return false;
}

std::function<bool(size_t, const jit::JitValue &)>
GradientRun::earlyHooks(std::vector<Tensor> &wrtGrads) {
  if (!hooks || createGraph || onCuda || seeds)
    return {};
  std::unordered_set<const StorageRoot *> read;
  for (const auto &[weak, version] : argRoots)
    if (auto root = weak.lock())
      read.insert(root.get());
  // Per wrt gradient, the hooked targets summing it; per target, how many
  // it still waits for.
  auto needers =
      std::make_shared<std::vector<std::vector<size_t>>>(g.leafArgs.size());
  auto waiting = std::make_shared<std::vector<size_t>>(targets.size(), 0);
  for (size_t ti = 0; ti < targets.size(); ++ti) {
    const TensorImpl &t = *targets[ti].impl;
    if (targetPerturb[ti] >= 0 || !hasPostAccumulateHooks(t) ||
        !reachedLeaves.count(&t))
      continue;
    const Tensor &grad = t.autograd->grad;
    if (grad.defined() && read.count(grad.impl()->root.get()))
      continue; // (its accumulation writes what later kernels may read)
    for (size_t k = 0; k < g.leafArgs.size(); ++k)
      if (g.leafArgs[k].leaf.get() == &t) {
        (*needers)[k].push_back(ti);
        ++(*waiting)[ti];
      }
  }
  if (std::all_of(waiting->begin(), waiting->end(),
                  [](size_t n) { return n == 0; }))
    return {};
  accumulatedEarly.assign(targets.size(), false);
  // PyTorch's order: a leaf's hooks run once the backward of the first
  // op that read it has run, and its engine runs the ops created last
  // first (ties: the earlier operand first). A leaf whose gradient is made
  // waits for those before it in that order.
  std::unordered_map<const TensorImpl *, size_t> hooked;
  for (size_t ti = 0; ti < targets.size(); ++ti)
    if ((*waiting)[ti] > 0)
      hooked.emplace(targets[ti].impl.get(), ti);
  std::vector<std::pair<uint64_t, size_t>> first(targets.size(),
                                                 {UINT64_MAX, 0});
  for (const NodePtr &n : g.ops)
    for (size_t pos = 0; pos < n->gradIn().size(); ++pos)
      if (auto leaf = leafOfEdge(n->gradIn()[pos]))
        if (auto it = hooked.find(leaf.get()); it != hooked.end())
          first[it->second] = std::min(first[it->second], {n->seq, pos});
  auto order = std::make_shared<std::vector<size_t>>();
  for (const auto &[impl, ti] : hooked)
    order->push_back(ti);
  std::sort(order->begin(), order->end(), [&first](size_t a, size_t b) {
    return first[a].first != first[b].first ? first[a].first > first[b].first
                                            : first[a].second < first[b].second;
  });
  auto made = std::make_shared<std::vector<Tensor>>(targets.size());
  auto next = std::make_shared<size_t>(0);
  return [this, &wrtGrads, needers, waiting, order, made,
          next](size_t k, const jit::JitValue &v) {
    if (k < numOutputs || k - numOutputs >= needers->size() ||
        k - numOutputs >= wrtGrads.size() || (*needers)[k - numOutputs].empty())
      return true;
    size_t j = k - numOutputs;
    try {
      NoGradGuard noGrad;
      wrtGrads[j] = wrtGradient(j, v);
      for (size_t ti : (*needers)[j])
        if (--(*waiting)[ti] == 0) {
          (*made)[ti] = gradientOf(ti, wrtGrads);
          accumulatedEarly[ti] = true;
        }
      for (; *next < order->size() && accumulatedEarly[(*order)[*next]];
           ++*next) {
        size_t ti = (*order)[*next];
        Tensor grad = std::move((*made)[ti]);
        if (!grad.defined())
          continue;
        accumulateGrad(targets[ti], grad, false, loc);
        runPostAccumulateHooks(targets[ti].impl, loc);
        if (argumentWritten())
          fail("a post-accumulate-grad hook wrote in place to a tensor this "
               "backward still reads (a leaf's data, or a .grad the "
               "forward read)",
               "change such tensors after backward() returns, or on a "
               "copy: the hook runs while the gradient program still runs",
               loc);
      }
    } catch (...) {
      hookError = std::current_exception();
      return false;
    }
    return true;
  };
}

} // namespace strata::detail::engine
