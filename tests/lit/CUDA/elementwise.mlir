// (The static forms: STRATA_DYNAMIC_SHAPES=0; the dynamic ones of kernels
// of two loops or more, sizes as parameters: inner-size.mlir.)
// RUN: env STRATA_DYNAMIC_SHAPES=0 strata-translate --emit-cuda %s | FileCheck %s
// Elementwise kernels: aligned unit-stride operands move as 4-element
// vectors; a misaligned offset falls back to one point per thread; sizes
// beyond 2^31 switch the index arithmetic to 64 bits. The outermost trip
// count is the last parameter, n0: no line of the source holds it.

// CHECK-LABEL: // kernel 0
// CHECK: // launch: vectorized grid 1 block 256x1 n0 8
// CHECK: // kernel strata_kernel: vectorized, loops [n0, 16], 32-bit indices
// CHECK: strata_kernel(const float *__restrict__ in0,
// CHECK-NEXT: const float *__restrict__ in1,
// CHECK-NEXT: float *__restrict__ out0,
// CHECK-NEXT: long long n0) {
// CHECK-NEXT: const int size0 = (int)n0;
// CHECK-NEXT: for (int p = blockIdx.x * (int)blockDim.x + threadIdx.x; p < size0 * 4; p += (int)gridDim.x * blockDim.x) {
// CHECK: const StrataVec4<float> a0 = *reinterpret_cast<const StrataVec4<float> *>(in0 + i0 * 16 + i1);
// CHECK: #pragma unroll
// CHECK-NEXT: for (int l = 0; l < 4; ++l) {
// CHECK-NEXT: const float v0 = a0.v[l] + a1.v[l];
// CHECK-NEXT: o0.v[l] = v0;
// CHECK: *reinterpret_cast<StrataVec4<float> *>(out0 + i0 * 16 + i1) = o0;
func.func @add(%a: !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>, %b: !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>) -> !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>> {
  %k = strata.kernel space [8, 16] ins(%a, %b : !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>, !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    strata.yield %s : f32
  } -> !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>
  return %k : !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>
}

// CHECK-LABEL: // kernel 1
// CHECK: // kernel strata_kernel: pointwise, loops [n0, 16], 32-bit indices
// CHECK: for (int p = blockIdx.x * (int)blockDim.x + threadIdx.x; p < size0 * 16;
// CHECK: const int i1 = r % 16;
// CHECK: const float a0 = in0[1 + i0 * 16 + i1];
// CHECK: const bool v3 = v1 > v2;
// CHECK-NEXT: const float v4 = v3 ? v1 : v2;
// CHECK-NEXT: out0[i0 * 16 + i1] = v4;
func.func @relu_offset(%a: !strata.tensor<8x16xf32, strided<[16, 1], offset: 1>>) -> !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>> {
  %k = strata.kernel space [8, 16] ins(%a : !strata.tensor<8x16xf32, strided<[16, 1], offset: 1>>) {
  ^bb0(%x: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %x, %two : f32
    %zero = arith.constant 0.0 : f32
    %c = arith.cmpf ogt, %m, %zero : f32
    %r = arith.select %c, %m, %zero : f32
    strata.yield %r : f32
  } -> !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>
  return %k : !strata.tensor<8x16xf32, strided<[16, 1], offset: 0>>
}

// CHECK-LABEL: // kernel 2
// CHECK: // launch: pointwise grid 65536 block 256x1 n0 3000000000
// CHECK: loops [n0], 64-bit indices
// CHECK: const long long size0 = (long long)n0;
// CHECK-NEXT: for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < size0;
// CHECK: const double a0 = in0[2999999999 - i0];
// CHECK-NEXT: const double v0 = -a0;
func.func @neg_big(%a: !strata.tensor<3000000000xf64, strided<[-1], offset: 2999999999>>) -> !strata.tensor<3000000000xf64, strided<[1], offset: 0>> {
  %k = strata.kernel space [3000000000] ins(%a : !strata.tensor<3000000000xf64, strided<[-1], offset: 2999999999>>) {
  ^bb0(%x: f64):
    %n = arith.negf %x : f64
    strata.yield %n : f64
  } -> !strata.tensor<3000000000xf64, strided<[1], offset: 0>>
  return %k : !strata.tensor<3000000000xf64, strided<[1], offset: 0>>
}

// One loop of 10 points, aligned: 4 points per thread over size0 / 4
// vectors, then the last size0 % 4 points one per thread (the tail).
// CHECK-LABEL: // kernel 3
// CHECK: // launch: vectorized grid 1 block 256x1 n0 10
// CHECK: // kernel strata_kernel: vectorized, loops [n0], 32-bit indices
// CHECK: for (int p = blockIdx.x * (int)blockDim.x + threadIdx.x; p < size0 / 4; p += (int)gridDim.x * blockDim.x) {
// CHECK-NEXT: const int i0 = p * 4;
// CHECK-NEXT: const StrataVec4<float> a0 = *reinterpret_cast<const StrataVec4<float> *>(in0 + i0);
// CHECK: *reinterpret_cast<StrataVec4<float> *>(out0 + i0) = o0;
// CHECK-NEXT: }
// CHECK-NEXT: for (int p = size0 / 4 * 4 + blockIdx.x * (int)blockDim.x + threadIdx.x; p < size0; p += (int)gridDim.x * blockDim.x) {
// CHECK-NEXT: const int i0 = p;
// CHECK-NEXT: const float a0 = in0[i0];
// CHECK: out0[i0] = v1;
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @scale_tail(%a: !strata.tensor<10xf32, strided<[1], offset: 0>>) -> !strata.tensor<10xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [10] ins(%a : !strata.tensor<10xf32, strided<[1], offset: 0>>) {
  ^bb0(%x: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %x, %two : f32
    strata.yield %m : f32
  } -> !strata.tensor<10xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<10xf32, strided<[1], offset: 0>>
}
