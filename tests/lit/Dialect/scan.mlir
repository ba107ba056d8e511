// strata.scan (cumsum, cumprod) and the scan kernel --strata-fuse makes of
// it parse, verify, print and re-parse to the same text.
// RUN: strata-opt %s | strata-opt | FileCheck %s
// RUN: strata-opt %s --strata-fuse | strata-opt | FileCheck %s --check-prefix=FUSE

// CHECK-LABEL: func.func @scans
// CHECK: %[[S:.*]] = strata.scan %arg0 dim 1 "sum" : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
// CHECK: strata.scan %arg0 dim -2 "prod" reverse exclusive : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
// CHECK: strata.scan %[[T:.*]] dim 0 "sum" : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
// CHECK: strata.scan %{{.*}} dim 0 "prod" : !strata.tensor<f64, strided<[], offset: 0>> -> !strata.tensor<f64, strided<[], offset: 0>>
// FUSE-LABEL: func.func @scans
// FUSE: strata.kernel space [3, 4] ins(%arg0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) attributes {scan_combiner = "sum", scan_dim = 1 : i64} {
// FUSE: strata.kernel space [3, 4] ins(%arg0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) attributes {scan_combiner = "prod", scan_dim = 0 : i64, scan_exclusive, scan_reverse} {
// The exp is computed in the scan's kernel; the 0-d scan is a copy.
// FUSE: strata.kernel space [4, 3] ins(%{{.*}} : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>) attributes {scan_combiner = "sum", scan_dim = 0 : i64} {
// FUSE-NEXT: ^bb0(%[[X:.*]]: f32):
// FUSE-NEXT: %[[E:.*]] = math.exp %[[X]] : f32
// FUSE-NEXT: strata.yield %[[E]] : f32
// FUSE: strata.kernel space [] ins(
// FUSE-NOT: scan_dim
// FUSE: return
func.func @scans(%arg0: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %arg1: !strata.tensor<f64, strided<[], offset: 0>>) -> (!strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<f64, strided<[], offset: 0>>) {
  %0 = strata.scan %arg0 dim 1 "sum" : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %1 = strata.scan %arg0 dim -2 "prod" reverse exclusive : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  %2 = strata.transpose %arg0 dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %3 = strata.exp %2 : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  %4 = strata.scan %3 dim 0 "sum" : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  %5 = strata.scan %arg1 dim 0 "prod" : !strata.tensor<f64, strided<[], offset: 0>> -> !strata.tensor<f64, strided<[], offset: 0>>
  return %0, %1, %4, %5 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<f64, strided<[], offset: 0>>
}
