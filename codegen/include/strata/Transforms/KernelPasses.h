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

/// Unit attribute on a 0-d float `strata.fill` whose value is a count of
/// elements of the program's shapes (a mean's divisor: splitMeans in
/// FusePass.cpp, the mean VJP in StrataVJP.cpp), kept by --strata-fuse on
/// the `arith.constant` a kernel body computes it as: the value follows the
/// sizes, not the structure, so the LLVM emitter reads it at run time (from
/// %dims: KernelToLLVMDynamic.cpp) and one compiled kernel serves every
/// size. The other emitters and the evaluator take it as the constant it is.
inline constexpr llvm::StringLiteral kSizeValueAttrName = "strata.size_value";

/// Registers --strata-fuse and --strata-coalesce (strata-opt's flags).
void registerKernelPasses();
} // namespace strata

#endif // STRATA_TRANSFORMS_KERNELPASSES_H
