// REQUIRES: nvrtc, ptxas
// The math dialect functions of the unary ops' kernel bodies become CUDA's
// math library calls (f32: the `f` names), which NVRTC compiles and ptxas
// accepts; asin/acos/sinh/cosh of f32 run in double.
// RUN: strata-translate --emit-cuda %S/../Reference/unary.mlir | FileCheck %s
// RUN: strata-translate --emit-ptx %S/../Reference/unary.mlir -o %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// CHECK-LABEL: // kernel 0
// CHECK-DAG: = sinf(
// CHECK-DAG: = cosf(
// CHECK-DAG: = tanf(
// CHECK-DAG: = atanf(
// CHECK-DAG: = atan2(
// CHECK-DAG: = expm1(
// CHECK-DAG: = exp2f(
// CHECK-DAG: = expm1f(
// CHECK-DAG: = log2f(
// CHECK-DAG: = log10f(
// CHECK-DAG: = log1pf(
// CHECK-DAG: = (float)1 / sqrtf(
// CHECK-DAG: = erff(
// CHECK-DAG: = tanhf(
// CHECK: // kernel
// CHECK-DAG: = sin(
// CHECK-DAG: = erf(
// CHECK-DAG: = log1p(
// CHECK: // kernel
// CHECK-DAG: = floorf(
// CHECK-DAG: = ceilf(
// CHECK-DAG: = rintf(
// CHECK-DAG: = truncf(
// CHECK: // kernel
// CHECK-DAG: ^
