// Programs whose fills and aranges the fused kernels compute instead of
// loading (Fuse/generators.mlir): run by JIT/generators.mlir through both
// engines, the reference evaluator running them unfused.

func.func @first_eval() -> !strata.tensor<f32, strided<[], offset: 0>> {
  %0 = strata.arange start 0.0 step 1.0 : !strata.tensor<4096xf32, strided<[1], offset: 0>>
  %two = strata.fill 2.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %1 = strata.mul %0, %two : !strata.tensor<4096xf32, strided<[1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<4096xf32, strided<[1], offset: 0>>
  %one = strata.fill -1000.0 : !strata.tensor<f32, strided<[], offset: 0>>
  %2 = strata.add %1, %one : !strata.tensor<4096xf32, strided<[1], offset: 0>>, !strata.tensor<f32, strided<[], offset: 0>> -> !strata.tensor<4096xf32, strided<[1], offset: 0>>
  %3 = strata.relu %2 : !strata.tensor<4096xf32, strided<[1], offset: 0>> -> !strata.tensor<4096xf32, strided<[1], offset: 0>>
  %4 = strata.sum %3 dims [] : !strata.tensor<4096xf32, strided<[1], offset: 0>> -> !strata.tensor<f32, strided<[], offset: 0>>
  return %4 : !strata.tensor<f32, strided<[], offset: 0>>
}

// Reversed odd elements of an integer arange, viewed [2, 2] and broadcast.
func.func @arange_view(%x: !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>>) -> !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>> {
  %a = strata.arange start -5 step 3 : !strata.tensor<10xi64, strided<[1], offset: 0>>
  %v = strata.strided_view %a : !strata.tensor<10xi64, strided<[1], offset: 0>> -> !strata.tensor<3x2x2xi64, strided<[0, -4, -2], offset: 9>>
  %f = strata.cast %v : !strata.tensor<3x2x2xi64, strided<[0, -4, -2], offset: 9>> -> !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>>
  %s = strata.add %x, %f : !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>>, !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>> -> !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>>
  return %s : !strata.tensor<3x2x2xf32, strided<[4, 2, 1], offset: 0>>
}

// An arange as rows and as columns of a [5, 7] product, summed by rows
// (an indexed kernel reducing its inner dim) and by columns (its outer).
func.func @outer_sums() -> (!strata.tensor<5xf32, strided<[1], offset: 0>>, !strata.tensor<7xf64, strided<[1], offset: 0>>) {
  %a = strata.arange start 0.25 step 0.5 : !strata.tensor<7xf32, strided<[1], offset: 0>>
  %rows = strata.strided_view %a : !strata.tensor<7xf32, strided<[1], offset: 0>> -> !strata.tensor<5x7xf32, strided<[1, 0], offset: 1>>
  %cols = strata.strided_view %a : !strata.tensor<7xf32, strided<[1], offset: 0>> -> !strata.tensor<5x7xf32, strided<[0, 1], offset: 0>>
  %p = strata.mul %rows, %cols : !strata.tensor<5x7xf32, strided<[1, 0], offset: 1>>, !strata.tensor<5x7xf32, strided<[0, 1], offset: 0>> -> !strata.tensor<5x7xf32, strided<[7, 1], offset: 0>>
  %s = strata.sum %p dims [1] : !strata.tensor<5x7xf32, strided<[7, 1], offset: 0>> -> !strata.tensor<5xf32, strided<[1], offset: 0>>
  %b = strata.arange start 3.0 step -1.0 : !strata.tensor<35xf64, strided<[1], offset: 0>>
  %bv = strata.strided_view %b : !strata.tensor<35xf64, strided<[1], offset: 0>> -> !strata.tensor<5x7xf64, strided<[7, 1], offset: 0>>
  %e = strata.exp %bv : !strata.tensor<5x7xf64, strided<[7, 1], offset: 0>> -> !strata.tensor<5x7xf64, strided<[7, 1], offset: 0>>
  %c = strata.sum %e dims [0] : !strata.tensor<5x7xf64, strided<[7, 1], offset: 0>> -> !strata.tensor<7xf64, strided<[1], offset: 0>>
  return %s, %c : !strata.tensor<5xf32, strided<[1], offset: 0>>, !strata.tensor<7xf64, strided<[1], offset: 0>>
}

// Generators also read from memory: returned, a matmul operand, a write's
// destination, a scan's input; a fill of rank 2 read as a constant.
func.func @kept(%x: !strata.tensor<3xf32, strided<[1], offset: 0>>, %m: !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>) -> (!strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.storage<6xf32>, !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<2xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>) {
  %a = strata.arange start 0.0 step 0.5 : !strata.tensor<3xf32, strided<[1], offset: 0>>
  %z = strata.fill 0.0 : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %row = strata.strided_view %z : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 3>>
  %xa = strata.mul %x, %a : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  %w = strata.write %xa into %row : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 3>> -> !strata.storage<6xf32>
  %five = strata.fill 5.0 : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %mf = strata.sub %m, %five : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>> -> !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>
  %mv = strata.matmul %m, %a : !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<2xf32, strided<[1], offset: 0>>
  %cs = strata.scan %a dim 0 "sum" : !strata.tensor<3xf32, strided<[1], offset: 0>> -> !strata.tensor<3xf32, strided<[1], offset: 0>>
  return %a, %w, %mf, %mv, %cs : !strata.tensor<3xf32, strided<[1], offset: 0>>, !strata.storage<6xf32>, !strata.tensor<2x3xf32, strided<[3, 1], offset: 0>>, !strata.tensor<2xf32, strided<[1], offset: 0>>, !strata.tensor<3xf32, strided<[1], offset: 0>>
}

// Operands in different orders: the arange is loaded (transposed tiles).
func.func @transposed(%x: !strata.tensor<32x32xf32, strided<[1, 32], offset: 0>>, %y: !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>) -> !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>> {
  %a = strata.arange start 0.0 step 1.0 : !strata.tensor<32xf32, strided<[1], offset: 0>>
  %t = strata.add %y, %x : !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>, !strata.tensor<32x32xf32, strided<[1, 32], offset: 0>> -> !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>
  %s = strata.add %t, %a : !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>, !strata.tensor<32xf32, strided<[1], offset: 0>> -> !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>
  return %s : !strata.tensor<32x32xf32, strided<[32, 1], offset: 0>>
}
