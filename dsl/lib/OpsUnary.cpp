//===- OpsUnary.cpp - the elementwise unary ops ---------------------------===//
//
// Each op is one strata unary op (StrataUnaryOps.td) recorded with
// PyTorch's dtype checks: integers and bool promote to f32 for the float
// ops, some refuse bool or integers as PyTorch's kernels do. Their in-place
// forms record the op, then a write into this view.
//
//===----------------------------------------------------------------------===//
#include "OpBuilders.h"

#include <cmath>

using namespace strata;
using namespace strata::detail;

namespace {

/// PyTorch's CPU kernel of float-only unary op `name`, for its message.
std::string floatKernel(std::string_view name) {
  return name.starts_with("gelu") ? "GeluKernelImpl"
                                  : std::string(name) + "_cpu";
}

/// Records unary op `name` of `in` with PyTorch's dtype checks. What the op
/// takes is its ODS dtype rule (StrataUnaryOps.td): under `Float` integers
/// and bool are converted to f32 first (PyTorch's promotion), under
/// `FloatOnly` they are refused as PyTorch's kernel refuses them; bool is
/// refused with PyTorch's own words where its message is op-specific.
Tensor unary(const Tensor &in, const char *name, const SourceLoc &loc) {
  const TensorImpl &t = implOf(in, loc);
  std::string_view op = name;
  if (t.dtype == DType::Bool && op == "neg")
    fail("Negation, the `-` operator, on a bool tensor is not supported.",
         "if you are trying to invert a mask, use the `~` or "
         "`logical_not()` operator instead",
         loc);
  if (t.dtype == DType::Bool && op == "abs")
    fail("\"abs_cpu\" not implemented for 'Bool'",
         "a bool tensor is its own absolute value; convert it first if a "
         "number is needed",
         loc);
  if (t.dtype == DType::Bool && op == "relu")
    fail("Boolean inputs not supported for relu",
         "convert the mask first: x.to(strata::kFloat32).relu()", loc);
  ir::DTypeRule rule = dtypesOf(name, loc).rule;
  bool isFloat = isFloatingPoint(t.dtype);
  if (rule == ir::DTypeRule::FloatOnly && !isFloat)
    notImplementedFor(floatKernel(op).c_str(), t.dtype,
                      "convert first: x.to(strata::kFloat32)", loc);
  Tensor x = rule == ir::DTypeRule::Float && !isFloat
                 ? castTo(in, DType::F32, loc)
                 : in;
  return record(Op::Unary, name, x.impl()->dtype, t.layout.sizes, {&x}, loc);
}

/// floor/ceil/round/trunc: integers are kept, bool refused.
Tensor rounding(const Tensor &in, const char *name, const SourceLoc &loc) {
  DType t = implOf(in, loc).dtype;
  if (t == DType::Bool)
    notImplementedFor((std::string(name) + "_vml_cpu").c_str(), t,
                      "convert the mask to an integer or float type first",
                      loc);
  return unary(in, name, loc);
}

} // namespace

#define STRATA_UNARY(method)                                                   \
  Tensor Tensor::method(SourceLoc loc) const {                                 \
    return unary(*this, #method, loc);                                         \
  }
STRATA_UNARY(neg)
STRATA_UNARY(abs)
STRATA_UNARY(exp)
STRATA_UNARY(log)
STRATA_UNARY(sqrt)
STRATA_UNARY(relu)
STRATA_UNARY(sigmoid)
STRATA_UNARY(tanh)
STRATA_UNARY(sin)
STRATA_UNARY(cos)
STRATA_UNARY(tan)
STRATA_UNARY(asin)
STRATA_UNARY(acos)
STRATA_UNARY(atan)
STRATA_UNARY(sinh)
STRATA_UNARY(cosh)
STRATA_UNARY(exp2)
STRATA_UNARY(expm1)
STRATA_UNARY(log2)
STRATA_UNARY(log10)
STRATA_UNARY(log1p)
STRATA_UNARY(rsqrt)
STRATA_UNARY(reciprocal)
STRATA_UNARY(erf)
STRATA_UNARY(sign)
#undef STRATA_UNARY

Tensor Tensor::square(SourceLoc loc) const {
  // PyTorch's pow(x, 2): bool squares as int64.
  if (implOf(*this, loc).dtype == DType::Bool)
    return unary(castTo(*this, DType::I64, loc), "square", loc);
  return unary(*this, "square", loc);
}

Tensor Tensor::floor(SourceLoc loc) const {
  return rounding(*this, "floor", loc);
}
Tensor Tensor::ceil(SourceLoc loc) const {
  return rounding(*this, "ceil", loc);
}
Tensor Tensor::round(SourceLoc loc) const {
  return rounding(*this, "round", loc);
}
Tensor Tensor::trunc(SourceLoc loc) const {
  return rounding(*this, "trunc", loc);
}

Tensor Tensor::silu(SourceLoc loc) const { return unary(*this, "silu", loc); }

Tensor Tensor::softplus(SourceLoc loc) const {
  return unary(*this, "softplus", loc);
}

Tensor Tensor::gelu(const std::string &approximate, SourceLoc loc) const {
  if (approximate != "none" && approximate != "tanh")
    fail("approximate argument must be either none or tanh.",
         "gelu(\"none\") (exact, the default) or gelu(\"tanh\")", loc);
  return unary(*this, approximate == "tanh" ? "gelu_tanh" : "gelu", loc);
}

Tensor Tensor::bitwise_not(SourceLoc loc) const {
  DType t = implOf(*this, loc).dtype;
  if (isFloatingPoint(t))
    notImplementedFor("bitwise_not_cpu", t,
                      "bitwise ops take integer or bool tensors; use "
                      "logical_not() for the truth value of floats",
                      loc);
  return unary(*this, "bitwise_not", loc);
}

Tensor Tensor::logical_not(SourceLoc loc) const {
  implOf(*this, loc);
  const layout::Layout &l = impl()->layout;
  if (layout::isContiguous(l) || layout::isNonOverlappingAndDense(l))
    return castTo(*this, DType::Bool, loc).bitwise_not(loc);
  // One op, so the general path lays the result out as PyTorch's single
  // iterator does (a cast then bitwise_not of its dense result would be
  // contiguous where size-1 dims sort otherwise).
  return binary("eq", Arg{this, {}}, Arg{nullptr, Scalar(0)}, loc);
}

Tensor Tensor::isnan(SourceLoc loc) const {
  implOf(*this, loc);
  return ne(*this, loc); // only NaN differs from itself; never an integer
}

Tensor Tensor::isinf(SourceLoc loc) const {
  if (!isFloatingPoint(implOf(*this, loc).dtype))
    return ne(*this, loc); // all false
  return abs(loc).eq(scalarTensor(Scalar(INFINITY), dtype(loc), loc), loc);
}

Tensor Tensor::isfinite(SourceLoc loc) const {
  if (!isFloatingPoint(implOf(*this, loc).dtype))
    return eq(*this, loc); // all true
  // NaN < inf is false, as NaN is not finite.
  return abs(loc).lt(scalarTensor(Scalar(INFINITY), dtype(loc), loc), loc);
}

//===--- In place ---------------------------------------------------------===//

Tensor &Tensor::relu_(SourceLoc loc) {
  checkInplaceFirst(*this, nullptr, "relu_", loc);
  return inPlace(*this, relu(loc), "relu_", loc);
}

// The in-place forms: the op, then a write into this view (PyTorch's
// "result type Float can't be cast to the desired output type Long" for
// an integer tensor whose op gives floats).
#define STRATA_UNARY_INPLACE(method)                                           \
  Tensor &Tensor::method##_(SourceLoc loc) {                                   \
    implOf(*this, loc);                                                        \
    checkInplaceFirst(*this, nullptr, #method "_", loc);                       \
    return inPlace(*this, method(loc), #method "_", loc);                      \
  }
STRATA_UNARY_INPLACE(sin)
STRATA_UNARY_INPLACE(cos)
STRATA_UNARY_INPLACE(tan)
STRATA_UNARY_INPLACE(asin)
STRATA_UNARY_INPLACE(acos)
STRATA_UNARY_INPLACE(atan)
STRATA_UNARY_INPLACE(sinh)
STRATA_UNARY_INPLACE(cosh)
STRATA_UNARY_INPLACE(exp2)
STRATA_UNARY_INPLACE(expm1)
STRATA_UNARY_INPLACE(log2)
STRATA_UNARY_INPLACE(log10)
STRATA_UNARY_INPLACE(log1p)
STRATA_UNARY_INPLACE(rsqrt)
STRATA_UNARY_INPLACE(reciprocal)
STRATA_UNARY_INPLACE(erf)
STRATA_UNARY_INPLACE(square)
STRATA_UNARY_INPLACE(sign)
STRATA_UNARY_INPLACE(floor)
STRATA_UNARY_INPLACE(ceil)
STRATA_UNARY_INPLACE(round)
STRATA_UNARY_INPLACE(trunc)
STRATA_UNARY_INPLACE(silu)
STRATA_UNARY_INPLACE(bitwise_not)
STRATA_UNARY_INPLACE(neg)
STRATA_UNARY_INPLACE(abs)
STRATA_UNARY_INPLACE(exp)
STRATA_UNARY_INPLACE(log)
STRATA_UNARY_INPLACE(sqrt)
STRATA_UNARY_INPLACE(sigmoid)
STRATA_UNARY_INPLACE(tanh)
#undef STRATA_UNARY_INPLACE

Tensor &Tensor::logical_not_(SourceLoc loc) {
  implOf(*this, loc);
  // Not differentiable (derivatives.yaml): PyTorch writes even into a leaf
  // that requires grad, as under no_grad.
  NoGradGuard noGrad;
  checkInplaceFirst(*this, nullptr, "logical_not_", loc);
  return inPlace(*this, logical_not(loc), "logical_not_", loc);
}

Tensor &Tensor::gelu_(const std::string &approximate, SourceLoc loc) {
  implOf(*this, loc);
  checkInplaceFirst(*this, nullptr, "gelu_", loc);
  return inPlace(*this, gelu(approximate, loc), "gelu_", loc);
}
