//===- KernelToCUDA.h - strata.kernel to CUDA C -----------------*- C++ -*-===//
//
// Emits one CUDA C translation unit per strata.kernel (NVRTC compiles it to
// PTX). Strides, offsets and every loop size but the outermost become
// constants, but in a dynamic pointwise, vectorized or reduction kernel
// (below). The calling convention of the entry `name`:
//   extern "C" __global__ void name(const T0 *in0, ..., R0 *out0, ...,
//                                   [const void *dest,] [R0 *part0, ...,]
//                                   [long long n0, long long d...])
// one pointer per loop operand (inputs, results, dest: the base address of
// its storage root, as in KernelOp::getLoopNest), then, for a split
// reduction, one partial buffer per result of `outputs * splits` elements,
// then, when `outerArg` is set (every kernel with a loop but scans), the
// outermost loop's trip count `outerSize`, and for a dynamic pointwise,
// vectorized or reduction kernel (two loops or more) `dimArgs`: its inner
// trip counts, strides other than 0 and +-1 and offsets (a reduction's
// also its split count when split and, when its innermost loop reduces,
// its kind: `rowmode`), so its source holds none of them and serves every
// size of its class, and (every kernel but scans) the body's size values,
// a mean's count. A split reduction also has
// `name_finish(const R0 *part0, ..., R0 *out0, ..., [long long n0, d...])`,
// launched after the entry with the same `long long` parameters, which
// combines the partials in order.
// The source holds no outermost trip count when `outerArg` is set, only what
// the emitter decided from it: the kind (a one-point outermost loop is not
// tiled; a one-loop reduction of fewer than 32 points is a column one),
// 32- or 64-bit indices, whether a reduction splits (and a one-loop
// reduction's split count) and a tiled-reduce kernel's number of partials.
// So kernels that differ in their outermost size alone, and whose decisions
// agree, have equal sources and share one PTX (cudaKernelCodeKey); the
// launch shape (grid, outputs) is computed from the actual sizes each time
// a kernel is emitted. Scans keep every size in their source.
// No MLIR or LLVM in this header.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TARGET_CUDA_KERNELTOCUDA_H
#define STRATA_TARGET_CUDA_KERNELTOCUDA_H

#include <cstdint>
#include <string>
#include <vector>

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
  /// The entries take the outermost loop's trip count as their last
  /// parameter (`long long n0`); pass `outerSize`.
  bool outerArg = false;
  int64_t outerSize = 0;
  /// The values of the `long long` parameters after `n0`, in order: a
  /// dynamic pointwise, vectorized or reduction kernel's (two loops or
  /// more) inner trip counts, strides other than 0 and +-1 and offsets, a
  /// dynamic reduction's split count (when split) and kind (1: row, 0:
  /// column; when the innermost loop reduces), then any kernel's size
  /// values (a mean's count; KernelToCUDADynamic.cpp). A split reduction's
  /// finish takes them too.
  std::vector<int64_t> dimArgs;
};

/// Fills `out` for kernel `kernelOp` (a strata.kernel) with entry `name`;
/// false with `error` set when the body holds an unsupported op.
/// Deterministic: the same kernel gives the same text.
bool emitKernelCUDA(mlir::Operation *kernelOp, const std::string &name,
                    CudaKernel &out, std::string &error);

/// The PTX cache's key of a kernel (what its PTX depends on, beside the CPU's
/// kernelCodeKey): its CUDA C with entry `strata_kernel`, which leaves out
/// the outermost trip count (see the top of this file); "" when the kernel
/// cannot be emitted. kernelPTX keys the source it emits the same way.
std::string cudaKernelCodeKey(mlir::Operation *kernelOp);

/// Changes whenever the CUDA emitter is rebuilt (part of PTX cache keys).
const char *cudaEmitterBuildId();

} // namespace strata::codegen

#endif // STRATA_TARGET_CUDA_KERNELTOCUDA_H
