// RUN: strata-translate --emit-llvm %s | FileCheck %s
// RUN: env STRATA_DYNAMIC_SHAPES=0 strata-translate --emit-llvm %s \
// RUN:   | FileCheck %s --check-prefix=STATIC

// A mean's division (splitMeans: the f64 sum rounded to f32, divided by
// the count as an f32). The count is a size value: the kernel loads its
// bits from %dims after the loop nest's (1 size, 2 operands' strides, 2
// offsets: index 5) once, at entry, and divides by that, so one compiled
// kernel serves every count.
// CHECK: define void @strata_kernel(ptr %0, i64 %1, i64 %2, ptr %3)
// CHECK: getelementptr inbounds i64, ptr %3, i64 5
// CHECK: %[[BITS:.*]] = load i64, ptr %{{.*}}, !invariant.load
// CHECK: %[[LOW:.*]] = trunc i64 %[[BITS]] to i32
// CHECK: %[[N:.*]] = bitcast i32 %[[LOW]] to float
// CHECK: loop:
// CHECK: %[[T:.*]] = fptrunc double %{{.*}} to float
// CHECK: fdiv float %[[T]], %[[N]]
// Static (STRATA_DYNAMIC_SHAPES=0): the count is a constant.
// STATIC: define void @strata_kernel(ptr %0, i64 %1, i64 %2, ptr %3)
// STATIC-NOT: ptr %3
// STATIC: fdiv float %{{.*}}, 7.000000e+00
func.func @divide(%s: !strata.tensor<4xf64, strided<[1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [4] ins(%s : !strata.tensor<4xf64, strided<[1], offset: 0>>) {
  ^bb0(%x: f64):
    %t = arith.truncf %x : f64 to f32
    %n = arith.constant {strata.size_value} 7.000000e+00 : f32
    %q = arith.divf %t, %n : f32
    strata.yield %q : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<4xf32, strided<[1], offset: 0>>
}
