// RUN: strata-opt %s --strata-widen-sums --strata-fuse -split-input-file \
// RUN:   | FileCheck %s

// An f32 mean as PyTorch's: the (widened, f64) sum rounded to f32, then
// divided by the count as an f32; the count is a size value (the LLVM
// kernel reads it at run time).
// CHECK-LABEL: func.func @mean_f32
// CHECK: strata.kernel space [4, 7] reduce [1] combiners ["sum"]
// CHECK: arith.extf %{{.*}} {strata.cascade} : f32 to f64
// CHECK: strata.kernel space [4]
// CHECK: %[[T:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: %[[N:.*]] = arith.constant {strata.size_value} 7.000000e+00 : f32
// CHECK: arith.divf %[[T]], %[[N]] : f32
func.func @mean_f32(%x: !strata.tensor<4x7xf32, strided<[7, 1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %m = strata.mean %x dims [1] : !strata.tensor<4x7xf32, strided<[7, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %m : !strata.tensor<4xf32, strided<[1], offset: 0>>
}

// -----

// 2^24 + 1 elements: the count as an f32 is 2^24 (0x4B800000), as PyTorch
// divides by it.
// CHECK-LABEL: func.func @mean_past_2_to_24
// CHECK: arith.constant {strata.size_value} 0x4B800000 : f32
func.func @mean_past_2_to_24(%x: !strata.tensor<2x16777217xf32, strided<[16777217, 1], offset: 0>>) -> !strata.tensor<2xf32, strided<[1], offset: 0>> {
  %m = strata.mean %x dims [1] : !strata.tensor<2x16777217xf32, strided<[16777217, 1], offset: 0>> -> !strata.tensor<2xf32, strided<[1], offset: 0>>
  return %m : !strata.tensor<2xf32, strided<[1], offset: 0>>
}

// -----

// An f64 mean divides its f64 sum by the f64 count.
// CHECK-LABEL: func.func @mean_f64
// CHECK: strata.kernel space [4]
// CHECK: %[[N:.*]] = arith.constant {strata.size_value} 7.000000e+00 : f64
// CHECK: arith.divf %{{.*}}, %[[N]] : f64
func.func @mean_f64(%x: !strata.tensor<4x7xf64, strided<[7, 1], offset: 0>>) -> !strata.tensor<4xf64, strided<[1], offset: 0>> {
  %m = strata.mean %x dims [1] : !strata.tensor<4x7xf64, strided<[7, 1], offset: 0>> -> !strata.tensor<4xf64, strided<[1], offset: 0>>
  return %m : !strata.tensor<4xf64, strided<[1], offset: 0>>
}
