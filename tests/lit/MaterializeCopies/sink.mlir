// RUN: strata-opt --strata-materialize-copies=remarks=true -verify-diagnostics -split-input-file %s | FileCheck %s
// Rule (c): a copy whose only users read strided input directly
// (elementwise, where, cast, reductions, matmul, copy, a write's source) is
// removed and they read its source, unless the layout of a result that
// follows its operands' (TensorIterator, preserve_format) would change
// where something observes it.

// Every user of the copy reads strided input: they read x.t() directly.
// The elementwise ops' first operand is row-major, so their results stay
// row-major.
// CHECK-LABEL: func.func @sink_into_compute(
// CHECK-SAME: %[[A:[^:]*]]: {{[^%]*}}%[[B:[^:]*]]:
// CHECK-NEXT: %[[T:.*]] = strata.transpose %[[A]]
// CHECK-NOT: strata.contiguous
// CHECK-NEXT: strata.add %[[B]], %[[T]] : {{.*}}, !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
// CHECK-NEXT: strata.matmul %[[A]], %[[T]]
// CHECK-NEXT: strata.sum %[[T]] dims [0]
// CHECK-NEXT: strata.gt %[[B]], %[[T]]
func.func @sink_into_compute(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %arg1: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) -> (!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<4x3xi1, strided<[3, 1], offset: 0>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %s = strata.add %arg1, %c : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %m = strata.matmul %arg0, %c : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3x3xf32, strided<[3, 1], offset: 0>>
  %r = strata.sum %c dims [0] : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  %q = strata.gt %arg1, %c : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xi1, strided<[3, 1], offset: 0>>
  return %s, %m, %r, %q : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<4x3xi1, strided<[3, 1], offset: 0>>
}

// -----

// A copy of a broadcast (stride 0) is not needed by elementwise ops or
// reductions either.
// CHECK-LABEL: func.func @sink_broadcast_copy(
// CHECK-NEXT: %[[E:.*]] = strata.expand
// CHECK-NEXT: strata.neg %[[E]] : !strata.tensor<3x4xf32, strided<[0, 1], offset: 0>>
// CHECK-NEXT: strata.amax %[[E]] dims [1] keepdim
func.func @sink_broadcast_copy(%arg0: !strata.tensor<4xf32, strided<[1], offset: 0>>) -> (!strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>) {
  %e = strata.expand %arg0 to [3, 4] : !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[0, 1], offset: 0>>
  %c = strata.copy %e : !strata.tensor<3x4xf32, strided<[0, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %n = strata.neg %c : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %r = strata.amax %c dims [1] keepdim : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  return %n, %r : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
}

// -----

// where's condition leads its layout; the cast gets x.t()'s layout
// (preserve_format), which only a sum reads.
// CHECK-LABEL: func.func @where_and_cast(
// CHECK-NEXT: %[[T:.*]] = strata.transpose
// CHECK-NEXT: strata.where %{{.*}}, %[[T]], %{{.*}} -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
// CHECK-NEXT: %[[D:.*]] = strata.cast %[[T]] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf64, strided<[1, 4], offset: 0>>
// CHECK-NEXT: strata.sum %[[D]] dims [0] : !strata.tensor<4x3xf64, strided<[1, 4], offset: 0>> -> !strata.tensor<3xf64, strided<[1], offset: 0>>
func.func @where_and_cast(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %arg1: !strata.tensor<4x3xi1, strided<[3, 1], offset: 0>>, %arg2: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) -> (!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3xf64, strided<[1], offset: 0>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %w = strata.where %arg1, %c, %arg2 : !strata.tensor<4x3xi1, strided<[3, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %d = strata.cast %c : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf64, strided<[3, 1], offset: 0>>
  %ds = strata.sum %d dims [0] : !strata.tensor<4x3xf64, strided<[3, 1], offset: 0>> -> !strata.tensor<3xf64, strided<[1], offset: 0>>
  return %w, %ds : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3xf64, strided<[1], offset: 0>>
}

// -----

// The inner copy is read only by a copy, which reads strided input but
// keeps its input's layout (preserve_format), and is returned: the inner
// copy stays, and the outer one, a copy of a fresh root nothing else
// returns, goes. One copy is left.
// CHECK-LABEL: func.func @copy_of_copy(
// CHECK-NEXT: %[[T:.*]] = strata.transpose
// CHECK-NEXT: %[[C:.*]] = strata.contiguous %[[T]]
// CHECK-NEXT: return %[[C]]
func.func @copy_of_copy(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: the layout of strata.copy's result follows it and is observed by func.return}}
  %c1 = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %c2 = strata.copy %c1 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  return %c2 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
}

// -----

// One user is a view of the contiguous layout: the copy stays for all.
// CHECK-LABEL: func.func @kept_for_view(
// CHECK: %[[C:.*]] = strata.contiguous
// CHECK-NEXT: strata.exp %[[C]]
// CHECK-NEXT: strata.select %[[C]]
func.func @kept_for_view(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: read by a view op}}
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %e = strata.exp %c : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %s = strata.select %c dim 0 index 1 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 3>>
  %n = strata.neg %s : !strata.tensor<3xf32, strided<[1], offset: 3>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return %e, %n : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>
}

// -----

// The copy changes the offset (6 -> 0), which compute ops do not care about.
// CHECK-LABEL: func.func @offset_copy_sinks(
// CHECK-NEXT: %[[N:.*]] = strata.narrow
// CHECK-NEXT: strata.exp %[[N]] : !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>>
func.func @offset_copy_sinks(%arg0: !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>>) -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>> {
  %n = strata.narrow %arg0 dim 0 start 1 length 2 : !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>>
  %c = strata.copy %n : !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>
  %e = strata.exp %c : !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>
  return %e : !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>
}

// -----

// Written into the storage it was copied from, the copy breaks the overlap
// (PyTorch rejects a partially overlapping copy_); into another storage the
// write reads the flipped source directly.
// CHECK-LABEL: func.func @write_source(
// CHECK-SAME: %[[A:[^:]*]]: {{[^%]*}}%[[B:[^:]*]]:
// CHECK-NEXT: %[[F:.*]] = strata.flip %[[A]]
// CHECK-NEXT: %[[C:.*]] = strata.copy %[[F]]
// CHECK-NEXT: strata.write %[[C]] into %[[A]]
// CHECK-NEXT: strata.write %[[F]] into %[[B]]
func.func @write_source(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %arg1: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.storage<12xf32>, !strata.storage<12xf32>) {
  %f = strata.flip %arg0 dims [1] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, -1], offset: 3>>
  // expected-remark @below {{copy kept: its source overlaps the destination of a write}}
  %c = strata.copy %f : !strata.tensor<3x4xf32, strided<[4, -1], offset: 3>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %s0 = strata.write %c into %arg0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.storage<12xf32>
  %d = strata.copy %f : !strata.tensor<3x4xf32, strided<[4, -1], offset: 3>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %s1 = strata.write %d into %arg1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.storage<12xf32>
  return %s0, %s1 : !strata.storage<12xf32>, !strata.storage<12xf32>
}

// -----

// An op the pass does not know keeps the copy.
// CHECK-LABEL: func.func @other_user(
// CHECK: %[[C:.*]] = strata.contiguous
// CHECK-NEXT: call @opaque(%[[C]])
func.func private @opaque(!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>)

func.func @other_user(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: read by func.call}}
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  func.call @opaque(%c) : (!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) -> ()
  return
}

// -----

// exp(x.t().contiguous()) is returned: its row-major layout (PyTorch's)
// follows the copy, so the copy stays; summed instead, exp's layout is
// nobody's concern and the copy goes (exp then keeps x.t()'s layout).
// CHECK-LABEL: func.func @layout_observed(
// CHECK-NEXT: %[[T:.*]] = strata.transpose
// CHECK-NEXT: %[[C:.*]] = strata.contiguous %[[T]]
// CHECK-NEXT: strata.exp %[[C]] : {{.*}} -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
// CHECK-NEXT: %[[E:.*]] = strata.exp %[[T]] : {{.*}} -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
// CHECK-NEXT: %[[N:.*]] = strata.neg %[[E]] : {{.*}} -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
// CHECK-NEXT: strata.sum %[[N]] dims [1]
func.func @layout_observed(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: the layout of strata.exp's result follows it and is observed by func.return}}
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %e = strata.exp %c : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %c2 = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %e2 = strata.exp %c2 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %n = strata.neg %e2 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %s = strata.sum %n dims [1] : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %e, %s : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>
}

// -----

// An intermediate that a view reads is observed: the copy stays.
// CHECK-LABEL: func.func @layout_viewed(
// CHECK: strata.contiguous
func.func @layout_viewed(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3xf32, strided<[1], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: the layout of strata.exp's result follows it and is observed by strata.select}}
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %e = strata.exp %c : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %n = strata.neg %e : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %r = strata.select %n dim 0 index 1 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 3>>
  %s = strata.neg %r : !strata.tensor<3xf32, strided<[1], offset: 3>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return %s : !strata.tensor<3xf32, strided<[1], offset: 0>>
}
