// RUN: strata-opt --strata-pipeline %s | FileCheck %s
// The whole pipeline: two chains that reach one layout become one
// strided_view (fold-views, then cse); a reshape that strides cannot express
// is one contiguous copy, read through a strided_view; the contiguous read
// by exp is that copy (exp's result is returned: its row-major layout
// follows the copy, so exp does not read the transpose itself).

// CHECK-LABEL: func.func @pipeline(
// CHECK-SAME: %[[A:[^:]*]]:
// CHECK-DAG: %[[ROW:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<4xf32, strided<[1], offset: 8>>
// CHECK-DAG: %[[T:.*]] = strata.strided_view %[[A]] : {{.*}} -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
// CHECK-DAG: %[[C:.*]] = strata.contiguous %[[T]] : {{.*}} -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
// CHECK-DAG: %[[S:.*]] = strata.add %[[ROW]], %[[ROW]]
// CHECK-DAG: %[[TAIL:.*]] = strata.strided_view %[[C]] : {{.*}} -> !strata.tensor<6xf32, strided<[1], offset: 6>>
// CHECK-DAG: %[[E:.*]] = strata.exp %[[C]] : {{.*}} -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
// CHECK: return %[[S]], %[[TAIL]], %[[E]]
func.func @pipeline(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> (!strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<6xf32, strided<[1], offset: 6>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) {
  %t = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %r1 = strata.select %t dim 1 index 2 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 8>>
  %r2 = strata.select %arg0 dim 0 index 2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 8>>
  %s = strata.add %r1, %r2 : !strata.tensor<4xf32, strided<[1], offset: 8>>, !strata.tensor<4xf32, strided<[1], offset: 8>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %r = strata.reshape %t as [2, 6] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>
  %tail = strata.select %r dim 0 index 1 : !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<6xf32, strided<[1], offset: 6>>
  %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %e = strata.exp %c : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  return %s, %tail, %e : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<6xf32, strided<[1], offset: 6>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
}
