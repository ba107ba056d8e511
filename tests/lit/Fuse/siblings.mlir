// Sibling fusion (--strata-fuse) on the programs of Reference/siblings.mlir,
// whose values the JIT checks against the reference evaluator
// (JIT/siblings.mlir).
// RUN: strata-opt --strata-pipeline=kernels=true %S/../Reference/siblings.mlir | FileCheck %s

// x.t() * w over [3, 4] and x * w.t() over [4, 3]: one kernel over [3, 4]
// reading x and w once (two inputs). Both results run over dim 1 first,
// i.e. in x's order: the second's space is transposed, and the first keeps
// x.t()'s layout (TensorIterator), written in storage order and viewed.
// CHECK-LABEL: func.func @transposed_siblings
// CHECK: %[[K:.*]]:2 = strata.kernel space [3, 4] ins(%{{[0-9]+}}, %{{[0-9]+}} : !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {{.*}}result_perms = array<i64: 1, 0, 1, 0>
// CHECK-NOT: strata.kernel
// CHECK: %[[V:.*]] = strata.strided_view %[[K]]#0 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
// CHECK: return %[[V]], %[[K]]#1

// The loss and both gradients: one kernel, the sum and two `none` results
// (and the loss's rounding from its f64 accumulator, a 0-d kernel).
// CHECK-LABEL: func.func @loss_and_gradients
// Both gradients are written in x's order (that of x.t(), whose layout
// the gradient of x keeps).
// CHECK: %[[K:.*]]:3 = strata.kernel space [3, 4] reduce [0, 1] combiners ["sum", "none", "none"] ins(%{{[0-9]+}}, %{{[0-9]+}} : {{.*}}result_perms = array<i64: 0, 1, 1, 0, 1, 0>
// CHECK: %[[L:.*]] = strata.kernel space [] ins(%[[K]]#0 : !strata.tensor<f64
// CHECK-NOT: strata.kernel
// CHECK: %[[GX:.*]] = strata.strided_view %[[K]]#1 : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
// CHECK: return %[[L]], %[[K]]#2, %[[GX]]

// amax over dim 1 of a permuted view, and a * a in a's order: one kernel
// over the permuted space [4, 2, 3]; a's order there is [1, 2, 0].
// CHECK-LABEL: func.func @permuted_reduce_and_map
// CHECK: %[[K:.*]]:2 = strata.kernel space [4, 2, 3] reduce [1] combiners ["max", "none"] {{.*}}result_perms = array<i64: 0, 1, 2, 1, 2, 0>
// CHECK-NOT: strata.kernel
// CHECK: return %[[K]]#0, %[[K]]#1

// sum over dim 0 and over dim 1 stay apart (the first takes both
// elementwise siblings, y and x - 2); z reads y, so y's kernel and z's stay
// apart; the transpose view of y moves after the kernel that now writes y.
// Each f32 sum rounds from its f64 accumulator in a kernel of its own.
// CHECK-LABEL: func.func @must_not_merge
// CHECK: %[[R0:.*]]:3 = strata.kernel space [3, 4] reduce [0] combiners ["sum", "none", "none"]
// CHECK: %[[S0:.*]] = strata.kernel space [4] ins(%[[R0]]#0 : !strata.tensor<4xf64
// CHECK: %[[R1:.*]] = strata.kernel space [3, 4] reduce [1] combiners ["sum"] ins
// CHECK: %[[S1:.*]] = strata.kernel space [3] ins(%[[R1]] : !strata.tensor<3xf64
// CHECK: %[[Z:.*]] = strata.kernel space [3, 4] reduce [0, 1] combiners ["sum"] ins(%[[R0]]#1, %{{[0-9]+}} :
// CHECK: %[[SZ:.*]] = strata.kernel space [] ins(%[[Z]] : !strata.tensor<f64
// CHECK: %[[YT:.*]] = strata.strided_view %[[R0]]#1 {{.*}} -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
// CHECK: return %[[S0]], %[[S1]], %[[SZ]], %[[YT]], %[[R0]]#2

// y's kernel and u's (over the transposed space) merge although the amax,
// between them, reads y: the merged kernel goes where y's was. u keeps
// x.t()'s layout, so both results are written in x's order: one stream.
// CHECK-LABEL: func.func @merge_before_consumer
// CHECK: %[[K:.*]]:2 = strata.kernel space [3, 4] ins(%{{[0-9]+}} : {{.*}}loop_sizes = array<i64: 12>
// CHECK: %[[Z:.*]] = strata.kernel space [3, 4] reduce [0] combiners ["max"] ins(%[[K]]#0 :
// CHECK-NOT: strata.kernel
// CHECK: %[[U:.*]] = strata.strided_view %[[K]]#1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
// CHECK: return %[[K]]#0, %[[Z]], %[[U]]
