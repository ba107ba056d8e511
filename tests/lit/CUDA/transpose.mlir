// RUN: strata-translate --emit-cuda %s | FileCheck %s
// Operands that disagree on the unit-stride loop go through 32x32 shared
// memory tiles: transposed inputs are loaded with threadIdx.x along their
// unit-stride loop, transposed results stored the same way. The tiled
// loop here is the outermost: its trip count is the parameter n0, and the
// number of its tiles is computed from it.

// a.t().contiguous()
// CHECK-LABEL: // kernel 0
// CHECK: // launch: tiled grid 4 block 32x8 n0 64
// CHECK: // kernel strata_kernel: tiled, loops [n0, 64], 32-bit indices
// CHECK: __shared__ float tile_in0[32][33];
// CHECK-NEXT: const int size0 = (int)n0;
// CHECK-NEXT: const int tilesT = (size0 + 31) / 32;
// CHECK-NEXT: for (int b = blockIdx.x; b < tilesT * 2; b += gridDim.x) {
// CHECK: const int j0 = r % 2 * 32;
// CHECK: const int t0 = r % tilesT * 32;
// CHECK: // load transposed inputs into shared memory
// CHECK: const int i0 = t0 + threadIdx.x;
// CHECK-NEXT: const int i1 = j0 + k;
// CHECK-NEXT: if (i0 < size0 && i1 < 64) {
// CHECK: tile_in0[k][threadIdx.x] = in0[i0 + i1 * 64];
// CHECK: __syncthreads();
// CHECK: // compute, threadIdx.x along the innermost loop
// CHECK: const float a0 = tile_in0[threadIdx.x][k];
// CHECK: out0[i0 * 64 + i1] = a0;
func.func @transpose_copy(%a: !strata.tensor<64x64xf32, strided<[1, 64], offset: 0>>) -> !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>> {
  %k = strata.kernel space [64, 64] ins(%a : !strata.tensor<64x64xf32, strided<[1, 64], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>
  return %k : !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>
}

// Through the pipeline: a.t() + b and a batched transpose.
// RUN: strata-translate --emit-cuda %S/../Reference/views.mlir | FileCheck %s --check-prefix=VIEWS
// VIEWS: // kernel strata_kernel
func.func @transpose_add(%a: !strata.tensor<48x40xf32, strided<[1, 48], offset: 0>>, %b: !strata.tensor<48x40xf32, strided<[40, 1], offset: 0>>) -> !strata.tensor<48x40xf32, strided<[40, 1], offset: 0>> {
  %k = strata.kernel space [48, 40] ins(%a, %b : !strata.tensor<48x40xf32, strided<[1, 48], offset: 0>>, !strata.tensor<48x40xf32, strided<[40, 1], offset: 0>>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    strata.yield %s : f32
  } -> !strata.tensor<48x40xf32, strided<[40, 1], offset: 0>>
  return %k : !strata.tensor<48x40xf32, strided<[40, 1], offset: 0>>
}
// CHECK-LABEL: // kernel 1
// CHECK: // launch: tiled grid 4 block 32x8 n0 48
// CHECK: if (i0 < size0 && i1 < 40) {
// CHECK: const float a0 = tile_in0[threadIdx.x][k];
// CHECK-NEXT: const float a1 = in1[i0 * 40 + i1];
// CHECK-NEXT: const float v0 = a0 + a1;
