// RUN: strata-translate --emit-cuda %s | FileCheck %s
// RUN: env STRATA_DYNAMIC_SHAPES=0 strata-translate --emit-cuda %s \
// RUN:   | FileCheck %s --check-prefix=STATIC

// A mean's division (splitMeans): its count is a size value, a `long long`
// parameter after n0 converted to the constant's type where the literal
// was (the same rounding), so one source serves every count; the launch
// passes it with the dims.
// CHECK: // launch: vectorized grid 1 block 256x1 n0 4 dims 7
// CHECK: long long n0,
// CHECK-NEXT: long long sv0) {
// CHECK: const float v1 = (float)sv0;
// CHECK-NEXT: const float v2 = v0 / v1;
// STATIC: // launch: vectorized grid 1 block 256x1 n0 4
// STATIC-NOT: sv0
// STATIC: const float v1 = 7.0f;
func.func @divide(%s: !strata.tensor<4xf64, strided<[1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [4] ins(%s : !strata.tensor<4xf64, strided<[1], offset: 0>>) {
  ^bb0(%x: f64):
    %t = arith.truncf %x : f64 to f32
    %n = arith.constant {strata.size_value} 7.000000e+00 : f32
    %q = arith.divf %t, %n : f32
    strata.yield %q : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<4xf32, strided<[1], offset: 0>>
}
