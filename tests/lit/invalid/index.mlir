// strata.gather / scatter / scatter_add and kernel index_map verifier
// errors (PyTorch 1.13's messages), located at the op.
// RUN: strata-opt %s -split-input-file -verify-diagnostics

func.func @gather_index_dtype(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %i: !strata.tensor<2x4xi32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{gather(): Expected dtype int64 for index}}
  %0 = strata.gather %x, %i dim 0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<2x4xi32, strided<[4, 1], offset: 0>> -> !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @gather_rank(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %i: !strata.tensor<2xi64, strided<[1], offset: 0>>) {
  // expected-error @+1 {{Index tensor must have the same number of dimensions as input tensor}}
  %0 = strata.gather %x, %i dim 0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<2xi64, strided<[1], offset: 0>> -> !strata.tensor<2xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @gather_size(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %i: !strata.tensor<2x5xi64, strided<[5, 1], offset: 0>>) {
  // expected-error @+1 {{Size does not match at dimension 1 expected index [2, 5] to be smaller than self [3, 4] apart from dimension 0}}
  %0 = strata.gather %x, %i dim 0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<2x5xi64, strided<[5, 1], offset: 0>> -> !strata.tensor<2x5xf32, strided<[5, 1], offset: 0>>
  return
}

// -----

func.func @gather_dim(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %i: !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{Dimension out of range (expected to be in range of [-2, 1], but got 2)}}
  %0 = strata.gather %x, %i dim 2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>> -> !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @scatter_src_dtype(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %i: !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>>, %s: !strata.tensor<2x4xf64, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{scatter(): Expected self.dtype to be equal to src.dtype}}
  %0 = strata.scatter %x, %i, %s dim 0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>>, !strata.tensor<2x4xf64, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @scatter_add_size(%x: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %i: !strata.tensor<2x5xi64, strided<[5, 1], offset: 0>>, %s: !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{Expected index [2, 5] to be smaller than self [3, 4] apart from dimension 0 and to be smaller size than src [2, 4]}}
  %0 = strata.scatter_add %x, %i, %s dim 0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<2x5xi64, strided<[5, 1], offset: 0>>, !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @index_map_accumulate_input(%i: !strata.tensor<4xi64, strided<[1], offset: 0>>, %x: !strata.tensor<4xf32, strided<[0], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op `index_map` accumulates only into a result}}
  %0 = strata.kernel space [4] ins(%i, %x : !strata.tensor<4xi64, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[0], offset: 0>>) attributes {index_map = array<i64: 1, 0, 1, 3, 1>} {
  ^bb0(%a: i64, %b: f32):
    strata.yield %b : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @index_map_index_type(%i: !strata.tensor<4xf32, strided<[1], offset: 0>>, %x: !strata.tensor<4xf32, strided<[0], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op `index_map` index 0 must be another input, of i64}}
  %0 = strata.kernel space [4] ins(%i, %x : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[0], offset: 0>>) attributes {index_map = array<i64: 1, 0, 1, 3, 0>} {
  ^bb0(%a: f32, %b: f32):
    strata.yield %b : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return
}
