// The outermost loop's trip count is the kernels' last parameter (n0): two
// kernels that differ only in it have the same CUDA C (the PTX cache's key,
// codegen::cudaKernelCodeKey), whatever the kind; only the launch line
// (grid, n0) differs. What the emitter decides from that size stays in the
// source: a split reduction (colsum_200) is another kernel (its split
// count, like the reductions' inner sizes, is a parameter: reduce-size.mlir).
// RUN: rm -rf %t && mkdir %t
// RUN: strata-translate --emit-cuda %s -o %t
// RUN: grep -v '^// launch' %t/kernel_0.cu > %t/a0 && grep -v '^// launch' %t/kernel_1.cu > %t/b0 && diff %t/a0 %t/b0
// RUN: grep -v '^// launch' %t/kernel_2.cu > %t/a2 && grep -v '^// launch' %t/kernel_3.cu > %t/b2 && diff %t/a2 %t/b2
// RUN: grep -v '^// launch' %t/kernel_4.cu > %t/a4 && grep -v '^// launch' %t/kernel_5.cu > %t/b4 && diff %t/a4 %t/b4
// RUN: grep -v '^// launch' %t/kernel_7.cu > %t/a7 && grep -v '^// launch' %t/kernel_8.cu > %t/b7 && diff %t/a7 %t/b7
// RUN: grep -v '^// launch' %t/kernel_6.cu > %t/a6 && not diff %t/a4 %t/a6
// RUN: strata-translate --emit-cuda %s | FileCheck %s

// CHECK-LABEL: // kernel 0
// CHECK: // launch: vectorized grid 1 block 256x1 n0 7
// CHECK: // kernel strata_kernel: vectorized, loops [n0], 32-bit indices
// CHECK-NOT: 7
// CHECK-LABEL: // kernel 1
// CHECK: // launch: vectorized grid 1 block 256x1 n0 1001
// CHECK-LABEL: // kernel 2
// CHECK: // launch: row-reduce grid 1 block 256x1 n0 1
// CHECK: const int outputs = size0;
// CHECK-LABEL: // kernel 3
// CHECK: // launch: row-reduce grid 300 block 256x1 n0 300
// CHECK-LABEL: // kernel 4
// CHECK: // launch: column-reduce grid 2 block 32x8 n0 5
// CHECK: const int length = size0;
// CHECK-LABEL: // kernel 5
// CHECK: // launch: column-reduce grid 2 block 32x8 n0 100
// CHECK-LABEL: // kernel 6
// CHECK: // launch: column-reduce grid 8 block 32x8 n0 200 dims 40 40 0 0 4 splits 4, then strata_kernel_finish grid 1 block 256
// CHECK: const int chunk = (length + splits - 1) / splits;
// CHECK-LABEL: // kernel 7
// CHECK: // launch: tiled grid 12 block 32x8 n0 3
// CHECK: for (int b = blockIdx.x; b < size0 * 4; b += gridDim.x) {
// CHECK-LABEL: // kernel 8
// CHECK: // launch: tiled grid 36 block 32x8 n0 9

func.func @scale_7(%a: !strata.tensor<7xf32, strided<[1], offset: 0>>) -> !strata.tensor<7xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [7] ins(%a : !strata.tensor<7xf32, strided<[1], offset: 0>>) {
  ^bb0(%x: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %x, %two : f32
    strata.yield %m : f32
  } -> !strata.tensor<7xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<7xf32, strided<[1], offset: 0>>
}

func.func @scale_1001(%a: !strata.tensor<1001xf32, strided<[1], offset: 0>>) -> !strata.tensor<1001xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [1001] ins(%a : !strata.tensor<1001xf32, strided<[1], offset: 0>>) {
  ^bb0(%x: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %x, %two : f32
    strata.yield %m : f32
  } -> !strata.tensor<1001xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<1001xf32, strided<[1], offset: 0>>
}

func.func @rowsum_1(%a: !strata.tensor<1x64xf32, strided<[64, 1], offset: 0>>) -> !strata.tensor<1xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [1, 64] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<1x64xf32, strided<[64, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<1xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<1xf32, strided<[1], offset: 0>>
}

func.func @rowsum_300(%a: !strata.tensor<300x64xf32, strided<[64, 1], offset: 0>>) -> !strata.tensor<300xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [300, 64] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<300x64xf32, strided<[64, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<300xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<300xf32, strided<[1], offset: 0>>
}

func.func @colsum_5(%a: !strata.tensor<5x40xf32, strided<[40, 1], offset: 0>>) -> !strata.tensor<40xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [5, 40] reduce [0] combiners ["sum"] ins(%a : !strata.tensor<5x40xf32, strided<[40, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<40xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<40xf32, strided<[1], offset: 0>>
}

func.func @colsum_100(%a: !strata.tensor<100x40xf32, strided<[40, 1], offset: 0>>) -> !strata.tensor<40xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [100, 40] reduce [0] combiners ["sum"] ins(%a : !strata.tensor<100x40xf32, strided<[40, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<40xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<40xf32, strided<[1], offset: 0>>
}

func.func @colsum_200(%a: !strata.tensor<200x40xf32, strided<[40, 1], offset: 0>>) -> !strata.tensor<40xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [200, 40] reduce [0] combiners ["sum"] ins(%a : !strata.tensor<200x40xf32, strided<[40, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<40xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<40xf32, strided<[1], offset: 0>>
}

func.func @batch_transpose_3(%a: !strata.tensor<3x40x48xf32, strided<[1920, 1, 40], offset: 0>>) -> !strata.tensor<3x40x48xf32, strided<[1920, 48, 1], offset: 0>> {
  %k = strata.kernel space [3, 40, 48] ins(%a : !strata.tensor<3x40x48xf32, strided<[1920, 1, 40], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3x40x48xf32, strided<[1920, 48, 1], offset: 0>>
  return %k : !strata.tensor<3x40x48xf32, strided<[1920, 48, 1], offset: 0>>
}

func.func @batch_transpose_9(%a: !strata.tensor<9x40x48xf32, strided<[1920, 1, 40], offset: 0>>) -> !strata.tensor<9x40x48xf32, strided<[1920, 48, 1], offset: 0>> {
  %k = strata.kernel space [9, 40, 48] ins(%a : !strata.tensor<9x40x48xf32, strided<[1920, 1, 40], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<9x40x48xf32, strided<[1920, 48, 1], offset: 0>>
  return %k : !strata.tensor<9x40x48xf32, strided<[1920, 48, 1], offset: 0>>
}
