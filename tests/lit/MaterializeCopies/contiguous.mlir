// RUN: strata-opt --strata-materialize-copies=remarks=true -verify-diagnostics -split-input-file %s | FileCheck %s
// Rule (b): contiguous of a contiguous value disappears; a copy of a value
// that already has the copy's layout disappears unless a write would then
// land in another storage or a result would alias an argument, another
// result or a written storage. Each copy kept is remarked with its reason.

// contiguous() of the contiguous x[1:3] is x[1:3] itself: no copy, no
// remark, same type.
// CHECK-LABEL: func.func @contiguous_of_contiguous(
// CHECK-NEXT: %[[N:.*]] = strata.narrow
// CHECK-NEXT: %[[E:.*]] = strata.exp %[[N]]
// CHECK-NEXT: return %[[N]], %[[E]]
func.func @contiguous_of_contiguous(%arg0: !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>>) -> (!strata.tensor<2x6xf32, strided<[6, 1], offset: 6>>, !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>) {
  %n = strata.narrow %arg0 dim 0 start 1 length 2 : !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>>
  %c = strata.contiguous %n : !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>>
  %e = strata.exp %c : !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>
  return %c, %e : !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>>, !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>
}

// -----

// A copy of a value that already has the copy's layout (contiguous, offset
// 0), read by views and compute: the views read the source instead.
// CHECK-LABEL: func.func @copy_then_view(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[V:.*]] = strata.view %[[A]] as [12]
// CHECK-NEXT: %[[S:.*]] = strata.slice %[[V]]
// CHECK-NEXT: %[[E:.*]] = strata.exp %[[S]]
// CHECK-NEXT: return %[[E]]
func.func @copy_then_view(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<6xf32, strided<[1], offset: 0>> {
  %c = strata.copy %arg0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %v = strata.view %c as [12] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
  %s = strata.slice %v dim 0 start 1 step 2 : !strata.tensor<12xf32, strided<[1], offset: 0>> -> !strata.tensor<6xf32, strided<[2], offset: 1>>
  %e = strata.exp %s : !strata.tensor<6xf32, strided<[2], offset: 1>> -> !strata.tensor<6xf32, strided<[1], offset: 0>>
  return %e : !strata.tensor<6xf32, strided<[1], offset: 0>>
}

// -----

// Returning the argument instead of its clone would alias them.
// CHECK-LABEL: func.func @copy_returned_arg(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[C:.*]] = strata.copy %[[A]]
// CHECK-NEXT: return %[[C]]
func.func @copy_returned_arg(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> {
  // expected-remark @below {{copy kept: its result is returned and would otherwise alias argument #0}}
  %c = strata.copy %arg0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %c : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}

// -----

// The clone of a temporary that nothing else returns or writes is the
// temporary.
// CHECK-LABEL: func.func @copy_returned_temp(
// CHECK-NEXT: %[[Y:.*]] = strata.exp
// CHECK-NEXT: return %[[Y]]
func.func @copy_returned_temp(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> {
  %y = strata.exp %arg0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %c = strata.copy %y : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %c : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}

// -----

// Two clones of one temporary, both returned: one may be the temporary,
// the other must stay distinct from it.
// CHECK-LABEL: func.func @copy_returned_twice(
// CHECK-NEXT: %[[Y:.*]] = strata.exp
// CHECK-NEXT: %[[C2:.*]] = strata.copy %[[Y]]
// CHECK-NEXT: return %[[Y]], %[[C2]]
func.func @copy_returned_twice(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  %y = strata.exp %arg0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %c1 = strata.copy %y : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // expected-remark @below {{copy kept: its result is returned and would otherwise alias another result}}
  %c2 = strata.copy %y : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %c1, %c2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}

// -----

// A view of the clone is returned next to the temporary itself.
// CHECK-LABEL: func.func @copy_returned_view(
// CHECK-NEXT: %[[Y:.*]] = strata.exp
// CHECK-NEXT: %[[C:.*]] = strata.copy %[[Y]]
// CHECK-NEXT: %[[T:.*]] = strata.transpose %[[C]]
// CHECK-NEXT: return %[[Y]], %[[T]]
func.func @copy_returned_view(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>) {
  %y = strata.exp %arg0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // expected-remark @below {{copy kept: its result is returned and would otherwise alias another result}}
  %c = strata.copy %y : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %t = strata.transpose %c dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  return %y, %t : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
}

// -----

// Writing through a view of the clone must write the clone's storage (the
// write's result type is that storage), never the argument's.
// CHECK-LABEL: func.func @copy_write_dest(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[C:.*]] = strata.copy %[[A]]
// CHECK-NEXT: %[[D:.*]] = strata.select %[[C]]
// CHECK-NEXT: strata.write %{{.*}} into %[[D]]
func.func @copy_write_dest(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %arg1: !strata.tensor<f32, strided<[], offset: 0>>) -> !strata.storage<12xf32> {
  // expected-remark @below {{copy kept: destination of a write}}
  %c = strata.copy %arg0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %d = strata.select %c dim 0 index 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 4>>
  %s = strata.write %arg1 into %d : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 4>> -> !strata.storage<12xf32>
  return %s : !strata.storage<12xf32>
}

// -----

// x[1:3] is contiguous but at offset 6, its clone at offset 0: a view of
// the clone would see another layout if it read the source.
// CHECK-LABEL: func.func @copy_view_layout_differs(
// CHECK: %[[C:.*]] = strata.copy
// CHECK-NEXT: strata.transpose %[[C]]
func.func @copy_view_layout_differs(%arg0: !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>>) -> !strata.tensor<6x2xf32, strided<[1, 6], offset: 0>> {
  %n = strata.narrow %arg0 dim 0 start 1 length 2 : !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>>
  // expected-remark @below {{copy kept: read by a view op}}
  %c = strata.copy %n : !strata.tensor<2x6xf32, strided<[6, 1], offset: 6>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>
  %t = strata.transpose %c dims 0, 1 : !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<6x2xf32, strided<[1, 6], offset: 0>>
  %e = strata.exp %t : !strata.tensor<6x2xf32, strided<[1, 6], offset: 0>> -> !strata.tensor<6x2xf32, strided<[1, 6], offset: 0>>
  return %e : !strata.tensor<6x2xf32, strided<[1, 6], offset: 0>>
}

// -----

// A contiguous that copies and is returned stays.
// CHECK-LABEL: func.func @contiguous_returned(
// CHECK: %[[C:.*]] = strata.contiguous
// CHECK-NEXT: return %[[C]]
func.func @contiguous_returned(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: its result is returned}}
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  return %c : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
}
