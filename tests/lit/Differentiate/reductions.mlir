// Reduction and matmul VJPs.
// RUN: strata-opt --strata-differentiate -split-input-file %s | FileCheck %s

// mean -> the gradient broadcast back (stride 0), divided by the count (a
// size value: the LLVM kernel reads it at run time).
// CHECK-LABEL: func.func @mean
// (The returned gradient's elementwise ops are rebuilt on folded reads.)
// CHECK: %[[N:.*]] = strata.fill 4.0{{.*}} {strata.size_value}
// CHECK: %[[E:.*]] = strata.strided_view %arg1 {{.*}} -> !strata.tensor<3x4xf32, strided<[1, 0], offset: 0>>
// CHECK: strata.div %[[E]], %[[N]]
func.func @mean(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3xf32, strided<[1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %m = strata.mean %x dims [1] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return %m : !strata.tensor<3xf32, strided<[1], offset: 0>>
}

// -----

// matmul -> dA = dC @ B^T, dB = A^T @ dC.
// CHECK-LABEL: func.func @matmul
// CHECK: %[[BT:.*]] = strata.transpose %arg1 dims 0, 1
// CHECK: %[[GA:.*]] = strata.matmul %arg2, %[[BT]]
// CHECK: %[[AT:.*]] = strata.transpose %arg0 dims 0, 1
// CHECK: %[[GB:.*]] = strata.matmul %[[AT]], %arg2
// CHECK: return %{{.*}}, %[[GA]], %[[GB]]
func.func @matmul(%a: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %b: !strata.tensor<4x2xf32, strided<[2, 1], offset: 0>>) -> !strata.tensor<3x2xf32, strided<[2, 1], offset: 0>> attributes {strata.wrt = array<i64: 0, 1>} {
  %c = strata.matmul %a, %b : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<4x2xf32, strided<[2, 1], offset: 0>> -> !strata.tensor<3x2xf32, strided<[2, 1], offset: 0>>
  return %c : !strata.tensor<3x2xf32, strided<[2, 1], offset: 0>>
}
