//===- RefInterop.h - JitValue <-> reference::RefValue ----------*- C++ -*-===//
//
// For tests and strata-run: the JIT's values and the reference evaluator's
// have the same shape (buffer + absolute layout + element type); these
// convert one into the other. Includes MLIR (through Evaluator.h).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_JIT_REFINTEROP_H
#define STRATA_JIT_REFINTEROP_H

#include "strata/JIT/Jit.h"
#include "strata/Reference/Evaluator.h"

namespace strata::jit {
/// Native element bytes of a reference value (same layout, same sharing
/// within one call is not preserved: each value gets its own buffer).
JitValue fromRefValue(const reference::RefValue &value);
/// A reference value with the JIT value's elements and layout.
reference::RefValue toRefValue(const JitValue &value,
                               mlir::MLIRContext &context);
} // namespace strata::jit

#endif // STRATA_JIT_REFINTEROP_H
