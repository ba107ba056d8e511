// The jit engine agrees with the reference evaluator on every function of
// Reference/unary.mlir (whose values are PyTorch's): each unary op of
// StrataUnaryOps.td and the bitwise ops, arange and seeded random inputs.
// RUN: strata-run %S/../Reference/unary.mlir > %t.ref
// RUN: strata-run --engine=jit %S/../Reference/unary.mlir > %t.jit
// RUN: %python %S/Inputs/compare.py %t.ref %t.jit | FileCheck %s
// RUN: strata-run --inputs=random --seed=11 %S/../Reference/unary.mlir > %t.rref
// RUN: strata-run --engine=jit --inputs=random --seed=11 %S/../Reference/unary.mlir > %t.rjit
// RUN: %python %S/Inputs/compare.py %t.rref %t.rjit | FileCheck %s
// CHECK: numbers agree
