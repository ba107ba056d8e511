//===- KernelPasses.h - fuse and coalesce -----------------------*- C++ -*-===//
#ifndef STRATA_TRANSFORMS_KERNELPASSES_H
#define STRATA_TRANSFORMS_KERNELPASSES_H

#include "mlir/Pass/Pass.h"

namespace strata {
#define GEN_PASS_DECL
#include "strata/Transforms/KernelPasses.h.inc"

/// Registers --strata-fuse and --strata-coalesce (strata-opt's flags).
void registerKernelPasses();
} // namespace strata

#endif // STRATA_TRANSFORMS_KERNELPASSES_H
