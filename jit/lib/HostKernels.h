//===- HostKernels.h - kernels strata runs without compiling ----*- C++ -*-===//
//
// Private to jit/lib: the CPU backend (Executor.cpp) asks here before it
// compiles a kernel.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_JIT_LIB_HOSTKERNELS_H
#define STRATA_JIT_LIB_HOSTKERNELS_H

#include "JitInternal.h"

namespace strata::jit::detail {

/// A function of strata's own that does what `kernel` does, with the
/// kernel ABI; null when there is none and the kernel must be compiled.
KernelFn hostKernel(mlir::Operation *kernel);

} // namespace strata::jit::detail

#endif // STRATA_JIT_LIB_HOSTKERNELS_H
