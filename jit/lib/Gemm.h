//===- Gemm.h - matrix-product kernels run by a tuned BLAS ------*- C++ -*-===//
//
// A kernel that is one matrix product per batch point (the one
// --strata-fuse builds for strata.matmul: two f32 or f64 inputs, a body
// that yields their product, one sum result) runs through OpenBLAS's
// cblas_?gemm when its strides are ones BLAS takes, instead of the JIT's
// loop nest. OpenBLAS is loaded at run time with dlopen, as the CUDA
// driver is: nothing links it, and without it (or with STRATA_BLAS=0)
// every matmul runs as a compiled kernel.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_JIT_LIB_GEMM_H
#define STRATA_JIT_LIB_GEMM_H

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir {
class Operation;
} // namespace mlir

namespace strata::jit::detail {

/// One matrix (rows x cols) of an operand: its element strides.
struct MatrixStrides {
  int64_t rows = 0, cols = 0;
};

/// C[m, n] = sum_k A[m, k] * B[k, n] for every point of the batch loops.
struct GemmCall {
  bool isDouble = false;
  int64_t m = 1, n = 1, k = 1;
  MatrixStrides a, b, c;
  /// Element offsets of the operands within their buffers.
  int64_t offsetA = 0, offsetB = 0, offsetC = 0;
  /// Batch loops: sizes and each operand's element stride along them.
  std::vector<int64_t> batch, batchA, batchB, batchC;
  /// A column-major result computed as C^T = B^T A^T: `a` describes the
  /// kernel's second input and `b` its first (runGemm swaps the buffers).
  bool operandsSwapped = false;
};

/// The product kernel `kernel` computes, when it is one BLAS can run
/// (layouts with a unit stride per matrix, no negative or zero strides
/// inside a matrix, sizes within BLAS's 32-bit integers); else nothing.
std::optional<GemmCall> matchGemm(mlir::Operation *kernel);

/// Whether OpenBLAS is loaded (and STRATA_BLAS is not 0): loads it once.
bool blasAvailable();

/// Runs `call` on buffers a, b (inputs) and c (the result): batch points
/// and row blocks spread over the thread pool unless `numThreads` is 1.
void runGemm(const GemmCall &call, const void *a, const void *b, void *c,
             int numThreads);

} // namespace strata::jit::detail

#endif // STRATA_JIT_LIB_GEMM_H
