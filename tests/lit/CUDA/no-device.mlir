// Without a GPU, --engine=cuda fails with the clear error, never a crash.
// (On a GPU machine tests/gpu/run.sh checks it against the CPU instead.)
// RUN: strata-run --engine=cuda %s > %t.out 2>&1 || true
// RUN: %python -c "import sys; t = open(sys.argv[1]).read(); sys.exit(0 if ('no CUDA device: ' in t or 'result 0' in t) else 1)" %t.out
func.func @add(%a: !strata.tensor<4xf32, strided<[1], offset: 0>>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %k = strata.kernel space [4] ins(%a : !strata.tensor<4xf32, strided<[1], offset: 0>>) {
  ^bb0(%x: f32):
    %s = arith.addf %x, %x : f32
    strata.yield %s : f32
  } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %k : !strata.tensor<4xf32, strided<[1], offset: 0>>
}
