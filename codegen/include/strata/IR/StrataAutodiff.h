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
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
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

/// What an op's VJP reads of the forward, operand by operand.
struct VJPReads {
  /// The bit of `reads` that stands for the op's result.
  static constexpr unsigned kResultBit = 63;
  /// Per operand: whether the VJP gives it a gradient.
  llvm::SmallVector<bool> differentiated;
  /// Per operand: what its gradient is computed from, bit j for operand j
  /// and kResultBit for the result (derivatives.yaml's `self`, `other`,
  /// `result` in that operand's formula).
  llvm::SmallVector<uint64_t> reads;
};

/// What the VJP of `op` reads, found by building it after `op` on a
/// placeholder gradient (erased again: the IR is unchanged). Fails where
/// `op` has no VJP or its VJP fails.
mlir::FailureOr<VJPReads> vjpReads(mlir::Operation *op);
} // namespace strata::ir

#endif // STRATA_IR_STRATAAUTODIFF_H
