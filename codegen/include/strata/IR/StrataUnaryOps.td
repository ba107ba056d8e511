//===- StrataUnaryOps.td - the elementwise unary ops -------*- tablegen -*-===//
//
// Each unary op is declared once, here: its dtype rule, its scalar formula
// (as arith/math IR for the kernel body that the LLVM and CUDA emitters
// read, and in double for the reference evaluator) and its VJP. The fuser,
// the copy materializer, the gradient recomputation and the evaluator ask
// the op through ElementwiseOpInterface / VJPOpInterface; nothing else
// lists unary ops. Included by StrataOps.td.
//
// The code fields see:
//   scalar:    `s` (ScalarBuilder), `x` (the operand's scalar), `t` (its
//              type), `isF` (t is a float); returns the result's scalar.
//   reference: `x` (double); returns the result (rounded on store).
//   vjp:       `gb` (vjp::GradBuilder), `g` (the result's gradient), `x`
//              (the operand), `y` (the result), `e` (their element type),
//              `c(v)` (a 0-d fill of v); returns the operand's gradient
//              (derivatives.yaml's formula).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_STRATAUNARYOPS_TD
#define STRATA_IR_STRATAUNARYOPS_TD

/// `rule` is a ::strata::ir::DTypeRule (strata/IR/OpDTypes.h), the one
/// place an op's dtypes are said (the DSL's OpsUnary.cpp reads it): Float
/// (float operands only; the DSL casts integers and bool to f32 first),
/// FloatOnly (float operands only; the DSL refuses others, as PyTorch's
/// kernel does), Number (not bool), Any, Integral (integer or bool).
class Strata_UnaryOp<string mnemonic, string what, string rule = "Number">
    : Strata_Op<mnemonic, [DeclareOpInterfaceMethods<InferTypeOpInterface>,
                           DeclareOpInterfaceMethods<Strata_ElementwiseOpInterface>,
                           DeclareOpInterfaceMethods<Strata_VJPOpInterface>]> {
  let summary = "Elementwise " # what;
  let description = [{
    Elementwise; the input may have any layout (stride 0, negative). The
    result is a fresh tensor of the same shape and element type laid out as
    PyTorch's TensorIterator lays it out: a dense input's strides are kept.

    ```mlir
    %y = strata.}] # mnemonic # [{ %x
        : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
        -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  // Unset, they stop the build with what to write (not a missing return
  // in generated code): an elementwise op needs both.
  code scalar = [{
    static_assert(sizeof(::mlir::Value) == 0, "strata: this elementwise op's "
        "ODS entry has no `let scalar`: write its formula with ScalarBuilder "
        "`s` (docs/design.md, the op recipe)");
  }];
  code reference = [{
    static_assert(sizeof(double) == 0, "strata: this elementwise op's ODS "
        "entry has no `let reference`: write its value in double for the "
        "reference evaluator (docs/design.md, the op recipe)");
  }];
  // Ops whose gradient is zero (floor, sign, ...) keep this default.
  code vjp = [{ return gb.fill(0.0, e, vjp::tensorOf(x).getShape()); }];
  let extraClassDeclaration = [{
    /// The element types the op takes (strata::ir::elementwiseDTypes).
    static constexpr ::strata::ir::DTypeRule kDTypeRule =
        ::strata::ir::DTypeRule::}] # rule # [{;
    /// Its result has the operand's element type.
    static constexpr bool kCompare = false;
  }];
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, ::std::optional<::mlir::Location> location,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attributes,
        ::mlir::RegionRange regions,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return ::strata::ir::inferUnaryType(location, getOperationName(),
          operands, kDTypeRule, inferred);
    }
    ::mlir::Value $cppClass::buildScalar(::strata::ir::ScalarBuilder &s,
                                         ::llvm::ArrayRef<::mlir::Value> in) {
      ::mlir::Value x = in[0];
      ::mlir::Type t = x.getType();
      bool isF = t.isa<::mlir::FloatType>();
      (void)t, (void)isF;
      }] # scalar # [{
    }
    double $cppClass::evalScalar(::llvm::ArrayRef<double> in) {
      double x = in[0];
      }] # reference # [{
    }
    ::mlir::LogicalResult $cppClass::buildVJP(::mlir::OpBuilder &builder,
        ::llvm::ArrayRef<::mlir::Value> grads,
        ::strata::ir::GradContributions &out) {
      ::strata::ir::vjp::GradBuilder gb{builder, getLoc()};
      ::mlir::Value x = getInput(), y = getResult(), g = grads[0];
      ::mlir::Type e = ::strata::ir::vjp::tensorOf(x).getElementType();
      auto c = [&](double v) { return gb.fill(v, e); };
      (void)y, (void)g, (void)c;
      ::mlir::Value dx = [&]() -> ::mlir::Value { }] # vjp # [{ }();
      out.push_back({x, dx});
      return ::mlir::success();
    }
  }];
}

//===--- Arithmetic -------------------------------------------------------===//

def Strata_NegOp : Strata_UnaryOp<"neg", "negation"> {
  let scalar = [{
    return isF ? s.create<arith::NegFOp>(x)
               : s.create<arith::SubIOp>(s.constant(t, 0), x);
  }];
  let reference = [{ return -x; }];
  let vjp = [{ return gb.neg(g); }];
}

def Strata_AbsOp : Strata_UnaryOp<"abs", "absolute value", "Any"> {
  let scalar = [{
    if (t.isInteger(1))
      return x;
    return isF ? s.create<math::AbsFOp>(x) : s.create<math::AbsIOp>(x);
  }];
  let reference = [{ return std::fabs(x); }];
  let vjp = [{
    Value sign = gb.sub(gb.maskOf(gb.b.create<GtOp>(gb.loc, x, c(0)), e),
                        gb.maskOf(gb.b.create<LtOp>(gb.loc, x, c(0)), e));
    return gb.mul(g, sign);
  }];
}

def Strata_SquareOp : Strata_UnaryOp<"square", "x * x"> {
  let scalar = [{
    return isF ? s.create<arith::MulFOp>(x, x) : s.create<arith::MulIOp>(x, x);
  }];
  let reference = [{ return x * x; }];
  let vjp = [{ return gb.mul(g, gb.scale(x, 2.0)); }];
}

def Strata_ReciprocalOp : Strata_UnaryOp<"reciprocal", "1 / x", "Float"> {
  let scalar = [{ return s.create<arith::DivFOp>(s.constant(t, 1), x); }];
  let reference = [{ return 1 / x; }];
  let vjp = [{ return gb.neg(gb.mul(g, gb.mul(y, y))); }];
}

def Strata_SignOp : Strata_UnaryOp<"sign", "sign (-1, 0, 1; NaN gives 0)", "Any"> {
  let scalar = [{
    if (t.isInteger(1))
      return x;
    Value zero = s.constant(t, 0);
    Value neg = s.select(s.compare("lt", x, zero), s.constant(t, -1), zero);
    return s.select(s.compare("gt", x, zero), s.constant(t, 1), neg);
  }];
  let reference = [{ return (x > 0) - (x < 0); }];
}

//===--- Rounding (integers are their own result) -------------------------===//

def Strata_FloorOp : Strata_UnaryOp<"floor", "floor"> {
  let scalar = [{ return isF ? s.create<math::FloorOp>(x) : x; }];
  let reference = [{ return std::floor(x); }];
}

def Strata_CeilOp : Strata_UnaryOp<"ceil", "ceiling"> {
  let scalar = [{ return isF ? s.create<math::CeilOp>(x) : x; }];
  let reference = [{ return std::ceil(x); }];
}

def Strata_RoundOp : Strata_UnaryOp<"round", "rounding, half to even"> {
  let scalar = [{ return isF ? s.create<math::RoundEvenOp>(x) : x; }];
  let reference = [{ return std::nearbyint(x); }];
}

def Strata_TruncOp : Strata_UnaryOp<"trunc", "rounding toward zero"> {
  let scalar = [{ return isF ? s.create<math::TruncOp>(x) : x; }];
  let reference = [{ return std::trunc(x); }];
}

//===--- Exponentials and logarithms --------------------------------------===//

def Strata_ExpOp : Strata_UnaryOp<"exp", "exponential", "Float"> {
  let scalar = [{ return s.create<math::ExpOp>(x); }];
  let reference = [{ return std::exp(x); }];
  let vjp = [{ return gb.mul(g, y); }];
}

def Strata_Exp2Op : Strata_UnaryOp<"exp2", "2^x", "Float"> {
  let scalar = [{ return s.create<math::Exp2Op>(x); }];
  let reference = [{ return std::exp2(x); }];
  let vjp = [{ return gb.mul(g, gb.scale(y, M_LN2)); }];
}

def Strata_Expm1Op : Strata_UnaryOp<"expm1", "e^x - 1", "Float"> {
  let scalar = [{ return s.create<math::ExpM1Op>(x); }];
  let reference = [{ return std::expm1(x); }];
  let vjp = [{ return gb.mul(g, gb.add(y, c(1))); }];
}

def Strata_LogOp : Strata_UnaryOp<"log", "natural logarithm", "Float"> {
  let scalar = [{ return s.create<math::LogOp>(x); }];
  let reference = [{ return std::log(x); }];
  let vjp = [{ return gb.div(g, x); }];
}

def Strata_Log2Op : Strata_UnaryOp<"log2", "base-2 logarithm", "Float"> {
  let scalar = [{ return s.create<math::Log2Op>(x); }];
  let reference = [{ return std::log2(x); }];
  let vjp = [{ return gb.div(g, gb.scale(x, M_LN2)); }];
}

def Strata_Log10Op : Strata_UnaryOp<"log10", "base-10 logarithm", "Float"> {
  let scalar = [{ return s.create<math::Log10Op>(x); }];
  let reference = [{ return std::log10(x); }];
  let vjp = [{ return gb.div(g, gb.scale(x, M_LN10)); }];
}

def Strata_Log1pOp : Strata_UnaryOp<"log1p", "ln(1 + x)", "Float"> {
  let scalar = [{ return s.create<math::Log1pOp>(x); }];
  let reference = [{ return std::log1p(x); }];
  let vjp = [{ return gb.div(g, gb.add(x, c(1))); }];
}

def Strata_SqrtOp : Strata_UnaryOp<"sqrt", "square root", "Float"> {
  let scalar = [{ return s.create<math::SqrtOp>(x); }];
  let reference = [{ return std::sqrt(x); }];
  let vjp = [{ return gb.div(g, gb.scale(y, 2.0)); }];
}

def Strata_RsqrtOp : Strata_UnaryOp<"rsqrt", "1 / sqrt(x)", "Float"> {
  let scalar = [{ return s.create<math::RsqrtOp>(x); }];
  let reference = [{ return 1 / std::sqrt(x); }];
  let vjp = [{ return gb.scale(gb.mul(g, gb.mul(y, gb.mul(y, y))), -0.5); }];
}

//===--- Trigonometric and hyperbolic -------------------------------------===//

def Strata_SinOp : Strata_UnaryOp<"sin", "sine", "Float"> {
  let scalar = [{ return s.create<math::SinOp>(x); }];
  let reference = [{ return std::sin(x); }];
  let vjp = [{ return gb.mul(g, gb.op<CosOp>(x)); }];
}

def Strata_CosOp : Strata_UnaryOp<"cos", "cosine", "Float"> {
  let scalar = [{ return s.create<math::CosOp>(x); }];
  let reference = [{ return std::cos(x); }];
  let vjp = [{ return gb.neg(gb.mul(g, gb.op<SinOp>(x))); }];
}

def Strata_TanOp : Strata_UnaryOp<"tan", "tangent", "Float"> {
  let scalar = [{ return s.create<math::TanOp>(x); }];
  let reference = [{ return std::tan(x); }];
  let vjp = [{ return gb.mul(g, gb.add(c(1), gb.mul(y, y))); }];
}

// MLIR 16's math dialect has no asin/acos/sinh/cosh: they are built from
// atan2 and expm1/exp, in f64 for f32 (no cancellation or overflow the
// libm functions would not have).
def Strata_AsinOp : Strata_UnaryOp<"asin", "arcsine", "Float"> {
  let scalar = [{
    return s.inF64(x, [&](Value v) {
      Value one = s.constant(v.getType(), 1);
      Value c = s.create<math::SqrtOp>(
          s.create<arith::MulFOp>(s.create<arith::SubFOp>(one, v),
                                  s.create<arith::AddFOp>(one, v)));
      return s.create<math::Atan2Op>(v, c);
    });
  }];
  let reference = [{ return std::asin(x); }];
  let vjp = [{
    return gb.mul(g, gb.op<RsqrtOp>(gb.sub(c(1), gb.mul(x, x))));
  }];
}

def Strata_AcosOp : Strata_UnaryOp<"acos", "arccosine", "Float"> {
  let scalar = [{
    return s.inF64(x, [&](Value v) {
      Value one = s.constant(v.getType(), 1);
      Value c = s.create<math::SqrtOp>(
          s.create<arith::MulFOp>(s.create<arith::SubFOp>(one, v),
                                  s.create<arith::AddFOp>(one, v)));
      return s.create<math::Atan2Op>(c, v);
    });
  }];
  let reference = [{ return std::acos(x); }];
  let vjp = [{
    return gb.neg(gb.mul(g, gb.op<RsqrtOp>(gb.sub(c(1), gb.mul(x, x)))));
  }];
}

def Strata_AtanOp : Strata_UnaryOp<"atan", "arctangent", "Float"> {
  let scalar = [{ return s.create<math::AtanOp>(x); }];
  let reference = [{ return std::atan(x); }];
  let vjp = [{ return gb.div(g, gb.add(gb.mul(x, x), c(1))); }];
}

def Strata_SinhOp : Strata_UnaryOp<"sinh", "hyperbolic sine", "Float"> {
  let scalar = [{
    return s.inF64(x, [&](Value v) {
      Value d = s.create<arith::SubFOp>(
          s.create<math::ExpM1Op>(v),
          s.create<math::ExpM1Op>(s.create<arith::NegFOp>(v)));
      return s.create<arith::MulFOp>(d, s.constant(v.getType(), 0.5));
    });
  }];
  let reference = [{ return std::sinh(x); }];
  let vjp = [{ return gb.mul(g, gb.op<CoshOp>(x)); }];
}

def Strata_CoshOp : Strata_UnaryOp<"cosh", "hyperbolic cosine", "Float"> {
  let scalar = [{
    return s.inF64(x, [&](Value v) {
      Value sum = s.create<arith::AddFOp>(
          s.create<math::ExpOp>(v),
          s.create<math::ExpOp>(s.create<arith::NegFOp>(v)));
      return s.create<arith::MulFOp>(sum, s.constant(v.getType(), 0.5));
    });
  }];
  let reference = [{ return std::cosh(x); }];
  let vjp = [{ return gb.mul(g, gb.op<SinhOp>(x)); }];
}

def Strata_TanhOp : Strata_UnaryOp<"tanh", "hyperbolic tangent", "Float"> {
  let scalar = [{ return s.create<math::TanhOp>(x); }];
  let reference = [{ return std::tanh(x); }];
  let vjp = [{ return gb.mul(g, gb.sub(c(1), gb.mul(y, y))); }];
}

def Strata_ErfOp : Strata_UnaryOp<"erf", "error function", "Float"> {
  let scalar = [{ return s.create<math::ErfOp>(x); }];
  let reference = [{ return std::erf(x); }];
  let vjp = [{
    return gb.mul(g, gb.scale(gb.op<ExpOp>(gb.neg(gb.mul(x, x))), M_2_SQRTPI));
  }];
}

//===--- Activations ------------------------------------------------------===//

def Strata_ReluOp : Strata_UnaryOp<"relu", "max(x, 0)"> {
  let scalar = [{
    Value zero = s.constant(t, 0);
    if (!isF)
      return s.create<arith::MaxSIOp>(x, zero);
    // NaN stays NaN, as in PyTorch.
    return s.select(s.compare("lt", x, zero), zero, x);
  }];
  let reference = [{ return x > 0 || std::isnan(x) ? x : 0.0; }];
  // PyTorch's threshold_backward: result <= 0 ? 0 : g, a select (a NaN or
  // inf incoming gradient at a clipped point gives 0, not 0 * inf; a NaN
  // result passes the gradient, as NaN <= 0 is false).
  let vjp = [{
    Value clipped = gb.b.create<LeOp>(gb.loc, y, c(0));
    return gb.b.create<WhereOp>(gb.loc, clipped, c(0), g);
  }];
}

def Strata_SigmoidOp : Strata_UnaryOp<"sigmoid", "logistic sigmoid", "Float"> {
  let scalar = [{
    Value one = s.constant(t, 1);
    Value e = s.create<math::ExpOp>(s.create<arith::NegFOp>(x));
    return s.create<arith::DivFOp>(one, s.create<arith::AddFOp>(one, e));
  }];
  let reference = [{ return 1 / (1 + std::exp(-x)); }];
  let vjp = [{ return gb.mul(g, gb.mul(y, gb.sub(c(1), y))); }];
}

def Strata_GeluOp : Strata_UnaryOp<"gelu", "GELU, exact: x * Phi(x)", "FloatOnly"> {
  let scalar = [{
    Value erf = s.create<math::ErfOp>(
        s.create<arith::MulFOp>(x, s.constant(t, M_SQRT1_2)));
    Value half = s.create<arith::MulFOp>(x, s.constant(t, 0.5));
    return s.create<arith::MulFOp>(
        half, s.create<arith::AddFOp>(s.constant(t, 1), erf));
  }];
  let reference = [{ return 0.5 * x * (1 + std::erf(x * M_SQRT1_2)); }];
  // PyTorch's GeluBackwardKernelImpl: g * (cdf + x * pdf).
  let vjp = [{
    Value cdf =
        gb.scale(gb.add(c(1), gb.op<ErfOp>(gb.scale(x, M_SQRT1_2))), 0.5);
    Value pdf = gb.scale(gb.op<ExpOp>(gb.scale(gb.mul(x, x), -0.5)),
                         M_2_SQRTPI * M_SQRT1_2 * 0.5);
    return gb.mul(g, gb.add(cdf, gb.mul(x, pdf)));
  }];
}

def Strata_GeluTanhOp
    : Strata_UnaryOp<"gelu_tanh", "GELU, tanh approximation", "FloatOnly"> {
  let scalar = [{
    // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    Value x3 = s.create<arith::MulFOp>(x, s.create<arith::MulFOp>(x, x));
    Value inner = s.create<arith::MulFOp>(
        s.constant(t, M_2_SQRTPI * M_SQRT1_2),
        s.create<arith::AddFOp>(
            x, s.create<arith::MulFOp>(s.constant(t, 0.044715), x3)));
    Value half = s.create<arith::MulFOp>(x, s.constant(t, 0.5));
    return s.create<arith::MulFOp>(
        half, s.create<arith::AddFOp>(s.constant(t, 1),
                                      s.create<math::TanhOp>(inner)));
  }];
  let reference = [{
    double k = M_2_SQRTPI * M_SQRT1_2;
    return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
  }];
  // PyTorch's GeluBackwardKernelImpl (approximate="tanh").
  let vjp = [{
    double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5, kKappa = 0.044715;
    Value x2 = gb.mul(x, x);
    Value inner = gb.scale(gb.add(x, gb.scale(gb.mul(x2, x), kKappa)), kBeta);
    Value th = gb.op<TanhOp>(inner);
    Value left = gb.scale(x, 0.5), right = gb.add(c(1), th);
    Value dLeft = gb.scale(right, 0.5);
    Value dInner = gb.scale(gb.add(c(1), gb.scale(x2, 3 * kKappa)), kBeta);
    Value dRight = gb.mul(gb.mul(left, gb.sub(c(1), gb.mul(th, th))), dInner);
    return gb.mul(g, gb.add(dLeft, dRight));
  }];
}

def Strata_SiluOp : Strata_UnaryOp<"silu", "x * sigmoid(x)", "FloatOnly"> {
  let scalar = [{
    Value e = s.create<math::ExpOp>(s.create<arith::NegFOp>(x));
    return s.create<arith::DivFOp>(
        x, s.create<arith::AddFOp>(s.constant(t, 1), e));
  }];
  let reference = [{ return x / (1 + std::exp(-x)); }];
  let vjp = [{
    Value sig = gb.op<SigmoidOp>(x);
    return gb.mul(gb.mul(g, sig), gb.add(c(1), gb.mul(x, gb.sub(c(1), sig))));
  }];
}

def Strata_SoftplusOp
    : Strata_UnaryOp<"softplus", "ln(1 + e^x), x above 20", "FloatOnly"> {
  let scalar = [{
    // PyTorch's beta = 1, threshold = 20.
    Value soft = s.create<math::Log1pOp>(s.create<math::ExpOp>(x));
    return s.select(s.compare("gt", x, s.constant(t, 20)), x, soft);
  }];
  let reference = [{ return x > 20 ? x : std::log1p(std::exp(x)); }];
  let vjp = [{
    Value z = gb.op<ExpOp>(x);
    Value soft = gb.div(gb.mul(g, z), gb.add(z, c(1)));
    return gb.b.create<WhereOp>(gb.loc, gb.b.create<GtOp>(gb.loc, x, c(20)),
                                g, soft);
  }];
}

//===--- Bitwise ----------------------------------------------------------===//

def Strata_BitwiseNotOp
    : Strata_UnaryOp<"bitwise_not", "bitwise not (logical not of i1)",
                     "Integral"> {
  let scalar = [{ return s.create<arith::XOrIOp>(x, s.constant(t, -1)); }];
  let reference = [{
    if (getType().getElementType().isInteger(1))
      return x == 0;
    return static_cast<double>(~static_cast<int64_t>(x));
  }];
}

#endif // STRATA_IR_STRATAUNARYOPS_TD
