// Reductions of two loops or more take their inner trip counts, strides
// other than 0 and +-1, offsets, split count and, when the innermost loop
// reduces, their kind as parameters after n0 (KernelToCUDAReduce.cpp): row
// sums over rows of 7, 100 or 1001 elements (a column launch below 32, a
// row launch from 32: `rowmode` picks one of the two loops in the source),
// row maxima of f64 rows of 9 and 300, column sums of x[3, R, 40] over 5
// or 100 rows, and the split row sums (3 and 8 partials per output) and
// split column sums (4 and 16) have equal CUDA C (the PTX cache's key);
// only the launch line (grid, block, n0, dims) differs. Whether a
// reduction splits stays in the source (partial buffers and a finish
// kernel): rowsum_7 and rowsum_10000 differ. STRATA_DYNAMIC_SHAPES=0: the
// sizes, the kind and the split count are constants again.
// RUN: rm -rf %t && mkdir %t
// RUN: strata-translate --emit-cuda %s -o %t
// RUN: grep -v '^// launch' %t/kernel_0.cu > %t/k0 && grep -v '^// launch' %t/kernel_1.cu > %t/k1 && grep -v '^// launch' %t/kernel_2.cu > %t/k2 && grep -v '^// launch' %t/kernel_3.cu > %t/k3
// RUN: grep -v '^// launch' %t/kernel_4.cu > %t/k4 && grep -v '^// launch' %t/kernel_5.cu > %t/k5 && grep -v '^// launch' %t/kernel_6.cu > %t/k6 && grep -v '^// launch' %t/kernel_7.cu > %t/k7
// RUN: grep -v '^// launch' %t/kernel_8.cu > %t/k8 && grep -v '^// launch' %t/kernel_9.cu > %t/k9 && grep -v '^// launch' %t/kernel_10.cu > %t/k10
// RUN: diff %t/k0 %t/k1 && diff %t/k0 %t/k2 && diff %t/k3 %t/k4
// RUN: diff %t/k5 %t/k6 && diff %t/k7 %t/k8 && diff %t/k9 %t/k10
// RUN: not diff %t/k0 %t/k7
// RUN: not diff %t/k5 %t/k9
// RUN: strata-translate --emit-cuda %s | FileCheck %s
// RUN: rm -rf %t.static && mkdir %t.static
// RUN: env STRATA_DYNAMIC_SHAPES=0 strata-translate --emit-cuda %s -o %t.static
// RUN: grep -v '^// launch' %t.static/kernel_0.cu > %t.static/k0 && grep -v '^// launch' %t.static/kernel_1.cu > %t.static/k1 && grep -v '^// launch' %t.static/kernel_2.cu > %t.static/k2 && grep -v '^// launch' %t.static/kernel_3.cu > %t.static/k3
// RUN: grep -v '^// launch' %t.static/kernel_4.cu > %t.static/k4 && grep -v '^// launch' %t.static/kernel_5.cu > %t.static/k5 && grep -v '^// launch' %t.static/kernel_6.cu > %t.static/k6 && grep -v '^// launch' %t.static/kernel_7.cu > %t.static/k7
// RUN: grep -v '^// launch' %t.static/kernel_8.cu > %t.static/k8 && grep -v '^// launch' %t.static/kernel_9.cu > %t.static/k9 && grep -v '^// launch' %t.static/kernel_10.cu > %t.static/k10
// RUN: not diff %t.static/k0 %t.static/k1
// RUN: not diff %t.static/k1 %t.static/k2
// RUN: not diff %t.static/k3 %t.static/k4
// RUN: not diff %t.static/k5 %t.static/k6
// RUN: not diff %t.static/k7 %t.static/k8
// RUN: not diff %t.static/k9 %t.static/k10
// RUN: env STRATA_DYNAMIC_SHAPES=0 strata-translate --emit-cuda %s | FileCheck %s --check-prefix=STATIC

// CHECK-LABEL: // kernel 0
// CHECK: // launch: column-reduce grid 1 block 32x8 n0 4 dims 7 7 0 0 0
// CHECK: // kernel strata_kernel: row or column reduce (rowmode), loops [n0, sz1], 32-bit indices
// CHECK: long long n0,
// CHECK-NEXT: long long dsz1,
// CHECK-NEXT: long long dst0_0,
// CHECK-NEXT: long long doff0,
// CHECK-NEXT: long long doff1,
// CHECK-NEXT: long long drowmode) {
// CHECK: const int rowmode = (int)drowmode;
// CHECK-NEXT: const int outputs = size0;
// CHECK-NEXT: const int length = sz1;
// CHECK-NEXT: const int chunk = length;
// CHECK-NEXT: if (rowmode) {
// CHECK-NEXT: for (int b = blockIdx.x; b < outputs; b += gridDim.x) {
// CHECK: for (int j = s * chunk + threadIdx.x; j < jEnd; j += blockDim.x) {
// CHECK: const float a0 = in0[off0 + i0 * st0_0 + i1];
// CHECK: } else {
// CHECK-NEXT: for (int b = blockIdx.x; b < (outputs + 31) / 32; b += gridDim.x) {
// CHECK: for (int j = s * chunk + threadIdx.y; j < jEnd; j += blockDim.y) {
// CHECK-LABEL: // kernel 1
// CHECK: // launch: row-reduce grid 4 block 256x1 n0 4 dims 100 100 0 0 1
// CHECK-LABEL: // kernel 2
// CHECK: // launch: row-reduce grid 4 block 256x1 n0 4 dims 1001 1001 0 0 1
// CHECK-LABEL: // kernel 3
// CHECK: // launch: column-reduce grid 1 block 32x8 n0 6 dims 9 9 0 0 0
// CHECK: double acc0 = __longlong_as_double((long long)0xfff0000000000000ULL);
// CHECK-LABEL: // kernel 4
// CHECK: // launch: row-reduce grid 6 block 256x1 n0 6 dims 300 300 0 0 1
// CHECK-LABEL: // kernel 5
// CHECK: // launch: column-reduce grid 4 block 32x8 n0 3 dims 5 40 200 40 40 0 0
// CHECK: // kernel strata_kernel: column-reduce, loops [n0, sz1, sz2], 32-bit indices
// CHECK-NOT: rowmode
// CHECK: const int outputs = size0 * sz2;
// CHECK-NEXT: const int length = sz1;
// CHECK: const int i2 = r % sz2;
// CHECK: const float a0 = in0[off0 + i0 * st0_0 + i1 * st0_1 + i2];
// CHECK: out0[off1 + i0 * st1_0 + i2] = acc0;
// CHECK-LABEL: // kernel 6
// CHECK: // launch: column-reduce grid 4 block 32x8 n0 3 dims 100 40 4000 40 40 0 0
// CHECK-LABEL: // kernel 7
// CHECK: // launch: row-reduce grid 6 block 256x1 n0 2 dims 10000 10000 0 0 3 1 splits 3, then strata_kernel_finish grid 1 block 256
// CHECK: // kernel strata_kernel: row or column reduce (rowmode), loops [n0, sz1], 32-bit indices, split (splits)
// CHECK: long long dsplits,
// CHECK-NEXT: long long drowmode) {
// CHECK: const int chunk = (length + splits - 1) / splits;
// CHECK: for (int b = blockIdx.x; b < (outputs) * splits; b += gridDim.x) {
// CHECK-NEXT: const int s = b % splits;
// CHECK: part0[(off1 + i0) * splits + s] = acc0;
// CHECK: for (int b = blockIdx.x; b < ((outputs + 31) / 32) * splits; b += gridDim.x) {
// CHECK: strata_kernel_finish(const float *__restrict__ part0,
// CHECK: long long dsplits,
// CHECK-NEXT: long long drowmode) {
// CHECK-NEXT: const int size0 = (int)n0;
// CHECK-NEXT: const int splits = (int)dsplits;
// CHECK-NEXT: const int outputs = size0;
// CHECK: for (int s = 1; s < splits; ++s)
// CHECK-LABEL: // kernel 8
// CHECK: // launch: row-reduce grid 16 block 256x1 n0 2 dims 30000 30000 0 0 8 1 splits 8, then strata_kernel_finish grid 1 block 256
// CHECK-LABEL: // kernel 9
// CHECK: // launch: column-reduce grid 16 block 32x8 n0 3 dims 200 40 8000 40 40 0 0 4 splits 4, then strata_kernel_finish grid 1 block 256
// CHECK: // kernel strata_kernel: column-reduce, loops [n0, sz1, sz2], 32-bit indices, split (splits)
// CHECK-LABEL: // kernel 10
// CHECK: // launch: column-reduce grid 64 block 32x8 n0 3 dims 1000 40 40000 40 40 0 0 16 splits 16, then strata_kernel_finish grid 1 block 256

// STATIC-LABEL: // kernel 0
// STATIC: // launch: column-reduce grid 1 block 32x8 n0 4
// STATIC: // kernel strata_kernel: column-reduce, loops [n0, 7], 32-bit indices
// STATIC-NOT: rowmode
// STATIC: long long n0) {
// STATIC: for (int j = s * 7 + threadIdx.y; j < jEnd; j += blockDim.y) {
// STATIC: const float a0 = in0[i0 * 7 + i1];
// STATIC-LABEL: // kernel 1
// STATIC: // kernel strata_kernel: row-reduce, loops [n0, 100], 32-bit indices
// STATIC-LABEL: // kernel 7
// STATIC: // kernel strata_kernel: row-reduce, loops [n0, 10000], 32-bit indices, 3 splits per output
// STATIC: long long n0) {
// STATIC: for (int j = s * 3334 + threadIdx.x; j < jEnd; j += blockDim.x) {
// STATIC: part0[(i0) * 3 + s] = acc0;
// STATIC: strata_kernel_finish(const float *__restrict__ part0,
// STATIC-NEXT: float *__restrict__ out0,
// STATIC-NEXT: long long n0) {
// STATIC: for (int s = 1; s < 3; ++s)

func.func @rowsum_7(%a: !strata.tensor<4x7xf32, strided<[7, 1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [4, 7] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<4x7xf32, strided<[7, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<4xf32, strided<[1], offset: 0>>
}

func.func @rowsum_100(%a: !strata.tensor<4x100xf32, strided<[100, 1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [4, 100] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<4x100xf32, strided<[100, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<4xf32, strided<[1], offset: 0>>
}

func.func @rowsum_1001(%a: !strata.tensor<4x1001xf32, strided<[1001, 1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [4, 1001] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<4x1001xf32, strided<[1001, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<4xf32, strided<[1], offset: 0>>
}

func.func @rowmax_9_f64(%a: !strata.tensor<6x9xf64, strided<[9, 1], offset: 0>>) -> !strata.tensor<6xf64, strided<[1], offset: 0>> {
  %k = strata.kernel space [6, 9] reduce [1] combiners ["max"] ins(%a : !strata.tensor<6x9xf64, strided<[9, 1], offset: 0>>) {
  ^bb0(%x: f64):
    strata.yield %x : f64
  } -> !strata.tensor<6xf64, strided<[1], offset: 0>>
  return %k : !strata.tensor<6xf64, strided<[1], offset: 0>>
}

func.func @rowmax_300_f64(%a: !strata.tensor<6x300xf64, strided<[300, 1], offset: 0>>) -> !strata.tensor<6xf64, strided<[1], offset: 0>> {
  %k = strata.kernel space [6, 300] reduce [1] combiners ["max"] ins(%a : !strata.tensor<6x300xf64, strided<[300, 1], offset: 0>>) {
  ^bb0(%x: f64):
    strata.yield %x : f64
  } -> !strata.tensor<6xf64, strided<[1], offset: 0>>
  return %k : !strata.tensor<6xf64, strided<[1], offset: 0>>
}

func.func @colsum_5(%a: !strata.tensor<3x5x40xf32, strided<[200, 40, 1], offset: 0>>) -> !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>> {
  %k = strata.kernel space [3, 5, 40] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<3x5x40xf32, strided<[200, 40, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>>
  return %k : !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>>
}

func.func @colsum_100(%a: !strata.tensor<3x100x40xf32, strided<[4000, 40, 1], offset: 0>>) -> !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>> {
  %k = strata.kernel space [3, 100, 40] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<3x100x40xf32, strided<[4000, 40, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>>
  return %k : !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>>
}

func.func @rowsum_10000(%a: !strata.tensor<2x10000xf32, strided<[10000, 1], offset: 0>>) -> !strata.tensor<2xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [2, 10000] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<2x10000xf32, strided<[10000, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<2xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<2xf32, strided<[1], offset: 0>>
}

func.func @rowsum_30000(%a: !strata.tensor<2x30000xf32, strided<[30000, 1], offset: 0>>) -> !strata.tensor<2xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [2, 30000] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<2x30000xf32, strided<[30000, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<2xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<2xf32, strided<[1], offset: 0>>
}

func.func @colsum_200(%a: !strata.tensor<3x200x40xf32, strided<[8000, 40, 1], offset: 0>>) -> !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>> {
  %k = strata.kernel space [3, 200, 40] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<3x200x40xf32, strided<[8000, 40, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>>
  return %k : !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>>
}

func.func @colsum_1000(%a: !strata.tensor<3x1000x40xf32, strided<[40000, 40, 1], offset: 0>>) -> !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>> {
  %k = strata.kernel space [3, 1000, 40] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<3x1000x40xf32, strided<[40000, 40, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>>
  return %k : !strata.tensor<3x40xf32, strided<[40, 1], offset: 0>>
}
