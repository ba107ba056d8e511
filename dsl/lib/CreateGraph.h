//===- CreateGraph.h - Gradients recorded as a graph (create_graph) -------===//
//
// backward(create_graph) and grad(create_graph): the gradient program the
// autograd engine builds is differentiated (strata-differentiate) and then,
// instead of being compiled and run, replayed op by op as recorded DSL ops.
// The gradients are then pending tensors with a history of their own, which
// a later backward differentiates like any other: second derivatives are
// the differentiation of the differentiated IR.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_DSL_CREATEGRAPH_H
#define STRATA_DSL_CREATEGRAPH_H

#include "strata/IR/ProgramBuilder.h"
#include "strata/Tensor.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace strata::detail {

struct Node;

/// What the replay reads for one argument of the gradient program.
struct ReplayArg {
  /// A `!strata.storage` argument: its element 0 is element `base` of the
  /// storage `tensor` views (the argument's views become `as_strided`s of
  /// `tensor` at `base` + their offset). Otherwise a tensor argument whose
  /// value is `tensor`.
  bool storage = false;
  Tensor tensor;
  int64_t base = 0;
};

/// `value`'s elements with the history of `old` (an untracked write into a
/// clone of old: the gradient passes to old as the identity).
Tensor straightThrough(const Tensor &old, const Tensor &value,
                       const SourceLoc &loc);

/// Differentiates `program` (a function @main with its `strata.wrt`) and
/// records its ops over `args` (one per argument, the gradient seeds last)
/// as DSL ops. Returns one tensor per result of the differentiated function
/// (the outputs, then the gradients of the wrt arguments). An op that has
/// no recorded form yet raises a strata::Error at `loc`.
/// `origins`: the program's values that recompute an op of the forward,
/// with that op. The replay's copy of such an op (and of its clones in the
/// gradient) stands for it (Node::recomputes): PyTorch's gradient graph
/// reaches the forward's op itself through its saved tensors, so a later
/// backward through the copy frees the forward's op, and one through the
/// copy after the forward's op was freed raises.
std::vector<Tensor> replayGradientProgram(
    const ir::Program &program, const std::vector<ReplayArg> &args,
    const std::unordered_map<ir::Program::Value, std::shared_ptr<Node>>
        &origins,
    const SourceLoc &loc);

} // namespace strata::detail

#endif // STRATA_DSL_CREATEGRAPH_H
