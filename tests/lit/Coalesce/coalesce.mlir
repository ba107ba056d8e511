// RUN: strata-opt %s --strata-coalesce -split-input-file | FileCheck %s

// Contiguous operands: one loop of 12.
// CHECK-LABEL: func.func @merge
// CHECK: loop_sizes = array<i64: 12>, loop_strides = array<i64: 1, 1>
func.func @merge(%a: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> {
  %k = strata.kernel space [4, 3] ins(%a : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  return %k : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
}

// -----

// Size-1 dims vanish; the result's unit stride decides the inner loop of a
// transposed copy; a negative stride is kept.
// CHECK-LABEL: func.func @transpose
// CHECK: loop_sizes = array<i64: 3, 4>, loop_strides = array<i64: 1, -3, 4, 1>
func.func @transpose(%a: !strata.tensor<4x1x3xf32, strided<[-3, 3, 1], offset: 9>>) -> !strata.tensor<3x1x4xf32, strided<[4, 4, 1], offset: 0>> {
  %v = strata.strided_view %a : !strata.tensor<4x1x3xf32, strided<[-3, 3, 1], offset: 9>> -> !strata.tensor<3x1x4xf32, strided<[1, 3, -3], offset: 9>>
  %k = strata.kernel space [3, 1, 4] ins(%v : !strata.tensor<3x1x4xf32, strided<[1, 3, -3], offset: 9>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3x1x4xf32, strided<[4, 4, 1], offset: 0>>
  return %k : !strata.tensor<3x1x4xf32, strided<[4, 4, 1], offset: 0>>
}

// -----

// Sum over dim 0 of a row-major matrix: rows stay inner (result stride 1),
// the reduced dim outer.
// CHECK-LABEL: func.func @colsum
// CHECK: loop_sizes = array<i64: 8, 16>, loop_strides = array<i64: 16, 1, 0, 1>
func.func @colsum(%a: !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>) -> !strata.tensor<16xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [8, 16] reduce [0] combiners ["sum"] ins(%a : !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<16xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<16xf32, strided<[1], offset: 0>>
}
