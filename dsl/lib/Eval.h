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
  /// Scalars passed as arguments (after the storages): pending 0-d fills
  /// whose value selects no code, so the key holds their dtype only.
  std::vector<Node *> scalars;
  /// Per pending node: its position in `scalars`, or -1.
  std::vector<int32_t> scalarArg;
  /// The structural cache key (no data).
  std::string key() const;
  /// The func.func text; appends the returned nodes to `outputs`. With
  /// `scalarArgs` false the scalars are constants (a self-contained dump).
  std::string source(std::vector<const Node *> &outputs,
                     bool scalarArgs = true) const;

private:
  void visit(Node *n);
  uint64_t epoch;
};

} // namespace strata::detail

#endif // STRATA_DSL_LIB_EVAL_H
