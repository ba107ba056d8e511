// The jit engine agrees with the reference evaluator on every function of
// Reference/siblings.mlir (kernels merged by sibling fusion: results in
// their own orders, reductions with elementwise results), with arange and
// with seeded random inputs.
// RUN: strata-run %S/../Reference/siblings.mlir > %t.ref
// RUN: strata-run --engine=jit %S/../Reference/siblings.mlir > %t.jit
// RUN: %python %S/Inputs/compare.py %t.ref %t.jit | FileCheck %s
// RUN: strata-run --inputs=random --seed=11 %S/../Reference/siblings.mlir > %t.rref
// RUN: strata-run --engine=jit --inputs=random --seed=11 %S/../Reference/siblings.mlir > %t.rjit
// RUN: %python %S/Inputs/compare.py %t.rref %t.rjit | FileCheck %s
// CHECK: numbers agree
