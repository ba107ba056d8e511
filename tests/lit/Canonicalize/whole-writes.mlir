// RUN: strata-opt --canonicalize -split-input-file %s | FileCheck %s
// A read, as written, of a write that replaced its whole storage is the
// value written (StridedViewOp's fold, wholeWriteValue): x.mul_(2) then x
// is the product. A partial write, a read in another layout or of another
// type, and a write of another layout keep the write.

// CHECK-LABEL: func.func @whole(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[M:.*]] = strata.mul %[[A]], %[[A]]
// CHECK-NEXT: %[[E:.*]] = strata.exp %[[M]]
// CHECK-NEXT: return %[[E]]
func.func @whole(%arg0: !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>) -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>> {
  %m = strata.mul %arg0, %arg0 : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %w = strata.write %m into %arg0 : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>> -> !strata.storage<6xf32>
  %v = strata.strided_view %w : !strata.storage<6xf32> -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %e = strata.exp %v : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  return %e : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
}

// -----

// A transposed whole storage (dense, not row-major) read as written.
// CHECK-LABEL: func.func @whole_transposed(
// CHECK-NOT: strata.write
// CHECK: return
func.func @whole_transposed(%arg0: !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>) -> !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>> {
  %m = strata.neg %arg0 : !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>> -> !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>
  %w = strata.write %m into %arg0 : !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>, !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>> -> !strata.storage<6xf32>
  %v = strata.strided_view %w : !strata.storage<6xf32> -> !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>
  return %v : !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>
}

// -----

// A write of half the storage (a narrow) is a partial write: kept.
// CHECK-LABEL: func.func @partial(
// CHECK: strata.write
// CHECK: strata.strided_view
func.func @partial(%arg0: !strata.storage<6xf32>, %arg1: !strata.tensor<3xf32, strided<[1], offset: 0>>) -> !strata.tensor<3xf32, strided<[1], offset: 0>> {
  %d = strata.strided_view %arg0 : !strata.storage<6xf32> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  %w = strata.write %arg1 into %d : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.storage<6xf32>
  %v = strata.strided_view %w : !strata.storage<6xf32> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return %v : !strata.tensor<3xf32, strided<[1], offset: 0>>
}

// -----

// A whole write read in another layout (transposed) is kept: the value's
// elements sit where the destination's layout put them.
// CHECK-LABEL: func.func @other_layout(
// CHECK: strata.write
// CHECK: strata.strided_view
func.func @other_layout(%arg0: !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>) -> !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>> {
  %m = strata.neg %arg0 : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %w = strata.write %m into %arg0 : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>> -> !strata.storage<6xf32>
  %v = strata.strided_view %w : !strata.storage<6xf32> -> !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>
  return %v : !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>
}

// -----

// A broadcast source (a 0-d fill written over the whole storage) has
// another type than the destination: kept (a fill, not the value read).
// CHECK-LABEL: func.func @broadcast_source(
// CHECK: strata.write
func.func @broadcast_source(%arg0: !strata.tensor<4xf32, strided<[1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %f = strata.fill 2.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %w = strata.write %f into %arg0 : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.storage<4xf32>
  %v = strata.strided_view %w : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %v : !strata.tensor<4xf32, strided<[1], offset: 0>>
}

// -----

// A view of a whole write that is itself written into names the storage
// written (x.copy_(y) then x.add_(..)): kept, so the second write is still
// a version of %arg0's storage, not of %arg1's; the read folds.
// CHECK-LABEL: func.func @written_again(
// CHECK-SAME: %[[A:[^:]*]]: {{.*}}, %[[B:[^:]*]]:
// CHECK: %[[D:.*]] = strata.strided_view %[[A]]
// CHECK: %[[Y:.*]] = strata.strided_view %[[B]]
// CHECK: %[[W:.*]] = strata.write %[[Y]] into %[[D]]
// CHECK: %[[V:.*]] = strata.strided_view %[[W]]
// CHECK: %[[S:.*]] = strata.add %[[Y]], %[[Y]]
// CHECK: strata.write %[[S]] into %[[V]]
func.func @written_again(%arg0: !strata.storage<4xf32>, %arg1: !strata.storage<4xf32>) -> !strata.storage<4xf32> {
  %d = strata.strided_view %arg0 : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %y = strata.strided_view %arg1 : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %w = strata.write %y into %d : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.storage<4xf32>
  %r = strata.strided_view %w : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %v = strata.strided_view %w : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %s = strata.add %r, %r : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %w2 = strata.write %s into %v : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.storage<4xf32>
  return %w2 : !strata.storage<4xf32>
}
