// Every view op's verifier error, located at the op.
// RUN: strata-opt %s -split-input-file -verify-diagnostics

func.func @view_incompatible(%t: !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>) {
  // expected-error @+1 {{view: view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.}}
  %0 = strata.view %t as [12] : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<12xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @view_bad_numel(%t: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{shape '[5, 3]' is invalid for input of size 12}}
  %0 = strata.view %t as [5, 3] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<5x3xf32, strided<[3, 1], offset: 0>>
  return
}

// -----

func.func @view_two_infers(%t: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{only one dimension can be inferred}}
  %0 = strata.view %t as [-1, -1] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @wrong_result_type(%t: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{'strata.transpose' op inferred type(s) '!strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>' are incompatible with return type(s) of operation '!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>'}}
  %0 = strata.transpose %t dims 0, 1 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  return
}

// -----

func.func @transpose_dim(%t: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{transpose: Dimension out of range (expected to be in range of [-2, 1], but got 2)}}
  %0 = strata.transpose %t dims 0, 2 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  return
}

// -----

func.func @permute_repeat(%t: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{permute: duplicate dims are not allowed}}
  %0 = strata.permute %t dims [0, 0] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x3xf32, strided<[4, 4], offset: 0>>
  return
}

// -----

func.func @permute_rank(%t: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{permute: number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = 2 is not equal to len(dims) = 1}}
  %0 = strata.permute %t dims [0] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[4], offset: 0>>
  return
}

// -----

func.func @select_index(%t: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{select(): index 3 out of range for tensor of size [3, 4] at dimension 0}}
  %0 = strata.select %t dim 0 index 3 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 12>>
  return
}

// -----

func.func @slice_step(%t: !strata.tensor<10xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{slice step must be positive}}
  %0 = strata.slice %t dim 0 start 0 end 5 step 0 : !strata.tensor<10xf32, strided<[1], offset: 0>> -> !strata.tensor<5xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @narrow_range(%t: !strata.tensor<10xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{narrow: start (8) + length (3) exceeds dimension size (10).}}
  %0 = strata.narrow %t dim 0 start 8 length 3 : !strata.tensor<10xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 8>>
  return
}

// -----

func.func @expand_mismatch(%t: !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{expand: The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]}}
  %0 = strata.expand %t to [2, 4] : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<2x4xf32, strided<[0, 1], offset: 0>>
  return
}

// -----

func.func @squeeze_dim(%t: !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>) {
  // expected-error @+1 {{squeeze: Dimension out of range (expected to be in range of [-2, 1], but got 5)}}
  %0 = strata.squeeze %t dims [5] : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @unsqueeze_dim(%t: !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{unsqueeze: Dimension out of range (expected to be in range of [-2, 1], but got 2)}}
  %0 = strata.unsqueeze %t dim 2 : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  return
}

// -----

func.func @as_strided_oob(%s: !strata.storage<12xf32>) {
  %t = strata.strided_view %s : !strata.storage<12xf32> -> !strata.tensor<10xf32, strided<[1], offset: 0>>
  // expected-error @+1 {{out of bounds for storage of size 12}}
  %0 = strata.as_strided %t sizes [4] strides [3] offset 3 : !strata.tensor<10xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[3], offset: 3>>
  return
}

// -----

func.func @as_strided_negative(%t: !strata.tensor<10xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{as_strided: Negative strides are not supported at the moment, got strides: [-1]}}
  %0 = strata.as_strided %t sizes [3] strides [-1] offset 5 : !strata.tensor<10xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[-1], offset: 5>>
  return
}

// -----

func.func @diagonal_dims(%t: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{diagonal dimensions cannot be identical 0, 0}}
  %0 = strata.diagonal %t offset 0 dims 0, 0 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[5], offset: 0>>
  return
}

// -----

func.func @unfold_size(%t: !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{maximum size for tensor at dimension 0 is 3 but size is 4}}
  %0 = strata.unfold %t dim 0 size 4 step 1 : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<0x4xf32, strided<[1, 1], offset: 0>>
  return
}

// -----

func.func @unfold_step(%t: !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{step is 0 but must be > 0}}
  %0 = strata.unfold %t dim 0 size 2 step 0 : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<2x2xf32, strided<[1, 1], offset: 0>>
  return
}

// -----

func.func @flip_dim(%t: !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{flip: Dimension out of range (expected to be in range of [-1, 0], but got 1)}}
  %0 = strata.flip %t dims [1] : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[-1], offset: 2>>
  return
}

// -----

func.func @strided_view_oob(%s: !strata.storage<12xf32>) {
  // expected-error @+1 {{requiring a storage size of 16 elements are out of bounds for storage of size 12 elements}}
  %0 = strata.strided_view %s : !strata.storage<12xf32> -> !strata.tensor<4x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @strided_view_negative_oob(%s: !strata.storage<12xf32>) {
  // expected-error @+1 {{tensor layout addresses storage index -1 (sizes [4], strides [-1], offset 2)}}
  %0 = strata.strided_view %s : !strata.storage<12xf32> -> !strata.tensor<4xf32, strided<[-1], offset: 2>>
  return
}

// -----

func.func @strided_view_dtype(%s: !strata.storage<12xf32>) {
  // expected-error @+1 {{'strata.strided_view' op element type f64 differs from its storage root's f32}}
  %0 = strata.strided_view %s : !strata.storage<12xf32> -> !strata.tensor<4xf64, strided<[1], offset: 0>>
  return
}
