// CUDA C of index_map kernels (Reference/index.mlir): gather loads through
// the clamped index, scatter stores through it, scatter_add stores with
// atomicAdd (unsigned long long for i64, a store of true for bool).
// RUN: strata-translate --emit-cuda %S/../Reference/index.mlir | FileCheck %s

// CHECK: const long long a0 = in0[i0 * 4 + i1];
// CHECK-NEXT: const float a1 = in1[i1 + (a0 < 0 ? 0LL : a0 > 2LL ? 2LL : (long long)a0) * 4LL];
// CHECK: atomicAdd(&out0[i1 + (a0 < 0 ? 0LL : a0 > 2LL ? 2LL : (long long)a0) * 4LL], a1);
// CHECK: out0[i0 * 4 + (a0 < 0 ? 0LL : a0 > 3LL ? 3LL : (long long)a0) * 1LL] = a1;
// CHECK: atomicAdd(&out0[i0 * 3 + (a0 < 0 ? 0LL : a0 > 2LL ? 2LL : (long long)a0) * 1LL], a1);
// CHECK: atomicAdd((unsigned long long *)&out0[{{.*}}], (unsigned long long)a1);
// CHECK: if (a1) out0[i0 * 3 + (a0 < 0 ? 0LL : a0 > 2LL ? 2LL : (long long)a0) * 1LL] = 1;
// CHECK: const double a1 = in1[5 + (a0 < 0 ? 0LL : a0 > 0LL ? 0LL : (long long)a0) * 0LL];
