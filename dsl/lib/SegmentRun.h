//===- SegmentRun.h - a long backward's segments, run -----------*- C++ -*-===//
//
// SegmentedBackward.cpp's plan of a long backward's segments, and the run
// of their gradient programs from the last (SegmentRun.cpp); docs/design.md
// "Long backwards run in segments".
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_SEGMENTRUN_H
#define STRATA_DSL_LIB_SEGMENTRUN_H

#include "AutogradEngine.h"

#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace strata::detail::engine {

/// The segments of a graph's ops (sorted in recording order) and the
/// versions a later segment reads (boundaries).
struct Plan {
  size_t numSeg = 0;
  /// The ops requiring grad in recording order: op i is in segment
  /// segAt(i).
  std::vector<Node *> ops;
  size_t perSegment = 1;
  /// A plan cut at given ops: where each segment starts (else segments of
  /// perSegment ops).
  std::vector<size_t> starts;
  size_t segAt(size_t i) const {
    if (!starts.empty())
      return std::upper_bound(starts.begin(), starts.end(), i) -
             starts.begin() - 1;
    return numSeg - 1 - (ops.size() - 1 - i) / perSegment;
  }
  /// A version a later segment reads, its segment, and whether it is read
  /// with a gradient (or for its value only).
  struct Boundary {
    Node *node;
    size_t seg;
    bool withGrad;
    /// Saved for a formula (Node::keepData before the plan kept it).
    bool saved = false;
  };
  /// In recording order.
  std::vector<Boundary> boundaries;
};

/// A plan's segments run from the last, each a gradient program seeded by
/// its boundaries' gradients; leaves' gradients summed into `grads`.
class SegmentRun {
public:
  /// `only` (grad()'s inputs; null for backward()): each segment's
  /// program differentiates the paths to those only, and runs no hooks.
  SegmentRun(TraceLock &lock, const Plan &plan, bool retain,
             const std::unordered_set<const TensorImpl *> *only,
             const SourceLoc &loc)
      : lock(lock), plan(plan), retain(retain), hooks(!only), only(only),
        loc(loc) {}
  /// Each boundary read with a gradient as a leaf (false: valueUnread);
  /// with `only`, each segment's targets.
  bool makeLeaves();
  bool valueUnread(const Plan::Boundary &boundary); // (by any program)
  void run(const Tensor &output, const Tensor &gradient,
           std::vector<Target> &targets, std::vector<Tensor> &grads);

private:
  /// A segment's gradients: boundaries' seeds below, leaves' to `grads`.
  void collect(const std::vector<Target> &segTargets,
               const std::vector<Tensor> &segGrads,
               std::vector<Target> &targets, std::vector<Tensor> &grads);
  /// The leaves with post-accumulate-grad hooks no segment below `s` adds
  /// to: accumulated and hooked now (their `grads` entries then undefined).
  void finishHooked(size_t s, std::vector<Target> &targets,
                    std::vector<Tensor> &grads);

  TraceLock &lock;
  const Plan &plan;
  const bool retain, hooks; // (hooks: backward()'s, not grad()'s)
  const std::unordered_set<const TensorImpl *> *only;
  const SourceLoc &loc;
  /// With `only`: per segment, the inputs and the boundaries below whose
  /// gradients reach one of them that its ops read.
  std::vector<std::vector<Target>> targetsOf;
  Boundaries leaves;
  std::unordered_map<const TensorImpl *, Node *> boundaryOf;
  std::unordered_map<const Node *, Tensor> seedGrad;
  std::map<const TensorImpl *, size_t> leafIndex;
  /// Per hooked leaf, the first op reading it (recording order): its
  /// segment (the last to add to its gradient), seq, operand position.
  struct FirstRead {
    size_t seg;
    uint64_t seq;
    size_t pos;
  };
  std::unordered_map<const TensorImpl *, FirstRead> firstRead;
  std::optional<bool> anySavedGone; // (a saved value gone: valueUnread)
};

} // namespace strata::detail::engine

#endif // STRATA_DSL_LIB_SEGMENTRUN_H
