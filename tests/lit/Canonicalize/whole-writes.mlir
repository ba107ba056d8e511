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
// written (x.copy_(y) then x.add_(..)): the second write is still a
// version of %arg0's storage, not of %arg1's; the read folds, and as the
// second write covers the storage whole, the first is overwritten and
// goes (WriteOverWholeWrite): one write of the last value.
// CHECK-LABEL: func.func @written_again(
// CHECK-SAME: %[[A:[^:]*]]: {{.*}}, %[[B:[^:]*]]:
// CHECK: %[[Y:.*]] = strata.strided_view %[[B]]
// CHECK: %[[S:.*]] = strata.add %[[Y]], %[[Y]]
// CHECK: %[[D:.*]] = strata.strided_view %[[A]]
// CHECK: strata.write %[[S]] into %[[D]]
// CHECK-NOT: strata.write
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

// -----

// A chain of whole writes (h.mul_(2).add_(1), then h): one write of the
// last value, every read folded to the value written before it.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK: %[[V:.*]] = strata.strided_view %[[A]]
// CHECK: %[[M:.*]] = strata.mul %[[V]],
// CHECK: %[[S:.*]] = strata.add %[[M]],
// CHECK: %[[D:.*]] = strata.strided_view %[[A]]
// CHECK: %[[W:.*]] = strata.write %[[S]] into %[[D]]
// CHECK-NOT: strata.write
// CHECK: return %[[W]]
func.func @chain(%arg0: !strata.storage<4xf32>) -> !strata.storage<4xf32> {
  %two = strata.fill 2.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %one = strata.fill 1.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %r0 = strata.strided_view %arg0 : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %m = strata.mul %r0, %two : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %d0 = strata.strided_view %arg0 : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %w1 = strata.write %m into %d0 : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.storage<4xf32>
  %r1 = strata.strided_view %w1 : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %s = strata.add %r1, %one : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %d1 = strata.strided_view %w1 : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %w2 = strata.write %s into %d1 : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.storage<4xf32>
  return %w2 : !strata.storage<4xf32>
}

// -----

// A partial write over a whole one keeps both (the whole write's value
// shows where the partial one does not reach).
// CHECK-LABEL: func.func @partial_over_whole(
// CHECK: strata.write
// CHECK: strata.write
func.func @partial_over_whole(%arg0: !strata.storage<4xf32>, %arg1: !strata.tensor<4xf32, strided<[1], offset: 0>>, %arg2: !strata.tensor<2xf32, strided<[1], offset: 0>>) -> !strata.storage<4xf32> {
  %d0 = strata.strided_view %arg0 : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %w1 = strata.write %arg1 into %d0 : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.storage<4xf32>
  %d1 = strata.strided_view %w1 : !strata.storage<4xf32> -> !strata.tensor<2xf32, strided<[1], offset: 1>>
  %w2 = strata.write %arg2 into %d1 : !strata.tensor<2xf32, strided<[1], offset: 0>>, !strata.tensor<2xf32, strided<[1], offset: 1>> -> !strata.storage<4xf32>
  return %w2 : !strata.storage<4xf32>
}
