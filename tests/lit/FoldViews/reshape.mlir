// RUN: strata-opt --strata-fold-views -split-input-file %s | FileCheck %s
// reshape/flatten/contiguous fold only when they are views (PyTorch's
// reshape returns a view exactly then); a copying one is a fresh root that
// later views fold onto. Layouts: PyTorch 1.13.

// x[:, :, 0:2].reshape(-1, 2) is a view: strides [4, 1].
// CHECK-LABEL: func.func @reshape_view(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NOT: strata.reshape
// CHECK: %[[V:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<6x2xf32, strided<[4, 1], offset: 0>>
// CHECK-NEXT: return %[[V]]
func.func @reshape_view(%arg0: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> !strata.tensor<6x2xf32, strided<[4, 1], offset: 0>> {
  %s = strata.slice %arg0 dim 2 start 0 end 2 step 1 : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<2x3x2xf32, strided<[12, 4, 1], offset: 0>>
  %r = strata.reshape %s as [-1, 2] : !strata.tensor<2x3x2xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<6x2xf32, strided<[4, 1], offset: 0>>
  return %r : !strata.tensor<6x2xf32, strided<[4, 1], offset: 0>>
}

// -----

// x.t().reshape(12) copies: the reshape stays, and is the root of the
// slice after it.
// CHECK-LABEL: func.func @reshape_copy(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[T:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
// CHECK-NEXT: %[[R:.*]] = strata.reshape %[[T]] as [12] : {{.*}} -> !strata.tensor<12xf32, strided<[1], offset: 0>>
// CHECK-NEXT: %[[S:.*]] = strata.strided_view %[[R]] : {{.*}} -> !strata.tensor<4xf32, strided<[3], offset: 2>>
// CHECK-NEXT: return %[[R]], %[[S]]
func.func @reshape_copy(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<12xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[3], offset: 2>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %r = strata.reshape %t as [12] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
  %s = strata.slice %r dim 0 start 2 step 3 : !strata.tensor<12xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[3], offset: 2>>
  return %r, %s : !strata.tensor<12xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[3], offset: 2>>
}

// -----

// x[1].flatten() is a view at offset 12; x[1].t().flatten() copies.
// CHECK-LABEL: func.func @flatten(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[F:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<12xf32, strided<[1], offset: 12>>
// CHECK-NEXT: %[[T:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 12>>
// CHECK-NEXT: %[[G:.*]] = strata.flatten %[[T]] dims 0 to 1
// CHECK-NEXT: %[[U:.*]] = strata.strided_view %[[G]] : {{.*}} -> !strata.tensor<1x12xf32, strided<[12, 1], offset: 0>>
// CHECK-NEXT: return %[[F]], %[[U]]
func.func @flatten(%arg0: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> (!strata.tensor<12xf32, strided<[1], offset: 12>>, !strata.tensor<1x12xf32, strided<[12, 1], offset: 0>>) {
  %sel = strata.select %arg0 dim 0 index 1 : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 12>>
  %f = strata.flatten %sel dims 0 to 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 12>> -> !strata.tensor<12xf32, strided<[1], offset: 12>>
  %t = strata.transpose %sel dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 12>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 12>>
  %g = strata.flatten %t dims 0 to 1 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 12>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
  %u = strata.unsqueeze %g dim 0 : !strata.tensor<12xf32, strided<[1], offset: 0>> -> !strata.tensor<1x12xf32, strided<[12, 1], offset: 0>>
  return %f, %u : !strata.tensor<12xf32, strided<[1], offset: 12>>, !strata.tensor<1x12xf32, strided<[12, 1], offset: 0>>
}

// -----

// contiguous() of the contiguous x[1:3] is x[1:3] itself (a view);
// of its transpose it is a copy, which the view after it reads.
// CHECK-LABEL: func.func @contiguous(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[T:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<6x2xf32, strided<[1, 6], offset: 6>>
// CHECK-NEXT: %[[C:.*]] = strata.contiguous %[[T]] : {{.*}} -> !strata.tensor<6x2xf32, strided<[2, 1], offset: 0>>
// CHECK-NEXT: %[[V:.*]] = strata.strided_view %[[C]] : {{.*}} -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
// CHECK-NEXT: return %[[T]], %[[V]]
func.func @contiguous(%arg0: !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>>) -> (!strata.tensor<6x2xf32, strided<[1, 6], offset: 6>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  %n = strata.narrow %arg0 dim 0 start 1 length 2 : !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>>
  %c = strata.contiguous %n : !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>>
  %t = strata.transpose %c dims 0, 1 : !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>> -> !strata.tensor<6x2xf32, strided<[1, 6], offset: 6>>
  %c2 = strata.contiguous %t : !strata.tensor<6x2xf32, strided<[1, 6], offset: 6>> -> !strata.tensor<6x2xf32, strided<[2, 1], offset: 0>>
  %v = strata.view %c2 as [3, 4] : !strata.tensor<6x2xf32, strided<[2, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %t, %v : !strata.tensor<6x2xf32, strided<[1, 6], offset: 6>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}
