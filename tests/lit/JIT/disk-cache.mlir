// The disk kernel cache across processes: a second process compiles
// nothing, and a corrupted entry is recompiled (never trusted) with the
// same results.
// RUN: rm -rf %t.cache
// RUN: env STRATA_CACHE_DIR=%t.cache STRATA_DEBUG=1 strata-run --engine=jit %s 2>%t.cold > %t.out1
// RUN: FileCheck %s --check-prefix=COLD < %t.cold
// RUN: env STRATA_CACHE_DIR=%t.cache STRATA_DEBUG=1 strata-run --engine=jit %s 2>%t.warm > %t.out2
// RUN: FileCheck %s --check-prefix=WARM --allow-empty < %t.warm
// RUN: diff %t.out1 %t.out2
// RUN: %python -c "import glob; [open(f, 'wb').write(b'corrupt') for f in glob.glob(r'%t.cache/*.sko')]"
// RUN: env STRATA_CACHE_DIR=%t.cache STRATA_DEBUG=1 strata-run --engine=jit %s 2>%t.corrupt > %t.out3
// RUN: FileCheck %s --check-prefix=COLD < %t.corrupt
// RUN: diff %t.out1 %t.out3
// RUN: FileCheck %s --check-prefix=VALUES < %t.out3

// COLD: strata-jit: compiled kernel
// WARM-NOT: compiled kernel
// VALUES: result 0: f32 sizes [4] strides [1] offset 0
// VALUES-NEXT: [0, 3, 6, 9]

func.func @twice_plus(%s: !strata.storage<4xf32>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %x = strata.strided_view %s : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %y = strata.add %x, %x : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %z = strata.add %y, %x : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %z : !strata.tensor<4xf32, strided<[1], offset: 0>>
}
