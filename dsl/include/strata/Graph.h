//===- Graph.h - Graphviz pictures of recorded programs ---------*- C++ -*-===//
//
// `to_dot` draws what evaluating some tensors would run: one box per
// recorded op (compute, fill, write), one cylinder per materialized storage,
// edges labelled with the folded (sizes, strides, offset) layout each op
// reads through. Render with `dot -Tsvg prog.dot -o prog.svg`.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_GRAPH_H
#define STRATA_GRAPH_H

#include "strata/Tensor.h"

#include <string>
#include <vector>

namespace strata {

/// Which graph to draw.
enum class GraphKind {
  /// The recorded trace behind the tensors (pending and materialized).
  Trace,
  /// The autograd graph behind the tensors: one node per grad_fn
  /// (PyTorch's names: MulBackward0, AccumulateGrad for a leaf), edges from
  /// each to the functions of its inputs.
  Autograd,
};

/// The graph behind `tensors` as a Graphviz DOT digraph (runs nothing).
std::string to_dot(const std::vector<Tensor> &tensors,
                   GraphKind kind = GraphKind::Trace,
                   SourceLoc loc = SourceLoc::current());

/// to_dot(tensors, kind) written to `path` (throws strata::Error when the
/// file cannot be written).
void save_dot(const std::vector<Tensor> &tensors, const std::string &path,
              GraphKind kind = GraphKind::Trace,
              SourceLoc loc = SourceLoc::current());

} // namespace strata

#endif // STRATA_GRAPH_H
