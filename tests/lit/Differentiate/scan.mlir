// strata.scan's VJPs and prod's (which scans).
// RUN: strata-opt --strata-differentiate -split-input-file %s | FileCheck %s

// cumsum -> the gradient scanned from the other end.
// CHECK-LABEL: func.func @cumsum
// CHECK: %[[Y:.*]] = strata.scan %arg0 dim 1 "sum" :
// CHECK: %[[G:.*]] = strata.scan %arg1 dim 1 "sum" reverse :
// CHECK: return %[[Y]], %[[G]]
func.func @cumsum(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %c = strata.scan %x dim 1 "sum" : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %c : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}

// -----

// cumprod -> cumprod_backward without branches: the zero count along the
// dim, the reversed cumsum of output * grad before the first zero, the
// product before it and the cumprod between the first two zeros.
// CHECK-LABEL: func.func @cumprod
// CHECK: strata.scan %arg0 dim -2 "prod" :
// CHECK: strata.scan %{{.*}} dim 0 "sum" :
// CHECK: strata.scan %{{.*}} dim 0 "sum" reverse :
// CHECK: strata.scan %{{.*}} dim 0 "prod" :
// CHECK: strata.sum %{{.*}} dims [0] keepdim
// CHECK: strata.scan %{{.*}} dim 0 "prod" :
// CHECK: return
func.func @cumprod(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %c = strata.scan %x dim -2 "prod" : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return %c : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
}

// -----

// prod over a dim -> result / x without zeros in the tensor, else the
// exclusive products from both ends (prod_safe_zeros_backward).
// CHECK-LABEL: func.func @prod_dim
// CHECK: strata.sum %{{.*}} dims [] :
// CHECK: strata.scan %arg0 dim 1 "prod" exclusive :
// CHECK: strata.scan %arg0 dim 1 "prod" reverse exclusive :
// CHECK: strata.where
func.func @prod_dim(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<3xf32, strided<[1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %p = strata.prod %x dims [1] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return %p : !strata.tensor<3xf32, strided<[1], offset: 0>>
}

// -----

// prod of everything -> over the row-major elements, with one zero only.
// CHECK-LABEL: func.func @prod_all
// CHECK: %[[F:.*]] = strata.reshape %arg0 as [12]
// CHECK: strata.scan %[[F]] dim 0 "prod" exclusive :
// CHECK: strata.scan %[[F]] dim 0 "prod" reverse exclusive :
// CHECK: strata.strided_view %{{.*}} : !strata.tensor<12xf32, strided<[1], offset: 0>> -> !strata.tensor<3x4xf32
func.func @prod_all(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) -> !strata.tensor<f32, strided<[], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %p = strata.prod %x dims [] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  return %p : !strata.tensor<f32, strided<[], offset: 0>>
}

// -----

// cumsum(x, dtype=f32) of an f64 x (a cast, then a scan marked
// strata.scan_grad_in_source): the gradient is converted to f64 and
// scanned there, and goes to x itself (PyTorch's grad.to(self's dtype)).
// CHECK-LABEL: func.func @cumsum_dtype
// CHECK: %[[G:.*]] = strata.cast %arg1 : {{.*}}f32{{.*}} -> {{.*}}f64
// CHECK: %[[R:.*]] = strata.scan %[[G]] dim 0 "sum" reverse : {{.*}}f64{{.*}} -> {{.*}}f64
// CHECK: return %{{.*}}, %[[R]]
func.func @cumsum_dtype(%x: !strata.tensor<4xf64, strided<[1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> attributes {strata.wrt = array<i64: 0>} {
  %c = strata.cast %x : !strata.tensor<4xf64, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %s = strata.scan %c dim 0 "sum" {strata.scan_grad_in_source} : !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %s : !strata.tensor<4xf32, strided<[1], offset: 0>>
}
