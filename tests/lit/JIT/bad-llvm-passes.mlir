// An STRATA_LLVM_PASSES that does not parse is an error naming the
// variable and its value (not an abort of the process), and nothing is
// cached for it.
// RUN: env STRATA_CACHE_DIR= STRATA_LLVM_PASSES='function(no-such-pass)' not strata-run --engine=jit %s 2>&1 | FileCheck %s
// CHECK: STRATA_LLVM_PASSES='function(no-such-pass)' is not an LLVM pass pipeline
// CHECK-SAME: unset it

func.func @twice(%s: !strata.storage<4xf32>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %x = strata.strided_view %s : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %y = strata.add %x, %x : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %y : !strata.tensor<4xf32, strided<[1], offset: 0>>
}
