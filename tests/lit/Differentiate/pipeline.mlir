// The gradient program goes through the normal pipeline: fold-views,
// materialize-copies, fuse. Backward of ((x.t() * w).relu()).sum() is fused.
// RUN: strata-opt --strata-pipeline=kernels=true %s | FileCheck %s

// CHECK-LABEL: func.func @relu_mul_sum
// CHECK-NOT: strata.relu
// Forward: mul+relu, sum; backward: relu mask, the two products, the
// transposed gradient of x (a copy for the returned contiguous tensor).
// CHECK-COUNT-6: strata.kernel space
// CHECK-NOT: strata.kernel space
// CHECK: return
func.func @relu_mul_sum(%x: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, %w: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<f32, strided<[], offset: 0>> attributes {strata.wrt = array<i64: 0, 1>} {
  %t = strata.transpose %x dims 0, 1 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
  %m = strata.mul %t, %w : !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %r = strata.relu %m : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %s = strata.sum %r dims [] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  return %s : !strata.tensor<f32, strided<[], offset: 0>>
}
