//===- GradientTargets.cpp - what a backward differentiates, and checks ---===//
//
// The targets of a backward or grad() (leaves reached, retained tensors,
// the inputs asked for), each perturbed by a zero argument where it is no
// leaf; PyTorch's checks on the ops its engine would run; the targets whose
// elements overlap (made dense) and the reads an as_strided masks.
// GradientRun.h.
//
//===----------------------------------------------------------------------===//
#include "GradientRun.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <numeric>

using namespace strata;
using namespace strata::detail;

namespace strata::detail::engine {

[[noreturn]] void GradientRun::overlapError(const TensorImpl &t,
                                            const std::string &why) {
  fail("strata cannot differentiate with respect to a tensor whose "
       "elements overlap in memory (sizes " +
           layout::formatList(t.layout.sizes) + ", strides " +
           layout::formatList(t.layout.strides) + ") when " + why,
       "differentiate with respect to a clone() of it (the clone is "
       "dense), or to the tensor it was expanded from",
       loc);
}

void GradientRun::checkOverlap(const TensorImpl &t) {
  if (!layout::mayOverlap(t.layout))
    return;
  if (isLeafOf(t)) {
    denseLeaves.insert(&t);
    denseTargets.push_back({&t, nullptr});
    return;
  }
  Operand e = targetEdge(t);
  if (!e.view)
    overlapError(t, "it is no view of a tensor requiring grad");
  denseChains.insert(e.view.get());
  denseTargets.push_back({&t, e.view.get()});
}

void GradientRun::perturbTarget(size_t ti) {
  Target &t = targets[ti];
  if (isLeafOf(*t.impl))
    return;
  Operand e = targetEdge(*t.impl);
  const Node *n = t.node ? t.node.get() : historyOf(e).get();
  // An untracked write (no-grad mode) keeps the old grad_fn: the reads
  // before it and after it (through its strata.recorded) reach the old
  // version, which is perturbed.
  while (!t.node && n->passHistory && n->gradIn().size() == 2 &&
         g.isOp.count(n->gradIn()[1].node.get()))
    n = n->gradIn()[1].node.get();
  bool whole = !n->isStorageValue() && e.layout == n->resultLayout();
  size_t p = perturbs.size();
  if (e.view) {
    if (!reachedChains.count(e.view.get()))
      fail("One of the differentiated Tensors appears to not have been used "
           "in the graph. Set allow_unused=True if this is the desired "
           "behavior.",
           "the outputs do not read this view", loc);
    perturbChain[e.view.get()].push_back(p);
    whole = false;
  } else if (auto leaf = leafOfEdge(e)) {
    auto it = g.leafIndex.find({n, leaf.get()});
    if (it == g.leafIndex.end())
      fail("One of the differentiated Tensors appears to not have been used "
           "in the graph. Set allow_unused=True if this is the desired "
           "behavior.",
           "the outputs do not depend on this view", loc);
    perturbLeaf[it->second].push_back(p);
    whole = false;
  } else if (g.isOp.count(n) && reached.count(n)) {
    perturbOp[n].push_back(p);
  } else {
    fail("One of the differentiated Tensors appears to not have been used "
         "in the graph. Set allow_unused=True if this is the desired "
         "behavior.",
         "the outputs do not depend on this tensor", loc);
  }
  perturbs.push_back({e.layout, t.impl->dtype, whole});
  targetPerturb[ti] = static_cast<int64_t>(p);
}

void GradientRun::findTargets() {
  if (all) {
    std::set<const TensorImpl *> have;
    for (const Graph::LeafArg &a : g.leafArgs)
      if (reachedLeaves.count(a.leaf.get()) &&
          have.insert(a.leaf.get()).second) {
        // A leaf when read that got a grad_fn since (written in place with
        // history after requires_grad_(false), or a view whose base was):
        // PyTorch's AccumulateGrad refuses it (after the ops' checks).
        if (!isLeafOf(*a.leaf)) {
          movedLeaf = a.leaf.get();
          continue;
        }
        targets.push_back({a.leaf, nullptr});
      }
    std::vector<std::shared_ptr<TensorImpl>> retained;
    {
      std::lock_guard<std::mutex> lock(gRetainedMutex);
      std::erase_if(gRetained, [](const std::weak_ptr<TensorImpl> &w) {
        return w.expired();
      });
      for (const auto &w : gRetained)
        if (auto t = w.lock())
          retained.push_back(std::move(t));
    }
    for (const auto &t : retained) {
      Operand e = targetEdge(*t);
      NodePtr at = retainedNode(*t);
      if (e.view          ? reachedChains.count(e.view.get()) > 0
          : leafOfEdge(e) ? reachedLeaves.count(leafOfEdge(e).get()) > 0
          : at            ? reached.count(at.get()) > 0
                          : reached.count(historyOf(e).get()) > 0)
        targets.push_back({t, at});
    }
  }
}

void GradientRun::perturbTargets() {
  targetPerturb.assign(targets.size(), -1);
  for (const Target &t : targets)
    checkOverlap(*t.impl);
  for (size_t ti = 0; ti < targets.size(); ++ti)
    perturbTarget(ti);
}

void GradientRun::checkSaved() {
  // PyTorch's checks of saved tensors, on the ops its engine would run:
  // for backward() every op reached, for grad() those between the outputs
  // and the inputs asked for.
  if (all)
    checkSavedOfBackward();
  else
    checkSavedOfGrad();
}

/// The ops to check in PyTorch's engine order (it runs the op created
/// last first): its first error is the one reported (a tensor saved by
/// two ops and written since: the later op's version).
static std::vector<uint32_t> inEngineOrder(const std::vector<NodePtr> &ops) {
  std::vector<uint32_t> order(ops.size());
  std::iota(order.begin(), order.end(), 0u);
  auto later = [&ops](uint32_t a, uint32_t b) {
    return ops[a]->seq > ops[b]->seq;
  };
  if (!std::is_sorted(order.begin(), order.end(), later))
    std::sort(order.begin(), order.end(), later);
  return order;
}

void GradientRun::checkSavedOfBackward() {
  // (Ops walked only for the value an edge without gradient reads are
  // not run by PyTorch's engine: not reached.)
  for (uint32_t i : inEngineOrder(g.toCheck))
    if (reached.count(g.toCheck[i].get()))
      g.check(g.toCheck[i]);
  if (movedLeaf)
    fail("leaf variable has been moved into the graph interior",
         "take the view after the in-place write to its base, or "
         "clone() it before requires_grad_()",
         loc);
  for (const NodePtr &n : g.ops)
    if (n->requiresGrad && reached.count(n.get()))
      executed.push_back(n.get());
}

void GradientRun::checkSavedOfGrad() {
  std::set<const TensorImpl *> targetImpls;
  for (const Target &t : targets)
    targetImpls.insert(t.impl.get());
  std::unordered_set<const Node *> needed;
  auto leads = [&](const Operand &in) {
    if (in.noGrad)
      return false;
    for (const ViewChain *c = in.view.get(); c; c = c->next.get())
      if (perturbChain.count(c))
        return true;
    if (constantEdge(in) && !leafOfEdge(in))
      return false;
    if (auto leaf = leafOfEdge(in); leaf && targetImpls.count(leaf.get()))
      return true;
    return perturbOp.count(historyOf(in).get()) > 0 ||
           needed.count(historyOf(in).get()) > 0;
  };
  for (const NodePtr &n : g.ops)
    if (n->requiresGrad)
      for (const Operand &in : n->gradIn())
        if (leads(in)) {
          needed.insert(n.get());
          break;
        }
  for (uint32_t i : inEngineOrder(g.toCheck))
    if (needed.count(g.toCheck[i].get()))
      g.check(g.toCheck[i]);
  for (const NodePtr &n : g.ops)
    if (needed.count(n.get()))
      executed.push_back(n.get());
  addRetainedOfGrad(targetImpls, needed);
}

void GradientRun::addRetainedOfGrad(
    const std::set<const TensorImpl *> &targetImpls,
    const std::unordered_set<const Node *> &needed) {
  // Retained tensors whose grad_fn runs (it is reached and leads on to
  // an input) get their .grad too, as PyTorch's retain_grad hooks do in
  // grad(): appended as targets past the inputs.
  std::vector<std::shared_ptr<TensorImpl>> retained;
  {
    std::lock_guard<std::mutex> lock(gRetainedMutex);
    for (const auto &w : gRetained)
      if (auto t = w.lock())
        retained.push_back(std::move(t));
  }
  for (const auto &t : retained) {
    if (isLeafOf(*t)) // (an input that retains its grad gets it too)
      continue;
    Operand e = targetEdge(*t);
    NodePtr at = retainedNode(*t);
    const Node *h = at ? at.get() : historyOf(e).get();
    bool runs;
    if (e.view) {
      runs = reachedChains.count(e.view.get()) > 0;
      bool below = false;
      for (const ViewChain *c = e.view->next.get(); c && !below;
           c = c->next.get())
        below = perturbChain.count(c) > 0;
      auto leaf = leafOfEdge(e);
      runs = runs &&
             (below || (leaf ? targetImpls.count(leaf.get()) > 0
                             : needed.count(h) > 0 || perturbOp.count(h) > 0));
    } else {
      runs = reached.count(h) && needed.count(h);
    }
    if (!runs)
      continue;
    checkOverlap(*t);
    targets.push_back({t, at});
    targetPerturb.push_back(-1);
    perturbTarget(targets.size() - 1);
  }
}

void GradientRun::checkDense() {
  if (!denseLeaves.empty() || !denseChains.empty()) {
    auto targetOf = [&](const ViewChain *c) -> const TensorImpl & {
      for (const auto &[t, chain] : denseTargets)
        if (chain == c)
          return *t;
      return *denseTargets.front().first;
    };
    auto checkRead = [&](const Operand &in, bool written) {
      if (in.noGrad)
        return;
      if (auto leaf = leafOfEdge(in); leaf && denseLeaves.count(leaf.get())) {
        const TensorImpl &t = *leaf;
        if (written)
          overlapError(t, "it is written in place");
        if (!in.view
                ? in.layout != t.layout
                : !denseSteps(in, nullptr, layout::contiguous(t.layout.sizes)))
          overlapError(t, "a view of it cannot be replayed over its elements "
                          "(an as_strided of it, or a view strides cannot "
                          "express on them)");
        return;
      }
      const ViewChain *dc = firstDense(in);
      if (!dc)
        return;
      const TensorImpl &t = targetOf(dc);
      if (written)
        overlapError(t, "a view of it is written in place");
      layout::Layout l = t.layout;
      for (size_t k = 0; k < perturbChain.at(dc).size(); ++k)
        l = afterAdd(l);
      if (!denseSteps(in, dc, l))
        overlapError(t, "a view of it cannot be replayed over its elements "
                        "(an as_strided of it, or a view strides cannot "
                        "express on them)");
    };
    for (const Operand &e : outEdges)
      checkRead(e, false);
    for (const NodePtr &n : g.ops) {
      const auto &inputs = n->requiresGrad ? n->gradIn() : n->inputs;
      for (size_t i = 0; i < inputs.size(); ++i)
        checkRead(inputs[i], n->op == Op::Write && i == 1);
    }
  }
}

void GradientRun::findMasks() {
  // Reads through an as_strided whose elements its input does not all
  // address: PyTorch's as_strided backward passes the gradient only to the
  // storage elements of its input's geometry (as_strided_backward), so
  // `x.narrow(0, 4, 0).as_strided(...)` gives x no gradient. Such a read
  // takes its value whole and its gradient through `where(mask, v,
  // detach(v))`, the mask being the intersection of the inputs' elements.
  // (Every other read, the common case, costs nothing.)
  auto maskOf = [&](const Operand &in) {
    if (in.noGrad || !in.view || !in.view->anyAsStrided ||
        in.layout.numel() == 0)
      return;
    std::vector<int64_t> allowed;
    bool any = false;
    for (const ViewChain *c = in.view.get(); c; c = c->next.get()) {
      if (!c->asStridedInput)
        continue;
      std::vector<int64_t> at = layout::storageIndices(*c->asStridedInput);
      std::sort(at.begin(), at.end());
      at.erase(std::unique(at.begin(), at.end()), at.end());
      if (!any)
        allowed = std::move(at);
      else {
        std::vector<int64_t> both;
        std::set_intersection(allowed.begin(), allowed.end(), at.begin(),
                              at.end(), std::back_inserter(both));
        allowed = std::move(both);
      }
      any = true;
    }
    if (!any)
      return;
    std::vector<int64_t> read = layout::storageIndices(in.layout);
    bool covered = std::all_of(read.begin(), read.end(), [&](int64_t i) {
      return std::binary_search(allowed.begin(), allowed.end(), i);
    });
    if (covered)
      return;
    readMask[&in] = std::move(allowed);
  };
  for (const Operand &e : outEdges)
    maskOf(e);
  for (const NodePtr &n : g.ops)
    for (const Operand &in : n->requiresGrad ? n->gradIn() : n->inputs)
      maskOf(in);
  // Without retain_graph the ops run free what they saved (PyTorch frees
  // the nodes its engine ran; grad() runs none below its inputs), and a
  // create_graph gradient's copy of a forward op frees that op (PyTorch's
  // engine runs it: Node::recomputes).
  if (!retain)
    for (Node *n : executed) {
      n->gradFreed = true;
      if (n->recomputes())
        n->recomputes()->gradFreed = true;
    }
}

layout::Layout GradientRun::afterAdd(const layout::Layout &l) {
  std::vector<layout::Layout> ins{l, layout::contiguous(l.sizes)};
  return layout::elementwiseResult(ins, l.sizes);
}

std::optional<std::vector<GradientRun::DenseStep>>
GradientRun::denseSteps(const Operand &in, const ViewChain *stop,
                        layout::Layout l) {
  std::vector<const ViewChain *> chain;
  const ViewChain *c = in.view.get();
  for (; c && c != stop; c = c->next.get())
    chain.push_back(c);
  if (c != stop)
    return std::nullopt;
  std::vector<DenseStep> steps;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    auto r = replayView(**it, l);
    if (!r)
      return std::nullopt;
    l = std::move(*r);
    steps.push_back({l, -1});
    if (auto f = perturbChain.find(*it); f != perturbChain.end())
      for (size_t p : f->second) {
        l = afterAdd(l);
        steps.push_back({l, static_cast<int64_t>(p)});
      }
  }
  if (l.sizes != in.layout.sizes)
    return std::nullopt;
  return steps;
}

// The dense chain a read goes through first (from its base), if any.
const ViewChain *GradientRun::firstDense(const Operand &in) {
  const ViewChain *first = nullptr;
  for (const ViewChain *c = in.view.get(); c; c = c->next.get())
    if (denseChains.count(c))
      first = c;
  return first;
}

} // namespace strata::detail::engine
