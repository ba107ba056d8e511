// Every strata op and type parses, verifies, prints, and re-parses to the
// same text; with debug info the user's source locations survive too.
// RUN: strata-opt %s | strata-opt | FileCheck %s
// RUN: strata-opt %s --mlir-print-debuginfo | strata-opt --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// CHECK-LABEL: func.func @views
// CHECK-SAME: (%[[S:.*]]: !strata.storage<12xf32>)
func.func @views(%s: !strata.storage<12xf32>) {
  // CHECK: %[[A:.*]] = strata.strided_view %[[S]] : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %a = strata.strided_view %s : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> loc("user.cpp":10:3)
  // LOC: strata.strided_view {{.*}} loc(#[[L10:.*]])
  // LOC: #[[L10]] = loc("user.cpp":10:3)
  // CHECK: strata.view %[[A]] as [2, 6]
  %0 = strata.view %a as [2, 6] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>
  // CHECK: strata.reshape %[[A]] as [12]
  %1 = strata.reshape %a as [12] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
  // CHECK: strata.permute %[[A]] dims [1, 0]
  %2 = strata.permute %a dims [1, 0] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // CHECK: strata.transpose %[[A]] dims 0, 1
  %3 = strata.transpose %a dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  // CHECK: strata.slice %[[A]] dim 1 start 1 end 4 step 2
  %4 = strata.slice %a dim 1 start 1 end 4 step 2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x2xf32, strided<[4, 2], offset: 1>>
  // CHECK: strata.slice %[[A]] dim 0 step 2
  %5 = strata.slice %a dim 0 step 2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2x4xf32, strided<[8, 1], offset: 0>>
  // CHECK: strata.select %[[A]] dim 0 index 2
  %6 = strata.select %a dim 0 index 2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 8>>
  // CHECK: strata.narrow %[[A]] dim 1 start 1 length 2
  %7 = strata.narrow %a dim 1 start 1 length 2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x2xf32, strided<[4, 1], offset: 1>>
  // CHECK: %[[U:.*]] = strata.unsqueeze %[[A]] dim 0
  %u = strata.unsqueeze %a dim 0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<1x3x4xf32, strided<[12, 4, 1], offset: 0>>
  // CHECK: strata.expand %[[U]] to [2, 3, 4]
  %8 = strata.expand %u to [2, 3, 4] : !strata.tensor<1x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<2x3x4xf32, strided<[0, 4, 1], offset: 0>>
  // CHECK: strata.squeeze %[[U]] dims [0]
  %9 = strata.squeeze %u dims [0] : !strata.tensor<1x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.squeeze %[[U]] :
  %10 = strata.squeeze %u : !strata.tensor<1x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.flatten %[[U]] dims 0 to 2
  %11 = strata.flatten %u dims 0 to 2 : !strata.tensor<1x3x4xf32, strided<[12, 4, 1], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
  // CHECK: strata.as_strided %[[A]] sizes [2, 2] strides [1, 2] offset 3
  %12 = strata.as_strided %a sizes [2, 2] strides [1, 2] offset 3 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2x2xf32, strided<[1, 2], offset: 3>>
  // CHECK: strata.diagonal %[[A]] offset 1 dims 0, 1
  %13 = strata.diagonal %a offset 1 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[5], offset: 1>>
  // CHECK: strata.unfold %[[A]] dim 1 size 2 step 1
  %14 = strata.unfold %a dim 1 size 2 step 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x3x2xf32, strided<[4, 1, 1], offset: 0>>
  // CHECK: strata.flip %[[A]] dims [0, 1]
  %15 = strata.flip %a dims [0, 1] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[-4, -1], offset: 11>>
  // CHECK: strata.contiguous %[[A]] : {{.*}} -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %16 = strata.contiguous %a : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.contiguous %{{.*}} : {{.*}} -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %17 = strata.contiguous %2 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  // CHECK: strata.strided_view %[[A]] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2xf32, strided<[5], offset: 1>>
  %18 = strata.strided_view %a : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2xf32, strided<[5], offset: 1>>
  return
}

// CHECK-LABEL: func.func @compute
func.func @compute(%x: !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>,
                   %y: !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>>,
                   %i: !strata.tensor<4xi32, strided<[1], offset: 0>>) {
  // CHECK: strata.copy
  %c = strata.copy %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  // CHECK: strata.neg
  %0 = strata.neg %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  // CHECK: strata.abs
  %1 = strata.abs %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  // CHECK: strata.exp
  %2 = strata.exp %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  // CHECK: strata.log
  %3 = strata.log %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  // CHECK: strata.sqrt
  %4 = strata.sqrt %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  // CHECK: strata.relu
  %5 = strata.relu %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  // CHECK: strata.sigmoid
  %6 = strata.sigmoid %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  // CHECK: strata.tanh
  %7 = strata.tanh %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  // CHECK: strata.add %{{.*}}, %{{.*}} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %8 = strata.add %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.sub
  %9 = strata.sub %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.mul
  %10 = strata.mul %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.div
  %11 = strata.div %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.pow
  %12 = strata.pow %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.maximum
  %13 = strata.maximum %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.minimum
  %14 = strata.minimum %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.atan2 %{{.*}}, %{{.*}} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %atan2 = strata.atan2 %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.hypot %{{.*}}, %{{.*}} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %hypot = strata.hypot %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.logaddexp %{{.*}}, %{{.*}} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %logaddexp = strata.logaddexp %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.fmod %{{.*}}, %{{.*}} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %fmod = strata.fmod %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.remainder %{{.*}}, %{{.*}} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %remainder = strata.remainder %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.floor_divide %{{.*}}, %{{.*}} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %floor_divide = strata.floor_divide %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.lerp %{{.*}}, %{{.*}}, %{{.*}} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %lerp = strata.lerp %x, %y, %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.fma %{{.*}}, %{{.*}}, %{{.*}} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %fma = strata.fma %x, %y, %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: %[[LT:.*]] = strata.lt {{.*}} -> !strata.tensor<3x4xi1, strided<[4, 1], offset: 0>>
  %lt = strata.lt %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xi1, strided<[4, 1], offset: 0>>
  // CHECK: strata.eq
  %15 = strata.eq %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xi1, strided<[4, 1], offset: 0>>
  // CHECK: strata.ne
  %16 = strata.ne %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xi1, strided<[4, 1], offset: 0>>
  // CHECK: strata.le
  %17 = strata.le %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xi1, strided<[4, 1], offset: 0>>
  // CHECK: strata.gt
  %18 = strata.gt %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xi1, strided<[4, 1], offset: 0>>
  // CHECK: strata.ge
  %19 = strata.ge %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xi1, strided<[4, 1], offset: 0>>
  // CHECK: %[[Z:.*]] = strata.fill 0.000000e+00 : !strata.tensor<f32, strided<[], offset: 0>>
  %zero = strata.fill 0.0 : !strata.tensor<f32, strided<[], offset: 0>>
  // CHECK: strata.where %[[LT]], %{{.*}}, %[[Z]]
  %20 = strata.where %lt, %x, %zero : !strata.tensor<3x4xi1, strided<[4, 1], offset: 0>>, !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.cast %{{.*}} : !strata.tensor<4xi32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %21 = strata.cast %i : !strata.tensor<4xi32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  // CHECK: strata.sum %{{.*}} dims [1] keepdim :
  %22 = strata.sum %8 dims [1] keepdim : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  // CHECK: strata.sum %{{.*}} dims [] : !strata.tensor<4xi32, strided<[1], offset: 0>> -> !strata.tensor<i64, strided<[], offset: 0>>
  %23 = strata.sum %i dims [] : !strata.tensor<4xi32, strided<[1], offset: 0>> -> !strata.tensor<i64, strided<[], offset: 0>>
  // CHECK: strata.mean %{{.*}} dims [0, -1]
  %24 = strata.mean %8 dims [0, -1] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  // CHECK: strata.amax
  %25 = strata.amax %8 dims [0] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  // CHECK: strata.amin
  %26 = strata.amin %8 dims [0] keepdim : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.prod %{{.*}} dims [1] keepdim : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  %prod = strata.prod %8 dims [1] keepdim : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  // CHECK: strata.prod %{{.*}} dims [] : !strata.tensor<4xi32, strided<[1], offset: 0>> -> !strata.tensor<i64, strided<[], offset: 0>>
  %prodi = strata.prod %i dims [] : !strata.tensor<4xi32, strided<[1], offset: 0>> -> !strata.tensor<i64, strided<[], offset: 0>>
  // CHECK: strata.matmul %{{.*}}, %{{.*}} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %27 = strata.matmul %x, %y : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  // CHECK: strata.matmul {{.*}} -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  %28 = strata.matmul %8, %21 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  // CHECK: strata.arange start 0.000000e+00 step 5.000000e-01 : !strata.tensor<6xf64, strided<[1], offset: 0>>
  %29 = strata.arange start 0.0 step 0.5 : !strata.tensor<6xf64, strided<[1], offset: 0>>
  // A number exponent as an argument, in f64 for an f32 base.
  // CHECK: strata.pow %{{.*}}, %{{.*}} {scalar_exponent} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<f64, strided<[], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  %30 = strata.fill 1.1 : !strata.tensor<f64, strided<[], offset: 0>>
  %31 = strata.pow %x, %30 {scalar_exponent} : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>, !strata.tensor<f64, strided<[], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  return
}

// CHECK-LABEL: func.func @write
func.func @write(%s: !strata.storage<10xf32>) -> !strata.tensor<10xf32, strided<[1], offset: 0>> {
  %x = strata.strided_view %s : !strata.storage<10xf32> -> !strata.tensor<10xf32, strided<[1], offset: 0>>
  %d = strata.slice %x dim 0 start 2 end 5 step 1 : !strata.tensor<10xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 2>>
  %one = strata.fill 1.0 : !strata.tensor<f32, strided<[], offset: 0>>
  // CHECK: %[[S1:.*]] = strata.write %{{.*}} into %{{.*}} : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 2>> -> !strata.storage<10xf32>
  %s1 = strata.write %one into %d : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 2>> -> !strata.storage<10xf32>
  // CHECK: strata.strided_view %[[S1]]
  %x1 = strata.strided_view %s1 : !strata.storage<10xf32> -> !strata.tensor<10xf32, strided<[1], offset: 0>>
  return %x1 : !strata.tensor<10xf32, strided<[1], offset: 0>>
}
