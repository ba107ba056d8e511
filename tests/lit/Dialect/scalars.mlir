// Fill values and arange bounds: i64 literals are exact (integer tensors),
// f64 ones print back as floats; both round-trip.
// RUN: strata-opt %s | strata-opt | FileCheck %s
// RUN: strata-opt %s --strata-pipeline=kernels=true | FileCheck %s --check-prefix=KERNEL

// CHECK-LABEL: func.func @scalars
// CHECK: strata.fill 9223372036854775807 : !strata.tensor<i64
// CHECK: strata.fill -9223372036854775808 : !strata.tensor<i64
// CHECK: strata.fill 9007199254740993 : !strata.tensor<i64
// CHECK: strata.fill 1.000000e+17 : !strata.tensor<f32
// CHECK: strata.fill 0x7FF0000000000000 : !strata.tensor<f64
// CHECK: strata.arange start 9007199254740992 step 1 : !strata.tensor<4xi64
// KERNEL: arith.constant 9223372036854775807 : i64
// KERNEL: arith.constant -9223372036854775808 : i64
// KERNEL: arith.constant 9007199254740993 : i64
func.func @scalars() -> (!strata.tensor<i64, strided<[], offset: 0>>, !strata.tensor<i64, strided<[], offset: 0>>, !strata.tensor<i64, strided<[], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<f64, strided<[], offset: 0>>, !strata.tensor<4xi64, strided<[1], offset: 0>>) {
  %0 = strata.fill 9223372036854775807 : !strata.tensor<i64, strided<[], offset: 0>>
  %1 = strata.fill -9223372036854775808 : !strata.tensor<i64, strided<[], offset: 0>>
  %2 = strata.fill 9007199254740993 : !strata.tensor<i64, strided<[], offset: 0>>
  %3 = strata.fill 1.0e+17 : !strata.tensor<f32, strided<[], offset: 0>>
  %4 = strata.fill 0x7FF0000000000000 : !strata.tensor<f64, strided<[], offset: 0>>
  %5 = strata.arange start 9007199254740992 step 1 : !strata.tensor<4xi64, strided<[1], offset: 0>>
  return %0, %1, %2, %3, %4, %5 : !strata.tensor<i64, strided<[], offset: 0>>, !strata.tensor<i64, strided<[], offset: 0>>, !strata.tensor<i64, strided<[], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<f64, strided<[], offset: 0>>, !strata.tensor<4xi64, strided<[1], offset: 0>>
}
