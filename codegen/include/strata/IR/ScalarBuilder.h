//===- ScalarBuilder.h - arith/math IR for one element of a kernel --------===//
//
// What the elementwise ops' scalar formulas (StrataUnaryOps.td,
// StrataOps.td) are written in: the fuser hands one to
// ElementwiseOpInterface::buildScalar, which builds the op's scalar body
// inside a strata.kernel from the operands' scalars.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_SCALARBUILDER_H
#define STRATA_IR_SCALARBUILDER_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace strata::ir {

/// Scalar arithmetic of one element type (f32, f64, i1, i32, i64).
struct ScalarBuilder {
  mlir::OpBuilder &b;
  mlir::Location loc;

  /// `OpT(args...)` at the builder's location.
  template <typename OpT, typename... Args> mlir::Value create(Args &&...args) {
    return b.create<OpT>(loc, std::forward<Args>(args)...);
  }
  /// `v` as a constant of `t` (i1: v != 0).
  mlir::Value constant(mlir::Type t, double v);
  /// A fill's value as a constant of `t`: an i64 attribute exactly (wrapping
  /// into i32 as PyTorch's integer ops do), an f64 one as constant(t, v).
  mlir::Value constant(mlir::Type t, mlir::Attribute v);
  /// strata.cast semantics: float->int truncates, anything->i1 is `!= 0`.
  mlir::Value convert(mlir::Value x, mlir::Type to);
  /// The i1 of compare op `name` ("eq", "lt", ...) of x and y (ordered for
  /// floats except "ne"; unsigned for i1).
  mlir::Value compare(llvm::StringRef name, mlir::Value x, mlir::Value y);
  /// cond ? x : y.
  mlir::Value select(mlir::Value cond, mlir::Value x, mlir::Value y);
  /// `fn` applied to x in f64 when x is f32 (the result rounded back once):
  /// for formulas whose f32 evaluation would lose what libm keeps.
  mlir::Value inF64(mlir::Value x,
                    llvm::function_ref<mlir::Value(mlir::Value)> fn);
  /// The scalar of strata.pow `op` (a scalar exponent may select the code).
  mlir::Value pow(mlir::Operation *op, mlir::Value x, mlir::Value y);
  /// The scalar of strata.cast `op`.
  mlir::Value cast(mlir::Operation *op, mlir::Value x);
  /// C's fmod (the sign of x); integers: x % y, 0 for y == 0.
  mlir::Value fmod(mlir::Value x, mlir::Value y);
  /// C's hypot: f32 in f64 (exact there); f64 scaled by max(|x|, |y|), inf
  /// where either is inf (even with a NaN), as libm.
  mlir::Value hypot(mlir::Value x, mlir::Value y);
  /// PyTorch's logaddexp: max(x, y) + log1p(exp(-|x - y|)), x where both
  /// are the same infinity; log(exp(x) + exp(y)) with STRATA_LOGADDEXP_NAIVE.
  mlir::Value logaddexp(mlir::Value x, mlir::Value y);
  /// Python's modulo (the sign of y), as PyTorch's remainder.
  mlir::Value remainder(mlir::Value x, mlir::Value y);
  /// PyTorch's floor_divide (div_floor_floating / div_floor_integer);
  /// integers: 0 for y == 0, INT_MIN / -1 wraps.
  mlir::Value floorDivide(mlir::Value x, mlir::Value y);
  /// PyTorch's lerp (exact at weight 0 and 1).
  mlir::Value lerp(mlir::Value start, mlir::Value end, mlir::Value weight);

private:
  /// y, or 1 where y is 0 or -1: the divisor integer division by which
  /// cannot trap (x86's idiv traps on x / 0 and on INT_MIN / -1).
  mlir::Value safeDivisor(mlir::Value y);
};

// The same formulas in double for the reference evaluator (`ints`: the
// operands are integers, whose zero divisor gives 0 as the kernels do).
double referenceFmod(double x, double y, bool ints);
double referenceRemainder(double x, double y, bool ints);
double referenceFloorDivide(double x, double y, bool ints);
double referenceLerp(double start, double end, double weight);
double referenceLogaddexp(double x, double y);

} // namespace strata::ir

#endif // STRATA_IR_SCALARBUILDER_H
