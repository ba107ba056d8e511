// REQUIRES: nvrtc
// NVRTC compiles the index_map kernels of Reference/index.mlir (ptxas is
// run on the same PTX by `ctest -R ptxas`-style checks where available).
// RUN: strata-translate --emit-ptx %S/../Reference/index.mlir | FileCheck %s
// CHECK: atom.global.add.f32
// CHECK: atom.global.add.f64
// CHECK: atom.global.add.u64
