//===- Combiners.h - reduction combiners on host memory ---------*- C++ -*-===//
//
// What the runners do with a reducing result outside its kernel, for both
// backends: the one policy of when a result is filled with its combiner's
// identity (runnerFillsIdentity), the fill (the identities themselves are
// strata/Target/ScalarOps.h's, which the emitters' accumulators start from
// too), and the merge of the private partials of parallel chunks (the CPU
// backend's outermost-loop reductions). The kernels' own combining is the
// emitters' (KernelToLLVM, KernelToCUDA); these agree with it.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_JIT_LIB_COMBINERS_H
#define STRATA_JIT_LIB_COMBINERS_H

#include "strata/Runtime/DType.h"

#include <cstdint>
#include <string_view>

namespace strata::jit::detail {

/// How a kernel's reducing result gets its combiner's identity.
enum class ResultStart {
  /// The kernel combines into the result's memory (the CPU kernels of
  /// KernelToLLVM): the memory must hold the identity first.
  FromMemory,
  /// The kernel starts its accumulators at the identity itself and writes
  /// every element (the CUDA kernels of KernelToCUDA; a BLAS gemm).
  InKernel,
};

/// The identity-fill policy of both runners (Executor.cpp,
/// CudaExecutor.cpp): whether the runner fills a result of `combiner` (""
/// for a result written, not combined) with the identity on the host
/// before the step. A reducing result always starts as the identity (the
/// sum of no elements is 0, as PyTorch's); the runner writes it when the
/// kernel starts from memory, or when no kernel runs (`kernelRuns` false: a
/// kernel with no points is neither compiled nor launched, so its results
/// are the identity alone).
bool runnerFillsIdentity(std::string_view combiner, bool kernelRuns,
                         ResultStart start);

/// Writes the identity of reduction `combiner` ("sum", "prod", "max",
/// "min") in element type `dtype` to `elements` elements at `data`: exact
/// per type (false/true for bool max/min, INT64_MIN/MAX, -inf/inf).
void fillIdentity(void *data, int64_t elements, DType dtype,
                  std::string_view combiner);

/// into[i] = combine(into[i], from[i]) for the `elements` elements of a
/// result of type `dtype`, as the kernels combine: integer products wrap,
/// a float max/min with a NaN gives NaN.
void mergePartial(DType dtype, unsigned char *into, const unsigned char *from,
                  int64_t elements, std::string_view combiner);

} // namespace strata::jit::detail

#endif // STRATA_JIT_LIB_COMBINERS_H
