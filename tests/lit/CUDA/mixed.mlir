// RUN: strata-translate --emit-cuda %s | FileCheck %s
// Reductions with `none` results (sibling fusion): the reduction loops
// visit every point once and store the elementwise results there; only the
// combining results have accumulators, shared memory, and a `_finish` step.
// (The two-loop kernels take their inner sizes, strides and offsets as
// parameters: reduce-size.mlir.)

// CHECK-LABEL: // kernel 0
// CHECK: // launch: row-reduce grid 4 block 256x1
// CHECK: __shared__ float scratch0[32];
// CHECK-NOT: scratch1
// CHECK: float acc0 = 0.0f;
// CHECK-NOT: acc1
// CHECK: for (int j = s * chunk + threadIdx.x; j < jEnd; j += blockDim.x) {
// CHECK: acc0 = StrataSum()(acc0, a0);
// CHECK-NEXT: out1[off2 + i0 * st2_0 + i1] = {{.*}};
// CHECK: if (threadIdx.x == 0) {
// CHECK-NEXT: out0[off1 + i0] = acc0;
// CHECK-NEXT: }
func.func @rowsum_and_double(%a: !strata.tensor<4x1024xf32, strided<[1024, 1], offset: 0>>) -> (!strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4x1024xf32, strided<[1024, 1], offset: 0>>) {
  %k:2 = strata.kernel space [4, 1024] reduce [1] combiners ["sum", "none"] ins(%a : !strata.tensor<4x1024xf32, strided<[1024, 1], offset: 0>>) {
  ^bb0(%x: f32):
    %d = arith.addf %x, %x : f32
    strata.yield %x, %d : f32, f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4x1024xf32, strided<[1024, 1], offset: 0>>
  return %k#0, %k#1 : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4x1024xf32, strided<[1024, 1], offset: 0>>
}

// The `none` result first, in its own (transposed) order; 32 outputs a
// block.
// CHECK-LABEL: // kernel 1
// CHECK: // launch: column-reduce grid 4 block 32x8
// CHECK: __shared__ float red1[8][33];
// CHECK-NOT: red0
// CHECK: if (o < outputs) {
// CHECK: out0[off1 + i0 + i1 * st1_1] = a0;
// CHECK-NEXT: acc1 = StrataMax()(acc1, a0);
// CHECK: out1[off2 + i1] = acc1;
func.func @colmax_and_transpose(%a: !strata.tensor<16x128xf32, strided<[128, 1], offset: 0>>) -> (!strata.tensor<128x16xf32, strided<[16, 1], offset: 0>>, !strata.tensor<128xf32, strided<[1], offset: 0>>) {
  %k:2 = strata.kernel space [16, 128] reduce [0] combiners ["none", "max"] ins(%a : !strata.tensor<16x128xf32, strided<[128, 1], offset: 0>>) attributes {result_perms = array<i64: 1, 0, 0, 1>} {
  ^bb0(%x: f32):
    strata.yield %x, %x : f32, f32
  } -> !strata.tensor<128x16xf32, strided<[16, 1], offset: 0>>, !strata.tensor<128xf32, strided<[1], offset: 0>>
  return %k#0, %k#1 : !strata.tensor<128x16xf32, strided<[16, 1], offset: 0>>, !strata.tensor<128xf32, strided<[1], offset: 0>>
}

// A split total: the `none` result is written by the main kernel; the
// finish step combines only the sum (its parameters stay one per result).
// CHECK-LABEL: // kernel 2
// CHECK: splits 256, then strata_kernel_finish
// CHECK: part0[(0) * 256 + s] = acc0;
// CHECK: strata_kernel_finish(const float *__restrict__ part0,
// CHECK-NEXT: const float *__restrict__ part1,
// CHECK-NEXT: float *__restrict__ out0,
// CHECK-NEXT: float *__restrict__ out1,
// CHECK-NEXT: long long n0) {
// CHECK: acc0 = StrataSum()(acc0, part0[o * 256 + s]);
// CHECK-NEXT: out0[o] = acc0;
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @total_and_relu(%a: !strata.tensor<1048576xf32, strided<[1], offset: 0>>) -> (!strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<1048576xf32, strided<[1], offset: 0>>) {
  %k:2 = strata.kernel space [1048576] reduce [0] combiners ["sum", "none"] ins(%a : !strata.tensor<1048576xf32, strided<[1], offset: 0>>) {
  ^bb0(%x: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maxf %x, %z : f32
    strata.yield %x, %r : f32, f32
  } -> !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<1048576xf32, strided<[1], offset: 0>>
  return %k#0, %k#1 : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<1048576xf32, strided<[1], offset: 0>>
}

// A training step's shape: the loss (a sum of every point) beside two
// elementwise results, one in the loop order and one transposed, reading
// one input transposed. All reductions are to scalars and the operands
// disagree on the unit-stride loop, so the kernel is tiled-reduce: x and
// the transposed result go through shared-memory tiles, each thread sums
// the points it computes, each block writes one partial, and the finish
// step combines the 4 partials in order.
// CHECK-LABEL: // kernel 3
// CHECK: // launch: tiled-reduce grid 4 block 32x8 n0 40 splits 4, then strata_kernel_finish grid 1 block 256
// CHECK: __shared__ float tile_in0[32][33];
// CHECK-NOT: tile_in1
// CHECK: __shared__ float tile_out2[32][33];
// CHECK: __shared__ float scratch0[32];
// CHECK-NEXT: float acc0 = 0.0f;
// CHECK: for (int b = blockIdx.x; b < tilesT * 2; b += gridDim.x) {
// CHECK: tile_in0[k][threadIdx.x] = in0[i0 + i1 * 40];
// CHECK: const float a0 = tile_in0[threadIdx.x][k];
// CHECK: acc0 = StrataSum()(acc0, {{.*}});
// CHECK-NEXT: out1[i0 * 48 + i1] = {{.*}};
// CHECK-NEXT: tile_out2[threadIdx.x][k] = {{.*}};
// CHECK: out2[i0 + i1 * 40] = tile_out2[k][threadIdx.x];
// CHECK: acc0 = strata_block_reduce<StrataSum, float>(acc0, 0.0f, scratch0);
// CHECK-NEXT: if (threadIdx.x == 0 && threadIdx.y == 0) {
// CHECK-NEXT: part0[(0) * 4 + blockIdx.x] = acc0;
// CHECK-NEXT: }
// CHECK: acc0 = StrataSum()(acc0, part0[o * 4 + s]);
func.func @step(%x: !strata.tensor<40x48xf32, strided<[1, 40], offset: 0>>, %w: !strata.tensor<40x48xf32, strided<[48, 1], offset: 0>>) -> (!strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<40x48xf32, strided<[48, 1], offset: 0>>, !strata.tensor<48x40xf32, strided<[40, 1], offset: 0>>) {
  %k:3 = strata.kernel space [40, 48] reduce [0, 1] combiners ["sum", "none", "none"] ins(%x, %w : !strata.tensor<40x48xf32, strided<[1, 40], offset: 0>>, !strata.tensor<40x48xf32, strided<[48, 1], offset: 0>>) attributes {result_perms = array<i64: 0, 1, 0, 1, 1, 0>} {
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %b : f32
    %z = arith.constant 0.0 : f32
    %r = arith.maxf %p, %z : f32
    %c = arith.cmpf ogt, %p, %z : f32
    %gx = arith.select %c, %b, %z : f32
    %gw = arith.select %c, %a, %z : f32
    strata.yield %r, %gw, %gx : f32, f32, f32
  } -> !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<40x48xf32, strided<[48, 1], offset: 0>>, !strata.tensor<48x40xf32, strided<[40, 1], offset: 0>>
  return %k#0, %k#1, %k#2 : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<40x48xf32, strided<[48, 1], offset: 0>>, !strata.tensor<48x40xf32, strided<[40, 1], offset: 0>>
}
