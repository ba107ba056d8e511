//===- Combiners.cpp - reduction combiners on host memory -----------------===//
//
// Combiners.h. One template per operation, instantiated for each element
// type (bool as one byte).
//
//===----------------------------------------------------------------------===//
#include "Combiners.h"
#include "strata/Target/ScalarOps.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

using namespace strata;

namespace {

template <typename T>
void fillTyped(void *data, int64_t n, std::string_view combiner, DType dtype) {
  strata::codegen::CombinerIdentity id =
      strata::codegen::combinerIdentity(combiner, dtype);
  std::fill_n(static_cast<T *>(data), n,
              id.isFloat ? static_cast<T>(id.value)
                         : static_cast<T>(id.integer));
}

template <typename T>
void mergeTyped(unsigned char *into, const unsigned char *from, int64_t n,
                std::string_view combiner) {
  T *a = reinterpret_cast<T *>(into);
  const T *b = reinterpret_cast<const T *>(from);
  bool isMax = combiner == "max";
  for (int64_t i = 0; i < n; ++i) {
    if (combiner == "sum") {
      if constexpr (std::is_same_v<T, bool>)
        a[i] = a[i] || b[i];
      else
        a[i] += b[i];
    } else if (combiner == "prod") {
      if constexpr (std::is_same_v<T, bool>)
        a[i] = a[i] && b[i];
      else if constexpr (std::is_integral_v<T>) // wraps, as the kernels
        a[i] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(a[i]) *
                              static_cast<std::make_unsigned_t<T>>(b[i]));
      else
        a[i] *= b[i];
    } else if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a[i]) || std::isnan(b[i]))
        a[i] = a[i] + b[i];
      else
        a[i] = isMax ? std::max(a[i], b[i]) : std::min(a[i], b[i]);
    } else {
      a[i] = isMax ? std::max(a[i], b[i]) : std::min(a[i], b[i]);
    }
  }
}

} // namespace

bool strata::jit::detail::runnerFillsIdentity(std::string_view combiner,
                                              bool kernelRuns,
                                              ResultStart start) {
  return !combiner.empty() && (!kernelRuns || start == ResultStart::FromMemory);
}

void strata::jit::detail::fillIdentity(void *data, int64_t elements,
                                       DType dtype, std::string_view combiner) {
  if (elements <= 0)
    return;
  switch (dtype) {
  case DType::F32:
    return fillTyped<float>(data, elements, combiner, dtype);
  case DType::F64:
    return fillTyped<double>(data, elements, combiner, dtype);
  case DType::I32:
    return fillTyped<int32_t>(data, elements, combiner, dtype);
  case DType::I64:
    return fillTyped<int64_t>(data, elements, combiner, dtype);
  case DType::Bool:
    return fillTyped<bool>(data, elements, combiner, dtype);
  }
}

void strata::jit::detail::mergePartial(DType dtype, unsigned char *into,
                                       const unsigned char *from,
                                       int64_t elements,
                                       std::string_view combiner) {
  switch (dtype) {
  case DType::F32:
    return mergeTyped<float>(into, from, elements, combiner);
  case DType::F64:
    return mergeTyped<double>(into, from, elements, combiner);
  case DType::I32:
    return mergeTyped<int32_t>(into, from, elements, combiner);
  case DType::I64:
    return mergeTyped<int64_t>(into, from, elements, combiner);
  case DType::Bool: // as the kernels' i1: a sum is an or, a prod an and
    return mergeTyped<bool>(into, from, elements, combiner);
  }
}
