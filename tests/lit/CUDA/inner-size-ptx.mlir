// REQUIRES: nvrtc, ptxas
// The kernels of inner-size.mlir through NVRTC and ptxas: after the
// pointers and n0, one 64-bit parameter per inner size, stride and offset;
// the 32-bit kernels read their low halves.
// RUN: strata-translate --emit-ptx %S/inner-size.mlir -o %t.ptx
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
// CHECK: ld.param.u32 {{.*}}, [strata_kernel_0_param_3];
