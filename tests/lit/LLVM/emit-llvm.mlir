// RUN: strata-translate --emit-llvm %s | FileCheck %s
// RUN: strata-translate --emit-llvm --O3 %s | FileCheck %s --check-prefix=OPT

// The ABI, constant strides and offset, the reduction's register
// accumulator with a reassociable add.
// CHECK: define void @strata_kernel(ptr %0, i64 %1, i64 %2)
// CHECK: getelementptr float, ptr %{{.*}}, i64 5
// CHECK: mul i64 %i{{.*}}, 16
// CHECK: fadd reassoc float
// OPT: define void @strata_kernel
// OPT: fadd reassoc <{{[0-9]+}} x float>
func.func @rowsum(%a: !strata.tensor<8x16xf32, strided<[16, 1], offset: 5>>) -> !strata.tensor<8xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [8, 16] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<8x16xf32, strided<[16, 1], offset: 5>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<8xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<8xf32, strided<[1], offset: 0>>
}
