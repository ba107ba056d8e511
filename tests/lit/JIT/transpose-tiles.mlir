// The jit engine agrees with the reference evaluator on transposed reads,
// writes and reductions whose sizes give full and partial tiles and blocks
// (Inputs/transpose-tiles.mlir), with arange and seeded random inputs.
// RUN: strata-translate --emit-llvm %S/Inputs/transpose-tiles.mlir | FileCheck %s --check-prefix=IR
// RUN: strata-run %S/Inputs/transpose-tiles.mlir > %t.ref
// RUN: strata-run --engine=jit %S/Inputs/transpose-tiles.mlir > %t.jit
// RUN: %python %S/Inputs/compare.py %t.ref %t.jit | FileCheck %s
// RUN: strata-run --inputs=random --seed=3 %S/Inputs/transpose-tiles.mlir > %t.rref
// RUN: strata-run --engine=jit --inputs=random --seed=3 %S/Inputs/transpose-tiles.mlir > %t.rjit
// RUN: %python %S/Inputs/compare.py %t.rref %t.rjit | FileCheck %s
// CHECK: numbers agree
// The micro-kernel path is really taken: an in-register transpose.
// IR: micro:
// IR: shufflevector <8 x float>
