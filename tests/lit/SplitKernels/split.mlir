// RUN: strata-opt %s --strata-split-kernels=max-ops=2 -split-input-file | FileCheck %s
// RUN: strata-opt %s --strata-split-kernels -split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: strata-opt %s --strata-split-kernels=max-inputs=2 -split-input-file | FileCheck %s --check-prefix=INS

// Three ops, pieces of two: the first piece writes what the second reads
// (the product, and the input's own scalar is read again from the input).
// CHECK-LABEL: func.func @chain
// CHECK: %[[P:.*]] = strata.kernel space [4] ins(%arg0 : !strata.tensor<4xf32, strided<[2], offset: 1>>) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32):
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: strata.yield %[[M]] : f32
// CHECK-NEXT: } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
// CHECK: strata.kernel space [4] ins(%[[P]], %arg0 : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[2], offset: 1>>) {
// CHECK-NEXT: ^bb0(%[[Y:.*]]: f32, %[[X2:.*]]: f32):
// CHECK-NEXT: arith.subf %[[Y]], %[[X2]] : f32
// DEFAULT-LABEL: func.func @chain
// DEFAULT: strata.kernel
// DEFAULT-NOT: strata.kernel
func.func @chain(%a: !strata.tensor<4xf32, strided<[2], offset: 1>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [4] ins(%a : !strata.tensor<4xf32, strided<[2], offset: 1>>) {
  ^bb0(%x: f32):
    %0 = arith.addf %x, %x : f32
    %1 = arith.mulf %0, %0 : f32
    %2 = arith.subf %1, %x : f32
    strata.yield %2 : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<4xf32, strided<[1], offset: 0>>
}

// -----

// Constants are cloned into each piece that uses them (not written); the
// reduction stays on the last piece, and a value the yield uses crosses.
// CHECK-LABEL: func.func @reduce
// DEFAULT-LABEL: func.func @reduce
// CHECK: strata.kernel space [2, 3] ins(%arg0 : {{.*}}) {
// CHECK: arith.constant 2.0
// CHECK: strata.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-NEXT: } -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
// CHECK: strata.kernel space [2, 3] reduce [1] combiners ["sum"] ins(
// CHECK: arith.constant 2.0
// CHECK: } -> !strata.tensor<2xf32, strided<[1], offset: 0>>
func.func @reduce(%a: !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>) -> !strata.tensor<2xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [2, 3] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>) {
  ^bb0(%x: f32):
    %c = arith.constant 2.0 : f32
    %0 = arith.mulf %x, %c : f32
    %1 = arith.addf %0, %x : f32
    %2 = arith.mulf %1, %c : f32
    %3 = arith.addf %2, %0 : f32
    strata.yield %3 : f32
  } -> !strata.tensor<2xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<2xf32, strided<[1], offset: 0>>
}

// -----

// A piece ends before an op that would make it read more than max-inputs
// values from outside it (each loaded scalar is a live value across the
// loop: hundreds made LLVM's register allocator the compile's cost).
// INS-LABEL: func.func @inputs
// INS: strata.kernel space [4] ins(%arg0, %arg1 : {{.*}}) {
// INS-NEXT: ^bb0(%[[W:.*]]: f32, %[[X:.*]]: f32):
// INS-NEXT: %[[S0:.*]] = arith.addf %[[W]], %[[X]] : f32
// INS-NEXT: strata.yield %[[S0]] : f32
// INS: strata.kernel space [4] ins(%{{.*}}, %arg2 : {{.*}}) {
// INS-NEXT: ^bb0(%[[P:.*]]: f32, %[[Y:.*]]: f32):
// INS-NEXT: arith.addf %[[P]], %[[Y]] : f32
// INS: strata.kernel space [4] ins(%{{.*}}, %arg3 : {{.*}}) {
// INS-NEXT: ^bb0(%[[Q:.*]]: f32, %[[Z:.*]]: f32):
// INS-NEXT: arith.mulf %[[Q]], %[[Z]] : f32
// INS-NEXT: arith.mulf
// INS-NEXT: strata.yield
// INS-NOT: strata.kernel
// DEFAULT-LABEL: func.func @inputs
// DEFAULT: strata.kernel
// DEFAULT-NOT: strata.kernel
func.func @inputs(%a: !strata.tensor<4xf32, strided<[1], offset: 0>>, %b: !strata.tensor<4xf32, strided<[1], offset: 0>>, %c: !strata.tensor<4xf32, strided<[1], offset: 0>>, %d: !strata.tensor<4xf32, strided<[1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [4] ins(%a, %b, %c, %d : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>) {
  ^bb0(%w: f32, %x: f32, %y: f32, %z: f32):
    %0 = arith.addf %w, %x : f32
    %1 = arith.addf %0, %y : f32
    %2 = arith.mulf %1, %z : f32
    %3 = arith.mulf %2, %2 : f32
    strata.yield %3 : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<4xf32, strided<[1], offset: 0>>
}
