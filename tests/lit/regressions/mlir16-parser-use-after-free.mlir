// RUN: not strata-opt %s 2>&1 | FileCheck %s
// RUN: not strata-opt --split-input-file %s 2>&1 | FileCheck %s
// RUN: not strata-run %s 2>&1 | FileCheck %s
// RUN: not strata-translate --emit-llvm %s 2>&1 | FileCheck %s
// Found by libFuzzer on strata-fuzz-pipeline (tests/fuzz, crash
// crash-ce4e27d5..., heap corruption "malloc(): unaligned tcache chunk"
// many inputs later), minimized. The bug is MLIR 16's parser's: func.func
// bodies share the module's name table, so %21, used in @compute and never
// defined there, stays a placeholder that @write's `%21 = ...` resolves:
// @compute's matmul now uses a value of @write's block. @write then fails to
// parse (it is unterminated), the parser frees its block, and destroying the
// module writes into the freed op (valgrind: Operation::dropAllReferences,
// invalid write of size 8).
// strata's workaround (strata/IR/Parse.h, used by every tool): the text is
// scanned before MLIR parses it and such a forward reference - a use before
// its definition, outside the defining block - is a located error. MLIR's
// parser never sees the input, so nothing is freed twice; check with
// `valgrind --error-exitcode=99 strata-opt <this file>` (clean).
// CHECK: mlir16-parser-use-after-free.mlir:[[@LINE+13]]:27: error: use of value '%21' that is defined later, in another function or block
// CHECK: mlir16-parser-use-after-free.mlir:[[@LINE+21]]:3: note: the later definition of '%21'
// CHECK-NOT: expected operation name in quotes
func.func @views(%s: !strata.storage<12xf32>) {
  %a = strata.strided_view %s : !strata.storage<12xf32> -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> loc("user.cpp":10:3)
  %0 = strata.view %a as [2, 6] : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<2x6xf32, strided<[6, 1], offset: 0>>
}

func.func @compute(%x: !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>,
                   %y: !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>>,
                   %i: !strata.tensor<4xi32, strided<[1], offset: 0>>) {
  %c = strata.copy %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  %0 = strata.neg %x : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
  %28 = strata.matmul %8, %21 : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  %29 = strata.arange start 0.0 step 0.5 : !strata.tensor<6xf64, strided<[1], offset: 0>>
  return
}

func.func @write(%s: !strata.storage<10xf32>) -> !strata.tensor<10xf32, strided<[1], offset: 0>> {
  %x = strata.strided_view %s : !strata.storage<10xf32> -> !strata.tensor<10xf32, strided<[1], offset: 0>>
  %d = strata.slice %x dim 0 start 2 end 5 step 1 : !strata.tensor<10xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 2>>
  %one = strata.fill 1.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %21 = strata.cast %i : !strata.tensor<4xi32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %22 = strata.sum %8 dims [1] keepdim : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>> -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
