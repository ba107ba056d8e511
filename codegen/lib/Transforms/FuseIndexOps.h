//===- FuseIndexOps.h - the kernels of gather and scatter -------*- C++ -*-===//
//
// Private to codegen/lib/Transforms: --strata-fuse gives each index op
// (StrataIndexOps.td) kernels of its own (FuseIndexOps.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LIB_TRANSFORMS_FUSEINDEXOPS_H
#define STRATA_LIB_TRANSFORMS_FUSEINDEXOPS_H

#include "mlir/IR/Operation.h"

namespace strata {
/// When `op` is strata.gather, scatter or scatter_add: builds its kernels
/// before it and returns the value that replaces its result; else null.
mlir::Value fuseIndexOp(mlir::Operation *op);
} // namespace strata

#endif // STRATA_LIB_TRANSFORMS_FUSEINDEXOPS_H
