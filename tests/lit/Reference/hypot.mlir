// hypot over strided f32 and f64 views against std::hypot (inputs 0..7:
// hypot(0,1), hypot(2,3), hypot(4,5), hypot(6,7)); JIT and CUDA C too.
// RUN: strata-run %s | FileCheck %s --match-full-lines
// RUN: strata-run --engine=jit %s | FileCheck %s --match-full-lines
// CHECK: func @hypot_f32
// CHECK-NEXT: result 0: f32 sizes [4] strides [1] offset 0
// CHECK-NEXT:   [1, 3.60555, 6.40312, 9.21954]
// CHECK: func @hypot_f64
// CHECK-NEXT: result 0: f64 sizes [4] strides [1] offset 0
// CHECK-NEXT:   [1, 3.60555, 6.40312, 9.21954]
func.func @hypot_f32(%arg0: !strata.storage<8xf32>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %0 = strata.strided_view %arg0 : !strata.storage<8xf32> -> !strata.tensor<4xf32, strided<[2], offset: 0>>
  %1 = strata.strided_view %arg0 : !strata.storage<8xf32> -> !strata.tensor<4xf32, strided<[2], offset: 1>>
  %2 = strata.hypot %0, %1 : !strata.tensor<4xf32, strided<[2], offset: 0>>, !strata.tensor<4xf32, strided<[2], offset: 1>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %2 : !strata.tensor<4xf32, strided<[1], offset: 0>>
}
func.func @hypot_f64(%arg0: !strata.storage<8xf64>) -> !strata.tensor<4xf64, strided<[1], offset: 0>> {
  %0 = strata.strided_view %arg0 : !strata.storage<8xf64> -> !strata.tensor<4xf64, strided<[2], offset: 0>>
  %1 = strata.strided_view %arg0 : !strata.storage<8xf64> -> !strata.tensor<4xf64, strided<[2], offset: 1>>
  %2 = strata.hypot %0, %1 : !strata.tensor<4xf64, strided<[2], offset: 0>>, !strata.tensor<4xf64, strided<[2], offset: 1>> -> !strata.tensor<4xf64, strided<[1], offset: 0>>
  return %2 : !strata.tensor<4xf64, strided<[1], offset: 0>>
}
