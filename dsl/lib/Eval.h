//===- Eval.h - the slice of the trace one evaluation runs ------*- C++ -*-===//
#ifndef STRATA_DSL_LIB_EVAL_H
#define STRATA_DSL_LIB_EVAL_H

#include "Impl.h"

#include <string>
#include <vector>

namespace strata::detail {

/// The nodes one evaluation needs, in creation order.
struct Slice {
  /// Collects the slice reaching `roots` (pending nodes).
  explicit Slice(const std::vector<Node *> &roots);
  /// Every node (arguments and pending), creation order.
  std::vector<Node *> nodes;
  /// Materialized nodes: the storage arguments, in order.
  std::vector<Node *> args;
  /// Pending nodes, in order.
  std::vector<Node *> pending;
  /// Readers pulled in (held while evaluating).
  std::vector<NodePtr> keepAlive;
  /// The structural cache key (no data).
  std::string key() const;
  /// The func.func text; appends the returned nodes to `outputs`.
  std::string source(std::vector<const Node *> &outputs) const;

private:
  void visit(Node *n);
  uint64_t epoch;
};

} // namespace strata::detail

#endif // STRATA_DSL_LIB_EVAL_H
