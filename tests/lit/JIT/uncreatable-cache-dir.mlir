// A kernel disk cache directory that cannot be created (under a regular
// file, so that running as root does not matter): every process runs
// without the disk cache, prints one warning naming the directory and the
// reason, and computes the same results.
// RUN: rm -rf %t.file && echo not-a-directory > %t.file
// RUN: env STRATA_CACHE_DIR=%t.file/cache STRATA_DEBUG=1 strata-run --engine=jit %s 2>%t.err1 > %t.out1
// RUN: FileCheck %s --check-prefix=WARN -DDIR=%t.file/cache --implicit-check-not=warning < %t.err1
// RUN: env STRATA_CACHE_DIR=%t.file/cache STRATA_DEBUG=1 strata-run --engine=jit %s 2>%t.err2 > %t.out2
// RUN: FileCheck %s --check-prefix=WARN -DDIR=%t.file/cache --implicit-check-not=warning < %t.err2
// RUN: diff %t.out1 %t.out2
// RUN: FileCheck %s --check-prefix=VALUES < %t.out1
// RUN: env STRATA_CACHE_DIR=/dev/null/strata-cache strata-run --engine=jit %s 2>&1 >/dev/null | FileCheck %s --check-prefix=DEVNULL --implicit-check-not=warning

// WARN: strata: warning: kernel disk cache disabled: cannot create the directory '[[DIR]]': Not a directory
// WARN: strata-jit: compiled kernel
// WARN: strata-jit: compiled kernel
// DEVNULL: warning: kernel disk cache disabled: cannot create the directory '/dev/null/strata-cache'
// VALUES: result 0: f32 sizes [4] strides [1] offset 0
// VALUES-NEXT: [0, 3, 6, 9]
// VALUES: result 0: f32 sizes [4] strides [1] offset 0
// VALUES-NEXT: [0, 2, 6, 12]

func.func @twice_plus(%s: !strata.storage<4xf32>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %x = strata.strided_view %s : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %y = strata.add %x, %x : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %z = strata.add %y, %x : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %z : !strata.tensor<4xf32, strided<[1], offset: 0>>
}

func.func @square_plus(%s: !strata.storage<4xf32>) -> !strata.tensor<4xf32, strided<[1], offset: 0>> {
  %x = strata.strided_view %s : !strata.storage<4xf32> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %y = strata.mul %x, %x : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  %z = strata.add %y, %x : !strata.tensor<4xf32, strided<[1], offset: 0>>, !strata.tensor<4xf32, strided<[1], offset: 0>> -> !strata.tensor<4xf32, strided<[1], offset: 0>>
  return %z : !strata.tensor<4xf32, strided<[1], offset: 0>>
}
