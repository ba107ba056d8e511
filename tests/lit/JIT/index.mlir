// The jit engine (index_map kernels: an indexed load for gather, an indexed,
// accumulating store for scatter_add) agrees with the reference evaluator
// on every function of Reference/index.mlir, with arange and seeded random
// inputs; and it runs the scatter serially with 4 threads too.
// RUN: strata-run %S/../Reference/index.mlir > %t.ref
// RUN: strata-run --engine=jit %S/../Reference/index.mlir > %t.jit
// RUN: %python %S/Inputs/compare.py %t.ref %t.jit | FileCheck %s
// RUN: strata-run --inputs=random --seed=7 %S/../Reference/index.mlir > %t.rref
// RUN: env STRATA_NUM_THREADS=4 strata-run --engine=jit --inputs=random --seed=7 %S/../Reference/index.mlir > %t.rjit
// RUN: %python %S/Inputs/compare.py %t.rref %t.rjit | FileCheck %s
// CHECK: numbers agree
