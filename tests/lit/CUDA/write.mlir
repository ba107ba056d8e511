// RUN: strata-translate --emit-cuda %s | FileCheck %s
// A kernel `into` a destination writes through the destination's layout
// into the new version of its storage (out0); `dest` is never read.

// CHECK-LABEL: // kernel 0
// CHECK: strata_kernel(const float *__restrict__ in0,
// CHECK-NEXT: float *__restrict__ out0,
// CHECK-NEXT: const void *__restrict__ dest,
// CHECK-NEXT: long long n0) {
// CHECK: const float a0 = in0[i0];
// CHECK: out0[2 + i0 * 5] = v1;
func.func @write_column(%src: !strata.tensor<4xf32, strided<[1], offset: 0>>, %dst: !strata.tensor<4xf32, strided<[5], offset: 2>>) -> !strata.storage<20xf32> {
  %k = strata.kernel space [4] ins(%src : !strata.tensor<4xf32, strided<[1], offset: 0>>) into(%dst : !strata.tensor<4xf32, strided<[5], offset: 2>>) {
  ^bb0(%x: f32):
    %c = arith.constant 3.0 : f32
    %m = arith.mulf %x, %c : f32
    strata.yield %m : f32
  } -> !strata.storage<20xf32>
  return %k : !strata.storage<20xf32>
}

// RUN: strata-translate --emit-cuda %S/../Reference/write.mlir | FileCheck %s --check-prefix=REF
// REF: const void *__restrict__ dest,
// REF-NEXT: long long n0) {
