// REQUIRES: nvrtc
// NVRTC compilation failure, injected (docs/reliability.md): the kernel's
// CUDA C gets an #error line, so NVRTC itself rejects it. The error names
// the kernel and arch, carries NVRTC's log and the path of the saved source.
// Without a GPU: NVRTC only compiles. STRATA_CACHE_DIR= disables the disk
// cache, whose PTX would skip NVRTC.
// RUN: env STRATA_CACHE_DIR= STRATA_INJECT_NVRTC_FAILURE=1 not strata-translate --emit-ptx --arch=sm_80 %s 2>&1 | FileCheck %s
// RUN: env STRATA_CACHE_DIR= STRATA_INJECT_NVRTC_FAILURE=0 strata-translate --emit-ptx --arch=sm_80 %s | FileCheck %s --check-prefix=OK
// CHECK: nvrtc-failure.mlir:[[@LINE+7]]:8: error: NVRTC failed to compile kernel 'strata_kernel' for sm_80 (NVRTC_ERROR_COMPILATION):
// CHECK-NEXT: strata_kernel.cu({{[0-9]+}}): {{.*}}error: #error directive: "failure injected by STRATA_INJECT_NVRTC_FAILURE"
// CHECK: CUDA source saved to {{.*}}strata-nvrtc-strata_kernel-{{[0-9A-F]+}}.cu
// CHECK-NEXT: --- CUDA source ---
// CHECK: extern "C" __global__
// OK: .visible .entry strata_kernel(
func.func @add(%a: !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>, %b: !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>) -> !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>> {
  %k = strata.kernel space [8, 16] ins(%a, %b : !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>, !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    strata.yield %s : f32
  } -> !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>
  return %k : !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>
}
