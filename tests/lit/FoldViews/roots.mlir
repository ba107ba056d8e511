// RUN: strata-opt --strata-fold-views -split-input-file %s | FileCheck %s
// Roots: storage values, storage versions made by writes, function
// arguments, and fresh compute results. A fold never changes which root a
// value (or a write's destination) resolves to.

// Views after a write read the new version %s1; views before it (and
// views of the old version after it) still read %s.
// CHECK-LABEL: func.func @after_write(
// CHECK-SAME: %[[S:[^:]*]]: !strata.storage<12xf32>, %[[V:[^:]*]]:
// CHECK-NEXT: %[[ROW:.*]] = strata.strided_view %[[S]] : !strata.storage<12xf32> -> !strata.tensor<4xf32, strided<[1], offset: 4>>
// CHECK-NEXT: %[[S1:.*]] = strata.write %[[V]] into %[[ROW]] : {{.*}} -> !strata.storage<12xf32>
// CHECK-NEXT: %[[NEW:.*]] = strata.strided_view %[[S1]] : !strata.storage<12xf32> -> !strata.tensor<3xf32, strided<[4], offset: 2>>
// CHECK-NEXT: %[[OLD:.*]] = strata.strided_view %[[S]] : !strata.storage<12xf32> -> !strata.tensor<3xf32, strided<[4], offset: 2>>
// CHECK-NEXT: return %[[NEW]], %[[OLD]], %[[S1]]
func.func @after_write(%s: !strata.storage<12xf32>, %v: !strata.tensor<f32, strided<[], offset: 0>>) -> (!strata.tensor<3xf32, strided<[4], offset: 2>>, !strata.tensor<3xf32, strided<[4], offset: 2>>, !strata.storage<12xf32>) {
  %a = strata.strided_view %s : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %row = strata.select %a dim 0 index 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 4>>
  %s1 = strata.write %v into %row : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 4>> -> !strata.storage<12xf32>
  %a1 = strata.strided_view %s1 : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %t1 = strata.transpose %a1 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %new = strata.select %t1 dim 0 index 2 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<3xf32, strided<[4], offset: 2>>
  %t0 = strata.transpose %a dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %old = strata.select %t0 dim 0 index 2 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<3xf32, strided<[4], offset: 2>>
  return %new, %old, %s1 : !strata.tensor<3xf32, strided<[4], offset: 2>>, !strata.tensor<3xf32, strided<[4], offset: 2>>, !strata.storage<12xf32>
}

// -----

// A write through a view of a (transposed) tensor argument: the destination
// still resolves to the argument, so the result is its 6-element storage.
// CHECK-LABEL: func.func @write_into_arg(
// CHECK-SAME: %[[A:[^:]*]]: !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>, %[[V:[^:]*]]:
// CHECK-NEXT: %[[D:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<2xf32, strided<[3], offset: 1>>
// CHECK-NEXT: %[[W:.*]] = strata.write %[[V]] into %[[D]] : {{.*}} -> !strata.storage<6xf32>
// CHECK-NEXT: return %[[W]]
func.func @write_into_arg(%arg0: !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>, %v: !strata.tensor<f32, strided<[], offset: 0>>) -> !strata.storage<6xf32> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>> -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %c = strata.select %t dim 1 index 1 : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<2xf32, strided<[3], offset: 1>>
  %w = strata.write %v into %c : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<2xf32, strided<[3], offset: 1>> -> !strata.storage<6xf32>
  return %w : !strata.storage<6xf32>
}

// -----

// A compute result is a fresh contiguous root: views of it fold onto it,
// never through it onto the compute op's input.
// CHECK-LABEL: func.func @compute_root(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[T:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
// CHECK-NEXT: %[[E:.*]] = strata.exp %[[T]]
// CHECK-NEXT: %[[U:.*]] = strata.strided_view %[[E]] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x1xf32, strided<[1, 1], offset: 8>>
// CHECK-NEXT: return %[[U]]
func.func @compute_root(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<4x1xf32, strided<[1, 1], offset: 8>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %e = strata.exp %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %sel = strata.select %e dim 1 index 2 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 8>>
  %u = strata.unsqueeze %sel dim 1 : !strata.tensor<4xf32, strided<[1], offset: 8>> -> !strata.tensor<4x1xf32, strided<[1, 1], offset: 8>>
  return %u : !strata.tensor<4x1xf32, strided<[1, 1], offset: 8>>
}

// -----

// strided_view of a strided_view, and an as_strided in a storage-rooted
// chain, read the storage directly.
// CHECK-LABEL: func.func @storage_chain(
// CHECK-SAME: %[[S:[^:]*]]: !strata.storage<20xf32>
// CHECK-NEXT: %[[X:.*]] = strata.strided_view %[[S]] : !strata.storage<20xf32> -> !strata.tensor<2x2xf32, strided<[1, 4], offset: 5>>
// CHECK-NEXT: %[[W:.*]] = strata.strided_view %[[S]] : !strata.storage<20xf32> -> !strata.tensor<3xf32, strided<[6], offset: 1>>
// CHECK-NEXT: return %[[X]], %[[W]]
func.func @storage_chain(%s: !strata.storage<20xf32>) -> (!strata.tensor<2x2xf32, strided<[1, 4], offset: 5>>, !strata.tensor<3xf32, strided<[6], offset: 1>>) {
  %a = strata.strided_view %s : !strata.storage<20xf32> -> !strata.tensor<4x4xf32, strided<[4, 1], offset: 0>>
  %b = strata.strided_view %a : !strata.tensor<4x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2x2xf32, strided<[4, 1], offset: 5>>
  %t = strata.transpose %b dims 0, 1 : !strata.tensor<2x2xf32, strided<[4, 1], offset: 5>> -> !strata.tensor<2x2xf32, strided<[1, 4], offset: 5>>
  %w = strata.as_strided %t sizes [3] strides [6] offset 1 : !strata.tensor<2x2xf32, strided<[1, 4], offset: 5>> -> !strata.tensor<3xf32, strided<[6], offset: 1>>
  return %t, %w : !strata.tensor<2x2xf32, strided<[1, 4], offset: 5>>, !strata.tensor<3xf32, strided<[6], offset: 1>>
}
