// strata-run's errors: bad options, IR that doesn't parse or verify, and
// functions the reference evaluator must refuse with a located diagnostic
// (never a crash). Every failure exits with status 1.

// RUN: not strata-run --engine=fast %s 2>&1 | FileCheck %s --check-prefix=ENGINE
// ENGINE: strata-run: unknown --engine=fast; the available engines are 'reference' and 'jit'

// RUN: not strata-run --inputs=zeros %s 2>&1 | FileCheck %s --check-prefix=INPUTS
// INPUTS: Cannot find option named 'zeros'!

// RUN: not strata-run --entry=nosuch %s 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: strata-run: no function named 'nosuch' in the input

// RUN: not strata-run %s.missing 2>&1 | FileCheck %s --check-prefix=FILE
// FILE: strata-run: cannot open input file '{{.*}}errors.mlir.missing'

// RUN: echo "func.func @f(" | not strata-run - 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: <stdin>:1:14: error:

// RUN: not strata-run %S/Inputs/verify-error.mlir 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: verify-error.mlir:4:8: error: 'strata.select' op inferred type(s)
// VERIFY-NOT: func @bad

// A layout that addresses storage before its start (negative stride,
// offset too small) is now rejected by the tensor type's verifier:
// see invalid/compute.mlir @type_negative_index.

// RUN: not strata-run --entry=non_strata_argument %s 2>&1 | FileCheck %s --check-prefix=ARG
// ARG: errors.mlir:[[@LINE+1]]:1: error: strata-run: cannot make an input for argument 1 of type 'f32': expected a strata storage or tensor
func.func @non_strata_argument(%s: !strata.storage<2xf32>, %x: f32) -> f32 {
  return %x : f32
}

// RUN: not strata-run --entry=unsupported_op %s 2>&1 | FileCheck %s --check-prefix=OP
// OP: errors.mlir:[[@LINE+2]]:8: error: reference evaluator: unsupported op 'arith.constant'
func.func @unsupported_op() -> f32 {
  %c = arith.constant 1.0 : f32
  return %c : f32
}

// RUN: not strata-run --entry=huge_fill %s 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: errors.mlir:[[@LINE+2]]:8: error: reference evaluator: a tensor of shape [100000, 100000] has more elements than its limit of 67108864
func.func @huge_fill() -> !strata.tensor<100000x100000xf32, strided<[100000, 1], offset: 0>> {
  %f = strata.fill 1.0 : !strata.tensor<100000x100000xf32, strided<[100000, 1], offset: 0>>
  return %f : !strata.tensor<100000x100000xf32, strided<[100000, 1], offset: 0>>
}

// RUN: not strata-run --entry=huge_storage_argument %s 2>&1 | FileCheck %s --check-prefix=HUGEARG
// HUGEARG: errors.mlir:[[@LINE+1]]:1: error: strata-run: cannot make an input for argument 0 of type '!strata.storage<1000000000xf32>': its storage of 1000000000 elements is more than the limit of 67108864
func.func @huge_storage_argument(%s: !strata.storage<1000000000xf32>) {
  return
}

// RUN: not strata-run --entry=huge_expanded_argument --print-inputs %s 2>&1 | FileCheck %s --check-prefix=EXPANDED
// EXPANDED: errors.mlir:[[@LINE+1]]:1: error: strata-run: cannot make an input for argument 0 of type {{.*}}: its 10000000000 elements are more than the limit of 67108864
func.func @huge_expanded_argument(%t: !strata.tensor<100000x100000xf32, strided<[0, 0], offset: 0>>) {
  return
}

// A function that works, after the failing ones: strata-run stops at the
// first failure when it runs the whole file.
// RUN: strata-run --entry=fine %s | FileCheck %s --check-prefix=FINE --match-full-lines
// FINE: func @fine
// FINE-NEXT: result 0: i64 sizes [2] strides [1] offset 0
// FINE-NEXT:   [1, 2]
// RUN: not strata-run %s 2>&1 | FileCheck %s --check-prefix=ALL
// ALL: func @non_strata_argument
// ALL-NEXT: {{.*}}error: strata-run: cannot make an input for argument 1
// ALL-NOT: func @fine
func.func @fine() -> !strata.tensor<2xi64, strided<[1], offset: 0>> {
  %a = strata.arange start 1.0 step 1.0 : !strata.tensor<2xi64, strided<[1], offset: 0>>
  return %a : !strata.tensor<2xi64, strided<[1], offset: 0>>
}
