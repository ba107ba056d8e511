// strata.kernel verifier errors, located at the op.
// RUN: strata-opt %s -split-input-file -verify-diagnostics

func.func @input_not_space(%a: !strata.tensor<4xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op input #0 has shape [4], expected the space [2, 2] (broadcast it with strata.strided_view)}}
  %k = strata.kernel space [2, 2] ins(%a : !strata.tensor<4xf32, strided<[1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<2x2xf32, strided<[2, 1], offset: 0>>
  return
}

// -----

func.func @bad_combiner(%a: !strata.tensor<4xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op combiner must be sum, prod, max, min or none, got mul}}
  %k = strata.kernel space [4] reduce [0] combiners ["mul"] ins(%a : !strata.tensor<4xf32, strided<[1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<f32, strided<[], offset: 0>>
  return
}

// -----

// A `none` result holds every point of the space.
func.func @none_result_too_small(%a: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op result #1 has 4 elements, the space has 12}}
  %k:2 = strata.kernel space [4, 3] reduce [1] combiners ["sum", "none"] ins(%a : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x, %x : f32, f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @reduced_result_too_big(%a: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op result #0 has 12 elements, the space (without reduced dims) has 4}}
  %k = strata.kernel space [4, 3] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  return
}

// -----

func.func @perm_not_permutation(%a: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op `result_perms` of result #0 is [1, 1], not a permutation of the space dims}}
  %k = strata.kernel space [4, 3] ins(%a : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) attributes {result_perms = array<i64: 1, 1>} {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @perm_wrong_length(%a: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op `result_perms` needs 2 dims per result (1 results), got 3}}
  %k = strata.kernel space [4, 3] ins(%a : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>) attributes {result_perms = array<i64: 1, 0, 2>} {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @perm_with_into(%a: !strata.tensor<4xf32, strided<[1], offset: 0>>, %d: !strata.tensor<4xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op `result_perms` needs a kernel without `into`}}
  %k = strata.kernel space [4] ins(%a : !strata.tensor<4xf32, strided<[1], offset: 0>>) into(%d : !strata.tensor<4xf32, strided<[1], offset: 0>>) attributes {result_perms = array<i64: 0>} {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.storage<4xf32>
  return
}

// -----

// A kernel body is isolated: values from outside must be inputs.
func.func @body_uses_outer_value(%a: !strata.tensor<4xf32, strided<[1], offset: 0>>, %c: f32) {
  // expected-note @+1 {{required by region isolation constraints}}
  %k = strata.kernel space [4] ins(%a : !strata.tensor<4xf32, strided<[1], offset: 0>>) {
  ^bb0(%x: f32):
    // expected-error @+1 {{using value defined outside the region}}
    %y = arith.addf %x, %c : f32
    strata.yield %y : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return
}
