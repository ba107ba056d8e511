//===- ScalarBuilder.cpp - arith/math IR for one element of a kernel ------===//
#include "strata/IR/ScalarBuilder.h"
#include "strata/IR/StrataDialect.h"
#include "strata/Runtime/Settings.h"
#include "strata/Transforms/KernelPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace strata::ir;

Value ScalarBuilder::constant(Type t, double v) {
  if (auto f = t.dyn_cast<FloatType>())
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(f, v));
  if (t.isInteger(1)) // as strata.cast: any nonzero value (or NaN) is true
    return b.create<arith::ConstantOp>(loc, b.getBoolAttr(v != 0));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(t, static_cast<int64_t>(v)));
}

Value ScalarBuilder::constant(Type t, Attribute v) {
  auto i = v.dyn_cast<IntegerAttr>();
  if (!i)
    return constant(t, v.cast<FloatAttr>().getValueAsDouble());
  if (auto f = t.dyn_cast<FloatType>()) {
    // Rounded once from the exact integer (PyTorch's static_cast<float>
    // of an int64 Scalar), not through a double.
    APFloat v(f.getFloatSemantics());
    v.convertFromAPInt(i.getValue(), /*IsSigned=*/true,
                       APFloat::rmNearestTiesToEven);
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(f, v));
  }
  if (t.isInteger(1))
    return b.create<arith::ConstantOp>(loc, b.getBoolAttr(i.getInt() != 0));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(t, i.getValue().trunc(t.getIntOrFloatBitWidth())));
}

Value ScalarBuilder::convert(Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  bool fromFloat = from.isa<FloatType>(), toFloat = to.isa<FloatType>();
  if (to.isInteger(1))
    return fromFloat ? b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE,
                                               x, constant(from, 0))
                           .getResult()
                     : b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x,
                                               constant(from, 0))
                           .getResult();
  if (fromFloat && toFloat)
    return to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth()
               ? b.create<arith::ExtFOp>(loc, to, x).getResult()
               : b.create<arith::TruncFOp>(loc, to, x).getResult();
  if (fromFloat) {
    // Out of range (or NaN) is undefined in C++ and poison in LLVM; PyTorch's
    // CPU kernels (cvttss2si and its vector forms) give the "integer
    // indefinite" INT_MIN there, and so does strata (CastOp::evalScalar).
    double lim = std::ldexp(1.0, to.getIntOrFloatBitWidth() - 1);
    Value inRange =
        create<arith::AndIOp>(compare("ge", x, constant(from, -lim)),
                              compare("lt", x, constant(from, lim)));
    return select(inRange, b.create<arith::FPToSIOp>(loc, to, x),
                  constant(to, -lim));
  }
  if (toFloat)
    return from.isInteger(1)
               ? b.create<arith::UIToFPOp>(loc, to, x).getResult()
               : b.create<arith::SIToFPOp>(loc, to, x).getResult();
  if (to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth())
    return from.isInteger(1) ? b.create<arith::ExtUIOp>(loc, to, x).getResult()
                             : b.create<arith::ExtSIOp>(loc, to, x).getResult();
  return b.create<arith::TruncIOp>(loc, to, x);
}

Value ScalarBuilder::compare(StringRef name, Value x, Value y) {
  Type t = x.getType();
  if (t.isa<FloatType>()) {
    auto p = llvm::StringSwitch<arith::CmpFPredicate>(name)
                 .Case("eq", arith::CmpFPredicate::OEQ)
                 .Case("ne", arith::CmpFPredicate::UNE)
                 .Case("lt", arith::CmpFPredicate::OLT)
                 .Case("le", arith::CmpFPredicate::OLE)
                 .Case("gt", arith::CmpFPredicate::OGT)
                 .Default(arith::CmpFPredicate::OGE);
    return b.create<arith::CmpFOp>(loc, p, x, y);
  }
  bool u = t.isInteger(1);
  auto p =
      llvm::StringSwitch<arith::CmpIPredicate>(name)
          .Case("eq", arith::CmpIPredicate::eq)
          .Case("ne", arith::CmpIPredicate::ne)
          .Case("lt", u ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt)
          .Case("le", u ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle)
          .Case("gt", u ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt)
          .Default(u ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge);
  return b.create<arith::CmpIOp>(loc, p, x, y);
}

Value ScalarBuilder::select(Value cond, Value x, Value y) {
  return b.create<arith::SelectOp>(loc, cond, x, y);
}

Value ScalarBuilder::inF64(Value x, llvm::function_ref<Value(Value)> fn) {
  Type t = x.getType();
  if (!t.isF32())
    return fn(x);
  Value wide = b.create<arith::ExtFOp>(loc, b.getF64Type(), x);
  return b.create<arith::TruncFOp>(loc, t, fn(wide));
}

Value ScalarBuilder::pow(Operation *op, Value x, Value y) {
  Type t = x.getType();
  bool f = t.isa<FloatType>();
  // A scalar exponent passed in f64 for an f32 base (strata.pow's
  // `scalar_exponent`: one f32 cannot hold): in f64, rounded once, as the
  // constant exponent below.
  if (y.getType() != t)
    return inF64(
        x, [&](Value wide) -> Value { return create<math::PowFOp>(wide, y); });
  // An exponent that is an argument (`scalar_exponent`, or a 0-d tensor)
  // is general: its value does not select the code.
  // An f32 power by a scalar f32 cannot hold (2^24 + 1 rounds to an even
  // exponent and loses the sign): in f64, as PyTorch keeps the scalar
  // exponent exact.
  if (auto fill = op->getOperand(1).getDefiningOp<FillOp>();
      fill && f && fill.getType().getRank() == 0) {
    double e = fill.getValueAsDouble();
    if (e == 0.5 || e == -0.5) {
      // PyTorch's pow_tensor_scalar: sqrt and rsqrt (so pow(-inf, 0.5) is
      // NaN, where C's pow gives inf).
      Value r = b.create<math::SqrtOp>(loc, x);
      return e > 0
                 ? r
                 : b.create<arith::DivFOp>(loc, constant(t, 1), r).getResult();
    }
    // pow_tensor_scalar's other specializations, rounded as PyTorch's
    // kernels round them: 2 and 3 as products, -1 as the reciprocal and -2
    // as 1 / (x * x) (libm's pow rounds once: a last bit apart, which
    // sin(x ** -2) at x = 1e-8 makes a different number).
    auto mul = [&](Value a, Value c) -> Value {
      return create<arith::MulFOp>(a, c);
    };
    auto inverse = [&](Value a) -> Value {
      return create<arith::DivFOp>(constant(t, 1), a);
    };
    if (e == 2)
      return mul(x, x);
    if (e == 3)
      return mul(mul(x, x), x);
    if (e == -1)
      return inverse(x);
    if (e == -2)
      return inverse(mul(x, x));
    if (t.isF32() && static_cast<double>(static_cast<float>(e)) != e) {
      Type f64 = b.getF64Type();
      Value wide = b.create<arith::ExtFOp>(loc, f64, x);
      Value p = b.create<math::PowFOp>(loc, wide, constant(f64, e));
      return b.create<arith::TruncFOp>(loc, t, p);
    }
  }
  return f ? b.create<math::PowFOp>(loc, x, y).getResult()
           : b.create<math::IPowIOp>(loc, x, y).getResult();
}

Value ScalarBuilder::cast(Operation *op, Value x) {
  auto type = op->getResult(0).getType().cast<StridedTensorType>();
  Value v = convert(x, type.getElementType());
  if (op->hasAttr(strata::kCascadeAttrName))
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      ext->setAttr(strata::kCascadeAttrName, b.getUnitAttr());
  return v;
}

Value ScalarBuilder::safeDivisor(Value y) {
  Type t = y.getType();
  Value trap = create<arith::OrIOp>(compare("eq", y, constant(t, 0)),
                                    compare("eq", y, constant(t, -1)));
  return select(trap, constant(t, 1), y);
}

Value ScalarBuilder::fmod(Value x, Value y) {
  if (x.getType().isa<FloatType>())
    return create<arith::RemFOp>(x, y);
  return create<arith::RemSIOp>(x, safeDivisor(y)); // y in {0, -1}: 0
}

Value ScalarBuilder::hypot(Value x, Value y) {
  Type t = x.getType();
  Value ax = create<math::AbsFOp>(x), ay = create<math::AbsFOp>(y);
  Value h;
  if (t.isF32()) { // exact in f64, then one rounding
    Type f64 = b.getF64Type();
    Value wx = create<arith::ExtFOp>(f64, x),
          wy = create<arith::ExtFOp>(f64, y);
    Value s = create<arith::AddFOp>(create<arith::MulFOp>(wx, wx),
                                    create<arith::MulFOp>(wy, wy));
    h = create<arith::TruncFOp>(t, create<math::SqrtOp>(s));
  } else { // scaled by max(|x|, |y|), so that nothing overflows
    Value m = create<arith::MaxFOp>(ax, ay), n = create<arith::MinFOp>(ax, ay);
    Value zero = constant(t, 0), one = constant(t, 1);
    Value r = create<arith::DivFOp>(n, m);
    h = create<arith::MulFOp>(m, create<math::SqrtOp>(create<arith::AddFOp>(
                                     one, create<arith::MulFOp>(r, r))));
    h = select(compare("eq", m, zero), zero, h);
  }
  Value inf = constant(t, INFINITY); // hypot(inf, nan) is inf, as libm's
  Value anyInf =
      create<arith::OrIOp>(compare("eq", ax, inf), compare("eq", ay, inf));
  return select(anyInf, inf, h);
}

Value ScalarBuilder::logaddexp(Value x, Value y) {
  Type t = x.getType();
  if (strata::runtime::settings::logaddexpNaive()) // for comparisons only
    return create<math::LogOp>(
        create<arith::AddFOp>(create<math::ExpOp>(x), create<math::ExpOp>(y)));
  // PyTorch 1.13's CPU kernel: where both are the same infinity, x (x - y
  // would be NaN); else max + log1p(exp(-|x - y|)), NaN where either is.
  Value m = create<arith::MaxFOp>(x, y);
  Value d = create<math::AbsFOp>(create<arith::SubFOp>(x, y));
  Value e = create<math::ExpOp>(create<arith::NegFOp>(d));
  Value r = create<arith::AddFOp>(m, create<math::Log1pOp>(e));
  Value sameInf = create<arith::AndIOp>(
      compare("eq", x, y),
      compare("eq", create<math::AbsFOp>(x), constant(t, INFINITY)));
  return select(sameInf, x, r);
}

Value ScalarBuilder::remainder(Value x, Value y) {
  Type t = x.getType();
  bool isF = t.isa<FloatType>();
  Value d = isF ? y : safeDivisor(y);
  Value m = fmod(x, d), zero = constant(t, 0);
  // PyTorch: if (m != 0 && (d < 0) != (m < 0)) m += d.
  Value differ =
      create<arith::XOrIOp>(compare("lt", d, zero), compare("lt", m, zero));
  Value adjust = create<arith::AndIOp>(compare("ne", m, zero), differ);
  Value sum = isF ? create<arith::AddFOp>(m, d) : create<arith::AddIOp>(m, d);
  return select(adjust, sum, m);
}

Value ScalarBuilder::floorDivide(Value x, Value y) {
  Type t = x.getType();
  Value zero = constant(t, 0), one = constant(t, 1);
  if (!t.isa<FloatType>()) {
    // c10::div_floor_integer: truncate, one less when the signs differ and
    // the division is inexact.
    Value d = safeDivisor(y);
    Value q = create<arith::DivSIOp>(x, d), r = create<arith::RemSIOp>(x, d);
    Value differ =
        create<arith::XOrIOp>(compare("lt", r, zero), compare("lt", d, zero));
    Value adjust = create<arith::AndIOp>(compare("ne", r, zero), differ);
    q = select(adjust, create<arith::SubIOp>(q, one), q);
    q = select(compare("eq", y, constant(t, -1)),
               create<arith::SubIOp>(zero, x), q);
    return select(compare("eq", y, zero), zero, q);
  }
  // c10::div_floor_floating, step by step.
  Value quotient = create<arith::DivFOp>(x, y);
  Value mod = create<arith::RemFOp>(x, y);
  Value div = create<arith::DivFOp>(create<arith::SubFOp>(x, mod), y);
  Value differ =
      create<arith::XOrIOp>(compare("lt", y, zero), compare("lt", mod, zero));
  Value adjust = create<arith::AndIOp>(compare("ne", mod, zero), differ);
  div = select(adjust, create<arith::SubFOp>(div, one), div);
  Value floor = create<math::FloorOp>(div);
  Value up = compare("gt", create<arith::SubFOp>(div, floor), constant(t, 0.5));
  floor = select(up, create<arith::AddFOp>(floor, one), floor);
  Value signedZero = create<math::CopySignOp>(zero, quotient);
  Value r = select(compare("ne", div, zero), floor, signedZero);
  return select(compare("eq", y, zero), quotient, r); // IEEE's x / 0
}

Value ScalarBuilder::lerp(Value start, Value end, Value weight) {
  Type t = start.getType();
  Value diff = create<arith::SubFOp>(end, start);
  // PyTorch 1.13's lerp: the first form where weight < 0.5 (a negative
  // weight included: -1.25 to -inf gives inf, not the other form's NaN),
  // each form one fused multiply-add as its kernels compute it (Lerp.h
  // compiled with contraction: `start + weight * diff` and
  // `end - diff * (1 - weight)` round once).
  Value small = compare("lt", weight, constant(t, 0.5));
  Value low = create<math::FmaOp>(weight, diff, start);
  // end - diff * (1 - weight) as one fused negative multiply-add (its sign
  // of zero: lerp(-0.0, -0.0, 1.0) is -0.0, which fma(weight - 1, diff,
  // end) would make +0.0).
  Value rest = create<arith::SubFOp>(constant(t, 1), weight);
  Value high = create<math::FmaOp>(create<arith::NegFOp>(diff), rest, end);
  return select(small, low, high);
}

double strata::ir::referenceFmod(double x, double y, bool ints) {
  return ints && y == 0 ? 0 : std::fmod(x, y);
}

double strata::ir::referenceRemainder(double x, double y, bool ints) {
  if (ints && y == 0)
    return 0;
  double m = std::fmod(x, y);
  return m != 0 && (y < 0) != (m < 0) ? m + y : m;
}

double strata::ir::referenceFloorDivide(double x, double y, bool ints) {
  if (ints && y == 0)
    return 0;
  if (y == 0)
    return x / y;
  double mod = std::fmod(x, y), div = (x - mod) / y;
  if (mod != 0 && (y < 0) != (mod < 0))
    div -= 1;
  if (div == 0)
    return std::copysign(0.0, x / y);
  double floor = std::floor(div);
  return div - floor > 0.5 ? floor + 1 : floor;
}

double strata::ir::referenceLogaddexp(double x, double y) {
  if (std::isinf(x) && x == y)
    return x;
  if (std::isnan(x) || std::isnan(y))
    return NAN;
  return std::max(x, y) + std::log1p(std::exp(-std::fabs(x - y)));
}

double strata::ir::referenceLerp(double start, double end, double weight) {
  return weight < 0.5 ? std::fma(weight, end - start, start)
                      : std::fma(-(end - start), 1 - weight, end);
}
