//===- Combiners.h - reduction combiners on host memory ---------*- C++ -*-===//
//
// What the runners do with a reducing result outside its kernel: fill it
// with its combiner's identity before the kernel combines into it (both
// backends), and merge the private partials of parallel chunks (the CPU
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
