// The jit engine agrees with the reference evaluator on every function of
// Reference/binary.mlir (whose values are PyTorch's): atan2, fmod,
// remainder, floor_divide (integer divisors 0 and -1 among the random
// inputs: never a trap) and lerp, arange and seeded random inputs.
// RUN: strata-run %S/../Reference/binary.mlir > %t.ref
// RUN: strata-run --engine=jit %S/../Reference/binary.mlir > %t.jit
// RUN: %python %S/Inputs/compare.py %t.ref %t.jit | FileCheck %s
// RUN: strata-run --inputs=random --seed=11 %S/../Reference/binary.mlir > %t.rref
// RUN: strata-run --engine=jit --inputs=random --seed=11 %S/../Reference/binary.mlir > %t.rjit
// RUN: %python %S/Inputs/compare.py %t.rref %t.rjit | FileCheck %s
// CHECK: numbers agree
