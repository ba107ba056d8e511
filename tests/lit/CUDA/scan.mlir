// REQUIRES: nvrtc, ptxas
// Scan kernels (cumsum, cumprod): one thread per line, sequential along the
// scanned dim with an f64 accumulator for f32; NVRTC compiles them and
// ptxas accepts the PTX.
// RUN: strata-translate --emit-cuda %S/../Reference/scan.mlir | FileCheck %s
// RUN: strata-translate --emit-ptx %S/../Reference/scan.mlir -o %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

// CHECK-LABEL: // kernel 0
// CHECK: // launch: scan grid 1 block 256x1
// CHECK: scan along loop 0, 12 lines of 2, 64-bit indices
// CHECK: double acc = (double)0;
// CHECK: for (long long j = 0; j < 2LL; ++j) {
// CHECK: acc = acc + (double)(
// CHECK: out0[0 + i0 * 12LL + i1 * 4LL + i2 * 1LL] = (float)acc;
// CHECK-LABEL: // kernel 4
// CHECK: scan along loop 1, 3 lines of 4
// CHECK: const long long i1 = 4LL - 1 - j;
// CHECK-LABEL: // kernel 5
// CHECK: out0[{{.*}}] = (float)acc;
// CHECK-NEXT: acc = acc + (double)(
