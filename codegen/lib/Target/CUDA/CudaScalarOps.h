//===- CudaScalarOps.h - kernel bodies as CUDA C expressions ----*- C++ -*-===//
//
// Shared by the CUDA emitter's files only: C types of strata element types,
// combiners, the fixed prelude every kernel starts with, and the body of a
// strata.kernel (arith/math ops) as a list of `const T vN = expr;` lines.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LIB_TARGET_CUDA_CUDASCALAROPS_H
#define STRATA_LIB_TARGET_CUDA_CUDASCALAROPS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace strata::codegen {
struct CudaKernel;
} // namespace strata::codegen

namespace strata::codegen::cuda {

/// The register type: float, double, int, long long or bool.
std::string scalarType(mlir::Type t);
/// The memory type: as scalarType, but i1 is one byte (unsigned char).
std::string memoryType(mlir::Type t);
/// Bytes of one element in memory.
int64_t memoryBytes(mlir::Type t);
/// `expr` read from memory converted to the register type.
std::string fromMemory(mlir::Type t, const std::string &expr);
/// Register value `expr` converted for a store.
std::string toMemory(mlir::Type t, const std::string &expr);
/// The identity of a combiner ("sum", "max", "min") as a C literal.
std::string identity(llvm::StringRef combiner, mlir::Type t);
/// The functor type in the prelude that applies a combiner.
std::string combinerOp(llvm::StringRef combiner);
/// A C expression combining `a` and `b` (NaN-propagating max/min).
std::string combine(llvm::StringRef combiner, const std::string &a,
                    const std::string &b);
/// A kernel's `index_map` (CudaIndexMap.cpp): the indexed operand's element
/// offset `offset` plus the clamped value of `index` (a C expression) times
/// the map's stride, and the line storing `v` at `element` (an lvalue of
/// type `t`'s memory type), plain or accumulating.
std::string indexedOffset(llvm::ArrayRef<int64_t> map,
                          const std::string &offset, const std::string &index);
std::string indexedStore(llvm::ArrayRef<int64_t> map, mlir::Type t,
                         const std::string &element, const std::string &v);
/// The fixed helper code every kernel source starts with.
const char *prelude();

/// Appends to `os` one line per op of `body` (indented by `indent`), given
/// the C expressions of the block arguments; `yields` receives the C names
/// of the yielded values. False with `error` on an unsupported op.
/// `sizeValues`, when given, names the integer parameters that hold the
/// body's size values (isSizeValue, in body order): each is that
/// parameter converted to the constant's type instead of its literal.
bool emitBody(mlir::Block &body, llvm::ArrayRef<std::string> args,
              const std::string &indent, std::string &os,
              llvm::SmallVectorImpl<std::string> &yields, std::string &error,
              llvm::ArrayRef<std::string> sizeValues = {});
/// An f32 or f64 constant marked kSizeValueAttrName (a mean's count).
bool isSizeValue(mlir::Operation &op);

/// A scan kernel (KernelToCUDAScan.cpp): one thread per line.
bool emitScanKernel(mlir::Operation *kernelOp, const std::string &name,
                    CudaKernel &out, std::string &error);

} // namespace strata::codegen::cuda

#endif // STRATA_LIB_TARGET_CUDA_CUDASCALAROPS_H
