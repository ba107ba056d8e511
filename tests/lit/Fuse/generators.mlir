// RUN: strata-opt %s --strata-fuse -split-input-file | FileCheck %s

// fill and arange are *generators*: the kernels that read them compute
// their elements (a constant; start + position * step from the point's
// indices) instead of loading them, so `(arange(n) * 2 + 1).relu().sum()`
// is one kernel, not an arange kernel and a reduction reading its result.
// CHECK-LABEL: func.func @first_eval
// CHECK-NOT: strata.arange
// CHECK: %[[K:.*]] = strata.kernel space [4096] reduce [0] combiners ["sum"] indexed {
// CHECK-NEXT: ^bb0(%[[I:.*]]: i64):
// CHECK: %[[STEP:.*]] = arith.constant 1.0{{.*}} : f64
// CHECK: %[[F:.*]] = arith.sitofp %[[I]] : i64 to f64
// CHECK: %[[M:.*]] = arith.mulf %[[F]], %[[STEP]] : f64
// CHECK: %[[START:.*]] = arith.constant 0.0{{.*}} : f64
// CHECK: %[[A:.*]] = arith.addf %[[START]], %[[M]] : f64
// CHECK: %[[X:.*]] = arith.truncf %[[A]] : f64 to f32
// CHECK: arith.mulf %[[X]]
// CHECK: arith.extf {{.*}} {strata.cascade} : f32 to f64
// CHECK: -> !strata.tensor<f64, strided<[], offset: 0>>
// CHECK: %[[R:.*]] = strata.kernel space [] ins(%[[K]]
// CHECK: arith.truncf
// CHECK-NOT: strata.kernel
// CHECK: return %[[R]]
func.func @first_eval() -> !strata.tensor<f32, strided<[], offset: 0>> {
  %0 = strata.arange start 0.0 step 1.0 : !strata.tensor<4096xf32, strided<[1], offset: 0>>
  %two = strata.fill 2.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %1 = strata.mul %0, %two : !strata.tensor<4096xf32, strided<[1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<4096xf32, strided<[1], offset: 0>>
  %one = strata.fill 1.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %2 = strata.add %1, %one : !strata.tensor<4096xf32, strided<[1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<4096xf32, strided<[1], offset: 0>>
  %3 = strata.relu %2 : !strata.tensor<4096xf32, strided<[1], offset: 0>> -> !strata.tensor<4096xf32, strided<[1], offset: 0>>
  %4 = strata.cast %3 {strata.cascade} : !strata.tensor<4096xf32, strided<[1], offset: 0>> -> !strata.tensor<4096xf64, strided<[1], offset: 0>>
  %5 = strata.sum %4 dims [] : !strata.tensor<4096xf64, strided<[1], offset: 0>> -> !strata.tensor<f64, strided<[], offset: 0>>
  %6 = strata.cast %5 : !strata.tensor<f64, strided<[], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  return %6 : !strata.tensor<f32, strided<[], offset: 0>>
}

// -----

// A view of an arange reads position offset + sum(index * stride): here
// the reversed odd elements of arange(10) viewed as [2, 2] (strides
// [-4, -2], offset 9), broadcast over a [3, 2, 2] input's leading dim
// (stride 0: that index is not read).
// CHECK-LABEL: func.func @arange_view
// CHECK-NOT: strata.arange
// CHECK: strata.kernel space [3, 2, 2] indexed ins(%arg0 : {{.*}}) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[I0:.*]]: i64, %[[I1:.*]]: i64, %[[I2:.*]]: i64):
// CHECK: %[[C4:.*]] = arith.constant -4 : i64
// CHECK: %[[P1:.*]] = arith.muli %[[I1]], %[[C4]] : i64
// CHECK: %[[C2:.*]] = arith.constant -2 : i64
// CHECK: %[[P2:.*]] = arith.muli %[[I2]], %[[C2]] : i64
// CHECK: %[[S:.*]] = arith.addi %[[P1]], %[[P2]] : i64
// CHECK: %[[C9:.*]] = arith.constant 9 : i64
// CHECK: %[[P:.*]] = arith.addi %[[S]], %[[C9]] : i64
// CHECK: %[[STEP:.*]] = arith.constant 3 : i64
// CHECK: %[[Q:.*]] = arith.muli %[[P]], %[[STEP]] : i64
// CHECK: %[[START:.*]] = arith.constant -5 : i64
// CHECK: %[[V:.*]] = arith.addi %[[START]], %[[Q]] : i64
// CHECK: %[[VF:.*]] = arith.sitofp %[[V]] : i64 to f32
// CHECK: arith.addf %[[X]], %[[VF]] : f32
// CHECK-NOT: strata.kernel
func.func @arange_view(%x: !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>>) -> !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>> {
  %a = strata.arange start -5 step 3 : !strata.tensor<10xi64, strided<[1], offset: 0>>
  %v = strata.strided_view %a : !strata.tensor<10xi64, strided<[1], offset: 0>> -> !strata.tensor<3x2x2xi64, strided<[0, -4, -2], offset: 9>>
  %f = strata.cast %v : !strata.tensor<3x2x2xi64, strided<[0, -4, -2], offset: 9>> -> !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>>
  %s = strata.add %x, %f : !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>>, !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>> -> !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>>
  return %s : !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>>
}

// -----

// A generator that is also read from memory (returned, a matmul operand,
// a write's destination) still gets its kernel; its other readers compute
// it. A fill of any rank is a constant of the kernels that read it.
// CHECK-LABEL: func.func @kept
// CHECK: %[[A:.*]] = strata.kernel space [3] indexed {
// CHECK: %[[Z:.*]] = strata.kernel space [2, 3] {
// CHECK-NEXT: arith.constant 0.0
// CHECK: %[[V:.*]] = strata.strided_view %[[Z]]
// CHECK: strata.kernel space [3] indexed ins(%arg0 : {{.*}}) into(%[[V]] : {{.*}})
// CHECK: strata.kernel space [3] indexed ins(%arg0 : {{.*}}) {
// CHECK: arith.constant 5.0{{.*}} : f32
// CHECK: return %[[A]]
func.func @kept(%x: !strata.tensor<3xf32, strided<[1], offset: 0>>) -> (!strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.storage<6xf32>, !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  %a = strata.arange start 0.0 step 0.5 : !strata.tensor<3xf32, strided<[1], offset: 0>>
  %z = strata.fill 0.0 : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %row = strata.strided_view %z : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 3>>
  %xa = strata.mul %x, %a : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  %w = strata.write %xa into %row : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 3>> -> !strata.storage<6xf32>
  %five = strata.fill 5.0 : !strata.tensor<3xf32, strided<[1], offset: 0>>
  %b = strata.add %x, %a : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  %c = strata.mul %b, %five : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return %a, %w, %c : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.storage<6xf32>, !strata.tensor<3xf32, strided<[1], offset: 0>>
}

// -----

// A kernel whose operands move in different orders (a transposed input
// and a row-major one) runs in transposed tiles, which an indexed kernel
// does not get: it loads the arange, which keeps a kernel.
// CHECK-LABEL: func.func @transposed
// CHECK: %[[A:.*]] = strata.kernel space [32] indexed {
// CHECK: %[[B:.*]] = strata.strided_view %[[A]] {{.*}} -> !strata.tensor<32x32xf32, strided<[0, 1], offset: 0>>
// CHECK: strata.kernel space [32, 32] ins(%arg1, %arg0, %[[B]] :
// CHECK-NOT: indexed
// CHECK: return
func.func @transposed(%x: !strata.tensor<32x32xf32, strided<[1, 32], offset: 0>>, %y: !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>) -> !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>> {
  %a = strata.arange start 0.0 step 1.0 : !strata.tensor<32xf32, strided<[1], offset: 0>>
  %t = strata.add %y, %x : !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>, !strata.tensor<32x32xf32, strided<[1, 32], offset: 0>> -> !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>
  %s = strata.add %t, %a : !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>, !strata.tensor<32xf32, strided<[1], offset: 0>> -> !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>
  return %s : !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>
}
