// REQUIRES: nvrtc, ptxas
// strata-translate -o, as mlir-translate: --emit-ptx writes one PTX module
// that ptxas accepts (several kernels: one NVRTC compilation, entries
// strata_kernel_<i>), or one file per kernel with -o DIR.
// RUN: strata-translate --emit-ptx %s -o %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s < %t.ptx
// RUN: strata-translate --emit-ptx --arch=sm_80 %S/../Reference/reductions.mlir -o %t.red.ptx
// RUN: %ptxas -arch=sm_80 %t.red.ptx -o %t.red.cubin
// RUN: strata-translate --emit-ptx %S/../Reference/elementwise.mlir -o %t.ew.ptx
// RUN: %ptxas -arch=sm_90 %t.ew.ptx -o %t.ew.cubin
// RUN: rm -rf %t.dir && mkdir %t.dir
// RUN: strata-translate --emit-ptx %s -o %t.dir
// RUN: %ptxas -arch=sm_90 %t.dir/kernel_0.ptx -o %t.0.cubin
// RUN: %ptxas -arch=sm_90 %t.dir/kernel_1.ptx -o %t.1.cubin
// RUN: FileCheck %s --check-prefix=DIR < %t.dir/kernel_1.ptx
// RUN: strata-translate --emit-cuda %s -o %t.dir
// RUN: FileCheck %s --check-prefix=CUDA < %t.dir/kernel_0.cu
// RUN: strata-translate --emit-llvm %s -o %t.ll
// RUN: FileCheck %s --check-prefix=LLVM < %t.ll
// RUN: not strata-translate --emit-cuda %s -o %t.missing/dir/x.cu 2>&1 | FileCheck %s --check-prefix=BADPATH

// CHECK: // kernel 0: strata_kernel_0, vectorized grid
// CHECK: // kernel 1: strata_kernel_1,
// CHECK-COUNT-1: .version
// CHECK-DAG: .visible .entry strata_kernel_0(
// CHECK-DAG: .visible .entry strata_kernel_1(
// DIR: .visible .entry strata_kernel(
// DIR: mul.rn.f32
// CUDA: // launch: vectorized grid 1 block 256x1
// CUDA: strata_kernel(
// LLVM: ; kernel 0
// LLVM: ; kernel 1
// BADPATH: strata-translate: {{.*}}x.cu
func.func @two(%a: !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>, %b: !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>, %t: !strata.tensor<16x8xf32, strided<[1, 16], offset: 0>>) -> (!strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>, !strata.tensor<16x8xf32, strided<[8, 1], offset: 0>>) {
  %k = strata.kernel space [8, 16] ins(%a, %b : !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>, !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    strata.yield %s : f32
  } -> !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>
  %m = strata.kernel space [16, 8] ins(%t, %t : !strata.tensor<16x8xf32, strided<[1, 16], offset: 0>>, !strata.tensor<16x8xf32, strided<[1, 16], offset: 0>>) {
  ^bb0(%x: f32, %y: f32):
    %p = arith.mulf %x, %y : f32
    strata.yield %p : f32
  } -> !strata.tensor<16x8xf32, strided<[8, 1], offset: 0>>
  return %k, %m : !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>, !strata.tensor<16x8xf32, strided<[8, 1], offset: 0>>
}
