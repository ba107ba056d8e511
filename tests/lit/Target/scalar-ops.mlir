// Every op of codegen/include/strata/Target/ScalarOps.def through both
// code generators (a unit test, strata-unit-scalar-ops, fails when an op of
// the table is missing here): the C math function the table names for it
// (its `f` form for f32 in CUDA C; in LLVM IR the intrinsic where LLVM has
// one, else that libm call), wrapping integer arithmetic, NaN-propagating
// float max/min, unsigned max/min, and the casts.
// RUN: strata-translate --emit-cuda %s | FileCheck %s --check-prefix=CUDA
// RUN: strata-translate --emit-llvm %s | FileCheck %s --check-prefix=LLVM

// CUDA-LABEL: // kernel 0
// CUDA: const float [[C:v[0-9]+]] = 0.5f;
// CUDA: = {{.*}} + [[C]];
// CUDA: = {{.*}} - {{.*}};
// CUDA: = {{.*}} * {{.*}};
// CUDA: = {{.*}} / {{.*}};
// CUDA: = -{{.*}};
// CUDA: = fmodf(
// CUDA: = strata_max(
// CUDA: = strata_min(
// CUDA: = expf(
// CUDA: = exp2f(
// CUDA: = expm1f(
// CUDA: = logf(
// CUDA: = log2f(
// CUDA: = log10f(
// CUDA: = log1pf(
// CUDA: = sqrtf(
// CUDA: = (float)1 / sqrtf(
// CUDA: = sinf(
// CUDA: = cosf(
// CUDA: = tanf(
// CUDA: = atanf(
// CUDA: = tanhf(
// CUDA: = erff(
// CUDA: = floorf(
// CUDA: = ceilf(
// CUDA: = truncf(
// CUDA: = rintf(
// CUDA: = fabsf(
// CUDA: = atan2f(
// CUDA: = copysignf(
// CUDA: = powf(
// CUDA: = fmaf(
// CUDA: const bool [[LT:v[0-9]+]] = {{.*}} < {{.*}};
// CUDA: = [[LT]] ? {{.*}} : {{.*}};
// LLVM-LABEL: ; kernel 0
// LLVM: fadd float
// LLVM: fsub float
// LLVM: fmul float
// LLVM: fdiv float
// LLVM: fneg float
// LLVM: frem float
// LLVM: fcmp ogt float
// LLVM: fcmp uno float
// LLVM: fcmp olt float
// LLVM: fcmp uno float
// LLVM: call float @llvm.exp.f32(
// LLVM: call float @llvm.exp2.f32(
// LLVM: call float @expm1f(
// LLVM: call float @llvm.log.f32(
// LLVM: call float @llvm.log2.f32(
// LLVM: call float @llvm.log10.f32(
// LLVM: call float @log1pf(
// LLVM: call float @llvm.sqrt.f32(
// LLVM: [[S:%[0-9]+]] = call float @llvm.sqrt.f32(
// LLVM: fdiv float 1.000000e+00, [[S]]
// LLVM: call float @llvm.sin.f32(
// LLVM: call float @llvm.cos.f32(
// LLVM: call float @tanf(
// LLVM: call float @atanf(
// LLVM: call float @tanhf(
// LLVM: call float @erff(
// LLVM: call float @llvm.floor.f32(
// LLVM: call float @llvm.ceil.f32(
// LLVM: call float @llvm.trunc.f32(
// LLVM: call float @llvm.roundeven.f32(
// LLVM: call float @llvm.fabs.f32(
// LLVM: call float @atan2f(
// LLVM: call float @llvm.copysign.f32(
// LLVM: call float @llvm.pow.f32(
// LLVM: call float @llvm.fma.f32(
// LLVM: [[LT:%[0-9]+]] = fcmp olt float
// LLVM: select i1 [[LT]], float
func.func @float_ops(%a0: !strata.tensor<8xf32, strided<[1], offset: 0>>, %a1: !strata.tensor<8xf32, strided<[1], offset: 0>>, %a2: !strata.tensor<8xf32, strided<[1], offset: 0>>) -> !strata.tensor<8xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [8] ins(%a0, %a1, %a2 : !strata.tensor<8xf32, strided<[1], offset: 0>>, !strata.tensor<8xf32, strided<[1], offset: 0>>, !strata.tensor<8xf32, strided<[1], offset: 0>>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %c = arith.constant 5.000000e-01 : f32
    %0 = arith.addf %x, %c : f32
    %1 = arith.subf %0, %y : f32
    %2 = arith.mulf %1, %z : f32
    %3 = arith.divf %2, %y : f32
    %4 = arith.negf %3 : f32
    %5 = arith.remf %4, %z : f32
    %6 = arith.maxf %5, %x : f32
    %7 = arith.minf %6, %y : f32
    %8 = math.exp %7 : f32
    %9 = math.exp2 %8 : f32
    %10 = math.expm1 %9 : f32
    %11 = math.log %10 : f32
    %12 = math.log2 %11 : f32
    %13 = math.log10 %12 : f32
    %14 = math.log1p %13 : f32
    %15 = math.sqrt %14 : f32
    %16 = math.rsqrt %15 : f32
    %17 = math.sin %16 : f32
    %18 = math.cos %17 : f32
    %19 = math.tan %18 : f32
    %20 = math.atan %19 : f32
    %21 = math.tanh %20 : f32
    %22 = math.erf %21 : f32
    %23 = math.floor %22 : f32
    %24 = math.ceil %23 : f32
    %25 = math.trunc %24 : f32
    %26 = math.roundeven %25 : f32
    %27 = math.absf %26 : f32
    %28 = math.atan2 %27, %y : f32
    %29 = math.copysign %28, %y : f32
    %30 = math.powf %29, %y : f32
    %31 = math.fma %30, %y, %z : f32
    %32 = arith.cmpf olt, %31, %x : f32
    %33 = arith.select %32, %31, %z : f32
    strata.yield %33 : f32
  } -> !strata.tensor<8xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<8xf32, strided<[1], offset: 0>>
}


// CUDA-LABEL: // kernel 1
// CUDA: const int [[C:v[0-9]+]] = 3;
// CUDA: = (int)((unsigned){{.*}} + (unsigned)[[C]]);
// CUDA: = (int)((unsigned){{.*}} - (unsigned){{.*}});
// CUDA: = (int)((unsigned){{.*}} * (unsigned){{.*}});
// CUDA: = {{.*}} / [[C]];
// CUDA: = {{.*}} % [[C]];
// CUDA: = {{.*}} & {{.*}};
// CUDA: = {{.*}} | {{.*}};
// CUDA: = {{.*}} ^ {{.*}};
// CUDA: = strata_max(
// CUDA: = strata_min(
// CUDA: = (int)strata_max((unsigned){{.*}}, (unsigned){{.*}});
// CUDA: = (int)strata_min((unsigned){{.*}}, (unsigned){{.*}});
// CUDA: = [[A:v[0-9]+]] < 0 ? (int)((unsigned)0 - (unsigned)[[A]]) : [[A]];
// CUDA: = strata_ipow(
// CUDA: const bool [[GT:v[0-9]+]] = {{.*}} > {{.*}};
// CUDA: = [[GT]] ? {{.*}} : {{.*}};
// CUDA: const long long {{v[0-9]+}} = (long long){{v[0-9]+}};
// CUDA: const long long {{v[0-9]+}} = (long long)(bool)(
// CUDA: = (long long)((unsigned long long){{.*}} + (unsigned long long){{.*}});
// CUDA: const int {{v[0-9]+}} = (int){{v[0-9]+}};
// CUDA: const int {{v[0-9]+}} = (int)a3
// LLVM-LABEL: ; kernel 1
// LLVM: add i32 %{{.*}}, 3
// LLVM: sub i32
// LLVM: mul i32
// LLVM: sdiv i32 %{{.*}}, 3
// LLVM: srem i32 %{{.*}}, 3
// LLVM: and i32
// LLVM: or i32
// LLVM: xor i32
// LLVM: icmp sgt i32
// LLVM: icmp slt i32
// LLVM: icmp ugt i32
// LLVM: icmp ult i32
// LLVM: sub i32 0,
// LLVM: icmp slt i32 %{{.*}}, 0
// LLVM: icmp sgt i32
// LLVM: sext i32 %{{.*}} to i64
// LLVM: zext i1 %{{.*}} to i64
// LLVM: add i64
// LLVM: trunc i64 %{{.*}} to i32
// LLVM: fptosi float %{{.*}} to i32
func.func @integer_ops(%a0: !strata.tensor<8xi32, strided<[1], offset: 0>>, %a1: !strata.tensor<8xi32, strided<[1], offset: 0>>, %a2: !strata.tensor<8xi1, strided<[1], offset: 0>>, %a3: !strata.tensor<8xf32, strided<[1], offset: 0>>) -> !strata.tensor<8xi32, strided<[1], offset: 0>> {
  %k = strata.kernel space [8] ins(%a0, %a1, %a2, %a3 : !strata.tensor<8xi32, strided<[1], offset: 0>>, !strata.tensor<8xi32, strided<[1], offset: 0>>, !strata.tensor<8xi1, strided<[1], offset: 0>>, !strata.tensor<8xf32, strided<[1], offset: 0>>) {
  ^bb0(%i: i32, %j: i32, %b: i1, %x: f32):
    %c = arith.constant 3 : i32
    %0 = arith.addi %i, %c : i32
    %1 = arith.subi %0, %j : i32
    %2 = arith.muli %1, %j : i32
    %3 = arith.divsi %2, %c : i32
    %4 = arith.remsi %3, %c : i32
    %5 = arith.andi %4, %i : i32
    %6 = arith.ori %5, %j : i32
    %7 = arith.xori %6, %i : i32
    %8 = arith.maxsi %7, %j : i32
    %9 = arith.minsi %8, %i : i32
    %10 = arith.maxui %9, %j : i32
    %11 = arith.minui %10, %i : i32
    %12 = math.absi %11 : i32
    %13 = math.ipowi %12, %j : i32
    %14 = arith.cmpi sgt, %13, %i : i32
    %15 = arith.select %14, %13, %j : i32
    %16 = arith.extsi %15 : i32 to i64
    %17 = arith.extui %b : i1 to i64
    %18 = arith.addi %16, %17 : i64
    %19 = arith.trunci %18 : i64 to i32
    %20 = arith.fptosi %x : f32 to i32
    %21 = arith.addi %19, %20 : i32
    strata.yield %21 : i32
  } -> !strata.tensor<8xi32, strided<[1], offset: 0>>
  return %k : !strata.tensor<8xi32, strided<[1], offset: 0>>
}

// CUDA-LABEL: // kernel 2
// CUDA: const double {{v[0-9]+}} = (double)a0
// CUDA: const double {{v[0-9]+}} = (double)a1
// CUDA: const double {{v[0-9]+}} = (double)(bool)(
// CUDA: = exp(
// CUDA: = tanh(
// CUDA: const float {{v[0-9]+}} = (float){{v[0-9]+}};
// LLVM-LABEL: ; kernel 2
// LLVM: fpext float %{{.*}} to double
// LLVM: sitofp i32 %{{.*}} to double
// LLVM: uitofp i1 %{{.*}} to double
// LLVM: call double @llvm.exp.f64(
// LLVM: call double @tanh(
// LLVM: fptrunc double %{{.*}} to float
func.func @casts_and_f64(%a0: !strata.tensor<8xf32, strided<[1], offset: 0>>, %a1: !strata.tensor<8xi32, strided<[1], offset: 0>>, %a2: !strata.tensor<8xi1, strided<[1], offset: 0>>) -> !strata.tensor<8xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [8] ins(%a0, %a1, %a2 : !strata.tensor<8xf32, strided<[1], offset: 0>>, !strata.tensor<8xi32, strided<[1], offset: 0>>, !strata.tensor<8xi1, strided<[1], offset: 0>>) {
  ^bb0(%x: f32, %i: i32, %b: i1):
    %0 = arith.extf %x : f32 to f64
    %1 = arith.sitofp %i : i32 to f64
    %2 = arith.uitofp %b : i1 to f64
    %3 = arith.addf %0, %1 : f64
    %4 = arith.addf %3, %2 : f64
    %5 = math.exp %4 : f64
    %6 = math.tanh %5 : f64
    %7 = arith.truncf %6 : f64 to f32
    strata.yield %7 : f32
  } -> !strata.tensor<8xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<8xf32, strided<[1], offset: 0>>
}
