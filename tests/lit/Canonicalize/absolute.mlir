// RUN: strata-opt --canonicalize -split-input-file %s | FileCheck %s
// strided_view and as_strided state an absolute layout within the root, so
// they read the earliest value of their source's chain; the views between
// become dead.

// CHECK-LABEL: func.func @as_strided_reads_earliest(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[W:.*]] = strata.as_strided %[[A]] sizes [2, 2] strides [1, 5] offset 3 : !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>> -> !strata.tensor<2x2xf32, strided<[1, 5], offset: 3>>
// CHECK-NEXT: return %[[W]]
func.func @as_strided_reads_earliest(%arg0: !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>>) -> !strata.tensor<2x2xf32, strided<[1, 5], offset: 3>> {
  %s = strata.slice %arg0 dim 0 start 1 end 3 step 1 : !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>> -> !strata.tensor<2x5xf32, strided<[5, 1], offset: 5>>
  %t = strata.transpose %s dims 0, 1 : !strata.tensor<2x5xf32, strided<[5, 1], offset: 5>> -> !strata.tensor<5x2xf32, strided<[1, 5], offset: 5>>
  %w = strata.as_strided %t sizes [2, 2] strides [1, 5] offset 3 : !strata.tensor<5x2xf32, strided<[1, 5], offset: 5>> -> !strata.tensor<2x2xf32, strided<[1, 5], offset: 3>>
  return %w : !strata.tensor<2x2xf32, strided<[1, 5], offset: 3>>
}

// -----

// as_strided's operand must stay a tensor: it stops at the first tensor of
// a storage-rooted chain, while strided_view goes to the storage.
// CHECK-LABEL: func.func @storage_rooted(
// CHECK-SAME: %[[S:[^:]*]]: !strata.storage<20xf32>
// CHECK-NEXT: %[[A:.*]] = strata.strided_view %[[S]] : !strata.storage<20xf32> -> !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>>
// CHECK-NEXT: %[[W:.*]] = strata.as_strided %[[A]] sizes [3] strides [6] offset 1
// CHECK-NEXT: %[[V:.*]] = strata.strided_view %[[S]] : !strata.storage<20xf32> -> !strata.tensor<2xf32, strided<[5], offset: 7>>
// CHECK-NEXT: return %[[W]], %[[V]]
func.func @storage_rooted(%s: !strata.storage<20xf32>) -> (!strata.tensor<3xf32, strided<[6], offset: 1>>, !strata.tensor<2xf32, strided<[5], offset: 7>>) {
  %a = strata.strided_view %s : !strata.storage<20xf32> -> !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>>
  %t = strata.transpose %a dims 0, 1 : !strata.tensor<4x5xf32, strided<[5, 1], offset: 0>> -> !strata.tensor<5x4xf32, strided<[1, 5], offset: 0>>
  %w = strata.as_strided %t sizes [3] strides [6] offset 1 : !strata.tensor<5x4xf32, strided<[1, 5], offset: 0>> -> !strata.tensor<3xf32, strided<[6], offset: 1>>
  %n = strata.narrow %t dim 0 start 2 length 1 : !strata.tensor<5x4xf32, strided<[1, 5], offset: 0>> -> !strata.tensor<1x4xf32, strided<[1, 5], offset: 2>>
  %v = strata.strided_view %n : !strata.tensor<1x4xf32, strided<[1, 5], offset: 2>> -> !strata.tensor<2xf32, strided<[5], offset: 7>>
  return %w, %v : !strata.tensor<3xf32, strided<[6], offset: 1>>, !strata.tensor<2xf32, strided<[5], offset: 7>>
}

// -----

// After materialize-copies, a strided_view of the view of a fresh copy
// reads the copy.
// CHECK-LABEL: func.func @view_of_copy(
// CHECK-NEXT: %[[T:.*]] = strata.transpose
// CHECK-NEXT: %[[C:.*]] = strata.contiguous %[[T]]
// CHECK-NEXT: %[[V:.*]] = strata.strided_view %[[C]] : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<6xf32, strided<[1], offset: 6>>
// CHECK-NEXT: return %[[V]]
func.func @view_of_copy(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<6xf32, strided<[1], offset: 6>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %v = strata.view %c as [2, 6] : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>
  %s = strata.strided_view %v : !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<6xf32, strided<[1], offset: 6>>
  return %s : !strata.tensor<6xf32, strided<[1], offset: 6>>
}
