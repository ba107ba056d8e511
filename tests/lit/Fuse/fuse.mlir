// RUN: strata-opt %s --strata-fuse -split-input-file | FileCheck %s

// An elementwise chain with a broadcast operand and a scalar: one kernel.
// CHECK-LABEL: func.func @chain
// CHECK: %[[B:.*]] = strata.strided_view %arg1 {{.*}} -> !strata.tensor<4x3xf32, strided<[0, 1], offset: 0>>
// CHECK: %[[K:.*]] = strata.kernel space [4, 3] ins(%arg0, %[[B]] :
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32):
// CHECK: %[[C:.*]] = arith.constant 2.0{{.*}} : f32
// CHECK: %[[M:.*]] = arith.mulf %[[X]], %[[C]] : f32
// CHECK: %[[S:.*]] = arith.addf %[[M]], %[[Y]] : f32
// CHECK: strata.yield %[[S]] : f32
// CHECK-NOT: strata.kernel
// CHECK: return %[[K]]
func.func @chain(%a: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, %b: !strata.tensor<3xf32, strided<[1], offset: 0>>) -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> {
  %two = strata.fill 2.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %m = strata.mul %a, %two : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %s = strata.add %m, %b : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  return %s : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
}

// -----

// A trailing reduction joins the kernel; a value used twice is written once.
// CHECK-LABEL: func.func @shared
// CHECK: %[[E:.*]] = strata.kernel space [4, 3] ins(%arg0
// CHECK: math.exp
// CHECK: %[[R:.*]] = strata.kernel space [4, 3] reduce [1] combiners ["sum"] ins(%[[E]]
// CHECK: arith.mulf
// CHECK: return %[[R]], %[[E]]
func.func @shared(%a: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) -> (!strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) {
  %e = strata.exp %a : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %m = strata.mul %e, %e : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %s = strata.sum %m dims [1] : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %s, %e : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
}

// -----

// A write through a view becomes a kernel `into` the view.
// CHECK-LABEL: func.func @write
// CHECK: %[[V:.*]] = strata.strided_view %arg0
// CHECK: strata.kernel space [3] ins(%[[V]] : {{.*}}) into(%[[V]] : {{.*}})
// CHECK: arith.addf
// CHECK: -> !strata.storage<12xf32>
func.func @write(%s: !strata.storage<12xf32>) -> !strata.storage<12xf32> {
  %v = strata.strided_view %s : !strata.storage<12xf32> -> !strata.tensor<3xf32, strided<[4], offset: 1>>
  %one = strata.fill 1.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %a = strata.add %v, %one : !strata.tensor<3xf32, strided<[4], offset: 1>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  %w = strata.write %a into %v : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[4], offset: 1>> -> !strata.storage<12xf32>
  return %w : !strata.storage<12xf32>
}

// -----

// matmul: a kernel over [M, N, K] reducing K, operands viewed with stride 0.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: strata.strided_view %arg0 {{.*}} -> !strata.tensor<2x5x3xf32, strided<[3, 0, 1], offset: 0>>
// CHECK-DAG: strata.strided_view %arg1 {{.*}} -> !strata.tensor<2x5x3xf32, strided<[0, 1, 5], offset: 0>>
// CHECK: strata.kernel space [2, 5, 3] reduce [2] combiners ["sum"]
func.func @matmul(%a: !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, %b: !strata.tensor<3x5xf32, strided<[5, 1], offset: 0>>) -> !strata.tensor<2x5xf32, strided<[5, 1], offset: 0>> {
  %c = strata.matmul %a, %b : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3x5xf32, strided<[5, 1], offset: 0>> -> !strata.tensor<2x5xf32, strided<[5, 1], offset: 0>>
  return %c : !strata.tensor<2x5xf32, strided<[5, 1], offset: 0>>
}
