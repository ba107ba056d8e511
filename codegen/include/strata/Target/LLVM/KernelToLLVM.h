//===- KernelToLLVM.h - strata.kernel to LLVM IR ----------------*- C++ -*-===//
//
// Emits one LLVM function per kernel with IRBuilder. The calling convention
// (the runtime's kernel ABI) is
//   void @name(ptr %buffers, i64 %begin, i64 %end, ptr %dims)
// where %buffers[i] is the base address of the storage root of loop operand
// i (inputs, results, dest, as in KernelOp::getLoopNest), [begin, end) is
// the range of the outermost loop this call runs and %dims the kernel's
// loop nest as i64 values (KernelLaunchInfo::dims: every loop's trip count,
// then each operand's strides, then each operand's offset, then the bits of
// each size value of the body: kSizeValueAttrName). A static kernel
// has its sizes, strides and offsets as constants and reads from %dims only
// its size values; a
// dynamic one (a plain loop plan: docs/design.md, "Sizes") reads from it
// every value that is not a fact of its layout class, so one compiled
// function serves every size of that class.
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
/// the operands' element types, the loop plan the emitter chose (tiling,
/// cascade scratch rows, non-temporal stores, dynamic or not), combiners,
/// the body and the loop nest: without its outermost trip count (the ABI
/// passes it at run time, [begin, end)) and, for a dynamic kernel, with only
/// its layout class (which strides are 0 or +-1, small innermost trip
/// counts; the other values come in %dims). Kernels with equal keys compile
/// to the same function, so one compiled kernel serves every outermost size
/// (`x + 1` over 10 or 10^6 contiguous elements) and a dynamic one every
/// size of its class (a softmax over rows of 9 or of 100).
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
  /// The %dims argument of every call (the ABI above): the loop nest's
  /// trip counts, then operand-major strides, then offsets, then the body's
  /// size values (their bits: a mean's count).
  std::vector<int64_t> dims;
};
KernelLaunchInfo getLaunchInfo(mlir::Operation *kernelOp);

} // namespace strata::codegen

#endif // STRATA_TARGET_LLVM_KERNELTOLLVM_H
