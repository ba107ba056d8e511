//===- GradFnNames.cpp - PyTorch's names of grad_fns ----------------------===//
//
// The name PyTorch 1.13 gives the grad_fn of each recorded op and view
// (MulBackward0, SumBackward1, TBackward0, ...), as GradFn::name() shows.
// An op's name is derived from its IR mnemonic as torchgen derives it from
// the aten op's (sin: SinBackward0, scatter_add: ScatterAddBackward0), so
// a new op needs no entry here unless PyTorch names it otherwise;
// tests/e2e/OpAutogradTest.cpp checks every differentiable op of the
// dialect against PyTorch.
//
//===----------------------------------------------------------------------===//
#include "AutogradGraph.h"

#include <cctype>
#include <string>
#include <string_view>
#include <utility>

using namespace strata;
using namespace strata::detail;

namespace {
/// PyTorch's name of the backward node of aten op `op`: torchgen's, each
/// `_`-separated part title-cased as Python's str.title() does it (a
/// letter after a digit too: log1p, Log1PBackward0), then `Backward0` (the
/// first formula of the op's name in derivatives.yaml).
std::string derivedName(std::string_view op) {
  std::string out;
  bool upper = true;
  for (char c : op) {
    if (c == '_') {
      upper = true;
      continue;
    }
    bool letter = std::isalpha(static_cast<unsigned char>(c));
    out += !letter ? c
           : upper ? static_cast<char>(std::toupper(c))
                   : static_cast<char>(std::tolower(c));
    upper = !letter;
  }
  return out + "Backward0";
}

/// The ops whose PyTorch node is not named after them: another aten op
/// there, or none (floor_divide has no derivative).
const std::pair<const char *, const char *> kRenamed[] = {
    {"square", "PowBackward0"},       // torch.square is pow(x, 2)
    {"gelu_tanh", "GeluBackward0"},   // gelu(x, approximate='tanh')
    {"cast", "ToCopyBackward0"},      // to(dtype) is _to_copy
    {"copy", "CloneBackward0"},       // clone()
    {"contiguous", "CloneBackward0"}, // a copying contiguous() clones
    {"floor_divide", "NotImplemented"}};

/// The name of an in-place write `n` shown as its own node.
std::string writeName(const Node &n) {
  if (n.viewWrite)
    return "CopySlices";
  std::string op = n.inplaceOp ? n.inplaceOp : "copy_";
  if (op == "copy_")
    return "CopyBackwards";
  if (op == "fill_")
    return "FillBackward2"; // fill_.Scalar (derivatives.yaml's third)
  op.pop_back();
  return derivedName(op);
}

/// The ops whose PyTorch name depends on the overload recorded (a dim list,
/// a Scalar operand, the ranks of a product): empty for the others.
std::string overloadName(const Node &n) {
  const auto &in = n.gradIn();
  if (isOp(n, "sum"))
    return n.dimList ? "SumBackward1" : "SumBackward0";
  if (isOp(n, "mean"))
    return n.dimList ? "MeanBackward1" : "MeanBackward0";
  if (isOp(n, "prod"))
    return n.dimList ? "ProdBackward1" : "ProdBackward0";
  auto number = [&](size_t i) { return i < in.size() && isNumber(in[i]); };
  // pow(Tensor, Scalar), pow(Tensor, Tensor), pow(Scalar, Tensor)
  if (isOp(n, "pow"))
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
  return "";
}
} // namespace

std::string strata::detail::gradFnNameOf(const Node &n) {
  if (n.compositeName())
    return n.compositeName();
  if (n.op == Op::Write)
    return writeName(n);
  if (std::string name = overloadName(n); !name.empty())
    return name;
  for (const auto &[op, name] : kRenamed)
    if (isOp(n, op))
      return name;
  return derivedName(n.name);
}

std::string strata::detail::viewGradFnName(const ViewChain &v) {
  return v.shownAs ? v.shownAs : viewGradFnName(v.op, v.args);
}

std::string strata::detail::viewGradFnName(std::string_view op,
                                           const Shape &args) {
  // (scripts/gen_autograd_golden.py checks them against torch.)
  if (op == "squeeze") // squeeze(), squeeze(dim)
    return args.empty() ? "SqueezeBackward0" : "SqueezeBackward1";
  if (op == "reshape" || op == "flatten") // a view: _reshape_alias
    return "ReshapeAliasBackward0";
  if (op == "narrow") // narrow is a slice
    return "SliceBackward0";
  return derivedName(op);
}
