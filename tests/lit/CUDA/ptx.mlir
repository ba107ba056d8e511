// REQUIRES: nvrtc
// RUN: strata-translate --emit-ptx %s | FileCheck %s
// RUN: strata-translate --emit-ptx --arch=sm_80 %s | FileCheck %s --check-prefix=SM80
// RUN: not strata-translate --emit-ptx --arch=volta %s 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not strata-translate %s 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not strata-translate --emit-cuda --emit-ptx %s 2>&1 | FileCheck %s --check-prefix=NONE

// CHECK: // kernel 0
// CHECK: .target sm_90
// CHECK: .visible .entry strata_kernel(
// CHECK: ld.global.nc.v4.f32
// CHECK: st.global.v4.f32
// SM80: .target sm_80
// ARCH: CUDA arch must look like sm_90, got 'volta'
// NONE: strata-translate: choose one output (--emit-llvm, --emit-cuda or --emit-ptx)
func.func @add(%a: !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>, %b: !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>) -> !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>> {
  %k = strata.kernel space [8, 16] ins(%a, %b : !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>, !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    strata.yield %s : f32
  } -> !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>
  return %k : !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>
}
