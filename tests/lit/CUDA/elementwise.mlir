// RUN: strata-translate --emit-cuda %s | FileCheck %s
// Elementwise kernels: aligned unit-stride operands move as 4-element
// vectors; a misaligned offset falls back to one point per thread; sizes
// beyond 2^31 switch the index arithmetic to 64 bits.

// CHECK-LABEL: // kernel 0
// CHECK: // launch: vectorized grid 1 block 256x1
// CHECK: // kernel strata_kernel: vectorized, loops [8, 16], 128 points, 32-bit indices
// CHECK: strata_kernel(const float *__restrict__ in0,
// CHECK-NEXT: const float *__restrict__ in1,
// CHECK-NEXT: float *__restrict__ out0) {
// CHECK: for (int p = blockIdx.x * (int)blockDim.x + threadIdx.x; p < 32; p += (int)gridDim.x * blockDim.x) {
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
// CHECK: // kernel strata_kernel: pointwise, loops [8, 16], 128 points, 32-bit indices
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
// CHECK: 3000000000 points, 64-bit indices
// CHECK: for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < 3000000000;
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
