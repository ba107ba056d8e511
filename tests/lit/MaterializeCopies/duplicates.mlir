// RUN: strata-opt --strata-materialize-copies=remarks=true -verify-diagnostics -split-input-file %s | FileCheck %s
// A second copy of the same value (copy or contiguous alike) is the first
// one, unless that would make two results alias or a write land in it.

// CHECK-LABEL: func.func @merged(
// CHECK-NEXT: %[[T:.*]] = strata.transpose
// CHECK-NEXT: %[[C:.*]] = strata.contiguous %[[T]]
// CHECK-NEXT: %[[S:.*]] = strata.select %[[C]]
// CHECK-NEXT: %[[D:.*]] = strata.select %[[C]]
// CHECK-NEXT: strata.add %[[S]], %[[D]]
func.func @merged(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3xf32, strided<[1], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: read by a view op}}
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %s = strata.select %c dim 0 index 1 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 3>>
  %k = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %d = strata.select %k dim 0 index 2 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 6>>
  %z = strata.add %s, %d : !strata.tensor<3xf32, strided<[1], offset: 3>>, !strata.tensor<3xf32, strided<[1], offset: 6>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return %z : !strata.tensor<3xf32, strided<[1], offset: 0>>
}

// -----

// Returned views of two clones: merging them would make the results alias.
// CHECK-LABEL: func.func @views_returned(
// CHECK-COUNT-2: = strata.{{contiguous|copy}}
// CHECK-NOT: = strata.{{contiguous|copy}}
// CHECK: return
func.func @views_returned(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<3xf32, strided<[1], offset: 3>>, !strata.tensor<3xf32, strided<[1], offset: 6>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: its result is returned}}
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %s = strata.select %c dim 0 index 1 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 3>>
  // expected-remark @below {{copy kept: its result is returned}}
  %k = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %d = strata.select %k dim 0 index 2 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 6>>
  return %s, %d : !strata.tensor<3xf32, strided<[1], offset: 3>>, !strata.tensor<3xf32, strided<[1], offset: 6>>
}

// -----

// x.t().clone() twice, both returned: two distinct results.
// CHECK-LABEL: func.func @both_returned(
// CHECK-COUNT-2: = strata.contiguous
// CHECK-NOT: = strata.contiguous
// CHECK: return
func.func @both_returned(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: its result is returned}}
  %a = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  // expected-remark @below {{copy kept: its result is returned}}
  %b = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  return %a, %b : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
}

// -----

// The second copy is written into; the first is read after the write.
// CHECK-LABEL: func.func @one_written(
// CHECK-COUNT-2: = strata.contiguous
// CHECK-NOT: = strata.contiguous
// CHECK: return
func.func @one_written(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %v: !strata.tensor<f32, strided<[], offset: 0>>) -> (!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.storage<12xf32>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: its result is returned}}
  %a = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  // expected-remark @below {{copy kept: destination of a write}}
  %b = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %w = strata.write %v into %b : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.storage<12xf32>
  return %a, %w : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.storage<12xf32>
}
