// Pointwise and vectorized kernels of two loops or more take their inner
// trip counts, strides other than 0 and +-1 and offsets as parameters after
// n0 (KernelToCUDADynamic.cpp): two kernels that differ only in those have
// the same CUDA C (the PTX cache's key); only the launch line (grid, n0,
// dims) differs. The kind stays a decision of the sizes (vectorized: the
// innermost size, outer strides and offsets multiples of 4), so the padded
// rows at offset 3 are pointwise and those at offset 4 or 8 vectorized:
// other sources. STRATA_DYNAMIC_SHAPES=0: the sizes are constants again.
// RUN: rm -rf %t && mkdir %t
// RUN: strata-translate --emit-cuda %s -o %t
// RUN: grep -v '^// launch' %t/kernel_0.cu > %t/a0 && grep -v '^// launch' %t/kernel_1.cu > %t/b0 && diff %t/a0 %t/b0
// RUN: grep -v '^// launch' %t/kernel_2.cu > %t/a2 && grep -v '^// launch' %t/kernel_3.cu > %t/b2 && diff %t/a2 %t/b2
// RUN: not diff %t/a0 %t/a2
// RUN: strata-translate --emit-cuda %s | FileCheck %s
// RUN: rm -rf %t.static && mkdir %t.static
// RUN: env STRATA_DYNAMIC_SHAPES=0 strata-translate --emit-cuda %s -o %t.static
// RUN: grep -v '^// launch' %t.static/kernel_0.cu > %t.static/a0 && grep -v '^// launch' %t.static/kernel_1.cu > %t.static/b0 && not diff %t.static/a0 %t.static/b0

// CHECK-LABEL: // kernel 0
// CHECK: // launch: pointwise grid 1 block 256x1 n0 4 dims 9 14 9 3 0
// CHECK: // kernel strata_kernel: pointwise, loops [n0, sz1], 32-bit indices
// CHECK: long long n0,
// CHECK-NEXT: long long dsz1,
// CHECK-NEXT: long long dst0_0,
// CHECK-NEXT: long long dst1_0,
// CHECK-NEXT: long long doff0,
// CHECK-NEXT: long long doff1) {
// CHECK: const int sz1 = (int)dsz1;
// CHECK: for (int p = blockIdx.x * (int)blockDim.x + threadIdx.x; p < size0 * sz1;
// CHECK: const int i1 = r % sz1;
// CHECK: const float a0 = in0[off0 + i0 * st0_0 + i1];
// CHECK: out0[off1 + i0 * st1_0 + i1] =
// CHECK-LABEL: // kernel 1
// CHECK: // launch: pointwise grid 1 block 256x1 n0 4 dims 17 22 17 3 0
// CHECK-LABEL: // kernel 2
// CHECK: // launch: vectorized grid 1 block 256x1 n0 3 dims 8 12 8 4 0
// CHECK: for (int p = blockIdx.x * (int)blockDim.x + threadIdx.x; p < (size0 * sz1) / 4;
// CHECK: *reinterpret_cast<const StrataVec4<float> *>(in0 + off0 + i0 * st0_0 + i1);
// CHECK-LABEL: // kernel 3
// CHECK: // launch: vectorized grid 1 block 256x1 n0 3 dims 16 20 16 8 0

func.func @pad_9(%a: !strata.tensor<4x9xf32, strided<[14, 1], offset: 3>>) -> !strata.tensor<4x9xf32, strided<[9, 1], offset: 0>> {
  %k = strata.kernel space [4, 9] ins(%a : !strata.tensor<4x9xf32, strided<[14, 1], offset: 3>>) {
  ^bb0(%x: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %x, %two : f32
    strata.yield %m : f32
  } -> !strata.tensor<4x9xf32, strided<[9, 1], offset: 0>>
  return %k : !strata.tensor<4x9xf32, strided<[9, 1], offset: 0>>
}

func.func @pad_17(%a: !strata.tensor<4x17xf32, strided<[22, 1], offset: 3>>) -> !strata.tensor<4x17xf32, strided<[17, 1], offset: 0>> {
  %k = strata.kernel space [4, 17] ins(%a : !strata.tensor<4x17xf32, strided<[22, 1], offset: 3>>) {
  ^bb0(%x: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %x, %two : f32
    strata.yield %m : f32
  } -> !strata.tensor<4x17xf32, strided<[17, 1], offset: 0>>
  return %k : !strata.tensor<4x17xf32, strided<[17, 1], offset: 0>>
}

func.func @vec_8(%a: !strata.tensor<3x8xf32, strided<[12, 1], offset: 4>>) -> !strata.tensor<3x8xf32, strided<[8, 1], offset: 0>> {
  %k = strata.kernel space [3, 8] ins(%a : !strata.tensor<3x8xf32, strided<[12, 1], offset: 4>>) {
  ^bb0(%x: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %x, %two : f32
    strata.yield %m : f32
  } -> !strata.tensor<3x8xf32, strided<[8, 1], offset: 0>>
  return %k : !strata.tensor<3x8xf32, strided<[8, 1], offset: 0>>
}

func.func @vec_16(%a: !strata.tensor<3x16xf32, strided<[20, 1], offset: 8>>) -> !strata.tensor<3x16xf32, strided<[16, 1], offset: 0>> {
  %k = strata.kernel space [3, 16] ins(%a : !strata.tensor<3x16xf32, strided<[20, 1], offset: 8>>) {
  ^bb0(%x: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %x, %two : f32
    strata.yield %m : f32
  } -> !strata.tensor<3x16xf32, strided<[16, 1], offset: 0>>
  return %k : !strata.tensor<3x16xf32, strided<[16, 1], offset: 0>>
}
