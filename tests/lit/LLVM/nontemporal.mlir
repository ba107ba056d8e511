// Large outputs written with unit stride by an untiled kernel get aligned
// vector stores with !nontemporal (peel to 32 bytes, vectors, remainder)
// and a fence before the kernel returns; small outputs do not. The jit
// engine still agrees with the reference evaluator on a 1024x1027 output
// (4.2 MB, above KernelToLLVM's 4 MiB threshold) whose misaligned rows take
// the peel and remainder loops, with arange and random inputs.
// RUN: strata-translate --emit-llvm %S/Inputs/nontemporal-big.mlir | FileCheck %s --check-prefix=BIG
// RUN: strata-translate --emit-llvm %s | FileCheck %s --check-prefix=SMALL
// RUN: strata-run %S/Inputs/nontemporal-big.mlir > %t.ref
// RUN: strata-run --engine=jit %S/Inputs/nontemporal-big.mlir > %t.jit
// RUN: %python %S/../JIT/Inputs/compare.py %t.ref %t.jit | FileCheck %s --check-prefix=SAME
// RUN: strata-run --inputs=random --seed=5 %S/Inputs/nontemporal-big.mlir > %t.rref
// RUN: strata-run --engine=jit --inputs=random --seed=5 %S/Inputs/nontemporal-big.mlir > %t.rjit
// RUN: %python %S/../JIT/Inputs/compare.py %t.rref %t.rjit | FileCheck %s --check-prefix=SAME
// BIG-LABEL: define void @strata_kernel
// BIG: fence seq_cst
// BIG-NEXT: ret void
// BIG: store <8 x float> %{{.*}}, ptr %{{.*}}, align 32, !nontemporal
// BIG: !{!"llvm.loop.vectorize.enable", i1 false}
// SMALL-LABEL: define void @strata_kernel
// SMALL-NOT: nontemporal
// SMALL-NOT: fence
// SMALL: ret void
// SAME: numbers agree

func.func @small(%a: !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>, %b: !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>) -> !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>> {
  %s = strata.add %a, %b : !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>, !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>> -> !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>
  return %s : !strata.tensor<64x64xf32, strided<[64, 1], offset: 0>>
}
