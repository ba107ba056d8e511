// The jit engine, whose kernels compute fills and aranges instead of
// loading them (Fuse/generators.mlir), agrees with the reference evaluator
// on every function of Inputs/generators.mlir, with arange and with seeded
// random inputs.
// RUN: strata-run %S/Inputs/generators.mlir > %t.ref
// RUN: strata-run --engine=jit %S/Inputs/generators.mlir > %t.jit
// RUN: %python %S/Inputs/compare.py %t.ref %t.jit | FileCheck %s
// RUN: strata-run --inputs=random --seed=7 %S/Inputs/generators.mlir > %t.rref
// RUN: strata-run --engine=jit --inputs=random --seed=7 %S/Inputs/generators.mlir > %t.rjit
// RUN: %python %S/Inputs/compare.py %t.rref %t.rjit | FileCheck %s
// CHECK: numbers agree
