//===- Fuse.h - what the parts of --strata-fuse share ------------*- C++
//-*-===//
//
// Private to codegen/lib/Transforms/Fuse: the pass (FusePass.cpp) over the
// groups' kernels (Groups.cpp), sibling fusion (Siblings.cpp) and the index
// ops' kernels (IndexOps.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LIB_TRANSFORMS_FUSE_FUSE_H
#define STRATA_LIB_TRANSFORMS_FUSE_FUSE_H

#include "strata/IR/StrataDialect.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"

namespace strata::fuse {

bool isElementwise(mlir::Operation *op);
bool isReduction(mlir::Operation *op);
/// `v`'s type (a strided tensor).
ir::StridedTensorType tensorType(mlir::Value v);
/// A strata.fill or strata.arange: a *generator*, whose elements every
/// kernel that reads it computes (a constant, or from the point's indices)
/// instead of loading them.
bool isGenerator(mlir::Operation *op);
/// The generator whose result `v` is or views; null when none.
mlir::Operation *generatorOf(mlir::Value v);
/// An elementwise op computed inside its only consumer's kernel.
bool isInlined(mlir::Operation *op);
/// The kernel of the group rooted at `op`, built before it (null: none).
ir::KernelOp buildKernel(mlir::Operation *op);
/// The kernel's result as `op`'s result type.
mlir::Value resultValue(ir::KernelOp kernel, mlir::Operation *op);
/// Merges the elementwise kernels of `block` that read the same data.
void fuseSiblings(mlir::Block &block);
/// When `op` is strata.gather, scatter or scatter_add: builds its kernels
/// before it and returns the value that replaces its result; else null.
mlir::Value fuseIndexOp(mlir::Operation *op);

} // namespace strata::fuse

#endif // STRATA_LIB_TRANSFORMS_FUSE_FUSE_H
