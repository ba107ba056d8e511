// strata.gather / scatter / scatter_add by the reference evaluator. The values
// were checked against torch.gather/scatter/scatter_add (PyTorch 1.13) by hand.
// RUN: strata-run %s | FileCheck %s --match-full-lines

// CHECK: func @gather_rows
// CHECK-NEXT: result 0: f32 sizes [2, 4] strides [4, 1] offset 0
// CHECK-NEXT:   [ [0, 9, 6, 3], [8, 5, 2, 11] ]
func.func @gather_rows(%arg0: !strata.storage<12xf32>) -> !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>> {
  %x = strata.strided_view %arg0 : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %a = strata.arange start 0 step 5 : !strata.tensor<8xi64, strided<[1], offset: 0>>
  %t = strata.fill 3 : !strata.tensor<i64, strided<[], offset: 0>>
  %r = strata.remainder %a, %t : !strata.tensor<8xi64, strided<[1], offset: 0>>, !strata.tensor<i64, strided<[], offset: 0>> -> !strata.tensor<8xi64, strided<[1], offset: 0>>
  %i = strata.view %r as [2, 4] : !strata.tensor<8xi64, strided<[1], offset: 0>> -> !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>>
  %g = strata.gather %x, %i dim 0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>> -> !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>
  return %g : !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>
}

// CHECK-NEXT: func @gather_t
// CHECK-NEXT: result 0: f32 sizes [4, 2] strides [2, 1] offset 0
// CHECK-NEXT:   [ [0, 8], [5, 1], [10, 6], [3, 11] ]
func.func @gather_t(%arg0: !strata.storage<12xf32>) -> !strata.tensor<4x2xf32, strided<[2, 1], offset: 0>> {
  %x = strata.strided_view %arg0 : !strata.storage<12xf32> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %a = strata.arange start 0 step 5 : !strata.tensor<8xi64, strided<[1], offset: 0>>
  %t = strata.fill 3 : !strata.tensor<i64, strided<[], offset: 0>>
  %r = strata.remainder %a, %t : !strata.tensor<8xi64, strided<[1], offset: 0>>, !strata.tensor<i64, strided<[], offset: 0>> -> !strata.tensor<8xi64, strided<[1], offset: 0>>
  %i = strata.view %r as [4, 2] : !strata.tensor<8xi64, strided<[1], offset: 0>> -> !strata.tensor<4x2xi64, strided<[2, 1], offset: 0>>
  %g = strata.gather %x, %i dim -1 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>, !strata.tensor<4x2xi64, strided<[2, 1], offset: 0>> -> !strata.tensor<4x2xf32, strided<[2, 1], offset: 0>>
  return %g : !strata.tensor<4x2xf32, strided<[2, 1], offset: 0>>
}

// CHECK-NEXT: func @scatter_add_dups
// CHECK-NEXT: result 0: f32 sizes [3, 4] strides [4, 1] offset 0
// CHECK-NEXT:   [ [0, 1, 2, 3], [8, 11, 14, 17], [8, 9, 10, 11] ]
// CHECK-NEXT: result 1: f32 sizes [3, 4] strides [4, 1] offset 0
// CHECK-NEXT:   [ [9.5, 9.5, 2, 3], [9.5, 9.5, 6, 7], [8, 9, 10, 11] ]
func.func @scatter_add_dups(%arg0: !strata.storage<12xf32>, %arg1: !strata.storage<8xf32>) -> (!strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  %x = strata.strided_view %arg0 : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %s = strata.strided_view %arg1 : !strata.storage<8xf32> -> !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>
  %a = strata.arange start 0 step 5 : !strata.tensor<8xi64, strided<[1], offset: 0>>
  %t = strata.fill 2 : !strata.tensor<i64, strided<[], offset: 0>>
  %r = strata.remainder %a, %t : !strata.tensor<8xi64, strided<[1], offset: 0>>, !strata.tensor<i64, strided<[], offset: 0>> -> !strata.tensor<8xi64, strided<[1], offset: 0>>
  %i = strata.view %r as [2, 4] : !strata.tensor<8xi64, strided<[1], offset: 0>> -> !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>>
  %i0 = strata.fill 1 : !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>>
  %g = strata.scatter_add %x, %i0, %s dim 0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>>, !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %v = strata.fill 9.5 : !strata.tensor<f32, strided<[], offset: 0>>
  %h = strata.scatter %x, %i, %v dim 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %g, %h : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}

// CHECK-NEXT: func @dtypes
// CHECK-NEXT: result 0: f64 sizes [2, 3] strides [3, 1] offset 0
// CHECK-NEXT:   [ [0, 1, 3], [3, 4, 12] ]
// CHECK-NEXT: result 1: i64 sizes [2, 3] strides [3, 1] offset 0
// CHECK-NEXT:   [ [0, 1, 3], [3, 4, 12] ]
// CHECK-NEXT: result 2: i1 sizes [2, 3] strides [3, 1] offset 0
// CHECK-NEXT:   [ [false, true, true], [true, false, true] ]
// CHECK-NEXT: result 3: i32 sizes [3, 2] strides [2, 1] offset 0
// CHECK-NEXT:   [ [3, 3], [4, 4], [5, 5] ]
// CHECK-NEXT: result 4: f64 sizes [] strides [] offset 0
// CHECK-NEXT:   5
func.func @dtypes(%arg0: !strata.storage<6xf64>, %arg1: !strata.storage<6xi64>, %arg2: !strata.storage<6xi1>, %arg3: !strata.storage<6xi32>) -> (!strata.tensor<2x3xf64, strided<[3, 1], offset: 0>>, !strata.tensor<2x3xi64, strided<[3, 1], offset: 0>>, !strata.tensor<2x3xi1, strided<[3, 1], offset: 0>>, !strata.tensor<3x2xi32, strided<[2, 1], offset: 0>>, !strata.tensor<f64, strided<[], offset: 0>>) {
  %x = strata.strided_view %arg0 : !strata.storage<6xf64> -> !strata.tensor<2x3xf64, strided<[3, 1], offset: 0>>
  %y = strata.strided_view %arg1 : !strata.storage<6xi64> -> !strata.tensor<2x3xi64, strided<[3, 1], offset: 0>>
  %z = strata.strided_view %arg2 : !strata.storage<6xi1> -> !strata.tensor<2x3xi1, strided<[3, 1], offset: 0>>
  %w = strata.strided_view %arg3 : !strata.storage<6xi32> -> !strata.tensor<3x2xi32, strided<[1, 3], offset: 0>>
  %i = strata.fill 2 : !strata.tensor<2x2xi64, strided<[2, 1], offset: 0>>
  %a = strata.scatter_add %x, %i, %x dim 1 : !strata.tensor<2x3xf64, strided<[3, 1], offset: 0>>, !strata.tensor<2x2xi64, strided<[2, 1], offset: 0>>, !strata.tensor<2x3xf64, strided<[3, 1], offset: 0>> -> !strata.tensor<2x3xf64, strided<[3, 1], offset: 0>>
  %b = strata.scatter_add %y, %i, %y dim 1 : !strata.tensor<2x3xi64, strided<[3, 1], offset: 0>>, !strata.tensor<2x2xi64, strided<[2, 1], offset: 0>>, !strata.tensor<2x3xi64, strided<[3, 1], offset: 0>> -> !strata.tensor<2x3xi64, strided<[3, 1], offset: 0>>
  %c = strata.scatter_add %z, %i, %z dim 1 : !strata.tensor<2x3xi1, strided<[3, 1], offset: 0>>, !strata.tensor<2x2xi64, strided<[2, 1], offset: 0>>, !strata.tensor<2x3xi1, strided<[3, 1], offset: 0>> -> !strata.tensor<2x3xi1, strided<[3, 1], offset: 0>>
  %j = strata.fill 1 : !strata.tensor<3x2xi64, strided<[2, 1], offset: 0>>
  %d = strata.gather %w, %j dim 1 : !strata.tensor<3x2xi32, strided<[1, 3], offset: 0>>, !strata.tensor<3x2xi64, strided<[2, 1], offset: 0>> -> !strata.tensor<3x2xi32, strided<[2, 1], offset: 0>>
  %s = strata.select %x dim 1 index 2 : !strata.tensor<2x3xf64, strided<[3, 1], offset: 0>> -> !strata.tensor<2xf64, strided<[3], offset: 2>>
  %s0 = strata.select %s dim 0 index 1 : !strata.tensor<2xf64, strided<[3], offset: 2>> -> !strata.tensor<f64, strided<[], offset: 5>>
  %k = strata.fill 0 : !strata.tensor<i64, strided<[], offset: 0>>
  %e = strata.gather %s0, %k dim 0 : !strata.tensor<f64, strided<[], offset: 5>>, !strata.tensor<i64, strided<[], offset: 0>> -> !strata.tensor<f64, strided<[], offset: 0>>
  return %a, %b, %c, %d, %e : !strata.tensor<2x3xf64, strided<[3, 1], offset: 0>>, !strata.tensor<2x3xi64, strided<[3, 1], offset: 0>>, !strata.tensor<2x3xi1, strided<[3, 1], offset: 0>>, !strata.tensor<3x2xi32, strided<[2, 1], offset: 0>>, !strata.tensor<f64, strided<[], offset: 0>>
}
