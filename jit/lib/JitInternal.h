//===- JitInternal.h - shared between the JIT's files -----------*- C++ -*-===//
#ifndef STRATA_JIT_LIB_JITINTERNAL_H
#define STRATA_JIT_LIB_JITINTERNAL_H

#include <cstdint>
#include <string>

namespace mlir {
class Operation;
} // namespace mlir

namespace strata::jit {
/// The kernel ABI (see KernelToLLVM.h).
using KernelFn = void (*)(void **buffers, int64_t begin, int64_t end);
namespace detail {
/// The compiled entry point of a strata.kernel (cached); null + error.
KernelFn getKernel(mlir::Operation *kernel, std::string &error);
/// STRATA_DEBUG (0 when unset).
int debug();
} // namespace detail
} // namespace strata::jit

#endif // STRATA_JIT_LIB_JITINTERNAL_H
