// RUN: strata-opt %s | FileCheck %s
// RUN: strata-opt --strata-fold-views %s | FileCheck %s --check-prefix=FOLD
// RUN: strata-run %s | FileCheck %s --check-prefix=EXEC
// RUN: strata-run --engine=jit %s | FileCheck %s --check-prefix=EXEC
// Found by tests/fuzz (strata-fuzz-programs seed 1000044, strata-fuzz-views
// seeds 99278 and others): an empty view one step past the end of a flipped
// (negative-stride) dim had a negative storage offset, which the tensor
// type's verifier rejects, so a valid chain of views failed to verify.
// The layout algebra now gives such empty layouts offset 0.

// CHECK-LABEL: func.func @slice_past_flipped_end
// CHECK: strata.slice {{.*}} -> !strata.tensor<4x0xf32, strided<[6, -2], offset: 0>>
// FOLD-LABEL: func.func @slice_past_flipped_end
// FOLD: strata.strided_view {{.*}} -> !strata.tensor<4x0xf32, strided<[6, -2], offset: 0>>
func.func @slice_past_flipped_end(%s: !strata.storage<24xf32>) -> !strata.tensor<4x0xf32, strided<[6, -2], offset: 0>> {
  %a = strata.strided_view %s : !strata.storage<24xf32> -> !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>>
  %f = strata.flip %a dims [1] : !strata.tensor<4x6xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<4x6xf32, strided<[6, -1], offset: 5>>
  %e = strata.slice %f dim 1 start 6 end 2 step 2 : !strata.tensor<4x6xf32, strided<[6, -1], offset: 5>> -> !strata.tensor<4x0xf32, strided<[6, -2], offset: 0>>
  return %e : !strata.tensor<4x0xf32, strided<[6, -2], offset: 0>>
}


// EXEC-LABEL: func @slice_past_flipped_end
// EXEC: result 0: f32 sizes [4, 0] strides [6, -2] offset 0
// EXEC-LABEL: func @narrow_then_flip_empty_windows
// EXEC: result 0: f32 sizes [0, 3] strides [-6, -1] offset 0
// EXEC: result 1: f32 sizes [2, 0] strides [1, -1] offset 0

// CHECK-LABEL: func.func @narrow_then_flip_empty_windows
// CHECK: strata.narrow {{.*}} -> !strata.tensor<0x3xf32, strided<[-6, -1], offset: 0>>
// CHECK: strata.unfold {{.*}} -> !strata.tensor<2x0xf32, strided<[-1, -1], offset: 0>>
// CHECK: strata.flip {{.*}} -> !strata.tensor<2x0xf32, strided<[1, -1], offset: 0>>
func.func @narrow_then_flip_empty_windows(%s: !strata.storage<6xf32>) -> (!strata.tensor<0x3xf32, strided<[-6, -1], offset: 0>>, !strata.tensor<2x0xf32, strided<[1, -1], offset: 0>>) {
  %a = strata.strided_view %s : !strata.storage<6xf32> -> !strata.tensor<1x3xf32, strided<[6, 1], offset: 0>>
  %f = strata.flip %a dims [0, 1] : !strata.tensor<1x3xf32, strided<[6, 1], offset: 0>> -> !strata.tensor<1x3xf32, strided<[-6, -1], offset: 2>>
  %n = strata.narrow %f dim 0 start 1 length 0 : !strata.tensor<1x3xf32, strided<[-6, -1], offset: 2>> -> !strata.tensor<0x3xf32, strided<[-6, -1], offset: 0>>
  %b = strata.strided_view %s : !strata.storage<6xf32> -> !strata.tensor<1xf32, strided<[1], offset: 0>>
  %g = strata.flip %b dims [0] : !strata.tensor<1xf32, strided<[1], offset: 0>> -> !strata.tensor<1xf32, strided<[-1], offset: 0>>
  %u = strata.unfold %g dim 0 size 0 step 1 : !strata.tensor<1xf32, strided<[-1], offset: 0>> -> !strata.tensor<2x0xf32, strided<[-1, -1], offset: 0>>
  %h = strata.flip %u dims [0] : !strata.tensor<2x0xf32, strided<[-1, -1], offset: 0>> -> !strata.tensor<2x0xf32, strided<[1, -1], offset: 0>>
  return %n, %h : !strata.tensor<0x3xf32, strided<[-6, -1], offset: 0>>, !strata.tensor<2x0xf32, strided<[1, -1], offset: 0>>
}
