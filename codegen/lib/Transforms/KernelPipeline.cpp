//===- KernelPipeline.cpp - registration and order of fuse + coalesce -----===//
#include "strata/Transforms/KernelPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/PassManager.h"
#include "strata/IR/StrataDialect.h"

namespace strata {
namespace detail {
#define GEN_PASS_REGISTRATION
#include "strata/Transforms/KernelPasses.h.inc"
} // namespace detail
} // namespace strata

void strata::registerKernelPasses() { detail::registerStrataKernelPasses(); }

// fuse needs every view folded and every copy explicit (buildStrataPipeline);
// coalesce reads the kernels fuse made.
void strata::buildKernelPipeline(mlir::OpPassManager &pm) {
  bool onFunctions = pm.getOpName() &&
                     *pm.getOpName() == mlir::func::FuncOp::getOperationName();
  mlir::OpPassManager &fpm = onFunctions ? pm : pm.nest<mlir::func::FuncOp>();
  fpm.addPass(createFuse());
  fpm.addPass(createCoalesce());
}
