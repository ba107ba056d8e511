//===- GradFnNames.cpp - PyTorch's names of grad_fns ----------------------===//
//
// The name PyTorch 1.13 gives the grad_fn of each recorded op and view
// (MulBackward0, SumBackward1, TBackward0, ...), as GradFn::name() shows.
//
//===----------------------------------------------------------------------===//
#include "AutogradGraph.h"

using namespace strata;
using namespace strata::detail;

std::string strata::detail::gradFnNameOf(const Node &n) {
  static const std::pair<const char *, const char *> names[] = {
      {"add", "AddBackward0"},
      {"sub", "SubBackward0"},
      {"mul", "MulBackward0"},
      {"div", "DivBackward0"},
      {"neg", "NegBackward0"},
      {"abs", "AbsBackward0"},
      {"exp", "ExpBackward0"},
      {"log", "LogBackward0"},
      {"sqrt", "SqrtBackward0"},
      {"relu", "ReluBackward0"},
      {"sigmoid", "SigmoidBackward0"},
      {"tanh", "TanhBackward0"},
      {"cumsum", "CumsumBackward0"},
      {"cumprod", "CumprodBackward0"},
      {"amax", "AmaxBackward0"},
      {"amin", "AminBackward0"},
      {"where", "WhereBackward0"},
      {"maximum", "MaximumBackward0"},
      {"minimum", "MinimumBackward0"},
      {"atan2", "Atan2Backward0"},
      {"floor_divide", "NotImplemented"},
      {"cast", "ToCopyBackward0"},
      {"copy", "CloneBackward0"},
      {"contiguous", "CloneBackward0"},
      {"sin", "SinBackward0"},
      {"cos", "CosBackward0"},
      {"tan", "TanBackward0"},
      {"asin", "AsinBackward0"},
      {"acos", "AcosBackward0"},
      {"atan", "AtanBackward0"},
      {"sinh", "SinhBackward0"},
      {"cosh", "CoshBackward0"},
      {"exp2", "Exp2Backward0"},
      {"expm1", "Expm1Backward0"},
      {"log2", "Log2Backward0"},
      {"log10", "Log10Backward0"},
      {"log1p", "Log1PBackward0"},
      {"rsqrt", "RsqrtBackward0"},
      {"reciprocal", "ReciprocalBackward0"},
      {"square", "PowBackward0"}, // torch.square is pow(x, 2)
      {"sign", "SignBackward0"},
      {"floor", "FloorBackward0"},
      {"ceil", "CeilBackward0"},
      {"round", "RoundBackward0"},
      {"trunc", "TruncBackward0"},
      {"erf", "ErfBackward0"},
      {"gelu", "GeluBackward0"},
      {"gelu_tanh", "GeluBackward0"},
      {"silu", "SiluBackward0"},
      {"softplus", "SoftplusBackward0"},
      {"gather", "GatherBackward0"},
      {"scatter", "ScatterBackward0"},
      {"scatter_add", "ScatterAddBackward0"}};
  const auto &in = n.gradIn();
  if (n.compositeName)
    return n.compositeName;
  if (n.op == Op::Write) {
    if (n.viewWrite)
      return "CopySlices";
    std::string op = n.inplaceOp ? n.inplaceOp : "copy_";
    if (op == "copy_")
      return "CopyBackwards";
    if (op == "fill_")
      return "FillBackward2"; // fill_.Scalar (derivatives.yaml's third)
    op.pop_back();
    op[0] = static_cast<char>(toupper(op[0]));
    return op + "Backward0";
  }
  if (isOp(n, "sum"))
    return n.dimList ? "SumBackward1" : "SumBackward0";
  if (isOp(n, "mean"))
    return n.dimList ? "MeanBackward1" : "MeanBackward0";
  if (isOp(n, "prod"))
    return n.dimList ? "ProdBackward1" : "ProdBackward0";
  auto number = [&](size_t i) { return i < in.size() && isNumber(in[i]); };
  if (isOp(n,
           "pow")) // pow(Tensor, Scalar), pow(Tensor, Tensor), pow(Scalar, ..)
    return number(1)   ? "PowBackward0"
           : number(0) ? "PowBackward2"
                       : "PowBackward1";
  if (isOp(n, "sub") && number(0))
    return "RsubBackward1"; // number - t is rsub(t, number)
  if (isOp(n, "fmod"))      // fmod(Tensor, Scalar), fmod(Tensor, Tensor)
    return number(1) ? "FmodBackward0" : "FmodBackward1";
  if (isOp(n, "remainder"))
    return number(1) ? "RemainderBackward0" : "RemainderBackward1";
  if (isOp(n, "lerp")) // lerp(.., Scalar weight), lerp(.., Tensor weight)
    return number(2) ? "LerpBackward0" : "LerpBackward1";
  if (isOp(n, "matmul") && in.size() == 2) {
    size_t a = in[0].layout.sizes.size(), b = in[1].layout.sizes.size();
    if (a == 1 && b == 1)
      return "DotBackward0";
    if (a == 2 && b == 1)
      return "MvBackward0";
    if (a == 2 && b == 2)
      return "MmBackward0";
    return "BmmBackward0";
  }
  for (const auto &[op, name] : names)
    if (isOp(n, op))
      return name;
  return std::string(n.name) + "Backward";
}

/// PyTorch 1.13's grad_fn of view op `v` (scripts/gen_autograd_golden.py
/// checks them against torch).
std::string strata::detail::viewGradFnName(const ViewChain &v) {
  static const std::pair<const char *, const char *> names[] = {
      {"t", "TBackward0"},
      {"transpose", "TransposeBackward0"},
      {"permute", "PermuteBackward0"},
      {"view", "ViewBackward0"},
      {"reshape", "ReshapeAliasBackward0"},
      {"flatten", "ReshapeAliasBackward0"},
      {"slice", "SliceBackward0"},
      {"narrow", "SliceBackward0"},
      {"select", "SelectBackward0"},
      {"expand", "ExpandBackward0"},
      {"unsqueeze", "UnsqueezeBackward0"},
      {"as_strided", "AsStridedBackward0"},
      {"diagonal", "DiagonalBackward0"},
      {"unfold", "UnfoldBackward0"},
      {"flip", "FlipBackward0"}};
  std::string_view op = v.op;
  if (op == "squeeze")
    return v.args.empty() ? "SqueezeBackward0" : "SqueezeBackward1";
  for (const auto &[o, name] : names)
    if (op == o)
      return name;
  return std::string(v.op) + "Backward";
}
