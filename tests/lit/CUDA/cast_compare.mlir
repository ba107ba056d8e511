// RUN: strata-translate --emit-cuda %s | FileCheck %s
// Casts and comparisons keep the CPU kernels' semantics: i1 is a byte 0/1
// in memory (loaded as `!= 0`, stored as unsigned char), float to int
// truncates, unordered predicates are true on NaN, booleans compare
// unsigned, integer arithmetic wraps, max propagates NaN.

// CHECK-LABEL: // kernel 0
// CHECK: strata_kernel(const float *__restrict__ in0,
// CHECK-NEXT: const unsigned char *__restrict__ in1,
// CHECK-NEXT: unsigned char *__restrict__ out0,
// CHECK-NEXT: int *__restrict__ out1,
// CHECK-NEXT: float *__restrict__ out2,
// CHECK-NEXT: long long n0) {
// CHECK: const bool a1 = (in1[i0] != 0);
// CHECK: const bool v1 = !(a0 >= v0);
// CHECK: const bool v2 = a1 < v1;
// CHECK: const int v3 = (int)a0;
// CHECK: const int v4 = (int)((unsigned)v3 + (unsigned)v3);
// CHECK: const float v5 = (float)(bool)a1;
// CHECK: const float v6 = strata_max(a0, v5);
// CHECK: out0[i0] = (unsigned char)v2;
// CHECK: out1[i0] = v4;
// CHECK: out2[i0] = v6;
func.func @casts(%a: !strata.tensor<6xf32, strided<[1], offset: 0>>, %b: !strata.tensor<6xi1, strided<[1], offset: 0>>) -> (!strata.tensor<6xi1, strided<[1], offset: 0>>, !strata.tensor<6xi32, strided<[1], offset: 0>>, !strata.tensor<6xf32, strided<[1], offset: 0>>) {
  %k:3 = strata.kernel space [6] ins(%a, %b : !strata.tensor<6xf32, strided<[1], offset: 0>>, !strata.tensor<6xi1, strided<[1], offset: 0>>) {
  ^bb0(%x: f32, %c: i1):
    %half = arith.constant 0.5 : f32
    %lt = arith.cmpf ult, %x, %half : f32
    %bl = arith.cmpi slt, %c, %lt : i1
    %i = arith.fptosi %x : f32 to i32
    %i2 = arith.addi %i, %i : i32
    %f = arith.uitofp %c : i1 to f32
    %m = arith.maxf %x, %f : f32
    strata.yield %bl, %i2, %m : i1, i32, f32
  } -> !strata.tensor<6xi1, strided<[1], offset: 0>>, !strata.tensor<6xi32, strided<[1], offset: 0>>, !strata.tensor<6xf32, strided<[1], offset: 0>>
  return %k#0, %k#1, %k#2 : !strata.tensor<6xi1, strided<[1], offset: 0>>, !strata.tensor<6xi32, strided<[1], offset: 0>>, !strata.tensor<6xf32, strided<[1], offset: 0>>
}

// The Reference program's casts through the whole pipeline compile too.
// RUN: strata-translate --emit-cuda %S/../Reference/elementwise.mlir | FileCheck %s --check-prefix=REF
// REF: const bool {{v[0-9]+}} = {{.*}} != {{.*}};
// REF: (unsigned char)
