// --strata-fuse gives gather one kernel over the index's shape with an
// indexed load (index_map: operand 1 at input 0's value times stride 4,
// clamped to [0, 3)); scatter_add a copy kernel, then a kernel `into` the
// copy whose store is indexed and accumulating. Ops round-trip.
// RUN: strata-opt %S/../Reference/index.mlir | strata-opt | FileCheck %s --check-prefix=ROUND
// RUN: strata-opt --strata-pipeline=kernels=true %S/../Reference/index.mlir | FileCheck %s

// ROUND: strata.gather %{{.*}}, %{{.*}} dim 0 : !strata.tensor<3x4xf32
// ROUND: strata.scatter_add %{{.*}}, %{{.*}}, %{{.*}} dim 0 :
// ROUND: strata.scatter %{{.*}}, %{{.*}}, %{{.*}} dim 1 :

// CHECK-LABEL: func.func @gather_rows
// CHECK: strata.kernel space [2, 4] ins(%{{.*}}, %{{.*}} : !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>>, !strata.tensor<2x4xf32, strided<[0, 1], offset: 0>>) attributes {index_map = array<i64: 1, 0, 4, 3, 0>
// CHECK-LABEL: func.func @scatter_add_dups
// (sibling fusion makes the two copies of %x, for the scatter_add and the
// scatter, one kernel with two results)
// CHECK: %[[COPY:.*]]:2 = strata.kernel space [3, 4] ins(
// CHECK: %[[DEST:.*]] = strata.strided_view %[[COPY]]#0 {{.*}} -> !strata.tensor<2x4xf32, strided<[0, 1], offset: 0>>
// CHECK: strata.kernel space [2, 4] ins({{.*}}) into(%[[DEST]] : {{.*}}) attributes {index_map = array<i64: 2, 0, 4, 3, 1>
