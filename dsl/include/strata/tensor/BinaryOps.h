//===- BinaryOps.h - Tensor's elementwise binary ops ------------*- C++ -*-===//
//
// The elementwise ops of two tensors (or a tensor and a number) with
// broadcasting and PyTorch's type promotion, lerp and isclose
// (dsl/lib/OpsBinary.cpp), and their in-place forms.
// Part of class strata::Tensor: strata/Tensor.h includes this file inside
// the class, so these are Tensor's members (not a header of its own).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TENSOR_CLASS_BODY
#error "part of class strata::Tensor: include strata/Tensor.h"
#endif

/// Elementwise ops with broadcasting and PyTorch's type promotion.
Tensor add(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// this - o.
Tensor sub(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// this + alpha * o (torch.add(self, other, alpha=alpha)): for floats one
/// fused multiply-add, as PyTorch's kernel.
Tensor add(const Tensor &o, Scalar alpha,
           SourceLoc loc = SourceLoc::current()) const;
/// this - alpha * o (one fused multiply-add for floats).
Tensor sub(const Tensor &o, Scalar alpha,
           SourceLoc loc = SourceLoc::current()) const;
/// this * o.
Tensor mul(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// True division (integers give floats, as PyTorch).
Tensor div(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// this ** o.
Tensor pow(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// this ** s.
Tensor pow(Scalar s, SourceLoc loc = SourceLoc::current()) const;
/// Elementwise comparisons (bool results).
Tensor eq(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// this != o.
Tensor ne(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// this < o.
Tensor lt(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// this <= o.
Tensor le(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// this > o.
Tensor gt(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// this >= o.
Tensor ge(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// Elementwise a && b, a || b, a != b of the operands' truth values.
Tensor logical_and(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// Elementwise a || b (bool result).
Tensor logical_or(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// Elementwise a xor b (bool result).
Tensor logical_xor(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// Bitwise and of integer or bool tensors (PyTorch's type promotion).
Tensor bitwise_and(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// Bitwise and with a scalar.
Tensor bitwise_and(Scalar s, SourceLoc loc = SourceLoc::current()) const;
/// Bitwise or of integer or bool tensors.
Tensor bitwise_or(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// Bitwise or with a scalar.
Tensor bitwise_or(Scalar s, SourceLoc loc = SourceLoc::current()) const;
/// Bitwise xor of integer or bool tensors.
Tensor bitwise_xor(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// Bitwise xor with a scalar.
Tensor bitwise_xor(Scalar s, SourceLoc loc = SourceLoc::current()) const;
/// atan2(this, o): the angle of (o, this), a float (integers promote).
Tensor atan2(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// sqrt(this^2 + o^2) without overflow (floats only, as torch.hypot).
Tensor hypot(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// log(exp(this) + exp(o)) without overflow (floats only, as
/// torch.logaddexp; no in-place form, as in PyTorch).
Tensor logaddexp(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// C's fmod: the remainder with the sign of this (integers too; an
/// integer division by a zero number raises ZeroDivisionError).
Tensor fmod(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// fmod() by a number.
Tensor fmod(Scalar s, SourceLoc loc = SourceLoc::current()) const;
/// Python's modulo: the remainder with the sign of the divisor.
Tensor remainder(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
/// remainder() by a number.
Tensor remainder(Scalar s, SourceLoc loc = SourceLoc::current()) const;
/// Division rounded down (PyTorch 1.13's floor_divide; no gradient).
Tensor floor_divide(const Tensor &o,
                    SourceLoc loc = SourceLoc::current()) const;
/// floor_divide() by a number.
Tensor floor_divide(Scalar s, SourceLoc loc = SourceLoc::current()) const;
/// this + weight * (end - this), as PyTorch computes it (floats).
Tensor lerp(const Tensor &end, Scalar weight,
            SourceLoc loc = SourceLoc::current()) const;
/// lerp() with a weight tensor (broadcast; same dtype).
Tensor lerp(const Tensor &end, const Tensor &weight,
            SourceLoc loc = SourceLoc::current()) const;
/// |this - o| <= atol + rtol * |o| elementwise (bool; equal values,
/// infinities included, are close; NaNs are when equal_nan).
Tensor isclose(const Tensor &o, double rtol = 1e-05, double atol = 1e-08,
               bool equal_nan = false,
               SourceLoc loc = SourceLoc::current()) const;
/// Whether isclose() holds for every element (evaluates now).
bool allclose(const Tensor &o, double rtol = 1e-05, double atol = 1e-08,
              bool equal_nan = false,
              SourceLoc loc = SourceLoc::current()) const;

//===--- In place (a write through this view; bumps the version) ----------===//
/// this += o.
Tensor &add_(const Tensor &o, SourceLoc loc = SourceLoc::current());
/// this += s.
Tensor &add_(Scalar s, SourceLoc loc = SourceLoc::current());
/// this -= o.
Tensor &sub_(const Tensor &o, SourceLoc loc = SourceLoc::current());
/// this -= s.
Tensor &sub_(Scalar s, SourceLoc loc = SourceLoc::current());
/// this += alpha * o.
Tensor &add_(const Tensor &o, Scalar alpha,
             SourceLoc loc = SourceLoc::current());
/// this -= alpha * o.
Tensor &sub_(const Tensor &o, Scalar alpha,
             SourceLoc loc = SourceLoc::current());
/// this *= o.
Tensor &mul_(const Tensor &o, SourceLoc loc = SourceLoc::current());
/// this *= s.
Tensor &mul_(Scalar s, SourceLoc loc = SourceLoc::current());
/// this /= o.
Tensor &div_(const Tensor &o, SourceLoc loc = SourceLoc::current());
/// this /= s.
Tensor &div_(Scalar s, SourceLoc loc = SourceLoc::current());
/// atan2() in place.
Tensor &atan2_(const Tensor &o, SourceLoc loc = SourceLoc::current());
/// hypot() in place.
Tensor &hypot_(const Tensor &o, SourceLoc loc = SourceLoc::current());
/// fmod() in place.
Tensor &fmod_(const Tensor &o, SourceLoc loc = SourceLoc::current());
/// fmod() by a number in place.
Tensor &fmod_(Scalar s, SourceLoc loc = SourceLoc::current());
/// remainder() in place.
Tensor &remainder_(const Tensor &o, SourceLoc loc = SourceLoc::current());
/// remainder() by a number in place.
Tensor &remainder_(Scalar s, SourceLoc loc = SourceLoc::current());
/// floor_divide() in place.
Tensor &floor_divide_(const Tensor &o, SourceLoc loc = SourceLoc::current());
/// floor_divide() by a number in place.
Tensor &floor_divide_(Scalar s, SourceLoc loc = SourceLoc::current());
/// lerp() in place.
Tensor &lerp_(const Tensor &end, Scalar weight,
              SourceLoc loc = SourceLoc::current());
/// lerp() with a weight tensor in place.
Tensor &lerp_(const Tensor &end, const Tensor &weight,
              SourceLoc loc = SourceLoc::current());
