//===- Ops.cpp - the builders every op family records through -------------===//
//
// What OpBuilders.h declares: PyTorch's type promotion (result_type), one
// node recorded per op (record), the casts that keep the IR explicitly
// typed, numbers as 0-d fills (scalarTensor), the binary-op builder with
// PyTorch's dtype checks, and the layouts PyTorch gives composites
// (sizeOneStrides, iteratorLayout). The ops are in Ops<Family>.cpp.
//
//===----------------------------------------------------------------------===//
#include "CompositeNode.h"
#include "OpBuilders.h"
#include "strata/IR/OpDTypes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

using namespace strata;
using namespace strata::detail;

namespace {

int category(DType t) {
  return t == DType::Bool ? 0 : isFloatingPoint(t) ? 2 : 1;
}

DType promoteTypes(DType a, DType b) {
  if (a == b)
    return a;
  int ca = category(a), cb = category(b);
  if (ca != cb)
    return ca > cb ? a : b;
  if (ca == 2)
    return DType::F64; // f32 with f64
  return DType::I64;   // i32 with i64
}

/// PyTorch's combine_categories(higher, lower); `none` is undefined.
std::optional<DType> combine(std::optional<DType> higher,
                             std::optional<DType> lower) {
  if (!higher)
    return lower;
  if (!lower)
    return higher;
  if (isFloatingPoint(*higher))
    return higher;
  if (*higher == DType::Bool || isFloatingPoint(*lower))
    return promoteTypes(*higher, *lower);
  return higher;
}

DType scalarDefault(const Scalar &s) {
  return s.kind() == Scalar::Kind::Float ? DType::F32
         : s.kind() == Scalar::Kind::Int ? DType::I64
                                         : DType::Bool;
}

bool anyRequiresGrad(std::span<const Tensor *const> ts) {
  for (const Tensor *t : ts)
    if (requiresGradOf(*t->impl()))
      return true;
  return false;
}

/// PyTorch's CPU kernel of division-family op `name`, for its messages.
std::string modKernel(std::string_view name) {
  return name == "floor_divide" ? "div_floor_cpu" : std::string(name) + "_cpu";
}

} // namespace

const ir::ElementwiseDTypes &strata::detail::dtypesOf(const char *name,
                                                      const SourceLoc &loc) {
  const ir::ElementwiseDTypes *d = ir::elementwiseDTypes(name);
  if (!d)
    fail(std::string("strata has no elementwise op \"") + name + "\"",
         "this is a strata bug: the DSL records an op that the dialect "
         "(codegen/include/strata/IR/StrataOps.td) does not declare",
         loc);
  return *d;
}

DType strata::detail::resultType(std::span<const Arg> args) {
  std::optional<DType> dimR, zeroR, wrapR;
  for (const Arg &a : args) {
    std::optional<DType> *slot;
    DType t;
    if (a.tensor) {
      t = a.tensor->impl()->dtype;
      slot = a.tensor->impl()->layout.dim() > 0 ? &dimR : &zeroR;
    } else {
      t = scalarDefault(*a.scalar);
      slot = &wrapR;
    }
    *slot = *slot ? promoteTypes(**slot, t) : t;
  }
  return *combine(dimR, combine(zeroR, wrapR));
}
DType strata::detail::resultType(std::initializer_list<Arg> args) {
  return resultType(std::span<const Arg>(args.begin(), args.size()));
}

Tensor strata::detail::record(Op op, const char *name, DType dtype, Shape sizes,
                              std::span<const Tensor *const> inputs,
                              const SourceLoc &loc, Shape dims, bool keepdim,
                              bool dimList) {
  checkStorageSize(sizes, elementSize(dtype), name, loc);
  TraceLock lock; // the versions read are the ones the reader registers on
  auto node = std::make_shared<Node>();
  node->op = op;
  node->name = name;
  node->dtype = dtype;
  node->sizes = std::move(sizes);
  if (!dims.empty())
    node->rareFields().dims = std::move(dims);
  node->keepdim = keepdim;
  node->dimList = dimList;
  node->inputs.reserve(inputs.size());
  for (const Tensor *t : inputs) {
    if (isFloatingPoint(dtype)) // (checkViewRead: a result with autograd)
      checkViewRead(*t->impl(), loc);
    markGradLeaf(t->impl());
    node->inputs.push_back(operandOf(*t->impl()));
  }
  return makeResult(std::move(node), loc, anyRequiresGrad(inputs));
}
Tensor strata::detail::record(Op op, const char *name, DType dtype, Shape sizes,
                              std::initializer_list<const Tensor *> inputs,
                              const SourceLoc &loc, Shape dims, bool keepdim,
                              bool dimList) {
  return record(op, name, dtype, std::move(sizes),
                std::span<const Tensor *const>(inputs.begin(), inputs.size()),
                loc, std::move(dims), keepdim, dimList);
}

namespace {

/// A C++ number as the operand an op reads: the 0-d fill scalarTensor
/// makes, without the tensor and storage root around it (which recording
/// `x * c` would allocate only to free them when the op returns).
Operand numberOperand(const Scalar &value, DType dtype, const SourceLoc &loc) {
  auto node = std::make_shared<Node>();
  node->op = Op::Fill;
  node->name = "fill";
  node->dtype = dtype;
  setFillValue(*node, value);
  node->device = kDevAny; // joins a program on either device
  node->rootNumel = 1;
  node->loc = loc;
  Operand o;
  o.node = std::move(node);
  return o;
}

/// record() of binary op `name` over tensor `x` and a number's operand,
/// the number first or second; with `nodeOnly`, the node alone (finishNode:
/// no tensor, which is undefined).
Tensor recordWithNumber(const char *name, DType dtype, Shape sizes,
                        const Tensor &x, Operand number, bool numberFirst,
                        const SourceLoc &loc, NodePtr *nodeOnly) {
  checkStorageSize(sizes, elementSize(dtype), name, loc);
  TraceLock lock; // the version read is the one the reader registers on
  auto node = std::make_shared<Node>();
  node->op = Op::Binary;
  node->name = name;
  node->dtype = dtype;
  node->sizes = std::move(sizes);
  if (isFloatingPoint(dtype))
    checkViewRead(*x.impl(), loc);
  markGradLeaf(x.impl());
  node->inputs.reserve(2);
  if (numberFirst)
    node->inputs.push_back(std::move(number));
  node->inputs.push_back(operandOf(*x.impl()));
  if (!numberFirst)
    node->inputs.push_back(std::move(number));
  if (nodeOnly) {
    finishNode(node, loc, requiresGradOf(*x.impl()), nullptr);
    *nodeOnly = std::move(node);
    return Tensor();
  }
  return makeResult(std::move(node), loc, requiresGradOf(*x.impl()));
}

} // namespace

Tensor strata::detail::castTo(const Tensor &t, DType dtype,
                              const SourceLoc &loc) {
  if (t.impl()->dtype == dtype)
    return t;
  return record(Op::Cast, "cast", dtype, t.impl()->layout.sizes, {&t}, loc);
}

Tensor strata::detail::asTensor(const Arg &a, DType dtype,
                                const SourceLoc &loc) {
  if (a.tensor)
    return castTo(*a.tensor, dtype, loc);
  return scalarTensor(*a.scalar, dtype, loc);
}
Tensor strata::detail::binary(const char *name, const Arg &a, const Arg &b,
                              const SourceLoc &loc, Kind kind,
                              NodePtr *nodeOnly) {
  const ir::ElementwiseDTypes &dtypes = dtypesOf(name, loc);
  const TensorImpl *ta = a.tensor ? &implOf(*a.tensor, loc) : nullptr;
  const TensorImpl *tb = b.tensor ? &implOf(*b.tensor, loc) : nullptr;
  Shape empty;
  const Shape &sa = ta ? ta->layout.sizes : empty;
  const Shape &sb = tb ? tb->layout.sizes : empty;
  Shape shape = check(layout::broadcastShapes(sa, sb, name), loc,
                      "shapes broadcast when, aligned at the last dim, each "
                      "pair of sizes is equal or one of them is 1; use "
                      "view/unsqueeze/expand to line them up");
  // pow by a 0-d tensor is PyTorch's binary pow(Tensor, Tensor); the IR
  // reads a fill exponent (maybe cast) as a number, pow(Tensor, Scalar),
  // whose layout differs on size-1 dims: a pending fill the user made
  // (full({}, v)) is evaluated first, so the IR reads it as the tensor it is.
  if (kind == Kind::Pow && tb && tb->layout.dim() == 0) {
    const Node *e = tb->root->current.get();
    while (e && !e->buffer && e->op == Op::Cast && !e->inputs.empty())
      e = e->inputs[0].node.get();
    if (e && !e->buffer && e->op == Op::Fill && e->device != kDevAny)
      evaluate({tb}, loc);
  }
  DType common = resultType({a, b});
  // PyTorch refuses sub with any bool tensor operand, whatever the result
  // type would be (`mask - 1` is an error, not an int64 tensor).
  bool boolA = ta && ta->dtype == DType::Bool,
       boolB = tb && tb->dtype == DType::Bool;
  bool boolScalar = (a.scalar && a.scalar->kind() == Scalar::Kind::Bool) ||
                    (b.scalar && b.scalar->kind() == Scalar::Kind::Bool);
  if (std::string_view(name) == "sub") {
    if (common == DType::Bool)
      fail("Subtraction, the `-` operator, with two bool tensors is not "
           "supported.",
           "use the `^` or `logical_xor()` operator instead", loc);
    if (boolA || boolB || boolScalar)
      fail("Subtraction, the `-` operator, with a bool tensor is not "
           "supported.",
           "if you are trying to invert a mask, use the `~` or "
           "`logical_not()` operator instead",
           loc);
  }
  if (kind == Kind::Pow && common == DType::Bool)
    fail("\"pow\" not implemented for 'Bool'",
         "convert a bool operand to an integer or float type first", loc);
  if (kind == Kind::Pow && !isFloatingPoint(common) && b.scalar &&
      b.scalar->isIntegral() && b.scalar->toLong() < 0)
    fail("Integers to negative integer powers are not allowed.",
         "use a float base (x.to(strata::kFloat32).pow(...)) or a "
         "non-negative exponent",
         loc);
  if (kind == Kind::Pow && common == DType::I32 && b.scalar &&
      b.scalar->isIntegral() &&
      (b.scalar->toLong() < INT32_MIN || b.scalar->toLong() > INT32_MAX))
    fail("value cannot be converted to type int without overflow",
         "an int32 tensor's exponent must fit in int32", loc);
  if (dtypes.rule == ir::DTypeRule::Integral && isFloatingPoint(common))
    fail("\"" + std::string(name) + "_cpu\" not implemented for '" +
             torchTypeName(common) + "'",
         "bitwise ops take integer or bool tensors; use logical_and/or/xor "
         "for the truth values of floats",
         loc);
  if (kind == Kind::Mod && common == DType::Bool)
    fail("\"" + modKernel(name) + "\" not implemented for 'Bool'",
         "convert the operands to an integer or float type first", loc);
  // PyTorch checks each integer divisor (TORCH_CHECK(b != 0)); strata knows
  // a number's value when recording, a tensor's only in the kernel, which
  // gives 0 there (docs/errors.md). An empty tensor runs no kernel: no error.
  // The number is first converted to the tensor's type, wrapping as C++
  // does (PyTorch's c10::convert): 2^32 is 0 for an int32 tensor.
  if (kind == Kind::Mod && !isFloatingPoint(common) && b.scalar &&
      (common == DType::I32 ? static_cast<int32_t>(b.scalar->toLong())
                            : b.scalar->toLong()) == 0 &&
      !(ta && ta->layout.numel() == 0))
    fail("ZeroDivisionError",
         "integer " + std::string(name) +
             " by zero is undefined; divide by a nonzero number, or convert "
             "to a float type (x / 0 gives inf or nan there)",
         loc);
  if (ir::takesFloatsOnly(dtypes.rule) && !isFloatingPoint(common)) {
    if (dtypes.rule == ir::DTypeRule::FloatOnly)
      notImplementedFor((std::string(name) + "_cpu").c_str(), common,
                        "convert first: x.to(strata::kFloat32)", loc);
    common = DType::F32; // PyTorch promotes: true division, atan2
  }
  DType out = dtypes.compare ? DType::Bool : common;
  bool boolPow =
      kind == Kind::Pow && b.scalar && b.scalar->kind() == Scalar::Kind::Bool;
  // (The node alone only for a result of the tensor's own dtype and
  // shape: what an in-place op writes back as it is.)
  if (nodeOnly && !(a.tensor && b.scalar && ta->dtype == out && common == out &&
                    shape == ta->layout.sizes))
    nodeOnly = nullptr;
  if (!boolPow && a.tensor != b.tensor && (!a.tensor || !b.tensor))
    return recordWithNumber(
        name, out, std::move(shape),
        castTo(a.tensor ? *a.tensor : *b.tensor, common, loc),
        numberOperand(a.scalar ? *a.scalar : *b.scalar, common, loc),
        a.scalar.has_value(), loc, nodeOnly);
  Tensor x = asTensor(a, common, loc), y = asTensor(b, common, loc);
  // pow(x, False/True): the bool number stays a bool fill, cast, so the
  // gradient knows it (PyTorch 1.13 does not take its zero-exponent
  // shortcut for a bool Scalar: grad * 0 * x^-1, NaN at 0).
  if (kind == Kind::Pow && b.scalar && b.scalar->kind() == Scalar::Kind::Bool)
    y = castTo(scalarTensor(*b.scalar, DType::Bool, loc), common, loc);
  return record(Op::Binary, name, out, std::move(shape), {&x, &y}, loc);
}

Tensor strata::detail::sizeOneStrides(Tensor r, const layout::Layout &want) {
  layout::Layout &have = r.impl()->layout;
  if (have.sizes != want.sizes)
    return r;
  for (size_t d = 0; d < have.sizes.size(); ++d)
    if (have.sizes[d] != 1 && have.strides[d] != want.strides[d])
      return r; // another order: not an alias of `want`
  have.strides = want.strides;
  return r;
}

Tensor strata::detail::iteratorLayout(Tensor r,
                                      std::span<const layout::Layout> xs) {
  layout::Layout want = layout::elementwiseResult(xs, r.impl()->layout.sizes);
  return sizeOneStrides(std::move(r), want);
}

bool strata::detail::canCast(DType from, DType to) {
  return category(from) <= category(to);
}

/// PyTorch's ScalarType name ("Float", "Long"), as its "not implemented
/// for" messages print it.
const char *strata::detail::torchTypeName(DType t) {
  return runtime::dtypeInfo(t).torchScalar;
}

/// Fails as PyTorch's dispatch does for a kernel without `t`'s dtype.
void strata::detail::notImplementedFor(const char *kernel, DType t,
                                       const char *hint, const SourceLoc &loc) {
  fail("\"" + std::string(kernel) + "\" not implemented for '" +
           torchTypeName(t) + "'",
       hint, loc);
}

Tensor strata::detail::recordOp(Op op, const char *name, DType dtype,
                                Shape sizes,
                                const std::vector<const Tensor *> &inputs,
                                const SourceLoc &loc, Shape dims,
                                bool keepdim) {
  return record(op, name, dtype, std::move(sizes), inputs, loc, std::move(dims),
                keepdim, /*dimList=*/op == Op::Reduce);
}

Tensor strata::detail::composite(Tensor t, const char *name,
                                 std::initializer_list<const Tensor *> inputs) {
  TraceLock lock;
  Node &n = *t.impl()->root->current;
  if (!n.requiresGrad)
    return t;
  n.rareFields().compositeName = name;
  n.rare->compositeInputs.clear();
  for (const Tensor *in : inputs)
    n.rare->compositeInputs.push_back(operandOf(*in->impl()));
  // Composites whose PyTorch node saves `self` (the ops inside save what
  // they read, a mask computed from it): a later in-place write to the
  // user's tensor makes backward raise, as PyTorch's version check. As
  // input 0, an in-place form (x.clamp_()) saves it as a copy.
  static const std::string_view savesSelf[] = {
      "ClampBackward1", "ClampMinBackward0", "ClampMaxBackward0",
      "NanToNumBackward0"};
  if (std::find(std::begin(savesSelf), std::end(savesSelf),
                std::string_view(name)) != std::end(savesSelf) &&
      !n.compositeInputs().empty())
    saveInput(n, n.compositeInputs()[0], 0);
  return t;
}

//===--- Numbers and sizes ------------------------------------------------===//

namespace {
bool hasZeroSize(const Shape &sizes) {
  return std::find(sizes.begin(), sizes.end(), 0) != sizes.end();
}
/// A float truncated toward zero into int64, saturating (NaN: 0); only for
/// values already checked or where PyTorch's result is unspecified.
int64_t truncToInt64(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9223372036854775807.0)
    return INT64_MAX;
  if (v <= -9223372036854775808.0)
    return INT64_MIN;
  return static_cast<int64_t>(v);
}
} // namespace

Tensor strata::detail::scalarTensor(const Scalar &value, DType dtype,
                                    const SourceLoc &loc) {
  auto node = std::make_shared<Node>();
  node->op = Op::Fill;
  node->name = "fill";
  node->dtype = dtype;
  setFillValue(*node, value);
  node->device = kDevAny; // joins a program on either device
  return makeResult(std::move(node), loc, false);
}

void strata::detail::setFillValue(Node &n, const Scalar &value) {
  n.a = value.toDouble();
  // An integer number keeps its exact value for a float fill too: each
  // dtype converts it once, as PyTorch's static_cast<float>(int64_t)
  // (2^60 + 2^36 + 1 is 2^60 + 2^37 in f32, not the 2^60 that rounding
  // through a double gives). `a` stays the double a pow exponent is.
  if (isFloatingPoint(n.dtype) && !value.isIntegral())
    return;
  n.exact = true;
  n.ia = n.dtype == DType::Bool ? value.toDouble() != 0
         : value.isIntegral()   ? value.toLong()
                                : truncToInt64(value.toDouble());
}

int64_t strata::detail::checkStorageSize(const Shape &sizes,
                                         int64_t elementSize, const char *op,
                                         const SourceLoc &loc) {
  int64_t n = 1, bytes;
  bool overflow = false;
  for (int64_t s : sizes)
    overflow |= __builtin_mul_overflow(n, s, &n);
  overflow |= __builtin_mul_overflow(n, elementSize, &bytes);
  if (overflow && !hasZeroSize(sizes))
    fail(std::string(op) + ": Storage size calculation overflowed with sizes=" +
             layout::formatList(sizes),
         "the tensor would hold more bytes than int64 can count; use "
         "smaller sizes",
         loc);
  return n;
}

bool strata::detail::fitsIn(const Scalar &value, DType dtype) {
  double v = value.toDouble();
  switch (dtype) {
  case DType::Bool:
  case DType::F64:
    return true;
  case DType::F32:
    return !std::isfinite(v) || std::fabs(v) <= 3.4028234663852886e38;
  case DType::I32:
    return value.isIntegral()
               ? value.toLong() >= INT32_MIN && value.toLong() <= INT32_MAX
               : v >= -2147483648.0 && v <= 2147483647.0;
  case DType::I64:
    return value.isIntegral() ||
           (v >= -9223372036854775808.0 && v < 9223372036854775808.0);
  }
  return true;
}

void strata::detail::checkScalarFits(const Scalar &value, DType dtype,
                                     const char *op, const SourceLoc &loc) {
  if (fitsIn(value, dtype))
    return;
  const char *type = dtype == DType::F32   ? "float"
                     : dtype == DType::I32 ? "int"
                                           : "int64_t";
  fail(std::string(op) + ": value cannot be converted to type " + type +
           " without overflow",
       "the value must lie in the range of the tensor's dtype " +
           toString(dtype) + " (convert the tensor with .to() first)",
       loc);
}

const char *strata::detail::cppTypeName(DType t) {
  return runtime::dtypeInfo(t).cpp;
}
