//===- StrataAutodiff.h - the VJP op interface of strata ops ----*- C++ -*-===//
//
// Include this to differentiate strata IR (the Differentiate pass, tests).
// Not a public (dsl) header: it pulls in MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_STRATAAUTODIFF_H
#define STRATA_IR_STRATAAUTODIFF_H

#include "strata/IR/StrataDialect.h"

#include "mlir/IR/Builders.h"

#include <utility>

// GradContributions and VJPOpInterface come from StrataDialect.h: the
// unary ops implement the interface in ODS (StrataUnaryOps.td).

namespace strata::ir {
/// Attaches the VJP models to every differentiable strata op (called when
/// the dialect is initialized).
void attachVJPModels(mlir::MLIRContext &context);

/// True for the element types gradients flow through (f32, f64).
bool isDifferentiableType(mlir::Type type);

/// The type of a gradient of `value`: a fresh contiguous tensor of the
/// value's shape, or a 1-D tensor of a storage's element count.
StridedTensorType gradType(mlir::Value value);
} // namespace strata::ir

#endif // STRATA_IR_STRATAAUTODIFF_H
