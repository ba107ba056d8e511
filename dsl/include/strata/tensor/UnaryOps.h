//===- UnaryOps.h - Tensor's elementwise unary ops --------------*- C++ -*-===//
//
// The elementwise ops of one tensor (dsl/lib/OpsUnary.cpp; clamp and
// nan_to_num: OpsWhere.cpp) and their in-place forms.
// Part of class strata::Tensor: strata/Tensor.h includes this file inside
// the class, so these are Tensor's members (not a header of its own).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TENSOR_CLASS_BODY
#error "part of class strata::Tensor: include strata/Tensor.h"
#endif

/// Unary math.
Tensor neg(SourceLoc loc = SourceLoc::current()) const;
/// |x|.
Tensor abs(SourceLoc loc = SourceLoc::current()) const;
/// e^x (integers promote to f32).
Tensor exp(SourceLoc loc = SourceLoc::current()) const;
/// ln x.
Tensor log(SourceLoc loc = SourceLoc::current()) const;
/// sqrt x.
Tensor sqrt(SourceLoc loc = SourceLoc::current()) const;
/// max(x, 0).
Tensor relu(SourceLoc loc = SourceLoc::current()) const;
/// 1 / (1 + e^-x).
Tensor sigmoid(SourceLoc loc = SourceLoc::current()) const;
/// tanh x.
Tensor tanh(SourceLoc loc = SourceLoc::current()) const;
/// Sine (integers and bool promote to f32, as all below unless said).
Tensor sin(SourceLoc loc = SourceLoc::current()) const;
/// Cosine.
Tensor cos(SourceLoc loc = SourceLoc::current()) const;
/// Tangent.
Tensor tan(SourceLoc loc = SourceLoc::current()) const;
/// Arcsine.
Tensor asin(SourceLoc loc = SourceLoc::current()) const;
/// Arccosine.
Tensor acos(SourceLoc loc = SourceLoc::current()) const;
/// Arctangent.
Tensor atan(SourceLoc loc = SourceLoc::current()) const;
/// Hyperbolic sine.
Tensor sinh(SourceLoc loc = SourceLoc::current()) const;
/// Hyperbolic cosine.
Tensor cosh(SourceLoc loc = SourceLoc::current()) const;
/// 2^x.
Tensor exp2(SourceLoc loc = SourceLoc::current()) const;
/// e^x - 1.
Tensor expm1(SourceLoc loc = SourceLoc::current()) const;
/// Base-2 logarithm.
Tensor log2(SourceLoc loc = SourceLoc::current()) const;
/// Base-10 logarithm.
Tensor log10(SourceLoc loc = SourceLoc::current()) const;
/// ln(1 + x).
Tensor log1p(SourceLoc loc = SourceLoc::current()) const;
/// 1 / sqrt(x).
Tensor rsqrt(SourceLoc loc = SourceLoc::current()) const;
/// 1 / x.
Tensor reciprocal(SourceLoc loc = SourceLoc::current()) const;
/// The error function.
Tensor erf(SourceLoc loc = SourceLoc::current()) const;
/// x * x (integers stay integers, bool becomes i64).
Tensor square(SourceLoc loc = SourceLoc::current()) const;
/// -1, 0 or 1 (NaN gives 0; bool stays bool).
Tensor sign(SourceLoc loc = SourceLoc::current()) const;
/// Floor (integers are returned as they are).
Tensor floor(SourceLoc loc = SourceLoc::current()) const;
/// Ceiling (integers are returned as they are).
Tensor ceil(SourceLoc loc = SourceLoc::current()) const;
/// Round half to even (integers are returned as they are).
Tensor round(SourceLoc loc = SourceLoc::current()) const;
/// Round toward zero (integers are returned as they are).
Tensor trunc(SourceLoc loc = SourceLoc::current()) const;
/// x * sigmoid(x) (floating point only).
Tensor silu(SourceLoc loc = SourceLoc::current()) const;
/// ln(1 + e^x), x itself above 20 (floating point only).
Tensor softplus(SourceLoc loc = SourceLoc::current()) const;
/// x == 0, as bool.
Tensor logical_not(SourceLoc loc = SourceLoc::current()) const;
/// ~x of integers, !x of bool.
Tensor bitwise_not(SourceLoc loc = SourceLoc::current()) const;
/// GELU: approximate "none" (PyTorch's default, x * Phi(x) via erf) or
/// "tanh" (floating point only).
Tensor gelu(const std::string &approximate = "none",
            SourceLoc loc = SourceLoc::current()) const;
/// min(max(x, lo), hi) with optional bounds (the result type promotes
/// with the bounds, as PyTorch's); the gradient passes where lo <= x <= hi.
Tensor clamp(std::optional<Scalar> lo, std::optional<Scalar> hi,
             SourceLoc loc = SourceLoc::current()) const;
/// clamp(lo, none).
Tensor clamp_min(Scalar lo, SourceLoc loc = SourceLoc::current()) const;
/// clamp(none, hi).
Tensor clamp_max(Scalar hi, SourceLoc loc = SourceLoc::current()) const;
/// NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest
/// finite values unless given); integers and bool are returned as they
/// are.
Tensor nan_to_num(std::optional<double> nan = 0.0,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt,
                  SourceLoc loc = SourceLoc::current()) const;
/// x != x: true at NaN (bool; integers are never NaN).
Tensor isnan(SourceLoc loc = SourceLoc::current()) const;
/// |x| == inf (bool; false for integers).
Tensor isinf(SourceLoc loc = SourceLoc::current()) const;
/// Neither NaN nor infinite (bool; true for integers).
Tensor isfinite(SourceLoc loc = SourceLoc::current()) const;

//===--- In place (a write through this view; bumps the version) ----------===//
/// max(this, 0) in place.
Tensor &relu_(SourceLoc loc = SourceLoc::current());
/// sin() in place.
Tensor &sin_(SourceLoc loc = SourceLoc::current());
/// cos() in place.
Tensor &cos_(SourceLoc loc = SourceLoc::current());
/// tan() in place.
Tensor &tan_(SourceLoc loc = SourceLoc::current());
/// asin() in place.
Tensor &asin_(SourceLoc loc = SourceLoc::current());
/// acos() in place.
Tensor &acos_(SourceLoc loc = SourceLoc::current());
/// atan() in place.
Tensor &atan_(SourceLoc loc = SourceLoc::current());
/// sinh() in place.
Tensor &sinh_(SourceLoc loc = SourceLoc::current());
/// cosh() in place.
Tensor &cosh_(SourceLoc loc = SourceLoc::current());
/// exp2() in place.
Tensor &exp2_(SourceLoc loc = SourceLoc::current());
/// expm1() in place.
Tensor &expm1_(SourceLoc loc = SourceLoc::current());
/// log2() in place.
Tensor &log2_(SourceLoc loc = SourceLoc::current());
/// log10() in place.
Tensor &log10_(SourceLoc loc = SourceLoc::current());
/// log1p() in place.
Tensor &log1p_(SourceLoc loc = SourceLoc::current());
/// rsqrt() in place.
Tensor &rsqrt_(SourceLoc loc = SourceLoc::current());
/// reciprocal() in place.
Tensor &reciprocal_(SourceLoc loc = SourceLoc::current());
/// erf() in place.
Tensor &erf_(SourceLoc loc = SourceLoc::current());
/// square() in place.
Tensor &square_(SourceLoc loc = SourceLoc::current());
/// sign() in place.
Tensor &sign_(SourceLoc loc = SourceLoc::current());
/// floor() in place.
Tensor &floor_(SourceLoc loc = SourceLoc::current());
/// ceil() in place.
Tensor &ceil_(SourceLoc loc = SourceLoc::current());
/// round() in place.
Tensor &round_(SourceLoc loc = SourceLoc::current());
/// trunc() in place.
Tensor &trunc_(SourceLoc loc = SourceLoc::current());
/// silu() in place.
Tensor &silu_(SourceLoc loc = SourceLoc::current());
/// logical_not() in place.
Tensor &logical_not_(SourceLoc loc = SourceLoc::current());
/// bitwise_not() in place.
Tensor &bitwise_not_(SourceLoc loc = SourceLoc::current());
/// neg() in place.
Tensor &neg_(SourceLoc loc = SourceLoc::current());
/// abs() in place.
Tensor &abs_(SourceLoc loc = SourceLoc::current());
/// exp() in place.
Tensor &exp_(SourceLoc loc = SourceLoc::current());
/// log() in place.
Tensor &log_(SourceLoc loc = SourceLoc::current());
/// sqrt() in place.
Tensor &sqrt_(SourceLoc loc = SourceLoc::current());
/// sigmoid() in place.
Tensor &sigmoid_(SourceLoc loc = SourceLoc::current());
/// tanh() in place.
Tensor &tanh_(SourceLoc loc = SourceLoc::current());
/// gelu() in place.
Tensor &gelu_(const std::string &approximate = "none",
              SourceLoc loc = SourceLoc::current());
/// clamp() in place.
Tensor &clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi,
               SourceLoc loc = SourceLoc::current());
/// clamp_min() in place.
Tensor &clamp_min_(Scalar lo, SourceLoc loc = SourceLoc::current());
/// clamp_max() in place.
Tensor &clamp_max_(Scalar hi, SourceLoc loc = SourceLoc::current());
/// nan_to_num() in place.
Tensor &nan_to_num_(std::optional<double> nan = 0.0,
                    std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt,
                    SourceLoc loc = SourceLoc::current());
