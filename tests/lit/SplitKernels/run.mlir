// The pieces compute what the whole kernel did: a kernel `into` a
// destination, `indexed`, run through the JIT whole and cut into pieces of
// two ops (a = [0, 1, 2, 3], s = [0 .. 7]: the destination's elements
// 1, 3, 5, 7 get 2a*a + i, the closed form written below).
// RUN: strata-opt %s --strata-split-kernels=max-ops=2 | FileCheck %s --check-prefix=IR
// RUN: strata-opt %s --strata-split-kernels=max-ops=2 | strata-run --engine=jit - | FileCheck %s
// RUN: strata-opt %s --strata-split-kernels=max-inputs=1 | strata-run --engine=jit - | FileCheck %s
// RUN: strata-run --engine=jit %s | FileCheck %s

// IR: strata.kernel space [4] ins(%arg0
// IR-NOT: into
// IR: strata.kernel space [4] indexed ins({{.*}}) into(
// CHECK: result 0: storage f32 size 8
// CHECK-NEXT: [0, 0, 2, 3, 4, 10, 6, 21]
func.func @into(%a: !strata.tensor<4xf32, strided<[1], offset: 0>>, %s: !strata.storage<8xf32>) -> !strata.storage<8xf32> {
  %d = strata.strided_view %s : !strata.storage<8xf32> -> !strata.tensor<4xf32, strided<[2], offset: 1>>
  %k = strata.kernel space [4] indexed ins(%a : !strata.tensor<4xf32, strided<[1], offset: 0>>) into(%d : !strata.tensor<4xf32, strided<[2], offset: 1>>) {
  ^bb0(%x: f32, %i: i64):
    %0 = arith.addf %x, %x : f32
    %1 = arith.mulf %0, %x : f32
    %f = arith.sitofp %i : i64 to f32
    %2 = arith.addf %1, %f : f32
    strata.yield %2 : f32
  } -> !strata.storage<8xf32>
  return %k : !strata.storage<8xf32>
}
