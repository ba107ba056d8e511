// A full transposed tile first prefetches (read, locality 3) the lines the
// next tile along the innermost loop reads: 16 rows of one 64-byte line
// for each f32 input of the transposed pair, none for the output or for
// an input broadcast along the innermost loop; f64 rows are two lines.
// Untiled kernels prefetch nothing. (Values: lit/JIT/transpose-tiles.mlir.)
// The transposed operand is not the first one (TensorIterator: the first
// operand decides the result's layout), so the results are row-major and
// the kernels transpose.
// RUN: strata-translate --emit-llvm %s | FileCheck %s
// CHECK-LABEL: define void @strata_kernel
// CHECK: micro:
// CHECK-COUNT-32: call void @llvm.prefetch.p0(ptr %{{[0-9]+}}, i32 0, i32 3, i32 1)
// CHECK-NOT: @llvm.prefetch
// CHECK: shufflevector <8 x float>
// CHECK-LABEL: define void @strata_kernel
// CHECK: micro:
// CHECK-COUNT-32: call void @llvm.prefetch.p0(ptr %{{[0-9]+}}, i32 0, i32 3, i32 1)
// CHECK-NOT: @llvm.prefetch
// CHECK: shufflevector <4 x double>
// CHECK-LABEL: define void @strata_kernel
// CHECK-NOT: @llvm.prefetch
// CHECK: ret void

func.func @f32(%a: !strata.tensor<64x64xf32, strided<[1, 64], offset: 0>>, %b: !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>, %c: !strata.tensor<64x64xf32, strided<[0, 0], offset: 0>>) -> !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>> {
  %s = strata.add %b, %a : !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>, !strata.tensor<64x64xf32, strided<[1, 64], offset: 0>> -> !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>
  %t = strata.mul %s, %c : !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>, !strata.tensor<64x64xf32, strided<[0, 0], offset: 0>> -> !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>
  return %t : !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>
}

func.func @f64(%a: !strata.tensor<64x64xf64, strided<[1, 64], offset: 0>>) -> !strata.tensor<64x64xf64, strided<[64, 1], offset: 0>> {
  %s = strata.contiguous %a : !strata.tensor<64x64xf64, strided<[1, 64], offset: 0>> -> !strata.tensor<64x64xf64, strided<[64, 1], offset: 0>>
  return %s : !strata.tensor<64x64xf64, strided<[64, 1], offset: 0>>
}

func.func @untiled(%a: !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>) -> !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>> {
  %s = strata.neg %a : !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>> -> !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>
  return %s : !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>
}
