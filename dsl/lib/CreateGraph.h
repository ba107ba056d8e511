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

#include <string>
#include <vector>

namespace strata::detail {

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
std::vector<Tensor> replayGradientProgram(const ir::Program &program,
                                          const std::vector<ReplayArg> &args,
                                          const SourceLoc &loc);

} // namespace strata::detail

#endif // STRATA_DSL_CREATEGRAPH_H
