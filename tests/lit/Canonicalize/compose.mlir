// RUN: strata-opt --canonicalize -split-input-file %s | FileCheck %s
// Two views of one kind compose into one op when the layout algebra gives
// exactly the same result type (and, for reshape, the same view-or-copy
// choice). Layouts: PyTorch 1.13; flip by hand.

// x[1].view(2, 6).view(12) is x[1].view(12).
// CHECK-LABEL: func.func @view_view(
// CHECK-NEXT: %[[S:.*]] = strata.select
// CHECK-NEXT: %[[V:.*]] = strata.view %[[S]] as [12] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 12>> -> !strata.tensor<12xf32, strided<[1], offset: 12>>
// CHECK-NEXT: return %[[V]]
func.func @view_view(%arg0: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> !strata.tensor<12xf32, strided<[1], offset: 12>> {
  %sel = strata.select %arg0 dim 0 index 1 : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 12>>
  %v = strata.view %sel as [2, 6] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 12>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 12>>
  %v2 = strata.view %v as [12] : !strata.tensor<2x6xf32, strided<[6, 1], offset: 12>> -> !strata.tensor<12xf32, strided<[1], offset: 12>>
  return %v2 : !strata.tensor<12xf32, strided<[1], offset: 12>>
}

// -----

// CHECK-LABEL: func.func @view_of_squeeze(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[V:.*]] = strata.view %[[A]] as [12] : !strata.tensor<3x1x4xf32, strided<[4, 4, 1], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
// CHECK-NEXT: return %[[V]]
func.func @view_of_squeeze(%arg0: !strata.tensor<3x1x4xf32, strided<[4, 4, 1], offset: 0>>) -> !strata.tensor<12xf32, strided<[1], offset: 0>> {
  %q = strata.squeeze %arg0 dims [1] : !strata.tensor<3x1x4xf32, strided<[4, 4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %v = strata.view %q as [12] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
  return %v : !strata.tensor<12xf32, strided<[1], offset: 0>>
}

// -----

// x.t().reshape(2, 2, 3) is a view, .reshape(12) of it a copy: one
// copying reshape of x.t().
// CHECK-LABEL: func.func @reshape_reshape(
// CHECK-NEXT: %[[T:.*]] = strata.transpose
// CHECK-NEXT: %[[R:.*]] = strata.reshape %[[T]] as [12] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
// CHECK-NEXT: return %[[R]]
func.func @reshape_reshape(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<12xf32, strided<[1], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %r = strata.reshape %t as [2, 2, 3] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<2x2x3xf32, strided<[2, 1, 4], offset: 0>>
  %r2 = strata.reshape %r as [12] : !strata.tensor<2x2x3xf32, strided<[2, 1, 4], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
  return %r2 : !strata.tensor<12xf32, strided<[1], offset: 0>>
}

// -----

// Both reshapes are views and the last one has x.t()'s type: it is x.t().
// CHECK-LABEL: func.func @reshape_view_kept(
// CHECK-NEXT: %[[T:.*]] = strata.transpose
// CHECK-NEXT: return %[[T]]
func.func @reshape_view_kept(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %r = strata.reshape %t as [2, 2, 3] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<2x2x3xf32, strided<[2, 1, 4], offset: 0>>
  %r2 = strata.reshape %r as [4, 3] : !strata.tensor<2x2x3xf32, strided<[2, 1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  return %r2 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
}

// -----

// CHECK-LABEL: func.func @expand_expand(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[E:.*]] = strata.expand %[[A]] to [2, 3, 4] : {{.*}} -> !strata.tensor<2x3x4xf32, strided<[0, 0, 1], offset: 0>>
// CHECK-NEXT: return %[[E]]
func.func @expand_expand(%arg0: !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<2x3x4xf32, strided<[0, 0, 1], offset: 0>> {
  %e = strata.expand %arg0 to [3, 4] : !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[0, 1], offset: 0>>
  %e2 = strata.expand %e to [2, -1, 4] : !strata.tensor<3x4xf32, strided<[0, 1], offset: 0>> -> !strata.tensor<2x3x4xf32, strided<[0, 0, 1], offset: 0>>
  return %e2 : !strata.tensor<2x3x4xf32, strided<[0, 0, 1], offset: 0>>
}

// -----

// Flips of two different dims are one flip of both (negative strides, by
// hand: offset 2*4 + 3*1).
// CHECK-LABEL: func.func @flip_flip(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[F:.*]] = strata.flip %[[A]] dims [0, 1] : {{.*}} -> !strata.tensor<3x4xf32, strided<[-4, -1], offset: 11>>
// CHECK-NEXT: return %[[F]]
func.func @flip_flip(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3x4xf32, strided<[-4, -1], offset: 11>> {
  %f = strata.flip %arg0 dims [0] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[-4, 1], offset: 8>>
  %g = strata.flip %f dims [-1] : !strata.tensor<3x4xf32, strided<[-4, 1], offset: 8>> -> !strata.tensor<3x4xf32, strided<[-4, -1], offset: 11>>
  return %g : !strata.tensor<3x4xf32, strided<[-4, -1], offset: 11>>
}

// -----

// x[2::3][1:5:2] is x[5:12:6]; x[2::3][-2:] is x[14:18:3]; an empty one
// keeps its offset (60 = 20 rows * 3).
// CHECK-LABEL: func.func @slice_slice(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[S2:.*]] = strata.slice %[[A]] dim 0 start 5 end 12 step 6 : {{.*}} -> !strata.tensor<2x3xf32, strided<[18, 1], offset: 15>>
// CHECK-NEXT: %[[S3:.*]] = strata.slice %[[A]] dim 0 start 14 end 18 step 3 : {{.*}} -> !strata.tensor<2x3xf32, strided<[9, 1], offset: 42>>
// CHECK-NEXT: %[[S4:.*]] = strata.slice %[[A]] dim 0 start 20 end 20 step 3 : {{.*}} -> !strata.tensor<0x3xf32, strided<[9, 1], offset: 60>>
// CHECK-NEXT: return %[[S2]], %[[S3]], %[[S4]]
func.func @slice_slice(%arg0: !strata.tensor<20x3xf32, strided<[3, 1], offset: 0>>) -> (!strata.tensor<2x3xf32, strided<[18, 1], offset: 15>>, !strata.tensor<2x3xf32, strided<[9, 1], offset: 42>>, !strata.tensor<0x3xf32, strided<[9, 1], offset: 60>>) {
  %s = strata.slice %arg0 dim 0 start 2 step 3 : !strata.tensor<20x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<6x3xf32, strided<[9, 1], offset: 6>>
  %s2 = strata.slice %s dim 0 start 1 end 5 step 2 : !strata.tensor<6x3xf32, strided<[9, 1], offset: 6>> -> !strata.tensor<2x3xf32, strided<[18, 1], offset: 15>>
  %s3 = strata.slice %s dim 0 start -2 step 1 : !strata.tensor<6x3xf32, strided<[9, 1], offset: 6>> -> !strata.tensor<2x3xf32, strided<[9, 1], offset: 42>>
  %s4 = strata.slice %s dim 0 start 6 step 1 : !strata.tensor<6x3xf32, strided<[9, 1], offset: 6>> -> !strata.tensor<0x3xf32, strided<[9, 1], offset: 60>>
  return %s2, %s3, %s4 : !strata.tensor<2x3xf32, strided<[18, 1], offset: 15>>, !strata.tensor<2x3xf32, strided<[9, 1], offset: 42>>, !strata.tensor<0x3xf32, strided<[9, 1], offset: 60>>
}

// -----

// Slices of different dims stay two ops.
// CHECK-LABEL: func.func @slice_other_dims(
// CHECK-NEXT: %[[S:.*]] = strata.slice %{{.*}} dim 0
// CHECK-NEXT: strata.slice %[[S]] dim 1
func.func @slice_other_dims(%arg0: !strata.tensor<20x3xf32, strided<[3, 1], offset: 0>>) -> !strata.tensor<6x2xf32, strided<[9, 1], offset: 7>> {
  %s = strata.slice %arg0 dim 0 start 2 step 3 : !strata.tensor<20x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<6x3xf32, strided<[9, 1], offset: 6>>
  %s2 = strata.slice %s dim 1 start 1 step 1 : !strata.tensor<6x3xf32, strided<[9, 1], offset: 6>> -> !strata.tensor<6x2xf32, strided<[9, 1], offset: 7>>
  return %s2 : !strata.tensor<6x2xf32, strided<[9, 1], offset: 7>>
}
