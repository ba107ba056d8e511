// RUN: strata-opt %s --strata-fuse -split-input-file | FileCheck %s

// pow by the number 2 (a constant: its value selects the code) is one
// multiply, as PyTorch's pow_tensor_scalar: no call to pow.
// CHECK-LABEL: func.func @square
// CHECK: strata.kernel space [8]
// CHECK: %[[M:.*]] = arith.mulf %[[X:.*]], %[[X]] : f32
// CHECK-NOT: math.powf
// CHECK: strata.yield %[[M]] : f32
func.func @square(%a: !strata.tensor<8xf32, strided<[1], offset: 0>>) -> !strata.tensor<8xf32, strided<[1], offset: 0>> {
  %two = strata.fill 2.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %p = strata.pow %a, %two : !strata.tensor<8xf32, strided<[1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<8xf32, strided<[1], offset: 0>>
  return %p : !strata.tensor<8xf32, strided<[1], offset: 0>>
}

// -----

// A number exponent passed as an argument (scalar_exponent): read in the
// kernel, general pow in f32 whatever its value.
// CHECK-LABEL: func.func @argument
// CHECK: strata.kernel space [8] ins(%arg0, %{{.*}} :
// CHECK: ^bb0(%[[X:.*]]: f32, %[[E:.*]]: f32):
// CHECK: %[[P:.*]] = math.powf %[[X]], %[[E]] : f32
// CHECK: strata.yield %[[P]] : f32
func.func @argument(%a: !strata.tensor<8xf32, strided<[1], offset: 0>>, %s: !strata.storage<1xf32>) -> !strata.tensor<8xf32, strided<[1], offset: 0>> {
  %e = strata.strided_view %s : !strata.storage<1xf32> -> !strata.tensor<f32, strided<[], offset: 0>>
  %p = strata.pow %a, %e {scalar_exponent} : !strata.tensor<8xf32, strided<[1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<8xf32, strided<[1], offset: 0>>
  return %p : !strata.tensor<8xf32, strided<[1], offset: 0>>
}

// -----

// An exponent f32 cannot hold (1.1) comes in f64, as PyTorch's double
// Scalar: the power in f64, rounded once to f32.
// CHECK-LABEL: func.func @wide
// CHECK: ^bb0(%[[X:.*]]: f32, %[[E:.*]]: f64):
// CHECK: %[[W:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK: %[[P:.*]] = math.powf %[[W]], %[[E]] : f64
// CHECK: %[[R:.*]] = arith.truncf %[[P]] : f64 to f32
// CHECK: strata.yield %[[R]] : f32
func.func @wide(%a: !strata.tensor<8xf32, strided<[1], offset: 0>>, %s: !strata.storage<1xf64>) -> !strata.tensor<8xf32, strided<[1], offset: 0>> {
  %e = strata.strided_view %s : !strata.storage<1xf64> -> !strata.tensor<f64, strided<[], offset: 0>>
  %p = strata.pow %a, %e {scalar_exponent} : !strata.tensor<8xf32, strided<[1], offset: 0>>, !strata.tensor<f64, strided<[], offset: 0>> -> !strata.tensor<8xf32, strided<[1], offset: 0>>
  return %p : !strata.tensor<8xf32, strided<[1], offset: 0>>
}
