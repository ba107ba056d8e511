// RUN: strata-translate --emit-cuda %s | FileCheck %s
// Reductions with `none` results (sibling fusion): the reduction loops
// visit every point once and store the elementwise results there; only the
// combining results have accumulators, shared memory, and a `_finish` step.

// CHECK-LABEL: // kernel 0
// CHECK: // launch: row-reduce grid 4 block 256x1
// CHECK: __shared__ float scratch0[32];
// CHECK-NOT: scratch1
// CHECK: float acc0 = 0.0f;
// CHECK-NOT: acc1
// CHECK: for (int j = s * 1024 + threadIdx.x; j < jEnd; j += blockDim.x) {
// CHECK: acc0 = StrataSum()(acc0, a0);
// CHECK-NEXT: out1[i0 * 1024 + i1] = {{.*}};
// CHECK: if (threadIdx.x == 0) {
// CHECK-NEXT: out0[i0] = acc0;
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
// CHECK: if (o < 128) {
// CHECK: out0[i0 + i1 * 16] = a0;
// CHECK-NEXT: acc1 = StrataMax()(acc1, a0);
// CHECK: out1[i1] = acc1;
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
// CHECK-NEXT: float *__restrict__ out1) {
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
