// RUN: strata-translate --emit-llvm %s | FileCheck %s
// RUN: strata-translate --emit-llvm --O3 %s | FileCheck %s --check-prefix=OPT
// RUN: env STRATA_DYNAMIC_SHAPES=0 strata-translate --emit-llvm %s \
// RUN:   | FileCheck %s --check-prefix=STATIC

// The ABI; a dynamic kernel (its plan is plain) reads the inner trip count
// (%dims[1]), the row stride (%dims[2]: operand 0's stride along loop 0)
// and both offsets (%dims[6], %dims[7]) once, at entry; the result's
// strides (1 and 0) stay constants. The reduction's register accumulator
// with a reassociable add.
// CHECK: define void @strata_kernel(ptr %0, i64 %1, i64 %2, ptr %3)
// CHECK: %[[SZ:.*]] = load i64, ptr %{{.*}}, align 4, !invariant.load
// CHECK: getelementptr inbounds i64, ptr %3, i64 2
// CHECK: %[[ST:.*]] = load i64
// CHECK: getelementptr inbounds i64, ptr %3, i64 6
// CHECK: %[[OFF:.*]] = load i64
// CHECK: getelementptr inbounds i64, ptr %3, i64 7
// CHECK: getelementptr float, ptr %{{.*}}, i64 %[[OFF]]
// CHECK: mul i64 %i, %[[ST]]
// CHECK: icmp slt i64 0, %[[SZ]]
// CHECK: fadd reassoc float
// OPT: define void @strata_kernel
// OPT: fadd reassoc <{{[0-9]+}} x float>
// Static (STRATA_DYNAMIC_SHAPES=0): constant strides, sizes and offset,
// %dims unread.
// STATIC: define void @strata_kernel(ptr %0, i64 %1, i64 %2, ptr %3)
// STATIC-NOT: ptr %3
// STATIC: getelementptr float, ptr %{{.*}}, i64 5
// STATIC: mul i64 %i{{.*}}, 16
// STATIC: icmp slt i64 %{{.*}}, 16
func.func @rowsum(%a: !strata.tensor<8x16xf32, strided<[16, 1], offset: 5>>) -> !strata.tensor<8xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [8, 16] reduce [1] combiners ["sum"] ins(%a : !strata.tensor<8x16xf32, strided<[16, 1], offset: 5>>) {
  ^bb0(%x: f32):
    strata.yield %x : f32
  } -> !strata.tensor<8xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<8xf32, strided<[1], offset: 0>>
}
