//===- KernelToLLVM.h - strata.kernel to LLVM IR ----------------*- C++ -*-===//
//
// Emits one LLVM function per kernel with IRBuilder: static sizes, strides
// and offsets become constants, except the outermost loop's trip count. The
// calling convention (the runtime's kernel ABI) is
//   void @name(ptr %buffers, i64 %begin, i64 %end)
// where %buffers[i] is the base address of the storage root of loop operand
// i (inputs, results, dest, as in KernelOp::getLoopNest) and [begin, end) is
// the range of the outermost loop this call runs.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TARGET_LLVM_KERNELTOLLVM_H
#define STRATA_TARGET_LLVM_KERNELTOLLVM_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm
namespace mlir {
class Operation;
} // namespace mlir

namespace strata::codegen {

/// The LLVM module holding kernel `kernelOp` (a strata.kernel) as function
/// `name`; null with `error` set when the body holds an unsupported op.
std::unique_ptr<llvm::Module> emitKernelLLVM(mlir::Operation *kernelOp,
                                             llvm::LLVMContext &context,
                                             const std::string &name,
                                             std::string &error);

/// What the code emitKernelLLVM makes for `kernelOp` depends on, as text:
/// the operands' element types, the loop nest with the outermost trip count
/// left out (the ABI passes it at run time, [begin, end)), the loop plan
/// the emitter chose (tiling, cascade scratch rows, non-temporal stores:
/// the only places the outermost size enters), combiners and the body.
/// Kernels with equal keys compile to the same function, so one compiled
/// kernel serves every outermost size: `x + 1` over 10 or 10^6 contiguous
/// elements, a batch of 16 or of 55 rows.
std::string kernelCodeKey(mlir::Operation *kernelOp);

/// A version of this emitter (deterministic, bumped by hand when the emitted
/// code changes): part of every kernel-cache key, next to a hash of the
/// emitter's sources, so a disk cache never serves code of an older one.
const char *emitterBuildId();

/// How the runtime may call a kernel.
struct KernelLaunchInfo {
  /// Trip count of the outermost loop (1 for a 0-d space).
  int64_t outerSize = 1;
  /// Elements per outermost iteration (for chunk sizing).
  int64_t innerElements = 1;
  /// Total points; 0 means the kernel must not be called.
  int64_t numPoints = 0;
  /// Per result: it combines along the outermost loop, so calls that run
  /// in parallel each need a private copy of it (merged afterwards).
  std::vector<bool> outerReduced;
  /// False when the outermost loop reduces (outerReduced, over more than one
  /// iteration): calls must not run in parallel on the same results.
  bool outerParallel = true;
  /// The kernel must run as one call (an indexed store: index_map).
  bool serial = false;
};
KernelLaunchInfo getLaunchInfo(mlir::Operation *kernelOp);

} // namespace strata::codegen

#endif // STRATA_TARGET_LLVM_KERNELTOLLVM_H
