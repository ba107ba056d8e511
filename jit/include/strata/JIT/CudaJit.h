//===- CudaJit.h - CUDA backend: NVRTC to PTX, run on a GPU -----*- C++ -*-===//
//
// Kernels are emitted as CUDA C (strata/Target/CUDA/KernelToCUDA.h),
// compiled to PTX with NVRTC, cached in memory and on disk (next to the CPU
// kernels, $STRATA_CACHE_DIR) and launched through the CUDA driver API
// (strata/Runtime/CudaDriver.h). Everything here works without a GPU except
// running: the PTX path needs only the toolkit at build time. No MLIR or
// LLVM in this header.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_JIT_CUDAJIT_H
#define STRATA_JIT_CUDAJIT_H

#include "strata/JIT/Jit.h"

#include <string>
#include <vector>

namespace strata::codegen {
struct CudaKernel;
} // namespace strata::codegen

namespace strata::jit {

/// True when NVRTC can be used: this build has CUDA code generation (the
/// toolkit was found) and libnvrtc loads at run time (dlopen, on first use;
/// STRATA_NVRTC_LIBRARY names it).
bool hasNVRTC();

/// Why NVRTC cannot be used ("" when it can): the libraries tried and the
/// loader's reasons, and how to fix it.
std::string nvrtcError();

/// Compiles one CUDA C translation unit to PTX for `arch` (e.g. "sm_90";
/// NVRTC targets the matching virtual arch). On failure `error` holds the
/// NVRTC log and the numbered source.
bool compileCudaToPTX(const std::string &source, const std::string &name,
                      const std::string &arch, std::string &ptx,
                      std::string &error);

/// The CUDA C of one strata.kernel (entry "strata_kernel"); "" + error.
std::string kernelCUDASource(mlir::Operation *kernel, std::string &error);

/// Emits and compiles one strata.kernel through the PTX caches (memory,
/// then disk, then NVRTC); fills `info` with the launch shape.
bool kernelPTX(mlir::Operation *kernel, const std::string &arch,
               codegen::CudaKernel &info, std::string &ptx, std::string &error);

/// PTX cache events since the last resetCudaCacheStats().
CacheStats cudaCacheStats();
void resetCudaCacheStats();
/// Forgets every PTX compiled in this process (as a new process would):
/// the next kernelPTX of a kernel reads the disk cache or runs NVRTC.
void clearCudaMemoryCache();

/// "" when a CUDA device can run kernels, else a message starting with
/// "no CUDA device: " that says why (no driver, stub library, no GPU).
std::string cudaUnavailableReason();

struct CudaRunOptions {
  /// Runs the function's kernels this many times on the same device inputs
  /// (inputs are uploaded and results downloaded once), for benchmarks.
  int repetitions = 1;
  /// When set, receives the device time of each repetition's kernels
  /// (CUDA events), in seconds.
  std::vector<double> *kernelSeconds = nullptr;
  /// Results stay on the device: their buffers are CUDA storages
  /// (runtime::DeviceKind::CUDA, from the caching allocator) and nothing is
  /// downloaded or synchronized (the DSL's CUDA tensors).
  bool deviceResults = false;
  /// Arguments whose device buffers the caller donates (RunOptions'
  /// write contract): a dead old version of one is written in place.
  std::vector<bool> donated;
};

/// As runFunction, on the GPU: host arguments are copied to the device
/// (arguments whose buffer is already a CUDA storage are used in place and
/// never written), kernels run on one stream, results are copied back
/// (synchronizing) unless options.deviceResults.
RunResult runFunctionCuda(mlir::Operation *func,
                          const std::vector<JitValue> &args,
                          const CudaRunOptions &options = {});

} // namespace strata::jit

#endif // STRATA_JIT_CUDAJIT_H
