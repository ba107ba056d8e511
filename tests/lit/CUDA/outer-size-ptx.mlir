// REQUIRES: nvrtc, ptxas
// The kernels of outer-size.mlir, their outermost trip count a parameter
// (n0, a 64-bit value after the pointers), through NVRTC and ptxas; the
// 32-bit kernels read its low half. A split reduction's finish takes it too,
// with the entry's other parameters after its pointers (colsum_200: the
// inner size, a stride, two offsets and the split count).
// RUN: strata-translate --emit-ptx %S/outer-size.mlir -o %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s < %t.ptx
// CHECK: .visible .entry strata_kernel_0(
// CHECK-NEXT: .param .u64 strata_kernel_0_param_0,
// CHECK-NEXT: .param .u64 strata_kernel_0_param_1,
// CHECK-NEXT: .param .u64 strata_kernel_0_param_2
// CHECK-NEXT: )
// CHECK: ld.param.u32 {{.*}}, [strata_kernel_0_param_2];
// CHECK: .visible .entry strata_kernel_6_finish(
// CHECK-NEXT: .param .u64 strata_kernel_6_finish_param_0,
// CHECK-NEXT: .param .u64 strata_kernel_6_finish_param_1,
// CHECK-NEXT: .param .u64 strata_kernel_6_finish_param_2,
// CHECK-NEXT: .param .u64 strata_kernel_6_finish_param_3,
// CHECK-NEXT: .param .u64 strata_kernel_6_finish_param_4,
// CHECK-NEXT: .param .u64 strata_kernel_6_finish_param_5,
// CHECK-NEXT: .param .u64 strata_kernel_6_finish_param_6,
// CHECK-NEXT: .param .u64 strata_kernel_6_finish_param_7
// CHECK-NEXT: )
