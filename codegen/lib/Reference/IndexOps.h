//===- IndexOps.h - the reference evaluator's gather and scatter -*- C++
//-*-===//
//
// Private to codegen/lib/Reference: Evaluator.cpp dispatches the index ops
// (StrataIndexOps.td) to these.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LIB_REFERENCE_INDEXOPS_H
#define STRATA_LIB_REFERENCE_INDEXOPS_H

#include "strata/IR/StrataDialect.h"
#include "strata/Reference/Evaluator.h"

namespace strata::reference {
/// Calls `fn(index)` for every index of `shape`, last dim fastest. A 0-d
/// shape has one (empty) index; a shape with a 0 has none. (The
/// evaluator's walk, shared with the index ops.)
template <typename Fn> void forEachIndex(llvm::ArrayRef<int64_t> shape, Fn fn) {
  for (int64_t s : shape)
    if (s == 0)
      return;
  llvm::SmallVector<int64_t, 6> index(shape.size(), 0);
  while (true) {
    fn(llvm::ArrayRef<int64_t>(index));
    int64_t d = static_cast<int64_t>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// strata.gather of `input` at `index`.
mlir::FailureOr<RefValue> evalGather(ir::GatherOp op, const RefValue &input,
                                     const RefValue &index);
/// strata.scatter (`accumulate` false) or scatter_add of `src` into a copy
/// of `input` at `index` along `dim`.
mlir::FailureOr<RefValue>
evalScatter(mlir::Operation *op, const RefValue &input, const RefValue &index,
            const RefValue &src, int64_t dim, bool accumulate);
} // namespace strata::reference

#endif // STRATA_LIB_REFERENCE_INDEXOPS_H
