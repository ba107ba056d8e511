// REQUIRES: nvrtc
// NVRTC is loaded at run time: no strata binary needs libnvrtc to start,
// and with NVRTC hidden (STRATA_NVRTC_LIBRARY names a missing library) only
// what compiles CUDA C fails, with a message that says what to do.
// RUN: readelf -d %strata_bin/strata-translate | FileCheck %s --check-prefix=ELF --implicit-check-not=nvrtc
// RUN: readelf -d %strata_bin/strata-run | FileCheck %s --check-prefix=ELF --implicit-check-not=nvrtc
// RUN: readelf -d %strata_bin/strata-tour | FileCheck %s --check-prefix=ELF --implicit-check-not=nvrtc
// RUN: env STRATA_CACHE_DIR= STRATA_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13 not strata-translate --emit-ptx %s 2>&1 | FileCheck %s
// RUN: env STRATA_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13 strata-translate --emit-cuda %s | FileCheck %s --check-prefix=CUDA
// RUN: env STRATA_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13 strata-run %s | FileCheck %s --check-prefix=RAN
// ELF: Dynamic section
// CHECK: strata-translate: --emit-ptx needs NVRTC: NVRTC (the CUDA runtime compiler) could not be loaded; tried:
// CHECK-NEXT: /nonexistent/libnvrtc.so.13: {{.*}}
// CHECK-NEXT: install the CUDA toolkit's NVRTC (libnvrtc), add its lib64 directory to LD_LIBRARY_PATH, or point STRATA_NVRTC_LIBRARY at libnvrtc.so
// CUDA: strata_kernel(
// RAN: result 0
func.func @add(%a: !strata.tensor<4xf32, strided<[1], offset: 0>>, %b: !strata.tensor<4xf32, strided<[1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %s = strata.add %a, %b : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %s : !strata.tensor<4xf32, strided<[1], offset: 0>>
}
