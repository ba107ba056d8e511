//===- SegmentRun.cpp - the segments of a long backward, run -------------===//
//
// SegmentRun (SegmentRun.h): a long backward's segments run from the last,
// each a gradient program seeded by the gradients of the boundaries it
// computes, the leaves' gradients summed; docs/design.md "Long backwards
// run in segments".
//
//===----------------------------------------------------------------------===//
#include "SegmentRun.h"

#include "Impl.h"

#include <algorithm>
#include <unordered_set>

using namespace strata;
using namespace strata::detail;

namespace strata::detail::engine {

bool SegmentRun::valueUnread(const Plan::Boundary &boundary) {
  // (A version read mid-loop, its home buffer taken over by later writes.)
  // A gradient program reads a boundary's value only for a formula that
  // saved it, or to recompute a saved op whose value is gone: neither here.
  if (!boundary.withGrad || boundary.saved)
    return false;
  if (!anySavedGone) {
    anySavedGone = false;
    std::unordered_set<const Node *> isBoundary;
    for (const Plan::Boundary &b : plan.boundaries)
      if (isBoundary.insert(b.node); b.saved && !freshBuffer(*b.node))
        anySavedGone = true;
    for (const Node *n : plan.ops)
      if (n->keepData && !freshBuffer(*n) && !isBoundary.count(n))
        anySavedGone = true;
  }
  return !*anySavedGone;
}

bool SegmentRun::makeLeaves() {
  for (size_t i = 0; hooks && i < plan.ops.size(); ++i)
    for (size_t pos = 0; pos < plan.ops[i]->gradIn().size(); ++pos)
      if (auto leaf = leafOfEdge(plan.ops[i]->gradIn()[pos]);
          leaf && hasPostAccumulateHooks(*leaf)) {
        FirstRead read{plan.segAt(i), plan.ops[i]->seq, pos};
        auto [it, first] = firstRead.emplace(leaf.get(), read);
        if (std::make_pair(read.seq, read.pos) <
            std::make_pair(it->second.seq, it->second.pos))
          it->second = read;
      }
  for (const Plan::Boundary &boundary : plan.boundaries) {
    Node *b = boundary.node;
    if (!freshBuffer(*b) && !valueUnread(boundary))
      return false; // (evaluated, which changes nothing run() relies on)
    if (!boundary.withGrad)
      continue;
    Tensor leaf =
        makeLeaf(b->buffer, b->dtype, {b->rootNumel},
                 TensorOptions(b->dtype).requires_grad(true), "backward", loc);
    boundaryOf[leaf.impl().get()] = b;
    leaves[b] = leaf.impl();
  }
  if (!only)
    return true;
  // grad(): the ops (in recording order) whose gradient reaches an input.
  std::unordered_set<const Node *> reaching;
  for (const Node *n : plan.ops)
    for (const Operand &in : n->gradIn())
      if (auto leaf = leafOfEdge(in);
          leaf ? only->count(leaf.get()) : reaching.count(in.node.get())) {
        reaching.insert(n);
        break;
      }
  targetsOf.assign(plan.numSeg, {});
  std::unordered_set<const TensorImpl *> seen;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    size_t s = plan.segAt(i);
    if (i == 0 || s != plan.segAt(i - 1))
      seen.clear();
    for (const Operand &in : plan.ops[i]->gradIn()) {
      std::shared_ptr<TensorImpl> t = leafOfEdge(in);
      if (t && !only->count(t.get()))
        continue;
      if (auto b = leaves.find(in.node.get());
          !t && b != leaves.end() && reaching.count(b->first))
        t = b->second;
      if (t && seen.insert(t.get()).second)
        targetsOf[s].push_back({t, nullptr});
    }
  }
  return true;
}

void SegmentRun::run(const Tensor &output, const Tensor &gradient,
                     std::vector<Target> &targets, std::vector<Tensor> &grads) {
  NoGradGuard noGrad;
  struct Restore {
    ~Restore() { tBoundaries = nullptr; }
  } restore;
  // Each segment's boundaries (the versions it computes), in order: one
  // pass over them in all, not one per segment.
  std::vector<std::vector<Node *>> boundariesOf(plan.numSeg);
  for (const Plan::Boundary &b : plan.boundaries)
    boundariesOf[b.seg].push_back(b.node);
  for (size_t s = plan.numSeg; s-- > 0;) {
    // A boundary of this segment is a version computed here, not a leaf.
    std::vector<Operand> seeds;
    std::vector<Tensor> seedGrads;
    for (Node *b : boundariesOf[s]) {
      leaves.erase(b);
      auto it = seedGrad.find(b);
      if (it == seedGrad.end())
        continue;
      Operand e;
      e.node = b->shared_from_this();
      e.layout = layout::contiguous(Shape{b->rootNumel});
      e.noGrad = false;
      seeds.push_back(std::move(e));
      seedGrads.push_back(it->second);
      seedGrad.erase(it);
    }
    bool top = s + 1 == plan.numSeg;
    if (!top && seeds.empty()) {
      finishHooked(s, targets, grads);
      continue;
    }
    tBoundaries = &leaves;
    std::vector<Target> segTargets;
    if (only)
      segTargets = std::move(targetsOf[s]);
    std::vector<Tensor> segGrads =
        top ? engine::run(lock, {output}, {gradient}, segTargets, !only, retain,
                          false, loc)
            : engine::run(lock, {}, seedGrads, segTargets, !only, retain, false,
                          loc, &seeds);
    tBoundaries = nullptr;
    ++gSegments;
    collect(segTargets, segGrads, targets, grads);
    finishHooked(s, targets, grads);
  }
}

void SegmentRun::finishHooked(size_t s, std::vector<Target> &targets,
                              std::vector<Tensor> &grads) {
  if (firstRead.empty())
    return;
  std::vector<std::pair<const FirstRead *, size_t>> done;
  for (size_t index = 0; index < targets.size(); ++index)
    if (auto it = firstRead.find(targets[index].impl.get());
        it != firstRead.end() && it->second.seg >= s && grads[index].defined())
      done.push_back({&it->second, index});
  // PyTorch's order (GradientHooks.cpp): by the first op reading each, the
  // one created last first; ties by operand position.
  std::sort(done.begin(), done.end(), [](const auto &a, const auto &b) {
    return a.first->seq != b.first->seq ? a.first->seq > b.first->seq
                                        : a.first->pos < b.first->pos;
  });
  for (const auto &[first, index] : done) {
    accumulateGrad(targets[index], grads[index], false, loc);
    grads[index] = Tensor();
    runPostAccumulateHooks(targets[index].impl, loc);
  }
}

void SegmentRun::collect(const std::vector<Target> &segTargets,
                         const std::vector<Tensor> &segGrads,
                         std::vector<Target> &targets,
                         std::vector<Tensor> &grads) {
  for (size_t i = 0; i < segTargets.size(); ++i) {
    if (!segGrads[i].defined())
      continue;
    const TensorImpl *t = segTargets[i].impl.get();
    if (auto b = boundaryOf.find(t); b != boundaryOf.end()) {
      auto [it, first] = seedGrad.emplace(b->second, segGrads[i]);
      if (!first)
        it->second = it->second + segGrads[i];
      continue;
    }
    auto [it, first] = leafIndex.emplace(t, targets.size());
    if (first) {
      targets.push_back(segTargets[i]);
      grads.push_back(segGrads[i]);
    } else {
      Tensor &sum = grads[it->second]; // (undefined: hooked already)
      sum = sum.defined() ? sum + segGrads[i] : segGrads[i];
    }
  }
}

} // namespace strata::detail::engine
