// Compute, write and type verifier errors, located at the op.
// RUN: strata-opt %s -split-input-file -verify-diagnostics

func.func @dtype_mismatch(%a: !strata.tensor<3xf32, strided<[1], offset: 0>>, %b: !strata.tensor<3xf64, strided<[1], offset: 0>>) {
  // expected-error @+1 {{add: dtype mismatch: lhs is f32, rhs is f64; cast one operand with strata.cast so both have the same dtype}}
  %0 = strata.add %a, %b : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf64, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @broadcast_mismatch(%a: !strata.tensor<3xf32, strided<[1], offset: 0>>, %b: !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1}}
  %0 = strata.mul %a, %b : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>
  return
}

// -----

func.func @exp_of_int(%a: !strata.tensor<3xi32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{exp expects a floating-point tensor, got i32; cast it first}}
  %0 = strata.exp %a : !strata.tensor<3xi32, strided<[1], offset: 0>> -> !strata.tensor<3xi32, strided<[1], offset: 0>>
  return
}

// -----

func.func @int_div(%a: !strata.tensor<3xi64, strided<[1], offset: 0>>) {
  // expected-error @+1 {{div of i64 tensors is true division in PyTorch; cast the operands to f32 or f64 first}}
  %0 = strata.div %a, %a : !strata.tensor<3xi64, strided<[1], offset: 0>>, !strata.tensor<3xi64, strided<[1], offset: 0>> -> !strata.tensor<3xi64, strided<[1], offset: 0>>
  return
}

// -----

func.func @compute_result_not_fresh(%a: !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{'strata.neg' op inferred type(s)}}
  %0 = strata.neg %a : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 2>>
  return
}

// -----

func.func @where_cond(%a: !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{where: expected condition to be a bool (i1) tensor, got f32}}
  %0 = strata.where %a, %a, %a : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @mean_of_int(%a: !strata.tensor<3xi32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{mean: could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: i32}}
  %0 = strata.mean %a dims [] : !strata.tensor<3xi32, strided<[1], offset: 0>> -> !strata.tensor<i32, strided<[], offset: 0>>
  return
}

// -----

func.func @reduce_dim(%a: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{sum: Dimension out of range (expected to be in range of [-2, 1], but got 2)}}
  %0 = strata.sum %a dims [2] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @reduce_repeat(%a: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{dim 1 appears multiple times in the list of dims}}
  %0 = strata.sum %a dims [1, -1] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @amax_empty(%a: !strata.tensor<0x4xf32, strided<[4, 1], offset: 0>>) {
  // expected-error @+1 {{amax(): Expected reduction dim 0 to have non-zero size.}}
  %0 = strata.amax %a dims [0] : !strata.tensor<0x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @matmul_shapes(%a: !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, %b: !strata.tensor<5x6xf32, strided<[6, 1], offset: 0>>) {
  // expected-error @+1 {{matmul: mat1 and mat2 shapes cannot be multiplied (3x4 and 5x6)}}
  %0 = strata.matmul %a, %b : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<5x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<3x6xf32, strided<[6, 1], offset: 0>>
  return
}

// -----

func.func @cast_shape(%a: !strata.tensor<3xi32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{'strata.cast' op result shape [4] differs from the input's [3]}}
  %0 = strata.cast %a : !strata.tensor<3xi32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @fill_layout() {
  // expected-error @+1 {{'strata.fill' op result must be a fresh contiguous tensor (offset 0, row-major strides), got strides [1, 3] offset 0}}
  %0 = strata.fill 1.0 : !strata.tensor<3x2xf32, strided<[1, 3], offset: 0>>
  return
}

// -----

func.func @arange_rank() {
  // expected-error @+1 {{'strata.arange' op result must be 1-D, got rank 2}}
  %0 = strata.arange start 0.0 step 1.0 : !strata.tensor<3x2xf32, strided<[2, 1], offset: 0>>
  return
}

// -----

func.func @write_overlap(%s: !strata.storage<1xf32>) {
  %one = strata.strided_view %s : !strata.storage<1xf32> -> !strata.tensor<1xf32, strided<[1], offset: 0>>
  %e = strata.expand %one to [4] : !strata.tensor<1xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[0], offset: 0>>
  %v = strata.fill 2.0 : !strata.tensor<f32, strided<[], offset: 0>>
  // expected-error @+1 {{unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.}}
  %s1 = strata.write %v into %e : !strata.tensor<f32, strided<[], offset: 0>>, !strata.tensor<4xf32, strided<[0], offset: 0>> -> !strata.storage<1xf32>
  return
}

// -----

func.func @write_dtype(%s: !strata.storage<4xf32>, %v: !strata.tensor<4xf64, strided<[1], offset: 0>>) {
  %d = strata.strided_view %s : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  // expected-error @+1 {{'strata.write' op dtype mismatch: writing f64 into f32; cast the source with strata.cast first}}
  %s1 = strata.write %v into %d : !strata.tensor<4xf64, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.storage<4xf32>
  return
}

// -----

func.func @write_shape(%s: !strata.storage<4xf32>, %v: !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  %d = strata.strided_view %s : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  // expected-error @+1 {{'strata.write' op source of shape [3] doesn't match the broadcast shape [4] of the destination}}
  %s1 = strata.write %v into %d : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.storage<4xf32>
  return
}

// -----

func.func @write_root(%s: !strata.storage<4xf32>, %v: !strata.tensor<4xf32, strided<[1], offset: 0>>) {
  %d = strata.strided_view %s : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  // expected-error @+1 {{'strata.write' op result must be the new version of the destination's storage root, '!strata.storage<4xf32>', got '!strata.storage<8xf32>'}}
  %s1 = strata.write %v into %d : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.storage<8xf32>
  return
}

// -----

// expected-error @+1 {{tensor of rank 2 needs 2 strides, got 1}}
func.func @type_rank(%a: !strata.tensor<3x4xf32, strided<[1], offset: 0>>) {
  return
}

// -----

// expected-error @+1 {{strata tensors hold f32, f64, i32, i64 or i1, got 'i8'}}
func.func @type_dtype(%a: !strata.tensor<3xi8, strided<[1], offset: 0>>) {
  return
}

// -----

// expected-error @+1 {{tensor offset must be >= 0, got -1}}
func.func @type_offset(%a: !strata.tensor<3xf32, strided<[1], offset: -1>>) {
  return
}

// -----

// expected-error @+1 {{a storage has one element count, as in !strata.storage<12xf32>}}
func.func @storage_rank(%a: !strata.storage<3x4xf32>) {
  return
}

// -----

// expected-error @+1 {{tensor layout addresses storage index -2 (sizes [3], strides [-1], offset 0)}}
func.func @type_negative_index(%a: !strata.tensor<3xf32, strided<[-1], offset: 0>>) {
  return
}

// -----

// expected-error @+1 {{tensor layout strides [4611686018427387904] overflow the index range}}
func.func @type_overflow(%a: !strata.tensor<3xf32, strided<[4611686018427387904], offset: 0>>) {
  return
}

// -----

// A compute result's layout follows its operands as PyTorch's TensorIterator
// lays it out: relu of a transposed tensor keeps its strides [1, 4].
func.func @relu_layout(%a: !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>) {
  // expected-error @+1 {{'strata.relu' op inferred type(s) '!strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>' are incompatible with return type(s) of operation '!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>'}}
  %r = strata.relu %a : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  return
}

// -----

// The first operand leads: (b + a.t()) is row-major like b.
func.func @add_first_operand_leads(%b: !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, %t: !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>) {
  // expected-error @+1 {{'strata.add' op inferred type(s) '!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>' are incompatible with return type(s) of operation '!strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>'}}
  %r = strata.add %b, %t : !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
  return
}

// -----

// clone() keeps the strides of a non-overlapping and dense tensor.
func.func @copy_layout(%a: !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>) {
  // expected-error @+1 {{'strata.copy' op inferred type(s) '!strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>' are incompatible with return type(s) of operation '!strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>'}}
  %r = strata.copy %a : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
  return
}

// -----

// to(dtype) keeps them too (preserve_format).
func.func @cast_layout(%a: !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>) {
  // expected-error @+1 {{'strata.cast' op result must be a fresh tensor with the input's layout (preserve_format): strides [1, 4] offset 0, got strides [3, 1] offset 0}}
  %r = strata.cast %a : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>> -> !strata.tensor<4x3xf64, strided<[3, 1], offset: 0>>
  return
}

// -----

// The dtype rules of StrataUnaryOps.td and the integral binary ops.
func.func @sin_of_int(%a: !strata.tensor<3xi64, strided<[1], offset: 0>>) {
  // expected-error @+1 {{sin expects a floating-point tensor, got i64; cast it first}}
  %0 = strata.sin %a : !strata.tensor<3xi64, strided<[1], offset: 0>> -> !strata.tensor<3xi64, strided<[1], offset: 0>>
  return
}

// -----

func.func @floor_of_bool(%a: !strata.tensor<3xi1, strided<[1], offset: 0>>) {
  // expected-error @+1 {{floor is not defined for bool tensors; cast to an integer or float first}}
  %0 = strata.floor %a : !strata.tensor<3xi1, strided<[1], offset: 0>> -> !strata.tensor<3xi1, strided<[1], offset: 0>>
  return
}

// -----

func.func @bitwise_not_of_float(%a: !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{bitwise_not expects an integer or bool tensor, got f32}}
  %0 = strata.bitwise_not %a : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @bitwise_and_of_float(%a: !strata.tensor<3xf64, strided<[1], offset: 0>>) {
  // expected-error @+1 {{bitwise_and expects integer or bool tensors, got f64}}
  %0 = strata.bitwise_and %a, %a : !strata.tensor<3xf64, strided<[1], offset: 0>>, !strata.tensor<3xf64, strided<[1], offset: 0>> -> !strata.tensor<3xf64, strided<[1], offset: 0>>
  return
}

// -----

func.func @atan2_of_int(%a: !strata.tensor<3xi64, strided<[1], offset: 0>>) {
  // expected-error @+1 {{atan2 expects floating-point tensors, got i64; cast the operands to f32 or f64 first}}
  %0 = strata.atan2 %a, %a : !strata.tensor<3xi64, strided<[1], offset: 0>>, !strata.tensor<3xi64, strided<[1], offset: 0>> -> !strata.tensor<3xi64, strided<[1], offset: 0>>
  return
}

// -----

func.func @hypot_of_int(%a: !strata.tensor<3xi32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{hypot expects floating-point tensors, got i32; cast the operands to f32 or f64 first}}
  %0 = strata.hypot %a, %a : !strata.tensor<3xi32, strided<[1], offset: 0>>, !strata.tensor<3xi32, strided<[1], offset: 0>> -> !strata.tensor<3xi32, strided<[1], offset: 0>>
  return
}

// -----

func.func @logaddexp_of_int(%a: !strata.tensor<3xi64, strided<[1], offset: 0>>) {
  // expected-error @+1 {{logaddexp expects floating-point tensors, got i64; cast the operands to f32 or f64 first}}
  %0 = strata.logaddexp %a, %a : !strata.tensor<3xi64, strided<[1], offset: 0>>, !strata.tensor<3xi64, strided<[1], offset: 0>> -> !strata.tensor<3xi64, strided<[1], offset: 0>>
  return
}

// -----

func.func @fmod_of_bool(%a: !strata.tensor<3xi1, strided<[1], offset: 0>>) {
  // expected-error @+1 {{fmod is not defined for bool tensors; cast to an integer or float first}}
  %0 = strata.fmod %a, %a : !strata.tensor<3xi1, strided<[1], offset: 0>>, !strata.tensor<3xi1, strided<[1], offset: 0>> -> !strata.tensor<3xi1, strided<[1], offset: 0>>
  return
}

// -----

func.func @floor_divide_dtype_mismatch(%a: !strata.tensor<3xi64, strided<[1], offset: 0>>, %b: !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{floor_divide: dtype mismatch: lhs is i64, rhs is f32}}
  %0 = strata.floor_divide %a, %b : !strata.tensor<3xi64, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xi64, strided<[1], offset: 0>>
  return
}

// -----

func.func @lerp_of_int(%a: !strata.tensor<3xi64, strided<[1], offset: 0>>) {
  // expected-error @+1 {{lerp expects floating-point tensors, got i64; cast the operands to f32 or f64 first}}
  %0 = strata.lerp %a, %a, %a : !strata.tensor<3xi64, strided<[1], offset: 0>>, !strata.tensor<3xi64, strided<[1], offset: 0>>, !strata.tensor<3xi64, strided<[1], offset: 0>> -> !strata.tensor<3xi64, strided<[1], offset: 0>>
  return
}

// -----

func.func @lerp_weight_dtype(%a: !strata.tensor<3xf32, strided<[1], offset: 0>>, %w: !strata.tensor<3xf64, strided<[1], offset: 0>>) {
  // expected-error @+1 {{lerp: expected dtype f32 for `weight` but got dtype f64; cast it with strata.cast}}
  %0 = strata.lerp %a, %a, %w : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf64, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @fma_of_int(%a: !strata.tensor<3xi64, strided<[1], offset: 0>>) {
  // expected-error @+1 {{fma expects floating-point tensors, got i64; cast the operands to f32 or f64 first}}
  %0 = strata.fma %a, %a, %a : !strata.tensor<3xi64, strided<[1], offset: 0>>, !strata.tensor<3xi64, strided<[1], offset: 0>>, !strata.tensor<3xi64, strided<[1], offset: 0>> -> !strata.tensor<3xi64, strided<[1], offset: 0>>
  return
}

// -----

func.func @fma_dtypes(%a: !strata.tensor<3xf32, strided<[1], offset: 0>>, %c: !strata.tensor<3xf64, strided<[1], offset: 0>>) {
  // expected-error @+1 {{fma: operands of one dtype expected, got f32 and f64}}
  %0 = strata.fma %a, %a, %c : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf64, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @pow_scalar_exponent_rank(%a: !strata.tensor<3xf32, strided<[1], offset: 0>>, %b: !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  // expected-error @+1 {{pow: a scalar_exponent is 0-d, got rank 1}}
  %p = strata.pow %a, %b {scalar_exponent} : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return
}

// -----

func.func @pow_wide_exponent_needs_scalar(%a: !strata.tensor<3xf32, strided<[1], offset: 0>>, %e: !strata.tensor<f64, strided<[], offset: 0>>) {
  // expected-error @+1 {{pow: dtype mismatch: lhs is f32, rhs is f64}}
  %p = strata.pow %a, %e : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<f64, strided<[], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return
}
