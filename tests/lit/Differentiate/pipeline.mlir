// The gradient program goes through the normal pipeline: fold-views,
// materialize-copies, fuse. Backward of ((x.t() * w).relu()).sum() is fused.
// RUN: strata-opt --strata-pipeline=kernels=true -split-input-file %s | FileCheck %s

// CHECK-LABEL: func.func @relu_mul_sum
// CHECK-NOT: strata.relu
// One kernel (sibling fusion, --strata-fuse): the loss (a reduction) and
// each gradient computed in its own order, with the relu mask recomputed in
// it (nothing of the forward or of the shared masked gradient is stored and
// read back); x and w are read once; the gradient of x is written in x's
// order (result_perms [1, 0] over the [3, 4] space); no zero fill, no
// scatter, no copy. The loss accumulates in f64 (--strata-widen-sums) and
// rounds to f32 in a 0-d kernel of its own.
// CHECK: %[[XT:.*]] = strata.strided_view %arg0 {{.*}} -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
// CHECK: %[[K:.*]]:3 = strata.kernel space [3, 4] reduce [0, 1] combiners ["sum", "none", "none"] ins(%[[XT]], %arg1, %{{.*}} : {{.*}} result_perms = array<i64: 0, 1, 1, 0, 0, 1>
// CHECK: arith.cmpf ole
// CHECK: strata.yield
// CHECK-NEXT: } -> !strata.tensor<f64, strided<[], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
// CHECK: %[[L:.*]] = strata.kernel space [] ins(%[[K]]#0 : !strata.tensor<f64
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK-NOT: strata.kernel space
// CHECK: return %[[L]], %[[K]]#1, %[[K]]#2
func.func @relu_mul_sum(%x: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, %w: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<f32, strided<[], offset: 0>> attributes {strata.wrt = array<i64: 0, 1>} {
  %t = strata.transpose %x dims 0, 1 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
  %m = strata.mul %t, %w : !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
  %r = strata.relu %m : !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>> -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
  %s = strata.sum %r dims [] : !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  return %s : !strata.tensor<f32, strided<[], offset: 0>>
}

// -----

// The same program as the DSL records it (leaves are storages): the
// gradient of the transposed storage is computed in the storage's order
// (one kernel, and the loss's f32 rounding).
// CHECK-LABEL: func.func @storage_leaves
// CHECK: strata.kernel space [3, 4]
// CHECK: strata.kernel space [] ins({{.*}} : !strata.tensor<f64
// CHECK-NOT: strata.kernel space
// CHECK-NOT: into
// CHECK: return
func.func @storage_leaves(%a0: !strata.storage<12xf32>, %a1: !strata.storage<12xf32>) -> !strata.tensor<f32, strided<[], offset: 0>> attributes {strata.wrt = array<i64: 0, 1>} {
  %t0 = strata.strided_view %a0 : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
  %t1 = strata.strided_view %a1 : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %m = strata.mul %t0, %t1 : !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
  %r = strata.relu %m : !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>> -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
  %s = strata.sum %r dims [] : !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  return %s : !strata.tensor<f32, strided<[], offset: 0>>
}
