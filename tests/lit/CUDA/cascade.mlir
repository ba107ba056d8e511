// RUN: strata-translate --emit-cuda %s | FileCheck %s
// Cascade sums (an f32 sum that --strata-widen-sums accumulates in f64):
// each thread adds its values in f32 and its f32 partial into the f64
// accumulator every 64 values and once after its loop; the block reduction
// is f64. A sum of a cast the user wrote accumulates in f64 throughout.
// (nvrtc + ptxas: CudaPtx.EveryKernelCompilesAndPtxasAcceptsIt, whose
// workloads (d) and (h) are cascade sums.)

// CHECK-LABEL: // kernel 0
// CHECK: row-reduce
// CHECK: double acc0 = 0.0;
// CHECK-NEXT: float cacc0 = 0.0f;
// CHECK-NEXT: int crun = 0;
// CHECK: const double v0 = (double)a0;
// CHECK-NEXT: cacc0 = cacc0 + (float)v0;
// CHECK-NEXT: if (++crun == 64) {
// CHECK-NEXT: acc0 = acc0 + (double)cacc0;
// CHECK-NEXT: cacc0 = 0.0f;
// CHECK-NEXT: crun = 0;
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: acc0 = acc0 + (double)cacc0;
// CHECK: strata_block_reduce<StrataSum, double>
func.func @rows(%a: !strata.tensor<4x1024xf32, strided<[1024, 1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %s = strata.sum %a dims [1] : !strata.tensor<4x1024xf32, strided<[1024, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %s : !strata.tensor<4xf32, strided<[1], offset: 0>>
}

// CHECK-LABEL: // kernel 2
// CHECK: column-reduce
// CHECK: float cacc0 = 0.0f;
// CHECK: cacc0 = cacc0 + (float)v0;
// CHECK: acc0 = acc0 + (double)cacc0;
// CHECK: red0[threadIdx.y][threadIdx.x] = acc0;
func.func @columns(%a: !strata.tensor<300x100xf32, strided<[100, 1], offset: 0>>) -> !strata.tensor<100xf32, strided<[1], offset: 0>> {
  %s = strata.sum %a dims [0] : !strata.tensor<300x100xf32, strided<[100, 1], offset: 0>> -> !strata.tensor<100xf32, strided<[1], offset: 0>>
  return %s : !strata.tensor<100xf32, strided<[1], offset: 0>>
}

// CHECK-LABEL: // kernel 4
// CHECK: tiled-reduce
// CHECK: float cacc0 = 0.0f;
// CHECK: cacc0 = cacc0 + (float)v{{[0-9]+}};
// CHECK: if (++crun == 64) {
// CHECK: __syncthreads();
// CHECK-NEXT: }
// CHECK-NEXT: acc0 = acc0 + (double)cacc0;
// CHECK-NEXT: cacc0 = 0.0f;
// CHECK-NEXT: acc0 = strata_block_reduce<StrataSum, double>
func.func @transposed_product(%a: !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>>, %b: !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>>) -> !strata.tensor<f32, strided<[], offset: 0>> {
  %t = strata.transpose %a dims 0, 1 : !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>> -> !strata.tensor<40x40xf32, strided<[1, 40], offset: 0>>
  %m = strata.mul %b, %t : !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>>, !strata.tensor<40x40xf32, strided<[1, 40], offset: 0>> -> !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>>
  %s = strata.sum %m dims [0, 1] : !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  return %s : !strata.tensor<f32, strided<[], offset: 0>>
}

// CHECK-LABEL: // kernel 6
// CHECK-NOT: cacc
// CHECK: acc0 = StrataSum()(acc0, v0);
// CHECK-NOT: cacc
func.func @user_f64(%a: !strata.tensor<4x1024xf32, strided<[1024, 1], offset: 0>>) -> !strata.tensor<4xf64, strided<[1], offset: 0>> {
  %w = strata.cast %a : !strata.tensor<4x1024xf32, strided<[1024, 1], offset: 0>> -> !strata.tensor<4x1024xf64, strided<[1024, 1], offset: 0>>
  %s = strata.sum %w dims [1] : !strata.tensor<4x1024xf64, strided<[1024, 1], offset: 0>> -> !strata.tensor<4xf64, strided<[1], offset: 0>>
  return %s : !strata.tensor<4xf64, strided<[1], offset: 0>>
}
