//===- Passes.h - strata's passes and its one pipeline ----------*- C++ -*-===//
#ifndef STRATA_TRANSFORMS_PASSES_H
#define STRATA_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace strata {
/// Registers every strata pass and the `strata-pipeline` with the global
/// pass registry (strata-opt's flags).
void registerStrataPasses();
/// The pass pipeline, in order; strata-opt (--strata-pipeline) and the JIT
/// both build theirs with this function.
void buildStrataPipeline(mlir::OpPassManager &pm);
} // namespace strata

#endif // STRATA_TRANSFORMS_PASSES_H
