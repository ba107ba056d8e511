//===- HostKernels.cpp - kernels strata runs without compiling ------------===//
//
// Assumes: a verified, coalesced strata.kernel (what compileCpu gets).
// Guarantees: hostKernel returns a function only for a kernel whose whole
//   work it does exactly as the compiled kernel would: today the 0-d
//   rounding of an f64 value to f32 (or its widening) that --strata-widen-
//   sums leaves after a float sum that is returned (`loss.item()`), whose
//   LLVM compile (~4 ms, most of it the back end's fixed cost) was a fifth
//   of a fresh process's first evaluation. C++'s float <-> double
//   conversions are IEEE round-to-nearest-even, as LLVM's fptrunc/fpext.
//
//===----------------------------------------------------------------------===//
#include "HostKernels.h"
#include "strata/IR/StrataDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace strata::ir;

namespace {

void roundToF32(void **buffers, int64_t, int64_t, const int64_t *) {
  *static_cast<float *>(buffers[1]) = *static_cast<const double *>(buffers[0]);
}

void widenToF64(void **buffers, int64_t, int64_t, const int64_t *) {
  *static_cast<double *>(buffers[1]) = *static_cast<const float *>(buffers[0]);
}

} // namespace

strata::jit::KernelFn strata::jit::detail::hostKernel(mlir::Operation *op) {
  auto kernel = llvm::dyn_cast<KernelOp>(op);
  if (!kernel || !kernel.getSpace().empty() || kernel.getInputs().size() != 1 ||
      kernel.getNumResults() != 1 || kernel.getDest() ||
      kernel.getReduceDims() || kernel.getIndexed() || kernel.isScan() ||
      kernel.getIndexMap() || kernel.getResultPerms())
    return nullptr;
  // Both operands at the start of their buffers (the offsets are compiled
  // into a kernel; these functions have none).
  for (int64_t offset : kernel.getLoopNest().offsets)
    if (offset != 0)
      return nullptr;
  mlir::Block &body = kernel.getBody().front();
  if (body.getOperations().size() != 2)
    return nullptr;
  mlir::Operation &convert = body.front();
  auto yield = llvm::dyn_cast<YieldOp>(body.back());
  if (convert.getNumOperands() != 1 ||
      convert.getOperand(0) != body.getArgument(0) || !yield ||
      yield->getNumOperands() != 1 ||
      yield->getOperand(0) != convert.getResult(0))
    return nullptr;
  mlir::Type from = convert.getOperand(0).getType(),
             to = convert.getResult(0).getType();
  if (llvm::isa<mlir::arith::TruncFOp>(convert) && from.isF64() && to.isF32())
    return roundToF32;
  if (llvm::isa<mlir::arith::ExtFOp>(convert) && from.isF32() && to.isF64())
    return widenToF64;
  return nullptr;
}
