// Elementwise VJPs: broadcast operands get their gradient summed back.
// RUN: strata-opt --strata-differentiate -split-input-file %s | FileCheck %s

// CHECK-LABEL: func.func @mul_broadcast
// CHECK-SAME: (%[[W:.*]]: !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, %[[X:.*]]: !strata.tensor<3xf32, strided<[1], offset: 0>>, %[[DY:.*]]: !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>) -> (!strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>)
// CHECK: %[[Y:.*]] = strata.mul %[[W]], %[[X]]
// CHECK: %[[GX:.*]] = strata.mul %[[DY]], %[[W]]
// CHECK: %[[S:.*]] = strata.sum %[[GX]] dims [0] keepdim
// CHECK: %[[R:.*]] = strata.reshape %[[S]] as [3]
// Each returned gradient is built for itself: x broadcast as a stride-0
// view, and no copy of a whole compute result.
// CHECK: %[[XB:.*]] = strata.strided_view %[[X]] : {{.*}} -> !strata.tensor<2x3xf32, strided<[0, 1], offset: 0>>
// CHECK: %[[GW:.*]] = strata.mul %[[DY]], %[[XB]]
// CHECK-NOT: strata.copy
// CHECK: return %[[Y]], %[[R]], %[[GW]]
func.func @mul_broadcast(%w: !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, %x: !strata.tensor<3xf32, strided<[1], offset: 0>>) -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>> attributes {strata.wrt = array<i64: 1, 0>} {
  %y = strata.mul %w, %x : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  return %y : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
}

// -----

// CHECK-LABEL: func.func @exp_tanh
// CHECK: %[[E:.*]] = strata.exp %arg0
// CHECK: %[[T:.*]] = strata.tanh %[[E]]
// CHECK: %[[ONE:.*]] = strata.fill 1.0
// The returned tanh is read (it is stored anyway) ...
// CHECK: %[[SQ:.*]] = strata.mul %[[T]], %[[T]]
// CHECK: %[[D:.*]] = strata.sub %[[ONE]], %[[SQ]]
// CHECK: %[[G1:.*]] = strata.mul %arg1, %[[D]]
// ... the intermediate exp is recomputed in the gradient's kernel rather
// than stored for two consumers.
// CHECK: %[[E2:.*]] = strata.exp %arg0
// CHECK: %[[G0:.*]] = strata.mul %[[G1]], %[[E2]]
// CHECK: return %[[T]], %[[G0]]
func.func @exp_tanh(%x: !strata.tensor<3xf32, strided<[1], offset: 0>>) -> !strata.tensor<3xf32, strided<[1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %e = strata.exp %x : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  %t = strata.tanh %e : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return %t : !strata.tensor<3xf32, strided<[1], offset: 0>>
}

// -----

// Constants and compares get no gradient; where routes it by the condition.
// CHECK-LABEL: func.func @relu_where
// CHECK: %[[C:.*]] = strata.gt %arg0, %[[Z:.*]] :
// CHECK: %[[W:.*]] = strata.where %[[C]], %arg0, %[[Z]]
// CHECK: %[[ZERO:.*]] = strata.fill 0.0
// CHECK: %[[C2:.*]] = strata.gt %arg0, %[[Z]] :
// CHECK: %[[GL:.*]] = strata.where %[[C2]], %arg1, %[[ZERO]]
// CHECK-NOT: strata.where
// CHECK-NOT: strata.sum
// CHECK: return %[[W]], %[[GL]]
func.func @relu_where(%x: !strata.tensor<3xf32, strided<[1], offset: 0>>) -> !strata.tensor<3xf32, strided<[1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %z = strata.fill 0.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %c = strata.gt %x, %z : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<3xi1, strided<[1], offset: 0>>
  %w = strata.where %c, %x, %z : !strata.tensor<3xi1, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return %w : !strata.tensor<3xf32, strided<[1], offset: 0>>
}

// -----

// An argument the results don't depend on gets zeros.
// CHECK-LABEL: func.func @unused
// CHECK: %[[Z:.*]] = strata.fill 0.0{{.*}} : !strata.tensor<3xf32, strided<[1], offset: 0>>
// CHECK: return %arg1, %[[Z]]
func.func @unused(%x: !strata.tensor<3xf32, strided<[1], offset: 0>>, %y: !strata.tensor<3xf32, strided<[1], offset: 0>>) -> !strata.tensor<3xf32, strided<[1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  return %y : !strata.tensor<3xf32, strided<[1], offset: 0>>
}
