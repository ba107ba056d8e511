//===- KernelToCUDA.h - strata.kernel to CUDA C -----------------*- C++ -*-===//
//
// Emits one CUDA C translation unit per strata.kernel (NVRTC compiles it to
// PTX). Static sizes, strides and offsets become constants. The calling
// convention of the entry `name`:
//   extern "C" __global__ void name(const T0 *in0, ..., R0 *out0, ...,
//                                   [const void *dest,] [R0 *part0, ...])
// one pointer per loop operand (inputs, results, dest: the base address of
// its storage root, as in KernelOp::getLoopNest), then, for a split
// reduction, one partial buffer per result of `outputs * splits` elements.
// A split reduction also has `name_finish(const R0 *part0, ..., R0 *out0,
// ...)`, launched after the entry, which combines the partials in order.
// No MLIR or LLVM in this header.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TARGET_CUDA_KERNELTOCUDA_H
#define STRATA_TARGET_CUDA_KERNELTOCUDA_H

#include <cstdint>
#include <string>

namespace mlir {
class Operation;
} // namespace mlir

namespace strata::codegen {

/// How a kernel maps onto the GPU.
enum class CudaKernelKind {
  Pointwise,    ///< one thread per point, grid-stride loop
  Vectorized,   ///< one thread per 4 consecutive points, vector loads/stores
  Tiled,        ///< 32x32 shared-memory tiles for transposed access
  RowReduce,    ///< one block per output (the innermost loop reduces)
  ColumnReduce, ///< 32 outputs per block, 8 threads along the reduction
  TiledReduce,  ///< Tiled, reducing to scalars: a partial per block
  Scan,         ///< one thread per line of a scan (cumsum, cumprod)
};
const char *cudaKernelKindName(CudaKernelKind kind);

/// One emitted kernel and how to launch it.
struct CudaKernel {
  std::string source;     ///< the whole translation unit
  std::string name;       ///< the entry point
  std::string finishName; ///< set when splits > 1
  CudaKernelKind kind = CudaKernelKind::Pointwise;
  int64_t numPoints = 0; ///< 0: the kernel must not be launched
  unsigned blockX = 256, blockY = 1;
  int64_t gridX = 1;
  /// Reductions: number of outputs and partial results per output.
  int64_t outputs = 0, splits = 1;
  unsigned finishBlock = 256;
  int64_t finishGrid = 1;
  /// Index arithmetic in 64 bits (sizes or offsets beyond 2^31).
  bool index64 = false;
};

/// Fills `out` for kernel `kernelOp` (a strata.kernel) with entry `name`;
/// false with `error` set when the body holds an unsupported op.
/// Deterministic: the same kernel gives the same text.
bool emitKernelCUDA(mlir::Operation *kernelOp, const std::string &name,
                    CudaKernel &out, std::string &error);

/// Changes whenever the CUDA emitter is rebuilt (part of PTX cache keys).
const char *cudaEmitterBuildId();

} // namespace strata::codegen

#endif // STRATA_TARGET_CUDA_KERNELTOCUDA_H
