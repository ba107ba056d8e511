// strata.scan and scan-kernel verifier errors, located at the op.
// RUN: strata-opt %s -split-input-file -verify-diagnostics

func.func @dim_out_of_range(%a: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{scan: Dimension out of range (expected to be in range of [-2, 1], but got 2)}}
  %0 = strata.scan %a dim 2 "sum" : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @scalar_dim(%a: !strata.tensor<f32, strided<[], offset: 0>>) {
  // expected-error @+1 {{scan: Dimension out of range (expected to be in range of [-1, 0], but got 1)}}
  %0 = strata.scan %a dim 1 "sum" : !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  return
}

// -----

func.func @bad_combiner(%a: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{scan: combiner must be "sum" or "prod", got "max"}}
  %0 = strata.scan %a dim 0 "max" : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @bool_input(%a: !strata.tensor<3xi1, strided<[1], offset: 0>>) {
  // expected-error @+1 {{scan: "cumsum_out_cpu" not implemented for 'Bool'; cast to i64 first}}
  %0 = strata.scan %a dim 0 "sum" : !strata.tensor<3xi1, strided<[1], offset: 0>> -> !strata.tensor<3xi1, strided<[1], offset: 0>>
  return
}

// -----

func.func @wrong_result_type(%a: !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>) {
  // expected-error @+1 {{'strata.scan' op inferred type(s) '!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>' are incompatible with return type(s) of operation '!strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>'}}
  %0 = strata.scan %a dim 0 "sum" : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  return
}

// -----

func.func @kernel_dim(%a: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op scan_dim 2 out of range for a 2-d space}}
  %k = strata.kernel space [3, 4] ins(%a : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) attributes {scan_dim = 2 : i64, scan_combiner = "sum"} {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @kernel_combiner(%a: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op a scan kernel needs scan_combiner "sum" or "prod"}}
  %k = strata.kernel space [3, 4] ins(%a : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) attributes {scan_dim = 1 : i64, scan_combiner = "min"} {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @kernel_reduce(%a: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op a scan kernel has one result and no `reduce`, `into`, `result_perms`, `indexed` or `index_map`}}
  %k = strata.kernel space [3, 4] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) attributes {scan_dim = 1 : i64, scan_combiner = "sum"} {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @kernel_flags(%a: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{'strata.kernel' op scan flags need `scan_dim`}}
  %k = strata.kernel space [3, 4] ins(%a : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) attributes {scan_reverse} {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
  return
}
