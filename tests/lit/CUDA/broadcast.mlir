// (The static forms: STRATA_DYNAMIC_SHAPES=0; the dynamic ones of kernels
// of two loops or more, sizes as parameters: inner-size.mlir.)
// RUN: env STRATA_DYNAMIC_SHAPES=0 strata-translate --emit-cuda %s | FileCheck %s
// Broadcast operands (stride 0) are loaded once per vector of 4 points.

// CHECK-LABEL: // kernel 0
// CHECK: // launch: vectorized grid 2 block 256x1 n0 64
// CHECK: // kernel strata_kernel: vectorized, loops [n0, 32], 32-bit indices
// CHECK: const float a0 = in0[i0];
// CHECK-NEXT: const StrataVec4<float> a1 = *reinterpret_cast<const StrataVec4<float> *>(in1 + i1);
// CHECK: const float v0 = a0 + a1.v[l];
// CHECK: *reinterpret_cast<StrataVec4<float> *>(out0 + i0 * 32 + i1) = o0;
func.func @outer_add(%a: !strata.tensor<64x32xf32, strided<[1, 0], offset: 0>>, %b: !strata.tensor<64x32xf32, strided<[0, 1], offset: 0>>) -> !strata.tensor<64x32xf32, strided<[32, 1], offset: 0>> {
  %k = strata.kernel space [64, 32] ins(%a, %b : !strata.tensor<64x32xf32, strided<[1, 0], offset: 0>>, !strata.tensor<64x32xf32, strided<[0, 1], offset: 0>>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    strata.yield %s : f32
  } -> !strata.tensor<64x32xf32, strided<[32, 1], offset: 0>>
  return %k : !strata.tensor<64x32xf32, strided<[32, 1], offset: 0>>
}

// Sizes that are not a multiple of 4: one point per thread.
// CHECK-LABEL: // kernel 1
// CHECK: // kernel strata_kernel: pointwise, loops [n0, 5], 32-bit indices
// CHECK: const float a0 = in0[i0];
// CHECK-NEXT: const float a1 = in1[i1];
func.func @outer_add_odd(%a: !strata.tensor<4x5xf32, strided<[1, 0], offset: 0>>, %b: !strata.tensor<4x5xf32, strided<[0, 1], offset: 0>>) -> !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>> {
  %k = strata.kernel space [4, 5] ins(%a, %b : !strata.tensor<4x5xf32, strided<[1, 0], offset: 0>>, !strata.tensor<4x5xf32, strided<[0, 1], offset: 0>>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    strata.yield %s : f32
  } -> !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>>
  return %k : !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>>
}
