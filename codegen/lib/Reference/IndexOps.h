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
