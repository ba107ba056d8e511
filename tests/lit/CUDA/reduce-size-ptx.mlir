// REQUIRES: nvrtc, ptxas
// The kernels of reduce-size.mlir through NVRTC and ptxas: after the
// pointers (and partial buffers) and n0, one 64-bit parameter per inner
// size, stride, offset, the split count and `rowmode`; the 32-bit kernels
// read their low halves. A split reduction's finish takes the same
// parameters after its pointers.
// RUN: strata-translate --emit-ptx %S/reduce-size.mlir -o %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s < %t.ptx
// CHECK: .visible .entry strata_kernel_0(
// CHECK-NEXT: .param .u64 strata_kernel_0_param_0,
// CHECK-NEXT: .param .u64 strata_kernel_0_param_1,
// CHECK-NEXT: .param .u64 strata_kernel_0_param_2,
// CHECK-NEXT: .param .u64 strata_kernel_0_param_3,
// CHECK-NEXT: .param .u64 strata_kernel_0_param_4,
// CHECK-NEXT: .param .u64 strata_kernel_0_param_5,
// CHECK-NEXT: .param .u64 strata_kernel_0_param_6,
// CHECK-NEXT: .param .u64 strata_kernel_0_param_7
// CHECK-NEXT: )
// CHECK: ld.param.u32 {{.*}}, [strata_kernel_0_param_7];
// CHECK: .visible .entry strata_kernel_7(
// CHECK-NEXT: .param .u64 strata_kernel_7_param_0,
// CHECK-NEXT: .param .u64 strata_kernel_7_param_1,
// CHECK-NEXT: .param .u64 strata_kernel_7_param_2,
// CHECK-NEXT: .param .u64 strata_kernel_7_param_3,
// CHECK-NEXT: .param .u64 strata_kernel_7_param_4,
// CHECK-NEXT: .param .u64 strata_kernel_7_param_5,
// CHECK-NEXT: .param .u64 strata_kernel_7_param_6,
// CHECK-NEXT: .param .u64 strata_kernel_7_param_7,
// CHECK-NEXT: .param .u64 strata_kernel_7_param_8,
// CHECK-NEXT: .param .u64 strata_kernel_7_param_9
// CHECK-NEXT: )
// CHECK: ld.param.u32 {{.*}}, [strata_kernel_7_param_8];
// CHECK: .visible .entry strata_kernel_7_finish(
// CHECK-NEXT: .param .u64 strata_kernel_7_finish_param_0,
// CHECK-NEXT: .param .u64 strata_kernel_7_finish_param_1,
// CHECK-NEXT: .param .u64 strata_kernel_7_finish_param_2,
// CHECK-NEXT: .param .u64 strata_kernel_7_finish_param_3,
// CHECK-NEXT: .param .u64 strata_kernel_7_finish_param_4,
// CHECK-NEXT: .param .u64 strata_kernel_7_finish_param_5,
// CHECK-NEXT: .param .u64 strata_kernel_7_finish_param_6,
// CHECK-NEXT: .param .u64 strata_kernel_7_finish_param_7,
// CHECK-NEXT: .param .u64 strata_kernel_7_finish_param_8
// CHECK-NEXT: )
