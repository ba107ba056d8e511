// The matmul, fill and arange programs through the whole pipeline: matmul
// becomes a product-sum reduction, fill a constant kernel, arange an
// indexed kernel whose loop index is a 64-bit body argument.
// RUN: strata-translate --emit-cuda %S/../Reference/matmul.mlir | FileCheck %s --check-prefix=MATMUL
// MATMUL: // launch: {{row|column}}-reduce
// MATMUL: const float v0 = a0 * a1;
// MATMUL: acc0 = StrataSum()(acc0, v0);
// RUN: strata-translate --emit-cuda %S/../Reference/fill_arange.mlir | FileCheck %s --check-prefix=ARANGE
// ARANGE-DAG: const double v1 = (double)(long long)i0;
// ARANGE-DAG: const float v0 = 2.5f;
// ARANGE-DAG: const long long v0 = (-3LL);
