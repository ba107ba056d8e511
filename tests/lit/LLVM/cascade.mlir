// Cascade sums: --strata-widen-sums marks its f32 -> f64 casts
// ({strata.cascade}, kept on the kernel body's arith.extf); a cast the user
// wrote stays unmarked. A marked sum adds f32 values in f32 over bounded
// runs and each run's partial once into the f64 accumulator: runs of 256
// points of the innermost loop (register accumulators), 8-lane f32 tile
// accumulators for transposed tiles, and blocks of 128 rows into an f32
// scratch row for results read-modify-written along the innermost loop.
// The user's f64 sum accumulates every term in f64. Values: the jit engine
// against the reference evaluator, on random inputs across several runs,
// blocks and partial tiles.
// RUN: strata-opt --strata-pipeline=kernels=true %s | FileCheck %s --check-prefix=MARK
// RUN: strata-translate --emit-llvm %s | FileCheck %s
// RUN: env STRATA_DYNAMIC_SHAPES=0 strata-translate --emit-llvm %s \
// RUN:   | FileCheck %s --check-prefix=STATIC
// RUN: strata-run --inputs=random --seed=3 %s > %t.ref
// RUN: strata-run --engine=jit --inputs=random --seed=3 %s > %t.jit
// RUN: %python %S/../JIT/Inputs/compare.py %t.ref %t.jit | FileCheck %s --check-prefix=SAME
// SAME: numbers agree

// MARK-LABEL: func.func @flat
// MARK: arith.extf %{{.*}} {strata.cascade} : f32 to f64
// MARK-LABEL: func.func @user_f64
// MARK-NOT: strata.cascade
// MARK: return

// CHECK-LABEL: ; kernel 0
// CHECK: loop:
// CHECK: add nuw nsw i64 %i, 256
// CHECK: fadd reassoc float
// CHECK: fpext float %{{.*}} to double
// CHECK-NEXT: fadd reassoc double
func.func @flat(%a: !strata.tensor<1000xf32, strided<[1], offset: 0>>) -> !strata.tensor<f32, strided<[], offset: 0>> {
  %s = strata.sum %a dims [0] : !strata.tensor<1000xf32, strided<[1], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  return %s : !strata.tensor<f32, strided<[], offset: 0>>
}

// A dynamic kernel's scratch row is dense over the columns of the call
// (%dims), in an array of the largest row (8192 floats); a static one's is
// the row.
// CHECK-LABEL: ; kernel 2
// CHECK: alloca [8192 x float], align 64
// STATIC-LABEL: ; kernel 2
// STATIC: alloca [100 x float], align 64
// CHECK: add nuw nsw i64 %i, 128
// CHECK: call void @llvm.memset
// CHECK: fadd reassoc float
// CHECK: fpext float %{{.*}} to double
// CHECK-NEXT: fadd reassoc double
func.func @columns(%a: !strata.tensor<300x100xf32, strided<[100, 1], offset: 0>>) -> !strata.tensor<100xf32, strided<[1], offset: 0>> {
  %s = strata.sum %a dims [0] : !strata.tensor<300x100xf32, strided<[100, 1], offset: 0>> -> !strata.tensor<100xf32, strided<[1], offset: 0>>
  return %s : !strata.tensor<100xf32, strided<[1], offset: 0>>
}

// CHECK-LABEL: ; kernel 4
// CHECK: micro:
// CHECK: phi <8 x float>
// CHECK: fadd reassoc <8 x float>
func.func @transposed_product(%a: !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>>, %b: !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>>) -> !strata.tensor<f32, strided<[], offset: 0>> {
  %t = strata.transpose %a dims 0, 1 : !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>> -> !strata.tensor<40x40xf32, strided<[1, 40], offset: 0>>
  %m = strata.mul %b, %t : !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>>, !strata.tensor<40x40xf32, strided<[1, 40], offset: 0>> -> !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>>
  %s = strata.sum %m dims [0, 1] : !strata.tensor<40x40xf32, strided<[40, 1], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  return %s : !strata.tensor<f32, strided<[], offset: 0>>
}

// CHECK-LABEL: ; kernel 6
// CHECK-NOT: alloca
// CHECK-NOT: fadd reassoc float
// CHECK: fadd reassoc double
// CHECK-NOT: fadd reassoc float
func.func @user_f64(%a: !strata.tensor<300x100xf32, strided<[100, 1], offset: 0>>) -> !strata.tensor<100xf64, strided<[1], offset: 0>> {
  %w = strata.cast %a : !strata.tensor<300x100xf32, strided<[100, 1], offset: 0>> -> !strata.tensor<300x100xf64, strided<[100, 1], offset: 0>>
  %s = strata.sum %w dims [0] : !strata.tensor<300x100xf64, strided<[100, 1], offset: 0>> -> !strata.tensor<100xf64, strided<[1], offset: 0>>
  return %s : !strata.tensor<100xf64, strided<[1], offset: 0>>
}
