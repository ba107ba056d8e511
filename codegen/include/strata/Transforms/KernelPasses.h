//===- KernelPasses.h - fuse and coalesce -----------------------*- C++ -*-===//
#ifndef STRATA_TRANSFORMS_KERNELPASSES_H
#define STRATA_TRANSFORMS_KERNELPASSES_H

#include "mlir/Pass/Pass.h"

namespace strata {
#define GEN_PASS_DECL
#include "strata/Transforms/KernelPasses.h.inc"

/// Unit attribute on the f32 -> f64 casts that --strata-widen-sums inserts,
/// kept by --strata-fuse on the `arith.extf` it becomes in a kernel body:
/// a sum of such a value may add f32 partials over bounded runs into its
/// f64 accumulator (cascade summation, KernelToLLVM/KernelToCUDA). A cast
/// the user wrote has no mark and is accumulated in f64 exactly.
inline constexpr llvm::StringLiteral kCascadeAttrName = "strata.cascade";

/// Registers --strata-fuse and --strata-coalesce (strata-opt's flags).
void registerKernelPasses();
} // namespace strata

#endif // STRATA_TRANSFORMS_KERNELPASSES_H
