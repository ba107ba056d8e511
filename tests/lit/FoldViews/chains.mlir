// RUN: strata-opt --strata-fold-views -split-input-file %s | FileCheck %s
// Every chain of 1..8 views becomes one strided_view of its root; expected
// layouts come from PyTorch 1.13 (sizes(), stride(), storage_offset()).

// CHECK-LABEL: func.func @chain1(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[V:.*]] = strata.strided_view %[[A]] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
// CHECK-NEXT: return %[[V]]
func.func @chain1(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  return %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
}

// -----

// CHECK-LABEL: func.func @chain2(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NOT: strata.permute
// CHECK-NOT: strata.slice
// CHECK: %[[V:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<3x2x2xf32, strided<[4, 1, 12], offset: 1>>
// CHECK-NEXT: return %[[V]]
func.func @chain2(%arg0: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> !strata.tensor<3x2x2xf32, strided<[4, 1, 12], offset: 1>> {
  %p = strata.permute %arg0 dims [1, 2, 0] : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<3x4x2xf32, strided<[4, 1, 12], offset: 0>>
  %s = strata.slice %p dim 1 start 1 end 3 step 1 : !strata.tensor<3x4x2xf32, strided<[4, 1, 12], offset: 0>> -> !strata.tensor<3x2x2xf32, strided<[4, 1, 12], offset: 1>>
  return %s : !strata.tensor<3x2x2xf32, strided<[4, 1, 12], offset: 1>>
}

// -----

// Three permutes that compose to the identity: the root itself is returned.
// CHECK-LABEL: func.func @chain3_permutes(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: return %[[A]]
func.func @chain3_permutes(%arg0: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> {
  %p = strata.permute %arg0 dims [2, 0, 1] : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>>
  %t = strata.transpose %p dims 0, 2 : !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>> -> !strata.tensor<3x2x4xf32, strided<[4, 12, 1], offset: 0>>
  %q = strata.permute %t dims [1, 0, 2] : !strata.tensor<3x2x4xf32, strided<[4, 12, 1], offset: 0>> -> !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>
  return %q : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>
}

// -----

// Eight views, a permute first and a stride-0 expand in the middle.
// x.permute(2,0,1)[1::2].select(1,1).unsqueeze(0).transpose(1,2)
//  .narrow(1,1,2).expand(5,2,2).diagonal(0,1,2)
// CHECK-LABEL: func.func @chain8(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[V:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<5x2xf32, strided<[0, 6], offset: 17>>
// CHECK-NEXT: return %[[V]]
func.func @chain8(%arg0: !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>>) -> !strata.tensor<5x2xf32, strided<[0, 6], offset: 17>> {
  %p = strata.permute %arg0 dims [2, 0, 1] : !strata.tensor<2x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>>
  %s = strata.slice %p dim 0 start 1 step 2 : !strata.tensor<4x2x3xf32, strided<[1, 12, 4], offset: 0>> -> !strata.tensor<2x2x3xf32, strided<[2, 12, 4], offset: 1>>
  %sel = strata.select %s dim 1 index 1 : !strata.tensor<2x2x3xf32, strided<[2, 12, 4], offset: 1>> -> !strata.tensor<2x3xf32, strided<[2, 4], offset: 13>>
  %u = strata.unsqueeze %sel dim 0 : !strata.tensor<2x3xf32, strided<[2, 4], offset: 13>> -> !strata.tensor<1x2x3xf32, strided<[4, 2, 4], offset: 13>>
  %t = strata.transpose %u dims 1, 2 : !strata.tensor<1x2x3xf32, strided<[4, 2, 4], offset: 13>> -> !strata.tensor<1x3x2xf32, strided<[4, 4, 2], offset: 13>>
  %n = strata.narrow %t dim 1 start 1 length 2 : !strata.tensor<1x3x2xf32, strided<[4, 4, 2], offset: 13>> -> !strata.tensor<1x2x2xf32, strided<[4, 4, 2], offset: 17>>
  %e = strata.expand %n to [5, 2, 2] : !strata.tensor<1x2x2xf32, strided<[4, 4, 2], offset: 17>> -> !strata.tensor<5x2x2xf32, strided<[0, 4, 2], offset: 17>>
  %d = strata.diagonal %e offset 0 dims 1, 2 : !strata.tensor<5x2x2xf32, strided<[0, 4, 2], offset: 17>> -> !strata.tensor<5x2xf32, strided<[0, 6], offset: 17>>
  return %d : !strata.tensor<5x2xf32, strided<[0, 6], offset: 17>>
}

// -----

// Every intermediate of a chain that is used survives as its own
// strided_view of the root; unused views disappear.
// CHECK-LABEL: func.func @branches(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[T:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
// CHECK-NEXT: %[[E:.*]] = strata.exp %[[T]]
// CHECK-NEXT: %[[R0:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<3xf32, strided<[4], offset: 1>>
// CHECK-NEXT: %[[R1:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<3xf32, strided<[4], offset: 3>>
// CHECK-NEXT: %[[S:.*]] = strata.add %[[R0]], %[[R1]]
// CHECK-NEXT: return %[[E]], %[[S]]
func.func @branches(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %e = strata.exp %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %r0 = strata.select %t dim 0 index 1 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<3xf32, strided<[4], offset: 1>>
  %r1 = strata.select %t dim 0 index 3 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<3xf32, strided<[4], offset: 3>>
  %dead = strata.flip %r1 dims [0] : !strata.tensor<3xf32, strided<[4], offset: 3>> -> !strata.tensor<3xf32, strided<[-4], offset: 11>>
  %s = strata.add %r0, %r1 : !strata.tensor<3xf32, strided<[4], offset: 1>>, !strata.tensor<3xf32, strided<[4], offset: 3>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return %e, %s : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>
}

// -----

// A view chain whose end has the root's type is the root.
// CHECK-LABEL: func.func @identity_chain(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[N:.*]] = strata.neg %[[A]]
// CHECK-NEXT: return %[[N]]
func.func @identity_chain(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %t2 = strata.transpose %t dims 0, 1 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %n = strata.neg %t2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %n : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}

// -----

// Views whose results are all unused are erased.
// CHECK-LABEL: func.func @dead(
// CHECK-NEXT: return
func.func @dead(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %r = strata.select %t dim 0 index 1 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<3xf32, strided<[4], offset: 1>>
  return
}

// -----

// Every prefix of one 8-view chain is used: chains of length 1..8, each
// one strided_view of the argument.
// CHECK-LABEL: func.func @prefixes(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-NEXT: %[[V1:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<6x4xf32, strided<[1, 6], offset: 0>>
// CHECK-NEXT: %[[V2:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<3x4xf32, strided<[2, 6], offset: 1>>
// CHECK-NEXT: %[[V3:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<3x4x1xf32, strided<[2, 6, 1], offset: 1>>
// CHECK-NEXT: %[[V4:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<3x4x5xf32, strided<[2, 6, 0], offset: 1>>
// CHECK-NEXT: %[[V5:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<5x3x4xf32, strided<[0, 2, 6], offset: 1>>
// CHECK-NEXT: %[[V6:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<5x3xf32, strided<[0, 2], offset: 19>>
// CHECK-NEXT: %[[V7:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<5x2x2xf32, strided<[0, 2, 2], offset: 19>>
// CHECK-NEXT: %[[V8:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<5x2xf32, strided<[0, 4], offset: 19>>
// CHECK-NEXT: strata.neg %[[V1]]
// CHECK-NEXT: strata.neg %[[V2]]
// CHECK-NEXT: strata.neg %[[V3]]
// CHECK-NEXT: strata.neg %[[V4]]
// CHECK-NEXT: strata.neg %[[V5]]
// CHECK-NEXT: strata.neg %[[V6]]
// CHECK-NEXT: strata.neg %[[V7]]
// CHECK-NEXT: strata.neg %[[V8]]
func.func @prefixes(%arg0: !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>>) -> (!strata.tensor<6x4xf32, strided<[1, 6], offset: 0>>, !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>, !strata.tensor<3x4x1xf32, strided<[1, 3, 1], offset: 0>>, !strata.tensor<3x4x5xf32, strided<[5, 15, 1], offset: 0>>, !strata.tensor<5x3x4xf32, strided<[12, 1, 3], offset: 0>>, !strata.tensor<5x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<5x2x2xf32, strided<[4, 2, 1], offset: 0>>, !strata.tensor<5x2xf32, strided<[2, 1], offset: 0>>) {
  %v1 = strata.transpose %arg0 dims 0, 1 : !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<6x4xf32, strided<[1, 6], offset: 0>>
  %v2 = strata.slice %v1 dim 0 start 1 step 2 : !strata.tensor<6x4xf32, strided<[1, 6], offset: 0>> -> !strata.tensor<3x4xf32, strided<[2, 6], offset: 1>>
  %v3 = strata.unsqueeze %v2 dim 2 : !strata.tensor<3x4xf32, strided<[2, 6], offset: 1>> -> !strata.tensor<3x4x1xf32, strided<[2, 6, 1], offset: 1>>
  %v4 = strata.expand %v3 to [3, 4, 5] : !strata.tensor<3x4x1xf32, strided<[2, 6, 1], offset: 1>> -> !strata.tensor<3x4x5xf32, strided<[2, 6, 0], offset: 1>>
  %v5 = strata.permute %v4 dims [2, 0, 1] : !strata.tensor<3x4x5xf32, strided<[2, 6, 0], offset: 1>> -> !strata.tensor<5x3x4xf32, strided<[0, 2, 6], offset: 1>>
  %v6 = strata.select %v5 dim 2 index 3 : !strata.tensor<5x3x4xf32, strided<[0, 2, 6], offset: 1>> -> !strata.tensor<5x3xf32, strided<[0, 2], offset: 19>>
  %v7 = strata.unfold %v6 dim 1 size 2 step 1 : !strata.tensor<5x3xf32, strided<[0, 2], offset: 19>> -> !strata.tensor<5x2x2xf32, strided<[0, 2, 2], offset: 19>>
  %v8 = strata.diagonal %v7 offset 0 dims 1, 2 : !strata.tensor<5x2x2xf32, strided<[0, 2, 2], offset: 19>> -> !strata.tensor<5x2xf32, strided<[0, 4], offset: 19>>
  %n1 = strata.neg %v1 : !strata.tensor<6x4xf32, strided<[1, 6], offset: 0>> -> !strata.tensor<6x4xf32, strided<[1, 6], offset: 0>>
  %n2 = strata.neg %v2 : !strata.tensor<3x4xf32, strided<[2, 6], offset: 1>> -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
  %n3 = strata.neg %v3 : !strata.tensor<3x4x1xf32, strided<[2, 6, 1], offset: 1>> -> !strata.tensor<3x4x1xf32, strided<[1, 3, 1], offset: 0>>
  %n4 = strata.neg %v4 : !strata.tensor<3x4x5xf32, strided<[2, 6, 0], offset: 1>> -> !strata.tensor<3x4x5xf32, strided<[5, 15, 1], offset: 0>>
  %n5 = strata.neg %v5 : !strata.tensor<5x3x4xf32, strided<[0, 2, 6], offset: 1>> -> !strata.tensor<5x3x4xf32, strided<[12, 1, 3], offset: 0>>
  %n6 = strata.neg %v6 : !strata.tensor<5x3xf32, strided<[0, 2], offset: 19>> -> !strata.tensor<5x3xf32, strided<[3, 1], offset: 0>>
  %n7 = strata.neg %v7 : !strata.tensor<5x2x2xf32, strided<[0, 2, 2], offset: 19>> -> !strata.tensor<5x2x2xf32, strided<[4, 2, 1], offset: 0>>
  %n8 = strata.neg %v8 : !strata.tensor<5x2xf32, strided<[0, 4], offset: 19>> -> !strata.tensor<5x2xf32, strided<[2, 1], offset: 0>>
  return %n1, %n2, %n3, %n4, %n5, %n6, %n7, %n8 : !strata.tensor<6x4xf32, strided<[1, 6], offset: 0>>, !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>, !strata.tensor<3x4x1xf32, strided<[1, 3, 1], offset: 0>>, !strata.tensor<3x4x5xf32, strided<[5, 15, 1], offset: 0>>, !strata.tensor<5x3x4xf32, strided<[12, 1, 3], offset: 0>>, !strata.tensor<5x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<5x2x2xf32, strided<[4, 2, 1], offset: 0>>, !strata.tensor<5x2xf32, strided<[2, 1], offset: 0>>
}
