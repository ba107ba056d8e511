// RUN: strata-opt --strata-materialize-copies=remarks=true -verify-diagnostics -split-input-file %s | FileCheck %s
// Rule (a): a reshape/flatten that strides cannot express becomes
// contiguous (the copy, remarked at the reshape's location) + view.
// Which reshapes copy: PyTorch 1.13 (reshape returns a new storage).

// CHECK-LABEL: func.func @reshape_transposed(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[T:.*]] = strata.transpose %[[A]]
// CHECK-NEXT: %[[C:.*]] = strata.contiguous %[[T]] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
// CHECK-NEXT: %[[V:.*]] = strata.view %[[C]] as [12] : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
// CHECK-NEXT: %[[E:.*]] = strata.exp %[[V]]
// CHECK-NEXT: return %[[E]]
func.func @reshape_transposed(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<12xf32, strided<[1], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: reshape to [12] cannot be a view of strides [1, 4] (sizes [4, 3])}}
  %r = strata.reshape %t as [12] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
  %e = strata.exp %r : !strata.tensor<12xf32, strided<[1], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
  return %e : !strata.tensor<12xf32, strided<[1], offset: 0>>
}

// -----

// Both reshapes of one permuted value copy, each with its own contiguous
// (CSE merges them later in the pipeline); -1 is resolved in the view.
// CHECK-LABEL: func.func @reshape_minus1(
// CHECK: %[[C1:.*]] = strata.contiguous %[[T:[^ ]*]] : {{.*}} -> !strata.tensor<3x2x4xf32, strided<[8, 4, 1], offset: 0>>
// CHECK-NEXT: %[[V1:.*]] = strata.view %[[C1]] as [6, 4] : {{.*}} -> !strata.tensor<6x4xf32, strided<[4, 1], offset: 0>>
// CHECK-NEXT: %[[C2:.*]] = strata.contiguous %[[T]]
// CHECK-NEXT: %[[V2:.*]] = strata.view %[[C2]] as [3, 8] : {{.*}} -> !strata.tensor<3x8xf32, strided<[8, 1], offset: 0>>
// CHECK-NEXT: return %[[V1]], %[[V2]]
func.func @reshape_minus1(%arg0: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> (!strata.tensor<6x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x8xf32, strided<[8, 1], offset: 0>>) {
  %t = strata.permute %arg0 dims [1, 0, 2] : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<3x2x4xf32, strided<[4, 12, 1], offset: 0>>
  // expected-remark @below {{copy kept: reshape to [6, 4] cannot be a view of strides [4, 12, 1]}}
  %r = strata.reshape %t as [-1, 4] : !strata.tensor<3x2x4xf32, strided<[4, 12, 1], offset: 0>> -> !strata.tensor<6x4xf32, strided<[4, 1], offset: 0>>
  // expected-remark @below {{copy kept: reshape to [3, 8] cannot be a view of strides [4, 12, 1]}}
  %r2 = strata.reshape %t as [3, 8] : !strata.tensor<3x2x4xf32, strided<[4, 12, 1], offset: 0>> -> !strata.tensor<3x8xf32, strided<[8, 1], offset: 0>>
  return %r, %r2 : !strata.tensor<6x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x8xf32, strided<[8, 1], offset: 0>>
}

// -----

// A broadcast (stride 0) cannot be flattened without a copy.
// CHECK-LABEL: func.func @reshape_broadcast(
// CHECK: %[[C:.*]] = strata.contiguous {{.*}} -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
// CHECK-NEXT: strata.view %[[C]] as [12]
func.func @reshape_broadcast(%arg0: !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<12xf32, strided<[1], offset: 0>> {
  %e = strata.expand %arg0 to [3, 4] : !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[0, 1], offset: 0>>
  // expected-remark @below {{copy kept: reshape to [12] cannot be a view of strides [0, 1] (sizes [3, 4])}}
  %r = strata.reshape %e as [12] : !strata.tensor<3x4xf32, strided<[0, 1], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
  return %r : !strata.tensor<12xf32, strided<[1], offset: 0>>
}

// -----

// CHECK-LABEL: func.func @flatten_copy(
// CHECK: %[[C:.*]] = strata.contiguous {{.*}} -> !strata.tensor<4x3x2xf32, strided<[6, 2, 1], offset: 0>>
// CHECK-NEXT: %[[V:.*]] = strata.view %[[C]] as [4, 6] : {{.*}} -> !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>>
// CHECK-NEXT: return %[[V]]
func.func @flatten_copy(%arg0: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>> {
  %t = strata.permute %arg0 dims [2, 1, 0] : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<4x3x2xf32, strided<[1, 4, 12], offset: 0>>
  // expected-remark @below {{copy kept: flatten to [4, 6] cannot be a view of strides [1, 4, 12] (sizes [4, 3, 2])}}
  %f = strata.flatten %t dims 1 to 2 : !strata.tensor<4x3x2xf32, strided<[1, 4, 12], offset: 0>> -> !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>>
  return %f : !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>>
}

// -----

// Reshapes that are views are not touched (fold-views handles them); an
// unused copying reshape is dropped without a remark.
// CHECK-LABEL: func.func @untouched(
// CHECK-NOT: strata.contiguous
// CHECK: %[[F:.*]] = strata.flatten
// CHECK-NOT: strata.reshape
// CHECK-NOT: strata.contiguous
// CHECK: return %[[F]]
func.func @untouched(%arg0: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> !strata.tensor<6x4xf32, strided<[4, 1], offset: 0>> {
  %f = strata.flatten %arg0 dims 0 to 1 : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<6x4xf32, strided<[4, 1], offset: 0>>
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<3x2x4xf32, strided<[4, 12, 1], offset: 0>>
  %r = strata.reshape %t as [24] : !strata.tensor<3x2x4xf32, strided<[4, 12, 1], offset: 0>> -> !strata.tensor<24xf32, strided<[1], offset: 0>>
  return %f : !strata.tensor<6x4xf32, strided<[4, 1], offset: 0>>
}
