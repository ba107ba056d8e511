//===- KernelToLLVM.h - strata.kernel to LLVM IR ----------------*- C++ -*-===//
//
// Emits one LLVM function per kernel with IRBuilder: static sizes, strides
// and offsets become constants. The calling convention (the runtime's kernel
// ABI) is
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
  /// False when the outermost loop reduces (calls must not run in parallel).
  bool outerParallel = true;
  /// The kernel must run as one call (an indexed store: index_map).
  bool serial = false;
};
KernelLaunchInfo getLaunchInfo(mlir::Operation *kernelOp);

} // namespace strata::codegen

#endif // STRATA_TARGET_LLVM_KERNELTOLLVM_H
