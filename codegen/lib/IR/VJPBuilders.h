//===- VJPBuilders.h - IR-building helpers shared by the VJP models -------===//
//
// Small builders the VJP rules are written in: fills, casts, sums to a
// broadcast shape, and the scatters that invert views.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LIB_IR_VJPBUILDERS_H
#define STRATA_LIB_IR_VJPBUILDERS_H

#include "strata/IR/StrataAutodiff.h"

namespace strata::ir::vjp {

/// The strata tensor type of `v`.
inline StridedTensorType tensorOf(mlir::Value v) {
  return v.getType().cast<StridedTensorType>();
}

/// Builds the gradient IR of one op at one location.
struct GradBuilder {
  mlir::OpBuilder &b;
  mlir::Location loc;

  /// A fresh tensor of `shape` filled with `value`.
  mlir::Value fill(double value, mlir::Type element,
                   llvm::ArrayRef<int64_t> shape = {});
  /// Elementwise ops with broadcasting.
  mlir::Value add(mlir::Value x, mlir::Value y);
  mlir::Value sub(mlir::Value x, mlir::Value y);
  mlir::Value mul(mlir::Value x, mlir::Value y);
  mlir::Value div(mlir::Value x, mlir::Value y);
  mlir::Value neg(mlir::Value x);
  /// Unary op `OpT` of `x`.
  template <typename OpT> mlir::Value op(mlir::Value x) {
    return b.create<OpT>(loc, x);
  }
  /// `x * c` for a scalar constant `c`.
  mlir::Value scale(mlir::Value x, double c);
  /// `strata.cast` of `x` to `element` (no-op when it already is).
  mlir::Value cast(mlir::Value x, mlir::Type element);
  /// A 0/1 tensor of `element` from an i1 mask.
  mlir::Value maskOf(mlir::Value i1, mlir::Type element) {
    return cast(i1, element);
  }
  /// A view or copy of `x` with `shape` (no-op when equal).
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  /// Sums `g` over the dimensions that broadcasting to g's shape added or
  /// expanded from 1, giving `shape` (PyTorch's sum_to).
  mlir::Value sumTo(mlir::Value g, llvm::ArrayRef<int64_t> shape);
  /// The gradient of a reduction's output broadcast back to the input:
  /// reshaped to the keepdim shape, then expanded (stride 0) to `inShape`.
  mlir::Value expandReduced(mlir::Value g, llvm::ArrayRef<int64_t> inShape,
                            llvm::ArrayRef<int64_t> dims);
  /// Re-applies view op `view` (same attributes) to `input`, inferring the
  /// result type from `input`'s own layout.
  mlir::Value reapplyView(mlir::Operation *view, mlir::Value input);
  /// zeros(shape) with `g` written through the view that `makeView` builds
  /// of it: the VJP of a view that selects elements without overlap.
  mlir::Value
  scatterIntoZeros(mlir::Value g, mlir::Type element,
                   llvm::ArrayRef<int64_t> shape,
                   llvm::function_ref<mlir::Value(mlir::Value zeros)> makeView);
  /// A flat [n] tensor in which every element of `g` is added at the storage
  /// index that layout `l` gives it (overlapping elements add up, as in
  /// PyTorch's as_strided_backward).
  mlir::Value scatterAddFlat(mlir::Value g, const layout::Layout &l, int64_t n);
  /// The gradient of a root of `n` elements that view layout `l` covers
  /// once, given the view's gradient `g`: `g` read in the root's order.
  mlir::Value inverseRead(mlir::Value g, const layout::Layout &l, int64_t n);
  /// `flat` (a contiguous [n] tensor) read through layout `l`.
  mlir::Value gatherFlat(mlir::Value flat, const layout::Layout &l);
  /// A contiguous [n] tensor equal to `flat` whose root is itself.
  mlir::Value ownFlat(mlir::Value flat);
  /// A tensor of `l`'s sizes holding the elements `l` (a layout in the
  /// storage root of `v`) addresses, with the elementwise ops defining that
  /// root rebuilt over the read (at most `budget` of them), so the read
  /// fuses with them instead of reading a materialized value
  /// (StrataVJPRecompute.cpp).
  mlir::Value readRecomputed(mlir::Value v, const layout::Layout &l,
                             int budget = kRecomputeBudget);
  /// `v` with the elementwise ops defining it rebuilt for this use alone.
  mlir::Value recomputed(mlir::Value v, int budget = kRecomputeBudget);
  /// Elementwise ops one read may recompute.
  static constexpr int kRecomputeBudget = 32;
};

/// The interface model of `OpT`: calls the `rule(OpT, ...)` overload.
template <typename OpT>
struct Model : VJPOpInterface::ExternalModel<Model<OpT>, OpT> {
  mlir::LogicalResult buildVJP(mlir::Operation *op, mlir::OpBuilder &b,
                               llvm::ArrayRef<mlir::Value> grads,
                               GradContributions &out) const;
};

template <typename OpT>
mlir::LogicalResult Model<OpT>::buildVJP(mlir::Operation *op,
                                         mlir::OpBuilder &b,
                                         llvm::ArrayRef<mlir::Value> grads,
                                         GradContributions &out) const {
  GradBuilder gb{b, op->getLoc()};
  return rule(llvm::cast<OpT>(op), gb, grads, out);
}

/// Attaches the models of the view ops and the write (StrataVJPViews.cpp).
void attachViewModels(mlir::MLIRContext &context);
/// Attaches strata.scan's model (StrataVJPScan.cpp).
void attachScanModels(mlir::MLIRContext &context);
/// `strata.scan` of `x` along `dim` (StrataVJPScan.cpp).
mlir::Value scan(GradBuilder &gb, mlir::Value x, int64_t dim,
                 llvm::StringRef combiner, bool reverse = false,
                 bool exclusive = false);
/// Attaches the models of gather/scatter/scatter_add (StrataIndexOps.cpp).
void attachIndexModels(mlir::MLIRContext &context);

} // namespace strata::ir::vjp

#endif // STRATA_LIB_IR_VJPBUILDERS_H
