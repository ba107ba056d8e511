//===- Passes.h - strata's passes and its one pipeline ----------*- C++ -*-===//
#ifndef STRATA_TRANSFORMS_PASSES_H
#define STRATA_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace strata {
// createFoldViews(), createMaterializeCopies(options) and
// MaterializeCopiesOptions, generated from Passes.td.
#define GEN_PASS_DECL
#include "strata/Transforms/Passes.h.inc"

/// Registers every strata pass and the `strata-pipeline` with the global
/// pass registry (strata-opt's flags).
void registerStrataPasses();

/// Options of the whole pipeline (`--strata-pipeline=remarks=true`).
struct PipelineOptions {
  /// Report every copy that stays, with its reason (materialize-copies).
  bool copyRemarks = false;
  /// Continue through fuse and coalesce to strata.kernel ops, as the JIT
  /// does. Off, the result still holds compute ops (what the reference
  /// evaluator runs).
  bool formKernels = false;
};

/// The pass pipeline, in order; strata-opt (--strata-pipeline) and the JIT
/// both build theirs with this function. `pm` may be anchored on
/// builtin.module (the passes are nested on func.func) or on func.func.
void buildStrataPipeline(mlir::OpPassManager &pm,
                         const PipelineOptions &options = {});
} // namespace strata

#endif // STRATA_TRANSFORMS_PASSES_H
