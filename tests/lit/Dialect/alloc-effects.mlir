// Compute ops allocate their result: CSE must not merge two of them, or two
// results the user sees as distinct tensors would share one storage (and an
// in-place write to one would show in the other). Views are pure and merge.
// RUN: strata-opt %s --cse --strata-pipeline | FileCheck %s

// CHECK-LABEL: func.func @two_sums
// CHECK: %[[A:.*]] = strata.add
// CHECK: %[[B:.*]] = strata.add
// CHECK: %[[C:.*]] = strata.copy
// CHECK: %[[D:.*]] = strata.copy
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
func.func @two_sums(%x: !strata.tensor<4xf32, strided<[1], offset: 0>>) -> (!strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>) {
  %a = strata.add %x, %x : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %b = strata.add %x, %x : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %c = strata.copy %a : !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %d = strata.copy %a : !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %a, %b, %c, %d : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>
}

// CHECK-LABEL: func.func @two_views
// CHECK: %[[V:.*]] = strata.strided_view
// CHECK-NOT: strata.strided_view
// CHECK: return %[[V]], %[[V]]
func.func @two_views(%s: !strata.storage<4xf32>) -> (!strata.tensor<2xf32, strided<[2], offset: 0>>, !strata.tensor<2xf32, strided<[2], offset: 0>>) {
  %x = strata.strided_view %s : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %a = strata.slice %x dim 0 step 2 : !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<2xf32, strided<[2], offset: 0>>
  %b = strata.slice %x dim 0 step 2 : !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<2xf32, strided<[2], offset: 0>>
  return %a, %b : !strata.tensor<2xf32, strided<[2], offset: 0>>, !strata.tensor<2xf32, strided<[2], offset: 0>>
}
