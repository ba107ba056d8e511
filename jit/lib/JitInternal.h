//===- JitInternal.h - shared between the JIT's files -----------*- C++ -*-===//
#ifndef STRATA_JIT_LIB_JITINTERNAL_H
#define STRATA_JIT_LIB_JITINTERNAL_H

#include <cstdint>
#include <memory>
#include <string>

namespace mlir {
class Operation;
} // namespace mlir

namespace strata::jit {
/// The kernel ABI (see KernelToLLVM.h).
using KernelFn = void (*)(void **buffers, int64_t begin, int64_t end,
                          const int64_t *dims);
namespace detail {
/// One kernel linked into its own JITDylib. The code stays loaded while
/// any handle lives: the kernel cache holds one until it evicts the kernel,
/// and every plan (runFunction's, a PreparedFunction's) holds one for each
/// kernel it calls, so a running evaluation never loses its code. The last
/// handle's destructor removes the JITDylib, which frees the code.
struct CompiledKernel {
  KernelFn fn = nullptr;
  void *dylib = nullptr; // llvm::orc::JITDylib *
  int64_t bytes = 0;     // its object file's size
  CompiledKernel() = default;
  CompiledKernel(const CompiledKernel &) = delete;
  CompiledKernel &operator=(const CompiledKernel &) = delete;
  ~CompiledKernel();
};
using KernelHandle = std::shared_ptr<const CompiledKernel>;
/// The compiled kernel of a strata.kernel (cached); null + error.
KernelHandle getKernel(mlir::Operation *kernel, std::string &error);
} // namespace detail
} // namespace strata::jit

#endif // STRATA_JIT_LIB_JITINTERNAL_H
