// RUN: strata-translate --emit-cuda %s | FileCheck %s
// Reductions: a block per output with a shuffle reduction when the
// innermost loop reduces; 32 outputs per block otherwise; few outputs over
// many points split into partials combined in order by `_finish`. The
// outermost loop's trip count is the parameter n0: the number of outputs
// (kept) or the reduction's length (reduced) is computed from it. In
// reductions of two loops or more the inner sizes, strides other than 0
// and +-1, offsets, the split count and, when the innermost loop reduces,
// the kind (`rowmode`: both loops are in the source) are parameters too
// (reduce-size.mlir); one loop: the kind and split count stay constants.

// CHECK-LABEL: // kernel 0
// CHECK: // launch: row-reduce grid 4 block 256x1 n0 4 dims 1024 1024 0 0 1
// CHECK: // kernel strata_kernel: row or column reduce (rowmode), loops [n0, sz1], 32-bit indices
// CHECK: __shared__ float scratch0[32];
// CHECK-NEXT: __shared__ float red0[8][33];
// CHECK-NEXT: const int size0 = (int)n0;
// CHECK-NEXT: const int sz1 = (int)dsz1;
// CHECK: const int rowmode = (int)drowmode;
// CHECK-NEXT: const int outputs = size0;
// CHECK-NEXT: const int length = sz1;
// CHECK-NEXT: const int chunk = length;
// CHECK-NEXT: if (rowmode) {
// CHECK-NEXT: for (int b = blockIdx.x; b < outputs; b += gridDim.x) {
// CHECK: for (int j = s * chunk + threadIdx.x; j < jEnd; j += blockDim.x) {
// CHECK: acc0 = StrataSum()(acc0, a0);
// CHECK: acc0 = strata_block_reduce<StrataSum, float>(acc0, 0.0f, scratch0);
// CHECK: if (threadIdx.x == 0) {
// CHECK-NEXT: out0[off1 + i0] = acc0;
// CHECK: } else {
// CHECK-NEXT: for (int b = blockIdx.x; b < (outputs + 31) / 32; b += gridDim.x) {
// CHECK: for (int j = s * chunk + threadIdx.y; j < jEnd; j += blockDim.y) {
func.func @rowsum(%a: !strata.tensor<4x1024xf32, strided<[1024, 1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [4, 1024] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<4x1024xf32, strided<[1024, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<4xf32, strided<[1], offset: 0>>
}

// CHECK-LABEL: // kernel 1
// CHECK: // launch: column-reduce grid 4 block 32x8 n0 16 dims 128 128 0 0
// CHECK: __shared__ double red0[8][33];
// CHECK-NEXT: const int size0 = (int)n0;
// CHECK-NEXT: const int sz1 = (int)dsz1;
// CHECK: const int outputs = sz1;
// CHECK-NEXT: const int length = size0;
// CHECK-NEXT: const int chunk = length;
// CHECK-NEXT: for (int b = blockIdx.x; b < (outputs + 31) / 32; b += gridDim.x) {
// CHECK: const int o = b * 32 + threadIdx.x;
// CHECK: const int jEnd = min((int)length, s * chunk + chunk);
// CHECK: double acc0 = __longlong_as_double((long long)0xfff0000000000000ULL);
// CHECK: if (o < outputs) {
// CHECK: acc0 = StrataMax()(acc0, a0);
// CHECK: red0[threadIdx.y][threadIdx.x] = acc0;
// CHECK: acc0 = StrataMax()(acc0, red0[y][threadIdx.x]);
func.func @colmax(%a: !strata.tensor<16x128xf64, strided<[128, 1], offset: 0>>) -> !strata.tensor<128xf64, strided<[1], offset: 0>> {
  %k = strata.kernel space [16, 128] reduce [0] combiners ["max"] ins(%a : !strata.tensor<16x128xf64, strided<[128, 1], offset: 0>>) {
  ^bb0(%x: f64):
    strata.yield %x : f64
  } -> !strata.tensor<128xf64, strided<[1], offset: 0>>
  return %k : !strata.tensor<128xf64, strided<[1], offset: 0>>
}

// CHECK-LABEL: // kernel 2
// CHECK: // launch: row-reduce grid 256 block 256x1 n0 1048576 splits 256, then strata_kernel_finish grid 1 block 256
// CHECK: loops [n0], 32-bit indices, 256 splits per output
// CHECK: float *__restrict__ part0,
// CHECK-NEXT: long long n0) {
// CHECK: const int chunk = (length + 255) / 256;
// CHECK: const int s = b % 256;
// CHECK: part0[(0) * 256 + s] = acc0;
// CHECK: strata_kernel_finish(const float *__restrict__ part0,
// CHECK-NEXT: float *__restrict__ out0,
// CHECK-NEXT: long long n0) {
// CHECK-NEXT: for (int o = blockIdx.x * (int)blockDim.x + threadIdx.x; o < 1;
// CHECK: float acc0 = part0[o * 256];
// CHECK-NEXT: for (int s = 1; s < 256; ++s)
// CHECK-NEXT: acc0 = StrataSum()(acc0, part0[o * 256 + s]);
func.func @total(%a: !strata.tensor<1048576xf32, strided<[1], offset: 0>>) -> !strata.tensor<f32, strided<[], offset: 0>> {
  %k = strata.kernel space [1048576] reduce [0] combiners ["sum"] ins(%a : !strata.tensor<1048576xf32, strided<[1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<f32, strided<[], offset: 0>>
  return %k : !strata.tensor<f32, strided<[], offset: 0>>
}

// Booleans: min is `and`, stored as a byte. 32 outputs per block: the
// blocks are counted from the outputs (this size's launch: column).
// CHECK-LABEL: // kernel 3
// CHECK: // launch: column-reduce grid 1 block 32x8 n0 2 dims 3 3 0 0 0
// CHECK: const int outputs = size0;
// CHECK: } else {
// CHECK-NEXT: for (int b = blockIdx.x; b < (outputs + 31) / 32; b += gridDim.x) {
// CHECK: bool acc0 = true;
// CHECK: if (o < outputs) {
// CHECK: const bool a0 = (in0[off0 + i0 * st0_0 + i1] != 0);
// CHECK: acc0 = StrataMin()(acc0, a0);
// CHECK: out0[off1 + i0] = (unsigned char)acc0;
func.func @all(%a: !strata.tensor<2x3xi1, strided<[3, 1], offset: 0>>) -> !strata.tensor<2xi1, strided<[1], offset: 0>> {
  %k = strata.kernel space [2, 3] reduce [1] combiners ["min"] ins(%a : !strata.tensor<2x3xi1, strided<[3, 1], offset: 0>>) {
  ^bb0(%x: i1):
    strata.yield %x : i1
  } -> !strata.tensor<2xi1, strided<[1], offset: 0>>
  return %k : !strata.tensor<2xi1, strided<[1], offset: 0>>
}
