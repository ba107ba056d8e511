// RUN: strata-opt --strata-fold-views -split-input-file %s | FileCheck %s
// Stride 0 (expand), negative strides (flip), zero-size views, overlapping
// windows (unfold) and as_strided, whose offset is absolute in the root.
// Layouts: PyTorch 1.13, except flip (PyTorch copies; derived by hand).

// CHECK-LABEL: func.func @expand_stride0(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[S:.*]] = strata.strided_view %[[A]] : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<2x3xf32, strided<[0, 1], offset: 0>>
// CHECK-NEXT: %[[E:.*]] = strata.strided_view %[[A]] : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<5x2x3xf32, strided<[0, 0, 1], offset: 0>>
// CHECK-NEXT: return %[[S]], %[[E]]
func.func @expand_stride0(%arg0: !strata.tensor<3xf32, strided<[1], offset: 0>>) -> (!strata.tensor<2x3xf32, strided<[0, 1], offset: 0>>, !strata.tensor<5x2x3xf32, strided<[0, 0, 1], offset: 0>>) {
  %u = strata.unsqueeze %arg0 dim 1 : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  %e = strata.expand %u to [3, 4] : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[1, 0], offset: 0>>
  %t = strata.transpose %e dims 0, 1 : !strata.tensor<3x4xf32, strided<[1, 0], offset: 0>> -> !strata.tensor<4x3xf32, strided<[0, 1], offset: 0>>
  %s = strata.slice %t dim 0 start 1 end 3 step 1 : !strata.tensor<4x3xf32, strided<[0, 1], offset: 0>> -> !strata.tensor<2x3xf32, strided<[0, 1], offset: 0>>
  %e2 = strata.expand %s to [5, 2, 3] : !strata.tensor<2x3xf32, strided<[0, 1], offset: 0>> -> !strata.tensor<5x2x3xf32, strided<[0, 0, 1], offset: 0>>
  return %s, %e2 : !strata.tensor<2x3xf32, strided<[0, 1], offset: 0>>, !strata.tensor<5x2x3xf32, strided<[0, 0, 1], offset: 0>>
}

// -----

// x.flip(1).t()[1::2].flip(0) addresses x[a][2i]: strides [2, 4], offset 0;
// x.flip(0)[1:4:2] addresses x[3], x[1]: stride -2, offset 3.
// CHECK-LABEL: func.func @flip_negative(
// CHECK-SAME: %[[A:[^:]*]]: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %[[B:[^:]*]]:
// CHECK-DAG: %[[F:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<2x3xf32, strided<[2, 4], offset: 0>>
// CHECK-DAG: %[[N:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<2x3xf32, strided<[-2, 4], offset: 2>>
// CHECK-DAG: %[[G:.*]] = strata.strided_view %[[B]] : {{.*}} -> !strata.tensor<2xf32, strided<[-2], offset: 3>>
// CHECK: return %[[F]], %[[N]], %[[G]]
func.func @flip_negative(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %arg1: !strata.tensor<5xf32, strided<[1], offset: 0>>) -> (!strata.tensor<2x3xf32, strided<[2, 4], offset: 0>>, !strata.tensor<2x3xf32, strided<[-2, 4], offset: 2>>, !strata.tensor<2xf32, strided<[-2], offset: 3>>) {
  %f = strata.flip %arg0 dims [1] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, -1], offset: 3>>
  %t = strata.transpose %f dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, -1], offset: 3>> -> !strata.tensor<4x3xf32, strided<[-1, 4], offset: 3>>
  %s = strata.slice %t dim 0 start 1 step 2 : !strata.tensor<4x3xf32, strided<[-1, 4], offset: 3>> -> !strata.tensor<2x3xf32, strided<[-2, 4], offset: 2>>
  %g = strata.flip %s dims [0] : !strata.tensor<2x3xf32, strided<[-2, 4], offset: 2>> -> !strata.tensor<2x3xf32, strided<[2, 4], offset: 0>>
  %h = strata.flip %arg1 dims [0] : !strata.tensor<5xf32, strided<[1], offset: 0>> -> !strata.tensor<5xf32, strided<[-1], offset: 4>>
  %k = strata.slice %h dim 0 start 1 end 4 step 2 : !strata.tensor<5xf32, strided<[-1], offset: 4>> -> !strata.tensor<2xf32, strided<[-2], offset: 3>>
  return %g, %s, %k : !strata.tensor<2x3xf32, strided<[2, 4], offset: 0>>, !strata.tensor<2x3xf32, strided<[-2, 4], offset: 2>>, !strata.tensor<2xf32, strided<[-2], offset: 3>>
}

// -----

// CHECK-LABEL: func.func @zero_size(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[V:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<1x0x4xf32, strided<[0, 1, 5], offset: 5>>
// CHECK-NEXT: return %[[V]]
func.func @zero_size(%arg0: !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>>) -> !strata.tensor<1x0x4xf32, strided<[0, 1, 5], offset: 5>> {
  %n = strata.narrow %arg0 dim 1 start 5 length 0 : !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>> -> !strata.tensor<4x0xf32, strided<[5, 1], offset: 5>>
  %t = strata.transpose %n dims 0, 1 : !strata.tensor<4x0xf32, strided<[5, 1], offset: 5>> -> !strata.tensor<0x4xf32, strided<[1, 5], offset: 5>>
  %u = strata.unsqueeze %t dim 0 : !strata.tensor<0x4xf32, strided<[1, 5], offset: 5>> -> !strata.tensor<1x0x4xf32, strided<[0, 1, 5], offset: 5>>
  return %u : !strata.tensor<1x0x4xf32, strided<[0, 1, 5], offset: 5>>
}

// -----

// Windows of 4 every 2 overlap (stride 2 < size 4); the diagonal of the
// windows steps 2 + 1.
// CHECK-LABEL: func.func @unfold_overlap(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[W:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<5x3x2xf32, strided<[2, 1, 1], offset: 0>>
// CHECK-NEXT: %[[D:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<4xf32, strided<[3], offset: 0>>
// CHECK-NEXT: return %[[W]], %[[D]]
func.func @unfold_overlap(%arg0: !strata.tensor<12xf32, strided<[1], offset: 0>>) -> (!strata.tensor<5x3x2xf32, strided<[2, 1, 1], offset: 0>>, !strata.tensor<4xf32, strided<[3], offset: 0>>) {
  %w = strata.unfold %arg0 dim 0 size 4 step 2 : !strata.tensor<12xf32, strided<[1], offset: 0>> -> !strata.tensor<5x4xf32, strided<[2, 1], offset: 0>>
  %w2 = strata.unfold %w dim 1 size 2 step 1 : !strata.tensor<5x4xf32, strided<[2, 1], offset: 0>> -> !strata.tensor<5x3x2xf32, strided<[2, 1, 1], offset: 0>>
  %d = strata.diagonal %w offset 0 dims 0, 1 : !strata.tensor<5x4xf32, strided<[2, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[3], offset: 0>>
  return %w2, %d : !strata.tensor<5x3x2xf32, strided<[2, 1, 1], offset: 0>>, !strata.tensor<4xf32, strided<[3], offset: 0>>
}

// -----

// as_strided of a slice: its offset (3, before the slice's 5) and stride 0
// are taken as given, over the slice's root.
// CHECK-LABEL: func.func @as_strided_over_slice(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[W:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<2x2xf32, strided<[1, 5], offset: 3>>
// CHECK-NEXT: %[[B:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<3xf32, strided<[0], offset: 19>>
// CHECK-NEXT: return %[[W]], %[[B]]
func.func @as_strided_over_slice(%arg0: !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>>) -> (!strata.tensor<2x2xf32, strided<[1, 5], offset: 3>>, !strata.tensor<3xf32, strided<[0], offset: 19>>) {
  %s = strata.slice %arg0 dim 0 start 1 end 3 step 1 : !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>> -> !strata.tensor<2x5xf32, strided<[5, 1], offset: 5>>
  %w = strata.as_strided %s sizes [2, 2] strides [1, 5] offset 3 : !strata.tensor<2x5xf32, strided<[5, 1], offset: 5>> -> !strata.tensor<2x2xf32, strided<[1, 5], offset: 3>>
  %b = strata.as_strided %s sizes [3] strides [0] offset 19 : !strata.tensor<2x5xf32, strided<[5, 1], offset: 5>> -> !strata.tensor<3xf32, strided<[0], offset: 19>>
  return %w, %b : !strata.tensor<2x2xf32, strided<[1, 5], offset: 3>>, !strata.tensor<3xf32, strided<[0], offset: 19>>
}
