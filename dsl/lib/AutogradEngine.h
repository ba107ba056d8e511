//===- AutogradEngine.h - the autograd engine's parts, shared -*- C++ -*-===//
//
// What AutogradEngine.cpp (the entry points and their helpers), the
// gradient run (GradientRun.h: one gradient program per backward) and
// SegmentedBackward.cpp (a long backward as segments of such programs)
// share. Internal to the DSL.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_AUTOGRADENGINE_H
#define STRATA_DSL_LIB_AUTOGRADENGINE_H

#include "Impl.h"
#include "ProgramCache.h"

#include "strata/JIT/Jit.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace strata::detail::engine {

/// Gradient programs compiled, and backwards run in segments (the public
/// backward_compiles() and backward_segments()).
extern std::atomic<int64_t> gCompiles, gSegments, gTemplates;
/// Non-leaves with retain_grad(), from every thread (guarded by
/// gRetainedMutex).
extern std::vector<std::weak_ptr<TensorImpl>> gRetained;
extern std::mutex gRetainedMutex;

/// Whether `n`'s buffer still holds its value (no in-place write of its
/// root overwrote the home buffer since).
bool freshBuffer(const Node &n);
/// In a segment of a long backward (backwardInSegments): the versions
/// computed in the segments below, each read as a leaf holding its value.
using Boundaries =
    std::unordered_map<const Node *, std::shared_ptr<TensorImpl>>;
extern thread_local const Boundaries *tBoundaries;
/// Whether `in` records a read of a leaf (AccumulateGrad), live or not.
bool leafRead(const Operand &in);
/// The leaf an edge feeds (null: a history or a constant).
std::shared_ptr<TensorImpl> leafOfEdge(const Operand &in);
/// The version whose history edge `in` passes its gradient to.
const NodePtr &historyOf(const Operand &in);
/// An edge that reads a constant (no gradient flows through it).
bool constantEdge(const Operand &in);
/// constantEdge(in) of an edge whose leafOfEdge(in) is null (two lookups
/// fewer: the graph walks ask it of every edge).
bool constantEdgeToNoLeaf(const Operand &in);

/// Seconds since `t0`.
double secondsSince(std::chrono::steady_clock::time_point t0);
/// Gradient programs by key (bounded, least recently used out;
/// ProgramCache.h).
ProgramCache<jit::PreparedFunction> &cache();
/// PyTorch's name of the type of a tensor computed by `on`
/// ("torch.FloatTensor"; on CUDA "torch.cuda.FloatTensor"), for messages.
std::string torchType(DType t, const Node *on = nullptr);
/// PyTorch's message for a backward through freed saved tensors.
extern const char *kSecondTime;
/// An edge to a leaf that no longer requires grad (or is gone).
bool deadLeafEdge(const Operand &in);
/// The version a retained non-view tensor retains the gradient of (null:
/// its current one).
NodePtr retainedNode(const TensorImpl &t);
/// The edge through which a target's gradient is read.
Operand targetEdge(const TensorImpl &t);
/// A gradient program's result as a leaf, on the device its buffer is on.
Tensor fromJit(jit::JitValue &v, DType dtype, const SourceLoc &loc);
/// Makes `v`, the gradient of a storage window at element `start`, the
/// gradient of the whole storage of `numel` elements (zero outside).
void widenGradient(jit::JitValue &v, int64_t start, int64_t numel,
                   const SourceLoc &loc);
/// Makes `v`, the value of output `o` computed by a gradient program, the
/// contents of o's pending version when o reads all of it in order.
void keepOutput(const TensorImpl &o, jit::JitValue &v);
/// `t`'s storage seen through `l` from element `base` (an as_strided of
/// `t`; a negative stride as a flip of the dims it reverses): the one copy
/// of that rule for the engine and the create_graph replay.
Tensor stridedView(const Tensor &t, const layout::Layout &l, int64_t base,
                   const SourceLoc &loc);
/// Storage- or node-shaped gradient `g` seen through `l` (a fresh tensor).
Tensor project(const Tensor &g, const layout::Layout &l, const SourceLoc &loc);

/// A target of differentiation: a leaf, or a non-leaf's version.
struct Target {
  std::shared_ptr<TensorImpl> impl;
  /// For a non-leaf: the version perturbed by a zero argument.
  NodePtr node;
};

/// Runs backward; returns one gradient per target (all leaves reached and
/// retained tensors when `targets` is empty, then also filled in).
/// `seeds` (a segment of a long backward, backwardInSegments): the outputs
/// are these reads of versions instead of `outputs`, each given its
/// gradient. `hooks` (backward()): a leaf with post-accumulate-grad hooks
/// has its gradient accumulated and its hooks run as soon as the program
/// has made it (its gradient is then returned undefined).
std::vector<Tensor> run(TraceLock &lock, const std::vector<Tensor> &outputs,
                        std::vector<Tensor> gradOutputs,
                        std::vector<Target> &targets, bool all, bool retain,
                        bool createGraph, const SourceLoc &loc,
                        const std::vector<Operand> *seeds = nullptr,
                        bool hooks = false);

/// PyTorch's AccumulateGrad: adds `grad` into `target`'s .grad (a leaf's
/// first gradient obeys the layout contract; with `createGraph`, recorded).
void accumulateGrad(const Target &target, const Tensor &grad, bool createGraph,
                    const SourceLoc &loc);
/// Whether `t` is a leaf with post-accumulate-grad hooks.
bool hasPostAccumulateHooks(const TensorImpl &t);
/// Runs leaf `t`'s post-accumulate-grad hooks (AutogradHooks.cpp); one that
/// throws becomes a strata::Error located at `loc` (the backward() call).
void runPostAccumulateHooks(const std::shared_ptr<TensorImpl> &t,
                            const SourceLoc &loc);

/// backward() of `output` as segments (SegmentedBackward.cpp); false, having
/// changed nothing run() would not, where the graph is to run whole. The
/// gradients of all leaves reached, in `targets` and `grads`; backward()'s
/// run a leaf's post-accumulate-grad hooks once no segment below adds to
/// its gradient (its entry then undefined). With `only` (grad()'s inputs),
/// no hooks, and false unless every leaf reached is one of those.
bool backwardInSegments(
    TraceLock &lock, const Tensor &output, const Tensor &gradient, bool retain,
    std::vector<Target> &targets, std::vector<Tensor> &grads,
    const SourceLoc &loc,
    const std::unordered_set<const TensorImpl *> *only = nullptr);

} // namespace strata::detail::engine

#endif // STRATA_DSL_LIB_AUTOGRADENGINE_H
