// The jit engine agrees with the reference evaluator on every function of
// Reference/scan.mlir, with arange and with seeded random inputs.
// RUN: strata-run %S/../Reference/scan.mlir > %t.ref
// RUN: strata-run --engine=jit %S/../Reference/scan.mlir > %t.jit
// RUN: %python %S/Inputs/compare.py %t.ref %t.jit | FileCheck %s
// RUN: strata-run --inputs=random --seed=7 %S/../Reference/scan.mlir > %t.rref
// RUN: strata-run --engine=jit --inputs=random --seed=7 %S/../Reference/scan.mlir > %t.rjit
// RUN: %python %S/Inputs/compare.py %t.rref %t.rjit | FileCheck %s
// CHECK: numbers agree
