// RUN: strata-opt --strata-pipeline=remarks=true -verify-diagnostics -split-input-file %s | FileCheck %s
// Programs that end, after the whole pipeline, with a known number of
// copies: 0, 1, 2 and 3. Every copy left is reported by exactly one remark
// (-verify-diagnostics fails on a missing or an extra one).

// Views, contiguous of a contiguous slice, contiguous read only by
// compute whose results nothing observes (exp's layout becomes x.t()'s, and
// only its sum is returned): no copy left.
// CHECK-LABEL: func.func @no_copies(
// CHECK-NOT: strata.{{contiguous|copy}}
// CHECK: return
func.func @no_copies(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<2xf32, strided<[1], offset: 0>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %s = strata.slice %arg0 dim 0 start 0 end 2 step 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>
  %c2 = strata.contiguous %s : !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>
  %e = strata.exp %c : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %m = strata.mul %c2, %c2 : !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>
  %r = strata.sum %m dims [1] : !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2xf32, strided<[1], offset: 0>>
  %se = strata.sum %e dims [1] : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %se, %r : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<2xf32, strided<[1], offset: 0>>
}

// -----

// CHECK-LABEL: func.func @one_copy(
// CHECK-COUNT-1: = strata.{{contiguous|copy}}
// CHECK-NOT: = strata.{{contiguous|copy}}
// CHECK: return
func.func @one_copy(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<6xf32, strided<[1], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: reshape to [2, 6] cannot be a view of strides [1, 4]}}
  %r = strata.reshape %t as [2, 6] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>
  %s = strata.select %r dim 0 index 1 : !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<6xf32, strided<[1], offset: 6>>
  %e = strata.exp %s : !strata.tensor<6xf32, strided<[1], offset: 6>> -> !strata.tensor<6xf32, strided<[1], offset: 0>>
  return %e : !strata.tensor<6xf32, strided<[1], offset: 0>>
}

// -----

// The contiguous read by neg (whose result only a sum reads) goes; the
// flatten's copy and the returned clone of the argument stay.
// CHECK-LABEL: func.func @two_copies(
// CHECK-COUNT-2: = strata.{{contiguous|copy}}
// CHECK-NOT: = strata.{{contiguous|copy}}
// CHECK: return
func.func @two_copies(%arg0: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> (!strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<8x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) {
  %p = strata.permute %arg0 dims [2, 0, 1] : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>>
  %c = strata.contiguous %p : !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>> -> !strata.tensor<4x2x3xf32, strided<[6, 3, 1], offset: 0>>
  %n = strata.neg %c : !strata.tensor<4x2x3xf32, strided<[6, 3, 1], offset: 0>> -> !strata.tensor<4x2x3xf32, strided<[6, 3, 1], offset: 0>>
  %ns = strata.sum %n dims [0] : !strata.tensor<4x2x3xf32, strided<[6, 3, 1], offset: 0>> -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  // expected-remark @below {{copy kept: flatten to [8, 3] cannot be a view of strides [1, 12, 4]}}
  %f = strata.flatten %p dims 0 to 1 : !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>> -> !strata.tensor<8x3xf32, strided<[3, 1], offset: 0>>
  // expected-remark @below {{copy kept: its result is returned and would otherwise alias argument #0}}
  %k = strata.copy %arg0 : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>
  return %ns, %f, %k : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<8x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>
}

// -----

// Five copies asked for: the reshape's copy of x.t() is the contiguous
// copy of x.t() made before it, the contiguous read by neg (whose result
// only a sum reads) goes.
// CHECK-LABEL: func.func @three_copies(
// CHECK-COUNT-3: = strata.{{contiguous|copy}}
// CHECK-NOT: = strata.{{contiguous|copy}}
// CHECK: return
func.func @three_copies(%arg0: !strata.tensor<4x4xf32, strided<[4, 1], offset: 0>>, %arg1: !strata.tensor<f32, strided<[], offset: 0>>, %arg2: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> (!strata.tensor<4xf32, strided<[5], offset: 0>>, !strata.tensor<16xf32, strided<[1], offset: 0>>, !strata.tensor<8x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.storage<16xf32>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<4x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x4xf32, strided<[1, 4], offset: 0>>
  // expected-remark @below {{copy kept: its result is returned}}
  %c = strata.contiguous %t : !strata.tensor<4x4xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x4xf32, strided<[4, 1], offset: 0>>
  %d = strata.diagonal %c offset 0 dims 0, 1 : !strata.tensor<4x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[5], offset: 0>>
  %r = strata.reshape %t as [16] : !strata.tensor<4x4xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<16xf32, strided<[1], offset: 0>>
  %u = strata.relu %r : !strata.tensor<16xf32, strided<[1], offset: 0>> -> !strata.tensor<16xf32, strided<[1], offset: 0>>
  %p = strata.permute %arg2 dims [2, 0, 1] : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>>
  // expected-remark @below {{copy kept: flatten to [8, 3]}}
  %f = strata.flatten %p dims 0 to 1 : !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>> -> !strata.tensor<8x3xf32, strided<[3, 1], offset: 0>>
  // expected-remark @below {{copy kept: destination of a write}}
  %k = strata.copy %arg0 : !strata.tensor<4x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x4xf32, strided<[4, 1], offset: 0>>
  %s = strata.select %k dim 0 index 2 : !strata.tensor<4x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 8>>
  %e = strata.contiguous %p : !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>> -> !strata.tensor<4x2x3xf32, strided<[6, 3, 1], offset: 0>>
  %n = strata.neg %e : !strata.tensor<4x2x3xf32, strided<[6, 3, 1], offset: 0>> -> !strata.tensor<4x2x3xf32, strided<[6, 3, 1], offset: 0>>
  %ns = strata.sum %n dims [0] : !strata.tensor<4x2x3xf32, strided<[6, 3, 1], offset: 0>> -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %w = strata.write %arg1 into %s : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 8>> -> !strata.storage<16xf32>
  return %d, %u, %f, %ns, %w : !strata.tensor<4xf32, strided<[5], offset: 0>>, !strata.tensor<16xf32, strided<[1], offset: 0>>, !strata.tensor<8x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.storage<16xf32>
}
