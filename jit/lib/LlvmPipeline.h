//===- LlvmPipeline.h - a kernel to an object file for this host -*- C++
//-*-===//
//
// The LLVM half of the CPU JIT: the host LLVM compiles for (detected once),
// the IR pass pipeline, and a strata.kernel turned into an object file
// (KernelToLLVM, then the pipeline, then the back end). The ORC session that
// links the object is OrcSession.h; the cache around both is KernelCache.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_JIT_LIB_LLVMPIPELINE_H
#define STRATA_JIT_LIB_LLVMPIPELINE_H

#include "llvm/ADT/SmallVector.h"

#include <chrono>
#include <string>

namespace llvm {
namespace orc {
class JITTargetMachineBuilder;
} // namespace orc
} // namespace llvm
namespace mlir {
class Operation;
} // namespace mlir

namespace strata::jit::detail {

/// The name of a kernel's function in its module and object file.
constexpr const char *kKernelSymbol = "strata_kernel";

/// The host as LLVM compiles for it, detected on first use and never
/// destroyed (kernel handles held by static objects may outlive any static
/// destructor order).
struct HostTarget {
  std::string triple, cpu, features;
  /// The data layout of the host's target machines (as a string).
  std::string dataLayout;
  /// Why detection failed; "" when it did not.
  std::string error;
  /// Makes the host's target machines (the ORC session's and each
  /// thread's); null when detection failed.
  const llvm::orc::JITTargetMachineBuilder *builder = nullptr;
};
const HostTarget &hostTarget();

/// The IR pass pipeline in PassBuilder syntax (or "O2"/"O3"): the default,
/// or STRATA_LLVM_PASSES. Part of the kernel-cache key.
const std::string &passPipeline();

/// When each phase of compileObject ended (STRATA_DEBUG's timings).
struct ObjectTimes {
  std::chrono::steady_clock::time_point emitted, optimized, generated;
};

/// The host object file of `kernel` (its function kKernelSymbol): emitted,
/// optimized and compiled; false and `error` (the compiler log, and where
/// the kernel's sources were saved) when LLVM cannot. `key` is the kernel's
/// cache key: printed at STRATA_DEBUG=4, and it names the saved sources.
/// Needs a host (hostTarget().error empty).
bool compileObject(mlir::Operation *kernel, const std::string &key,
                   llvm::SmallVectorImpl<char> &object, ObjectTimes &times,
                   std::string &error);

} // namespace strata::jit::detail

#endif // STRATA_JIT_LIB_LLVMPIPELINE_H
