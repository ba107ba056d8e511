// RUN: strata-opt --canonicalize -split-input-file %s | FileCheck %s
// A view whose type equals a value up to 8 steps back in its own chain
// (same root) is that value. Layouts: PyTorch 1.13; flip by hand.

// CHECK-LABEL: func.func @transpose_transpose(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[E:.*]] = strata.exp %[[A]]
// CHECK-NEXT: return %[[E]]
func.func @transpose_transpose(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %t2 = strata.transpose %t dims 1, 0 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %e = strata.exp %t2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %e : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}

// -----

// unsqueeze then squeeze of that dim; squeeze of a dim that is not 1.
// CHECK-LABEL: func.func @unsqueeze_squeeze(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: return %[[A]], %[[A]]
func.func @unsqueeze_squeeze(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  %u = strata.unsqueeze %arg0 dim 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x1x4xf32, strided<[4, 4, 1], offset: 0>>
  %s = strata.squeeze %u dims [1] : !strata.tensor<3x1x4xf32, strided<[4, 4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %s2 = strata.squeeze %arg0 dims [0] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %s, %s2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}

// -----

// Four different views that come back to the start.
// CHECK-LABEL: func.func @deep_chain(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: return %[[A]]
func.func @deep_chain(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> {
  %u = strata.unsqueeze %arg0 dim 0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<1x3x4xf32, strided<[12, 4, 1], offset: 0>>
  %t = strata.transpose %u dims 1, 2 : !strata.tensor<1x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<1x4x3xf32, strided<[12, 1, 4], offset: 0>>
  %f = strata.flip %t dims [1] : !strata.tensor<1x4x3xf32, strided<[12, 1, 4], offset: 0>> -> !strata.tensor<1x4x3xf32, strided<[12, -1, 4], offset: 3>>
  %g = strata.flip %f dims [1] : !strata.tensor<1x4x3xf32, strided<[12, -1, 4], offset: 3>> -> !strata.tensor<1x4x3xf32, strided<[12, 1, 4], offset: 0>>
  %p = strata.permute %g dims [0, 2, 1] : !strata.tensor<1x4x3xf32, strided<[12, 1, 4], offset: 0>> -> !strata.tensor<1x3x4xf32, strided<[12, 4, 1], offset: 0>>
  %s = strata.squeeze %p : !strata.tensor<1x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %s : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}

// -----

// narrow of a whole dim and an as_strided that restates the layout.
// CHECK-LABEL: func.func @restated(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: return %[[A]], %[[A]]
func.func @restated(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  %n = strata.narrow %arg0 dim 0 start 0 length 3 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %w = strata.as_strided %arg0 sizes [3, 4] strides [4, 1] offset 0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %n, %w : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}

// -----

// permute∘permute (the op's own pattern) composes to the identity.
// CHECK-LABEL: func.func @permute_permute(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: return %[[A]]
func.func @permute_permute(%arg0: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> {
  %p = strata.permute %arg0 dims [1, 2, 0] : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<3x4x2xf32, strided<[4, 1, 12], offset: 0>>
  %q = strata.permute %p dims [2, 0, 1] : !strata.tensor<3x4x2xf32, strided<[4, 1, 12], offset: 0>> -> !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>
  return %q : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>
}

// -----

// A copy is a new root: the transpose after it is not the transpose before.
// CHECK-LABEL: func.func @not_across_copy(
// CHECK-NEXT: strata.transpose
// CHECK-NEXT: strata.contiguous
// CHECK-NEXT: strata.transpose
func.func @not_across_copy(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %t2 = strata.transpose %c dims 0, 1 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
  return %t2 : !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
}

// -----

// Same type as the start but in another storage version: not the same value.
// CHECK-LABEL: func.func @not_across_write(
// CHECK: strata.write
// CHECK-NEXT: %[[B:.*]] = strata.strided_view
// CHECK-NEXT: return %[[B]]
func.func @not_across_write(%s: !strata.storage<12xf32>, %v: !strata.tensor<f32, strided<[], offset: 0>>) -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> {
  %a = strata.strided_view %s : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %s1 = strata.write %v into %a : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.storage<12xf32>
  %b = strata.strided_view %s1 : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %b : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}
