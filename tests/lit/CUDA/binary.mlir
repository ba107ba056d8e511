// REQUIRES: nvrtc, ptxas
// atan2, fmod, remainder, floor_divide and lerp become CUDA C that NVRTC
// compiles and ptxas accepts: atan2/fmod/copysign from CUDA's math library
// (f32: the `f` names), integer `/` and `%` only by a divisor made nonzero
// and not -1 (the select before them), lerp's two formulas selected by
// weight < 0.5 (PyTorch 1.13's test, negative weights included), each one
// fused multiply-add (fmaf: one rounding, as PyTorch's contracted kernels); prod's combiner StrataProd (identity 1).
// RUN: strata-translate --emit-cuda %S/../Reference/binary.mlir | FileCheck %s
// RUN: strata-translate --emit-ptx %S/../Reference/binary.mlir -o %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// CHECK-LABEL: // kernel 0
// CHECK-DAG: = atan2f(
// CHECK-DAG: = fmodf(
// CHECK-DAG: = floorf(
// CHECK-DAG: = copysignf(
// CHECK: // kernel
// CHECK-DAG: = atan2(
// CHECK-DAG: = fmod(
// CHECK-DAG: = copysign(
// CHECK: const int [[D:v[0-9]+]] = {{v[0-9]+}} ? {{v[0-9]+}} : {{.*}};
// CHECK-NEXT: const int {{v[0-9]+}} = {{.*}} % [[D]];
// CHECK: const long long [[E:v[0-9]+]] = {{v[0-9]+}} ? {{v[0-9]+}} : {{.*}};
// CHECK-NEXT: const long long {{v[0-9]+}} = {{.*}} % [[E]];
// CHECK: const long long {{v[0-9]+}} = {{.*}} / {{v[0-9]+}};
// CHECK: // kernel
// CHECK: const float [[W:v[0-9]+]] = 0.300000012f;
// CHECK: const float [[H:v[0-9]+]] = 0.5f;
// CHECK-NEXT: const bool {{v[0-9]+}} = [[W]] < [[H]];
// CHECK: = fmaf([[W]], {{v[0-9]+}}, {{.*}});
// CHECK: = fmaf({{v[0-9]+}}, {{v[0-9]+}}, {{.*}});
// CHECK: // kernel
// CHECK: float acc0 = 1.0f;
// CHECK: acc0 = StrataProd()(acc0,
