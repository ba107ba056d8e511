//===- CudaIndexMap.cpp - indexed access in CUDA C kernels ----------------===//
//
// A kernel's `index_map` (strata.gather / scatter / scatter_add, see
// StrataKernelOps.td) in the pointwise CUDA kernel: the indexed operand's
// element offset gains the clamped index value times a stride; an
// accumulating store is an atomicAdd (bool: a store of true where the
// value is true), so duplicate indices add up across threads (in an order
// the hardware picks, as PyTorch's CUDA scatter_add).
//
//===----------------------------------------------------------------------===//
#include "CudaScalarOps.h"

using namespace strata::codegen;

std::string cuda::indexedOffset(llvm::ArrayRef<int64_t> map,
                                const std::string &offset,
                                const std::string &index) {
  int64_t stride = map[2], last = std::max<int64_t>(map[3] - 1, 0);
  return offset + " + (" + index + " < 0 ? 0LL : " + index + " > " +
         std::to_string(last) + "LL ? " + std::to_string(last) +
         "LL : (long long)" + index + ") * " + std::to_string(stride) + "LL";
}

std::string cuda::indexedStore(llvm::ArrayRef<int64_t> map, mlir::Type t,
                               const std::string &element,
                               const std::string &v) {
  if (!map[4])
    return element + " = " + toMemory(t, v) + ";";
  if (t.isInteger(1))
    return "if (" + v + ") " + element + " = 1;";
  if (t.isInteger(64))
    return "atomicAdd((unsigned long long *)&" + element +
           ", (unsigned long long)" + v + ");";
  return "atomicAdd(&" + element + ", " + v + ");";
}
