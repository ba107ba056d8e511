//===- StrataVJP.cpp - VJPs of the compute ops ----------------------------===//
//
// The reverse-mode rule of each binary elementwise op, where, cast, reduction
// and matmul, written as strata IR (so the gradient program is fused and
// compiled like any other). Broadcast operands get their gradient summed
// back to their own shape (sumTo). Rules and tie-breaking follow PyTorch's
// derivatives.yaml (maximum/minimum split ties evenly, amax/amin spread the
// gradient evenly over the maxima, pow's exponent gradient is 0 at base 0).
//
//===----------------------------------------------------------------------===//
#include "VJPBuilders.h"
#include "strata/Transforms/KernelPasses.h"

#include <utility>

using namespace mlir;
using namespace strata::ir;
using namespace strata::ir::vjp;

bool strata::ir::isDifferentiableType(Type type) {
  Type element;
  if (auto t = type.dyn_cast<StridedTensorType>())
    element = t.getElementType();
  else if (auto s = type.dyn_cast<StorageType>())
    element = s.getElementType();
  return element && element.isa<FloatType>();
}

StridedTensorType strata::ir::gradType(Value value) {
  if (auto s = value.getType().dyn_cast<StorageType>())
    return StridedTensorType::getContiguous(s.getElementType(), {s.getSize()});
  auto t = tensorOf(value);
  return StridedTensorType::getContiguous(t.getElementType(), t.getShape());
}

namespace {
using Out = GradContributions;

/// Pushes `g` summed to the shape of `target`.
void give(GradBuilder &gb, Out &out, Value target, Value g) {
  out.push_back({target, gb.sumTo(g, tensorOf(target).getShape())});
}

Type elementOf(Value v) { return tensorOf(v).getElementType(); }
} // namespace

namespace strata::ir::vjp {

// The unary ops' rules are in StrataUnaryOps.td (ODS-generated buildVJP).

//===--- Binary
//--------------------------------------------------------------===//

LogicalResult rule(AddOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  give(gb, out, op.getLhs(), g[0]);
  give(gb, out, op.getRhs(), g[0]);
  return success();
}

LogicalResult rule(SubOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  give(gb, out, op.getLhs(), g[0]);
  give(gb, out, op.getRhs(), gb.neg(g[0]));
  return success();
}

LogicalResult rule(MulOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  give(gb, out, op.getLhs(), gb.mul(g[0], op.getRhs()));
  give(gb, out, op.getRhs(), gb.mul(g[0], op.getLhs()));
  return success();
}

LogicalResult rule(DivOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  Value a = op.getLhs(), b = op.getRhs();
  give(gb, out, a, gb.div(g[0], b));
  // PyTorch's div_tensor_other_backward, -grad * ((self / other) / other),
  // rounded as it is (the quotient is the result; negation is exact).
  give(gb, out, b, gb.neg(gb.mul(g[0], gb.div(op.getResult(), b))));
  return success();
}

LogicalResult rule(PowOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  // PyTorch's pow_backward_self / pow_backward_exponent: a zero exponent
  // passes no gradient to the base (not 0 * a^-1 = NaN at a = 0), and a
  // zero base with a non-negative exponent none to the exponent.
  Value a = op.getLhs(), e = op.getRhs();
  Type t = elementOf(a);
  Value one = gb.fill(1.0, t), zero = gb.fill(0.0, t);
  // A number exponent's `exponent - 1` is PyTorch's Scalar arithmetic
  // (int64 or double), not the tensor's dtype: 3e9 - 1 is odd, which f32
  // would round back to 3e9 (and lose the sign of a negative base).
  // An exponent that is an argument (`scalar_exponent`: f32, or f64 for
  // an f32 base f32 cannot hold it) subtracts in its own type, exactly as
  // a double (the DSL passes one only where e - 1 is held too), and the
  // power by it is pow(Tensor, Scalar) again; e itself multiplies in the
  // base's dtype, as PyTorch's Scalar does.
  auto number = e.getDefiningOp<FillOp>();
  bool argument = op.getScalarExponent() && !number;
  Type et = elementOf(e);
  Value less = number && tensorOf(e).getRank() == 0
                   ? gb.fill(number.getValueAsDouble() - 1, t)
               : argument ? gb.sub(e, gb.fill(1.0, et))
                          : gb.sub(e, one);
  Value aPow = gb.b.create<PowOp>(gb.loc, a, less, argument);
  Value eInBase = argument && et != t ? gb.cast(e, t) : e;
  Value dA = gb.mul(g[0], gb.mul(eInBase, aPow));
  Value eZero = gb.b.create<EqOp>(gb.loc, e, et != t ? gb.fill(0.0, et) : zero);
  // A bool number (pow(x, False): a cast bool fill): PyTorch 1.13's Scalar
  // test for 0 fails on bools, so grad * 0 * x^-1 passes (NaN at 0).
  auto cast = e.getDefiningOp<CastOp>();
  bool boolNumber = cast && elementOf(cast.getInput()).isInteger(1) &&
                    cast.getInput().getDefiningOp<FillOp>();
  // A number exponent 0: PyTorch's pow_backward returns zeros_like(self),
  // with no graph behind it (a where() would pass NaN to a second
  // derivative at a zero base: 0 * x^-2).
  if (number && tensorOf(e).getRank() == 0 && number.getValueAsDouble() == 0) {
    give(gb, out, a, gb.fill(0.0, t, tensorOf(a).getShape()));
    return success();
  }
  give(gb, out, a,
       boolNumber ? dA : gb.b.create<WhereOp>(gb.loc, eZero, zero, dA));
  // (The incoming gradient multiplies the masked derivative, as PyTorch's
  // grad * where(...): an infinite gradient at a zero base gives NaN.)
  if (argument) // a C++ number: no gradient flows to it
    return success();
  Value dE = gb.mul(op.getResult(), gb.b.create<LogOp>(gb.loc, a));
  Value atZero = gb.b.create<MulOp>(gb.loc, gb.b.create<EqOp>(gb.loc, a, zero),
                                    gb.b.create<GeOp>(gb.loc, e, zero));
  give(gb, out, e,
       gb.mul(g[0], gb.b.create<WhereOp>(gb.loc, atZero, zero, dE)));
  return success();
}

/// maximum/minimum as PyTorch: where(a == b, g / 2, g), zeroed where the
/// other operand wins. A NaN operand wins nothing and loses nothing, so both
/// sides get g (as in PyTorch, whose masks compare false on NaN).
template <typename LosesOp>
LogicalResult extremum(Value a, Value b, GradBuilder &gb, Value g, Out &out) {
  Type t = elementOf(a);
  Value zero = gb.fill(0.0, t);
  Value share = gb.b.create<WhereOp>(gb.loc, gb.b.create<EqOp>(gb.loc, a, b),
                                     gb.scale(g, 0.5), g);
  Value aLoses = gb.b.create<LosesOp>(gb.loc, a, b);
  Value bLoses = gb.b.create<LosesOp>(gb.loc, b, a);
  give(gb, out, a, gb.b.create<WhereOp>(gb.loc, aLoses, zero, share));
  give(gb, out, b, gb.b.create<WhereOp>(gb.loc, bLoses, zero, share));
  return success();
}

LogicalResult rule(MaximumOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  return extremum<LtOp>(op.getLhs(), op.getRhs(), gb, g[0], out);
}

LogicalResult rule(MinimumOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  return extremum<GtOp>(op.getLhs(), op.getRhs(), gb, g[0], out);
}

/// x * x as PyTorch's atan2_backward computes it: in the operand's own
/// dtype, so an integer operand (a cast by promotion here) squares with
/// wrapping (INT64_MAX squared is 1 there), then promotes.
Value squareAsGiven(GradBuilder &gb, Value x) {
  if (auto cast = x.getDefiningOp<CastOp>()) {
    Value in = cast.getInput();
    Type e = elementOf(in);
    if (e.isa<IntegerType>() && !e.isInteger(1))
      return gb.cast(gb.mul(in, in), elementOf(x));
  }
  return gb.mul(x, x);
}

LogicalResult rule(Atan2Op op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  // atan2_backward: g * b / (a^2 + b^2), g * -a / (a^2 + b^2).
  Value a = op.getLhs(), b = op.getRhs();
  Value r = gb.b.create<ReciprocalOp>(
      gb.loc, gb.add(squareAsGiven(gb, a), squareAsGiven(gb, b)));
  give(gb, out, a, gb.mul(g[0], gb.mul(b, r)));
  give(gb, out, b, gb.mul(g[0], gb.mul(gb.neg(a), r)));
  return success();
}

LogicalResult rule(HypotOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  // derivatives.yaml: grad * self / result, grad * other / result.
  Value a = op.getLhs(), b = op.getRhs(), h = op.getResult();
  give(gb, out, a, gb.mul(g[0], gb.div(a, h)));
  give(gb, out, b, gb.mul(g[0], gb.div(b, h)));
  return success();
}

LogicalResult rule(LogaddexpOp op, GradBuilder &gb, ArrayRef<Value> g,
                   Out &out) {
  // derivatives.yaml: grad / (1 + exp(other - self)), grad / (1 + exp(self -
  // other)): PyTorch saves self and other, not the result.
  Value a = op.getLhs(), b = op.getRhs();
  auto share = [&](Value x, Value y) {
    return gb.div(g[0],
                  gb.add(gb.fill(1, elementOf(x)), gb.op<ExpOp>(gb.sub(y, x))));
  };
  give(gb, out, a, share(a, b));
  give(gb, out, b, share(b, a));
  return success();
}

/// fmod and remainder: g for a, -g * a.div(b, rounding_mode) for b, as
/// derivatives.yaml: trunc(a / b) for fmod; for remainder PyTorch's floor
/// division (div_floor_floating, strata.floor_divide), which is NaN where
/// floor(a / b) is infinite (a infinite).
LogicalResult modulo(Value a, Value b, Value q, GradBuilder &gb, Value g,
                     Out &out) {
  give(gb, out, a, g);
  give(gb, out, b, gb.neg(gb.mul(g, q)));
  return success();
}

LogicalResult rule(FmodOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  Value a = op.getLhs(), b = op.getRhs();
  return modulo(a, b, gb.b.create<TruncOp>(gb.loc, gb.div(a, b)), gb, g[0],
                out);
}

LogicalResult rule(RemainderOp op, GradBuilder &gb, ArrayRef<Value> g,
                   Out &out) {
  Value a = op.getLhs(), b = op.getRhs();
  return modulo(a, b, gb.b.create<FloorDivideOp>(gb.loc, a, b), gb, g[0], out);
}

/// Piecewise constant: PyTorch has no derivative (the DSL refuses its
/// backward); zero here, as floor's.
LogicalResult rule(FloorDivideOp op, GradBuilder &gb, ArrayRef<Value>,
                   Out &out) {
  for (Value v : {op.getLhs(), op.getRhs()})
    out.push_back({v, gb.fill(0.0, elementOf(v), tensorOf(v).getShape())});
  return success();
}

/// lerp.Scalar's weight as the DSL passes it: an f64 number (or an int64
/// one) cast to the tensors' type, maybe read through broadcasting views
/// (every stride 0). The number as f64 (PyTorch's weight.toDouble(): an
/// int64 rounded once), or null.
static Value numberWeightInF64(GradBuilder &gb, Value w) {
  auto oneValue = [](Value v) {
    auto t = v.getType().dyn_cast<StridedTensorType>();
    return t && llvm::all_of(t.getLayout().strides,
                             [](int64_t s) { return s == 0; });
  };
  while (auto view = w.getDefiningOp<StridedViewOp>()) {
    if (!oneValue(view.getSource()))
      break;
    w = view.getSource();
  }
  auto cast = w.getDefiningOp<CastOp>();
  if (!cast || !oneValue(cast.getInput()) || elementOf(w).isF64())
    return {};
  Type from = elementOf(cast.getInput());
  if (from.isF64())
    return cast.getInput();
  if (from.isInteger(64))
    return gb.cast(cast.getInput(), gb.b.getF64Type());
  return {};
}

LogicalResult rule(LerpOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  // lerp.Tensor: g * (1 - w), g * w, g * (end - start).
  Value a = op.getStart(), b = op.getEnd(), w = op.getWeight();
  Type t = elementOf(w);
  Value rest = gb.sub(gb.fill(1.0, t), w);
  // lerp.Scalar (the DSL's number weight): PyTorch's
  // g * (1 - weight.toDouble()), the difference in f64 rounded once, not
  // 1 - the rounded weight.
  if (Value w64 = numberWeightInF64(gb, w))
    rest = gb.cast(gb.sub(gb.fill(1.0, gb.b.getF64Type()), w64), t);
  give(gb, out, a, gb.mul(g[0], rest));
  give(gb, out, b, gb.mul(g[0], w));
  give(gb, out, w, gb.mul(g[0], gb.sub(b, a)));
  return success();
}

/// fma(a, b, c) = a * b + c: g * b, g * a, g.
LogicalResult rule(FmaOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  Value a = op.getLhs(), b = op.getRhs();
  give(gb, out, a, gb.mul(g[0], b));
  give(gb, out, b, gb.mul(g[0], a));
  give(gb, out, op.getAddend(), g[0]);
  return success();
}

LogicalResult rule(WhereOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  Value zero = gb.fill(0.0, elementOf(op.getLhs()));
  Value c = op.getCond();
  give(gb, out, op.getLhs(), gb.b.create<WhereOp>(gb.loc, c, g[0], zero));
  give(gb, out, op.getRhs(), gb.b.create<WhereOp>(gb.loc, c, zero, g[0]));
  return success();
}

LogicalResult rule(CastOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  out.push_back({op.getInput(), gb.cast(g[0], elementOf(op.getInput()))});
  return success();
}

//===--- Reductions
//----------------------------------------------------------===//

LogicalResult rule(SumOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  auto in = tensorOf(op.getInput());
  out.push_back(
      {op.getInput(), gb.expandReduced(g[0], in.getShape(), op.getDims())});
  return success();
}

LogicalResult rule(MeanOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  auto in = tensorOf(op.getInput());
  int64_t count =
      in.getNumElements() /
      std::max<int64_t>(1, tensorOf(op.getResult()).getNumElements());
  if (in.getNumElements() == 0)
    count = 0;
  Value e = gb.expandReduced(g[0], in.getShape(), op.getDims());
  // A size value (kSizeValueAttrName): the kernel reads it at run time.
  Value n = gb.fill(double(count), in.getElementType());
  n.getDefiningOp()->setAttr(strata::kSizeValueAttrName, gb.b.getUnitAttr());
  out.push_back({op.getInput(), gb.div(e, n)});
  return success();
}

/// amax/amin: the gradient spread evenly over the elements equal to the
/// result.
template <typename OpT>
LogicalResult extremeReduce(OpT op, GradBuilder &gb, Value g, Out &out) {
  auto in = tensorOf(op.getInput());
  ArrayRef<int64_t> dims = op.getDims();
  Value y = gb.expandReduced(op.getResult(), in.getShape(), dims);
  Value hit = gb.maskOf(gb.b.create<EqOp>(gb.loc, op.getInput(), y),
                        in.getElementType());
  Value count = gb.b.create<SumOp>(gb.loc, hit, gb.b.getDenseI64ArrayAttr(dims),
                                   gb.b.getUnitAttr());
  Value share = gb.div(gb.expandReduced(g, in.getShape(), dims),
                       gb.expandReduced(count, in.getShape(), dims));
  out.push_back({op.getInput(), gb.mul(share, hit)});
  return success();
}

LogicalResult rule(AmaxOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  return extremeReduce(op, gb, g[0], out);
}

LogicalResult rule(AminOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  return extremeReduce(op, gb, g[0], out);
}

/// PyTorch 1.13's prod_backward, without a branch on the values (the
/// branches are `where`s on zero counts): 0-d, the gradient itself; no zero
/// in the input, grad * (result / input); otherwise, over one dim,
/// prod_safe_zeros_backward: grad times the product of the elements before
/// (an exclusive scan) and after (a reversed exclusive scan) each element,
/// for every line once the input has a zero anywhere, as PyTorch; prod()
/// of everything: that over the row-major elements with exactly one zero,
/// 0 with more. So infinities and NaNs beside a zero give PyTorch's NaNs.
/// A reduction over several (not all) dims, which only IR can write, keeps
/// the rule without scans: P / x (no zero), P at the zero (one zero), else
/// 0, with P the product of the group's nonzero elements.
LogicalResult rule(ProdOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  Value x = op.getInput();
  auto in = tensorOf(x);
  Type e = in.getElementType();
  ArrayRef<int64_t> dims = op.getDims();
  auto dimsAttr = gb.b.getDenseI64ArrayAttr(dims);
  Value zero = gb.fill(0.0, e), one = gb.fill(1.0, e);
  Value isZero = gb.b.create<EqOp>(gb.loc, x, zero);
  auto expand = [&](Value v) {
    return gb.expandReduced(v, in.getShape(), dims);
  };
  auto where = [&](Value c, Value a, Value b) -> Value {
    return gb.b.create<WhereOp>(gb.loc, c, a, b);
  };
  if (in.getRank() == 0) {
    out.push_back({x, g[0]});
    return success();
  }
  if (dims.size() <= 1) {
    Value grad = expand(g[0]);
    // (Divided by 1 where it is not selected, so that its own derivative,
    // create_graph's second one, reads no 0 / 0 at a zero.)
    Value zeros = gb.b.create<SumOp>(gb.loc, gb.maskOf(isZero, e),
                                     gb.b.getDenseI64ArrayAttr({}), UnitAttr());
    Value none = gb.b.create<EqOp>(gb.loc, zeros, zero);
    Value divisor = where(none, x, one);
    Value plain = gb.mul(grad, gb.div(expand(op.getResult()), divisor));
    // Exclusive products from both sides of `v` along `d`.
    auto safe = [&](Value v, int64_t d) {
      Value before = scan(gb, v, d, "prod", false, true);
      Value after = scan(gb, v, d, "prod", true, true);
      return gb.mul(before, after);
    };
    if (dims.size() == 1) {
      int64_t d = dims[0] < 0 ? dims[0] + in.getRank() : dims[0];
      out.push_back({x, where(none, plain, gb.mul(grad, safe(x, d)))});
      return success();
    }
    int64_t n = in.getNumElements();
    Value flat = safe(gb.reshape(x, {n}), 0);
    Value others = gb.reshape(flat, in.getShape());
    // (One op per statement: the IR's order does not hang on the C++
    // compiler's order of evaluating arguments.)
    Value oneZero = gb.b.create<EqOp>(gb.loc, zeros, one);
    Value atOthers = gb.mul(grad, others);
    Value single = where(oneZero, atOthers, gb.fill(0.0, e));
    out.push_back({x, where(none, plain, single)});
    return success();
  }
  Value nonzero = where(isZero, one, x);
  Value p = expand(
      gb.b.create<ProdOp>(gb.loc, nonzero, dimsAttr, gb.b.getUnitAttr()));
  Value nz = expand(gb.b.create<SumOp>(gb.loc, gb.maskOf(isZero, e), dimsAttr,
                                       gb.b.getUnitAttr()));
  Value atZero = where(gb.b.create<EqOp>(gb.loc, nz, one), p, zero);
  Value elsewhere =
      where(gb.b.create<EqOp>(gb.loc, nz, zero), gb.div(p, nonzero), zero);
  Value others = where(isZero, atZero, elsewhere);
  out.push_back({x, gb.mul(expand(g[0]), others)});
  return success();
}

//===--- Matmul
//--------------------------------------------------------------===//

LogicalResult rule(MatmulOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  Value a = op.getLhs(), b = op.getRhs();
  auto aType = tensorOf(a), bType = tensorOf(b);
  bool aVector = aType.getRank() == 1, bVector = bType.getRank() == 1;
  // Work on the >= 2-D forms, as torch.matmul does.
  Value a2 = aVector ? gb.reshape(a, {1, aType.getShape()[0]}) : a;
  Value b2 = bVector ? gb.reshape(b, {bType.getShape()[0], 1}) : b;
  ArrayRef<int64_t> a2s = tensorOf(a2).getShape(),
                    b2s = tensorOf(b2).getShape();
  ArrayRef<int64_t> gs = tensorOf(g[0]).getShape();
  SmallVector<int64_t> g2s(gs.begin(),
                           gs.end() - (aVector ? 0 : 1) - (bVector ? 0 : 1));
  g2s.push_back(a2s[a2s.size() - 2]);
  g2s.push_back(b2s.back());
  Value g2 = gb.reshape(g[0], g2s);
  auto transposed = [&](Value v) -> Value {
    int64_t r = tensorOf(v).getRank();
    return gb.b.create<TransposeOp>(gb.loc, v, gb.b.getI64IntegerAttr(r - 2),
                                    gb.b.getI64IntegerAttr(r - 1));
  };
  Value ga = gb.b.create<MatmulOp>(gb.loc, g2, transposed(b2));
  Value gbv = gb.b.create<MatmulOp>(gb.loc, transposed(a2), g2);
  out.push_back({a, gb.reshape(gb.sumTo(ga, a2s), aType.getShape())});
  out.push_back({b, gb.reshape(gb.sumTo(gbv, b2s), bType.getShape())});
  return success();
}

} // namespace strata::ir::vjp

namespace {
/// Attaches `Op`'s model when a `rule(Op, ...)` above is its VJP: an op
/// whose rule is written here has it, with no list to add it to. (Ops that
/// implement the interface in ODS, the unary ops, have no rule here; the
/// view, scan and index ops attach theirs in their own files.)
template <typename Op> constexpr bool kHasRule = requires {
  vjp::rule(std::declval<Op>(), std::declval<GradBuilder &>(),
            ArrayRef<Value>(), std::declval<Out &>());
};

template <typename Op> void attachIfRuled(MLIRContext &ctx) {
  if constexpr (kHasRule<Op>)
    Op::template attachInterface<Model<Op>>(ctx);
}

template <typename... Ops> void attachRuled(MLIRContext &ctx) {
  (attachIfRuled<Ops>(ctx), ...);
}
} // namespace

void strata::ir::attachVJPModels(MLIRContext &ctx) {
  // Every op of the dialect, from ODS's list (strata-differentiate and the
  // test VJPCoverage name an op that takes floats and has no VJP).
  attachRuled<
#define GET_OP_LIST
#include "strata/IR/StrataOps.cpp.inc"
      >(ctx);
  vjp::attachViewModels(ctx);
  vjp::attachScanModels(ctx);
  vjp::attachIndexModels(ctx);
}

#include "strata/IR/StrataAutodiffInterface.cpp.inc"
