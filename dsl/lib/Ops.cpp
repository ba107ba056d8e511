//===- Ops.cpp - compute and in-place ops, recorded into the trace
//----------===//
//
// Each op computes its result shape with the layout algebra, applies
// PyTorch's type promotion (inserting casts, so the IR stays explicitly
// typed) and records one node. In-place ops record the op and then a write
// into the view, which makes a new version of the view's storage root.
//
//===----------------------------------------------------------------------===//
#include "CompositeNode.h"
#include "Impl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

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

/// An operand of a binary op: a tensor, or a scalar (wrapped number).
struct Arg {
  const Tensor *tensor = nullptr;
  std::optional<Scalar> scalar;
};

DType scalarDefault(const Scalar &s) {
  return s.kind() == Scalar::Kind::Float ? DType::F32
         : s.kind() == Scalar::Kind::Int ? DType::I64
                                         : DType::Bool;
}

/// PyTorch's result_type over tensors (dim > 0, then 0-d) and scalars.
DType resultType(std::span<const Arg> args) {
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
DType resultType(std::initializer_list<Arg> args) {
  return resultType(std::span<const Arg>(args.begin(), args.size()));
}

bool anyRequiresGrad(std::span<const Tensor *const> ts) {
  for (const Tensor *t : ts)
    if (requiresGradOf(*t->impl()))
      return true;
  return false;
}

Tensor record(Op op, const char *name, DType dtype, Shape sizes,
              std::span<const Tensor *const> inputs, const SourceLoc &loc,
              Shape dims = {}, bool keepdim = false, bool dimList = false) {
  checkStorageSize(sizes, elementSize(dtype), name, loc);
  TraceLock lock; // the versions read are the ones the reader registers on
  auto node = std::make_shared<Node>();
  node->op = op;
  node->name = name;
  node->dtype = dtype;
  node->sizes = std::move(sizes);
  node->dims = std::move(dims);
  node->keepdim = keepdim;
  node->dimList = dimList;
  node->inputs.reserve(inputs.size());
  for (const Tensor *t : inputs) {
    checkViewRead(*t->impl(), loc);
    markGradLeaf(t->impl());
    node->inputs.push_back(operandOf(*t->impl()));
  }
  return makeResult(std::move(node), loc, anyRequiresGrad(inputs));
}
/// record() over a braced list of inputs (no vector built per op).
Tensor record(Op op, const char *name, DType dtype, Shape sizes,
              std::initializer_list<const Tensor *> inputs,
              const SourceLoc &loc, Shape dims = {}, bool keepdim = false,
              bool dimList = false) {
  return record(op, name, dtype, std::move(sizes),
                std::span<const Tensor *const>(inputs.begin(), inputs.size()),
                loc, std::move(dims), keepdim, dimList);
}

Tensor castTo(const Tensor &t, DType dtype, const SourceLoc &loc) {
  if (t.impl()->dtype == dtype)
    return t;
  return record(Op::Cast, "cast", dtype, t.impl()->layout.sizes, {&t}, loc);
}

Tensor asTensor(const Arg &a, DType dtype, const SourceLoc &loc) {
  if (a.tensor)
    return castTo(*a.tensor, dtype, loc);
  return scalarTensor(*a.scalar, dtype, loc);
}

/// Mod: fmod, remainder, floor_divide (not bool; an integer division by a
/// zero number raises). Float: atan2 (integers promote to f32, as Div).
enum class Kind { Arith, Div, Compare, MinMax, Pow, Bitwise, Mod, Float };

/// PyTorch's CPU kernel of division-family op `name`, for its messages.
std::string modKernel(std::string_view name) {
  return name == "floor_divide" ? "div_floor_cpu" : std::string(name) + "_cpu";
}

Tensor binary(const char *name, Kind kind, const Arg &a, const Arg &b,
              const SourceLoc &loc) {
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
  if (kind == Kind::Arith && std::string_view(name) == "sub") {
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
  if (kind == Kind::Bitwise && isFloatingPoint(common))
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
  if ((kind == Kind::Div || kind == Kind::Float) && !isFloatingPoint(common))
    common = DType::F32; // true division, atan2
  Tensor x = asTensor(a, common, loc), y = asTensor(b, common, loc);
  // pow(x, False/True): the bool number stays a bool fill, cast, so the
  // gradient knows it (PyTorch 1.13 does not take its zero-exponent
  // shortcut for a bool Scalar: grad * 0 * x^-1, NaN at 0).
  if (kind == Kind::Pow && b.scalar && b.scalar->kind() == Scalar::Kind::Bool)
    y = castTo(scalarTensor(*b.scalar, DType::Bool, loc), common, loc);
  DType out = kind == Kind::Compare ? DType::Bool : common;
  return record(Op::Binary, name, out, std::move(shape), {&x, &y}, loc);
}

Tensor unary(const Tensor &in, const char *name, bool floating,
             const SourceLoc &loc) {
  const TensorImpl &t = implOf(in, loc);
  if (t.dtype == DType::Bool && std::string_view(name) == "neg")
    fail("Negation, the `-` operator, on a bool tensor is not supported.",
         "if you are trying to invert a mask, use the `~` or "
         "`logical_not()` operator instead",
         loc);
  if (t.dtype == DType::Bool && std::string_view(name) == "abs")
    fail("\"abs_cpu\" not implemented for 'Bool'",
         "a bool tensor is its own absolute value; convert it first if a "
         "number is needed",
         loc);
  if (t.dtype == DType::Bool && std::string_view(name) == "relu")
    fail("Boolean inputs not supported for relu",
         "convert the mask first: x.to(strata::kFloat32).relu()", loc);
  Tensor x =
      floating && !isFloatingPoint(t.dtype) ? castTo(in, DType::F32, loc) : in;
  return record(Op::Unary, name, x.impl()->dtype, t.layout.sizes, {&x}, loc);
}

/// A unary op PyTorch computes only for floating-point tensors (its kernel
/// `kernel` does not take integers or bool).
Tensor floatOnly(const Tensor &in, const char *name, const char *kernel,
                 const SourceLoc &loc) {
  DType t = implOf(in, loc).dtype;
  if (!isFloatingPoint(t))
    notImplementedFor(kernel, t, "convert first: x.to(strata::kFloat32)", loc);
  return unary(in, name, false, loc);
}

/// floor/ceil/round/trunc: integers are kept, bool refused.
Tensor rounding(const Tensor &in, const char *name, const SourceLoc &loc) {
  DType t = implOf(in, loc).dtype;
  if (t == DType::Bool)
    notImplementedFor((std::string(name) + "_vml_cpu").c_str(), t,
                      "convert the mask to an integer or float type first",
                      loc);
  return unary(in, name, false, loc);
}

/// x where `cond` is false, `value` (a scalar of x's dtype) where true.
Tensor replaceWhere(const Tensor &cond, const Scalar &value, const Tensor &x,
                    const SourceLoc &loc) {
  return where(cond, scalarTensor(value, x.impl()->dtype, loc), x, loc);
}

/// `r` with the strides of `want` where they differ only on size-1 dims
/// (the same elements at the same places); unchanged otherwise.
Tensor sizeOneStrides(Tensor r, const layout::Layout &want) {
  layout::Layout &have = r.impl()->layout;
  if (have.sizes != want.sizes)
    return r;
  for (size_t d = 0; d < have.sizes.size(); ++d)
    if (have.sizes[d] != 1 && have.strides[d] != want.strides[d])
      return r; // another order: not an alias of `want`
  have.strides = want.strides;
  return r;
}

/// `r`, computed elementwise from `xs` with numbers, laid out as PyTorch's
/// one iterator over the tensors `xs` alone (clamp is a unary
/// TensorIterator, lerp.Scalar one over start and end; strata's ops with a
/// number, a 0-d operand, take the general path, which orders size-1 dims
/// otherwise). Both address the same elements, so
/// only the strides of size-1 dims can differ: those are taken.
Tensor iteratorLayout(Tensor r, std::span<const layout::Layout> xs) {
  layout::Layout want = layout::elementwiseResult(xs, r.impl()->layout.sizes);
  return sizeOneStrides(std::move(r), want);
}

/// PyTorch's clamp with scalar bounds: the result type promotes with the
/// bounds; where-selects so the gradient passes where lo <= x <= hi (and
/// a NaN x stays NaN).
Tensor clampImpl(const Tensor &in, std::optional<Scalar> lo,
                 std::optional<Scalar> hi, const SourceLoc &loc,
                 const char *gradFn) {
  implOf(in, loc);
  if (!lo && !hi)
    fail("torch.clamp: At least one of 'min' or 'max' must not be None",
         "give a lower bound, an upper bound or both", loc);
  std::vector<Arg> args{Arg{&in, {}}};
  if (lo)
    args.push_back(Arg{nullptr, *lo});
  if (hi)
    args.push_back(Arg{nullptr, *hi});
  DType t = resultType(args);
  if (t == DType::Bool)
    notImplementedFor("clamp_cpu", t, "convert the mask first", loc);
  // PyTorch converts the bounds to the result type, raising where they
  // overflow it (an int32 tensor clamped at 2^40).
  for (const std::optional<Scalar> &b : {lo, hi})
    if (b)
      checkScalarFits(*b, t, "clamp", loc);
  Tensor x = castTo(in, t, loc);
  Tensor v = x; // min(max(x, lo), hi): lo > hi gives hi, NaN stays NaN
  if (lo)
    v = replaceWhere(
        binary("lt", Kind::Compare, Arg{&v, {}}, Arg{nullptr, *lo}, loc), *lo,
        v, loc);
  if (hi)
    v = replaceWhere(
        binary("gt", Kind::Compare, Arg{&v, {}}, Arg{nullptr, *hi}, loc), *hi,
        v, loc);
  // A NaN bound makes every element NaN, as PyTorch's (its min/max
  // propagate NaN); no comparison with NaN says so.
  auto isNan = [](const std::optional<Scalar> &b) {
    return b && !b->isIntegral() && std::isnan(b->toDouble());
  };
  // (PyTorch 1.13's clamp with one bound None keeps x at a NaN other
  // bound; clamp_min, clamp_max and two bounds give NaN.)
  bool oneOfClamp = std::string_view(gradFn) == "ClampBackward1" && !(lo && hi);
  if (!oneOfClamp && (isNan(lo) || isNan(hi)))
    v = binary("add", Kind::Arith, Arg{&v, {}}, Arg{nullptr, Scalar(NAN)}, loc);
  if (!gradEnabled() || !requiresGradOf(*x.impl()))
    return iteratorLayout(v, {&x.impl()->layout, 1});
  // PyTorch's gradient (clamp_backward): the incoming one where
  // lo <= x <= hi, none elsewhere, NaN included (where(x > hi, hi, x)
  // alone would pass it at NaN).
  Tensor mask;
  if (lo)
    mask = binary("ge", Kind::Compare, Arg{&x, {}}, Arg{nullptr, *lo}, loc);
  if (hi) {
    Tensor le =
        binary("le", Kind::Compare, Arg{&x, {}}, Arg{nullptr, *hi}, loc);
    mask = lo ? mask.logical_and(le, loc) : le;
  }
  return iteratorLayout(
      composite(strata::where(mask, x, v.detach(loc), loc), gradFn, {&in}),
      {&x.impl()->layout, 1});
}

Tensor nanToNumImpl(const Tensor &in, std::optional<double> nan,
                    std::optional<double> posinf, std::optional<double> neginf,
                    const SourceLoc &loc) {
  DType t = implOf(in, loc).dtype;
  if (!isFloatingPoint(t))
    return in.clone(loc); // nothing to replace
  double big = t == DType::F32 ? std::numeric_limits<float>::max()
                               : std::numeric_limits<double>::max();
  auto is = [&](double v) {
    return binary("eq", Kind::Compare, Arg{&in, {}}, Arg{nullptr, Scalar(v)},
                  loc);
  };
  Tensor isNan = binary("ne", Kind::Compare, Arg{&in, {}}, Arg{&in, {}}, loc);
  Tensor x = replaceWhere(isNan, Scalar(nan.value_or(0.0)), in, loc);
  x = replaceWhere(is(INFINITY), Scalar(posinf.value_or(big)), x, loc);
  // PyTorch writes into empty_like(self) (preserve_format: a dense input's
  // strides, size-1 dims included).
  return sizeOneStrides(
      composite(
          replaceWhere(is(-INFINITY), Scalar(neginf.value_or(-big)), x, loc),
          "NanToNumBackward0", {&in}),
      layout::preserveFormat(in.impl()->layout));
}

Tensor reduce(const Tensor &in, const char *name, const Shape &dims,
              bool keepdim, const SourceLoc &loc, bool dimList = true) {
  const TensorImpl &t = implOf(in, loc);
  Shape shape =
      check(layout::reduceShape(t.layout.sizes, dims, keepdim, name), loc);
  Shape wrapped;
  for (int64_t d : dims)
    wrapped.push_back(check(layout::wrapDim(d, t.layout.dim(), name), loc));
  std::sort(wrapped.begin(), wrapped.end());
  DType out = t.dtype;
  std::string_view n(name);
  if ((n == "sum" || n == "prod") && !isFloatingPoint(t.dtype))
    out = DType::I64; // PyTorch: integer and bool sums and products
  if (n == "amax" || n == "amin") {
    // PyTorch: a max/min over nothing has no identity to return.
    if (wrapped.empty() && t.layout.numel() == 0)
      fail(std::string(name) +
               "(): Expected reduction dim to be specified for "
               "input.numel() == 0. Specify the reduction dim with the "
               "'dim' argument.",
           "reduce over the dims that are not empty", loc);
    for (int64_t d : wrapped)
      if (t.layout.dim() > 0 && t.layout.sizes[d] == 0)
        fail(std::string(name) + "(): Expected reduction dim " +
                 std::to_string(d) + " to have non-zero size.",
             "reduce over the dims that are not empty", loc);
  }
  if (n == "mean" && !isFloatingPoint(t.dtype))
    fail("mean(): could not infer output dtype. Input dtype must be either a "
         "floating point or complex dtype. Got: " +
             toString(t.dtype),
         "convert first: x.to(strata::kFloat32).mean()", loc);
  return record(Op::Reduce, name, out, std::move(shape), {&in}, loc,
                std::move(wrapped), keepdim, dimList);
}

} // namespace

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
  n.compositeName = name;
  n.compositeInputs.clear();
  for (const Tensor *in : inputs)
    n.compositeInputs.push_back(operandOf(*in->impl()));
  // Composites whose PyTorch node saves `self` (the ops inside save what
  // they read, a mask computed from it): a later in-place write to the
  // user's tensor makes backward raise, as PyTorch's version check. As
  // input 0, an in-place form (x.clamp_()) saves it as a copy.
  static const std::string_view savesSelf[] = {
      "ClampBackward1", "ClampMinBackward0", "ClampMaxBackward0",
      "NanToNumBackward0"};
  if (std::find(std::begin(savesSelf), std::end(savesSelf),
                std::string_view(name)) != std::end(savesSelf) &&
      !n.compositeInputs.empty())
    saveInput(n, n.compositeInputs[0], 0);
  return t;
}

//===--- Shared recording helpers -----------------------------------------===//

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
  node->a = value.toDouble();
  if (!isFloatingPoint(dtype)) {
    node->exact = true;
    node->ia = dtype == DType::Bool ? value.toDouble() != 0
               : value.isIntegral() ? value.toLong()
                                    : truncToInt64(value.toDouble());
  }
  node->device = kDevAny; // joins a program on either device
  return makeResult(std::move(node), loc, false);
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

bool strata::detail::elementsOverlap(const layout::Layout &l) {
  if (layout::hasInternalOverlap(l))
    return true;
  if (!layout::mayOverlap(l))
    return false;
  std::vector<int64_t> at = layout::storageIndices(l);
  std::sort(at.begin(), at.end());
  return std::adjacent_find(at.begin(), at.end()) != at.end();
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

void strata::detail::recordWrite(const TensorImpl &dest, const Tensor &src,
                                 const SourceLoc &loc, const char *op) {
  TraceLock lock;
  checkViewRead(*src.impl(), loc);
  checkInplace(dest, *src.impl(), op, loc);
  // PyTorch refuses stride-0 destinations and computes the rest in its
  // loop order, an element shared by two positions being written twice
  // (an overlapping unfold's add_ adds twice there): strata's writes are
  // functional, so no loop order gives that answer. Every destination
  // with an element at two positions is refused (exactly: as_strided
  // layouts the quick test cannot prove disjoint are checked index by
  // index).
  // (fill_ and zero_ write one value: any order gives it.)
  if (std::string_view(op) != "fill_" && std::string_view(op) != "zero_" &&
      elementsOverlap(dest.layout))
    fail(std::string(op) +
             ": unsupported operation: more than one element of the "
             "written-to tensor refers to a single memory location. Please "
             "clone() the tensor before performing the operation.",
         "expanded (stride-0) and overlapping (unfold, as_strided) tensors "
         "cannot be written: clone() first",
         loc);
  const TensorImpl &s = *src.impl();
  // (Equal shapes broadcast to themselves: no shape is built.)
  if (s.layout.sizes != dest.layout.sizes)
    if (Shape shape = check(
            layout::broadcastShapes(s.layout.sizes, dest.layout.sizes, op),
            loc);
        shape != dest.layout.sizes)
      fail(std::string(op) + ": output with shape " +
               layout::formatList(dest.layout.sizes) +
               " doesn't match the broadcast shape " +
               layout::formatList(shape),
           "the value written must broadcast to the destination's shape", loc);
  int8_t device =
      joinDevices(dest.root->current->device, s.root->current->device, loc);
  Tensor converted = castTo(src, dest.dtype, loc);
  auto node = std::make_shared<Node>();
  node->device = device;
  node->op = Op::Write;
  node->name = "write";
  node->dtype = dest.dtype;
  node->rootNumel = dest.root->numel;
  markGradLeaf(converted.impl());
  // A leaf's data still pending (a requires_grad_() over a computed value)
  // is computed before it is overwritten: backward() reads it.
  if (!dest.root->current->buffer && !dest.root->current->gradLeaf.expired())
    evaluate({&dest}, loc);
  // (Not a braced list: its elements would be copied, layouts and all.)
  node->inputs.reserve(2);
  node->inputs.push_back(operandOf(*converted.impl()));
  node->inputs.push_back(operandOf(dest));
  node->root = dest.root;
  node->loc = loc;
  // Only the value read is a reader; the dest is this chain's own history.
  if (auto r = node->inputs[0].node->root.lock())
    r->readers.push_back(node);
  Node &write = *node;
  dest.root->current = std::move(node);
  ++dest.root->version;
  dest.root->writeLocs.push_back(loc);
  if (VersionRecord *r = dest.root->record.get()) {
    r->version = dest.root->version;
    r->current = dest.root->current;
    r->writeLocs.push_back(loc);
  }
  recordGradWrite(dest, *converted.impl(), write, op, loc);
  if (dest.root->home)
    dest.root->home->bumpVersion();
  setDepth(write);
  cutDeepChain(dest, loc);
}

//===--- Compute methods --------------------------------------------------===//

#define STRATA_BINARY(method, name, kind)                                      \
  Tensor Tensor::method(const Tensor &o, SourceLoc loc) const {                \
    implOf(*this, loc);                                                        \
    return binary(name, kind, Arg{this, {}}, Arg{&o, {}}, loc);                \
  }
STRATA_BINARY(add, "add", Kind::Arith)
STRATA_BINARY(sub, "sub", Kind::Arith)
STRATA_BINARY(mul, "mul", Kind::Arith)
STRATA_BINARY(div, "div", Kind::Div)
STRATA_BINARY(pow, "pow", Kind::Pow)
STRATA_BINARY(eq, "eq", Kind::Compare)
STRATA_BINARY(ne, "ne", Kind::Compare)
STRATA_BINARY(lt, "lt", Kind::Compare)
STRATA_BINARY(le, "le", Kind::Compare)
STRATA_BINARY(gt, "gt", Kind::Compare)
STRATA_BINARY(ge, "ge", Kind::Compare)
#undef STRATA_BINARY

Tensor Tensor::pow(Scalar s, SourceLoc loc) const {
  implOf(*this, loc);
  return binary("pow", Kind::Pow, Arg{this, {}}, Arg{nullptr, s}, loc);
}

#define STRATA_UNARY(method, floating)                                         \
  Tensor Tensor::method(SourceLoc loc) const {                                 \
    return unary(*this, #method, floating, loc);                               \
  }
STRATA_UNARY(neg, false)
STRATA_UNARY(abs, false)
STRATA_UNARY(exp, true)
STRATA_UNARY(log, true)
STRATA_UNARY(sqrt, true)
STRATA_UNARY(relu, false)
STRATA_UNARY(sigmoid, true)
STRATA_UNARY(tanh, true)
STRATA_UNARY(sin, true)
STRATA_UNARY(cos, true)
STRATA_UNARY(tan, true)
STRATA_UNARY(asin, true)
STRATA_UNARY(acos, true)
STRATA_UNARY(atan, true)
STRATA_UNARY(sinh, true)
STRATA_UNARY(cosh, true)
STRATA_UNARY(exp2, true)
STRATA_UNARY(expm1, true)
STRATA_UNARY(log2, true)
STRATA_UNARY(log10, true)
STRATA_UNARY(log1p, true)
STRATA_UNARY(rsqrt, true)
STRATA_UNARY(reciprocal, true)
STRATA_UNARY(erf, true)
STRATA_UNARY(sign, false)
#undef STRATA_UNARY

Tensor Tensor::square(SourceLoc loc) const {
  // PyTorch's pow(x, 2): bool squares as int64.
  if (implOf(*this, loc).dtype == DType::Bool)
    return unary(castTo(*this, DType::I64, loc), "square", false, loc);
  return unary(*this, "square", false, loc);
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

Tensor Tensor::silu(SourceLoc loc) const {
  return floatOnly(*this, "silu", "silu_cpu", loc);
}

Tensor Tensor::softplus(SourceLoc loc) const {
  return floatOnly(*this, "softplus", "softplus_cpu", loc);
}

Tensor Tensor::gelu(const std::string &approximate, SourceLoc loc) const {
  if (approximate != "none" && approximate != "tanh")
    fail("approximate argument must be either none or tanh.",
         "gelu(\"none\") (exact, the default) or gelu(\"tanh\")", loc);
  return floatOnly(*this, approximate == "tanh" ? "gelu_tanh" : "gelu",
                   "GeluKernelImpl", loc);
}

Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi,
                     SourceLoc loc) const {
  return clampImpl(*this, lo, hi, loc, "ClampBackward1");
}

Tensor Tensor::clamp_min(Scalar lo, SourceLoc loc) const {
  return clampImpl(*this, lo, std::nullopt, loc, "ClampMinBackward0");
}

Tensor Tensor::clamp_max(Scalar hi, SourceLoc loc) const {
  return clampImpl(*this, std::nullopt, hi, loc, "ClampMaxBackward0");
}

Tensor Tensor::nan_to_num(std::optional<double> nan,
                          std::optional<double> posinf,
                          std::optional<double> neginf, SourceLoc loc) const {
  return nanToNumImpl(*this, nan, posinf, neginf, loc);
}

Tensor Tensor::bitwise_not(SourceLoc loc) const {
  DType t = implOf(*this, loc).dtype;
  if (isFloatingPoint(t))
    notImplementedFor("bitwise_not_cpu", t,
                      "bitwise ops take integer or bool tensors; use "
                      "logical_not() for the truth value of floats",
                      loc);
  return unary(*this, "bitwise_not", false, loc);
}

namespace {
/// x's truth values laid out as a unary TensorIterator lays out its result
/// (PyTorch's logical ops take x itself): a cast (preserve_format) keeps a
/// dense input's strides as the iterator's fast path does; a non-dense
/// input's order (size-1 dims included) comes from the general path, which
/// `x != 0` takes (its 0-d operand orders nothing). NaN is true either way.
Tensor truthOf(const Tensor &x, const SourceLoc &loc) {
  const layout::Layout &l = x.impl()->layout;
  if (layout::isContiguous(l) || layout::isNonOverlappingAndDense(l))
    return castTo(x, DType::Bool, loc);
  return binary("ne", Kind::Compare, Arg{&x, {}}, Arg{nullptr, Scalar(0)}, loc);
}
} // namespace

Tensor Tensor::logical_not(SourceLoc loc) const {
  implOf(*this, loc);
  const layout::Layout &l = impl()->layout;
  if (layout::isContiguous(l) || layout::isNonOverlappingAndDense(l))
    return castTo(*this, DType::Bool, loc).bitwise_not(loc);
  // One op, so the general path lays the result out as PyTorch's single
  // iterator does (a cast then bitwise_not of its dense result would be
  // contiguous where size-1 dims sort otherwise).
  return binary("eq", Kind::Compare, Arg{this, {}}, Arg{nullptr, Scalar(0)},
                loc);
}

// (PyTorch's logical ops are one iterator over both tensors: strata's
// truth values may be dense where the tensors are not, so the result takes
// that iterator's strides on size-1 dims.)
#define STRATA_LOGICAL(method, name)                                           \
  Tensor Tensor::method(const Tensor &o, SourceLoc loc) const {                \
    implOf(*this, loc);                                                        \
    implOf(o, loc);                                                            \
    /* (Truth of each in the common dtype: an int64 0-d -2^63 is 0 as */       \
    /* int32, PyTorch's kernel casting to iter.common_dtype() first.) */       \
    DType common = resultType({Arg{this, {}}, Arg{&o, {}}});                   \
    Tensor a = truthOf(castTo(*this, common, loc), loc),                       \
           b = truthOf(castTo(o, common, loc), loc);                           \
    std::array<layout::Layout, 2> ins{impl()->layout, o.impl()->layout};       \
    return iteratorLayout(                                                     \
        binary(name, Kind::Bitwise, Arg{&a, {}}, Arg{&b, {}}, loc), ins);      \
  }
STRATA_LOGICAL(logical_and, "bitwise_and")
STRATA_LOGICAL(logical_or, "bitwise_or")
STRATA_LOGICAL(logical_xor, "bitwise_xor")
#undef STRATA_LOGICAL

#define STRATA_BITWISE(method)                                                 \
  Tensor Tensor::method(const Tensor &o, SourceLoc loc) const {                \
    implOf(*this, loc);                                                        \
    return binary(#method, Kind::Bitwise, Arg{this, {}}, Arg{&o, {}}, loc);    \
  }                                                                            \
  Tensor Tensor::method(Scalar s, SourceLoc loc) const {                       \
    implOf(*this, loc);                                                        \
    return binary(#method, Kind::Bitwise, Arg{this, {}}, Arg{nullptr, s},      \
                  loc);                                                        \
  }
STRATA_BITWISE(bitwise_and)
STRATA_BITWISE(bitwise_or)
STRATA_BITWISE(bitwise_xor)
#undef STRATA_BITWISE

#define STRATA_REDUCE(method)                                                  \
  Tensor Tensor::method(const Shape &dims, bool keepdim, SourceLoc loc)        \
      const {                                                                  \
    return reduce(*this, #method, dims, keepdim, loc);                         \
  }
STRATA_REDUCE(sum)
STRATA_REDUCE(mean)
Tensor Tensor::sum(SourceLoc loc) const {
  return reduce(*this, "sum", {}, false, loc, false);
}
Tensor Tensor::mean(SourceLoc loc) const {
  return reduce(*this, "mean", {}, false, loc, false);
}
Tensor Tensor::prod(SourceLoc loc) const {
  return reduce(*this, "prod", {}, false, loc, false);
}
Tensor Tensor::prod(int64_t dim, bool keepdim, SourceLoc loc) const {
  return reduce(*this, "prod", {dim}, keepdim, loc);
}
STRATA_REDUCE(amax)
STRATA_REDUCE(amin)
#undef STRATA_REDUCE

Tensor Tensor::matmul(const Tensor &o, SourceLoc loc) const {
  const TensorImpl &a = implOf(*this, loc), &b = implOf(o, loc);
  // PyTorch checks dtypes (and refuses bool) only where there is a product
  // to compute: an empty matmul is an empty or zero result, of the first
  // operand's dtype (of the vector's in matrix @ vector, PyTorch's mv).
  bool empty = (a.layout.numel() == 0 || b.layout.numel() == 0) &&
               !(a.layout.dim() == 1 && b.layout.dim() == 1);
  if (empty && a.dtype != b.dtype && a.layout.dim() > 0 && b.layout.dim() > 0) {
    // PyTorch's paths: mv (matrix @ vector) and bmm (batched, unless only
    // the first operand has batch dims) take the second operand's dtype; a
    // vector @ batch (unsqueezed, folded into one mm) and a batch folded
    // into one mm the first's.
    int64_t da = a.layout.dim(), db = b.layout.dim();
    // (A 3-d first operand whose last two dims are transposed under a
    // slowest first dim is not folded: bmm, PyTorch 1.13's should_fold.)
    const Shape &as = a.layout.sizes, &at = a.layout.strides;
    bool unfolded = da == 3 && db == 2 && at[2] != 1 && at[0] == as[1] * as[2];
    if ((db == 1 && da >= 2) || (db >= 3 && da >= 2) || unfolded)
      return to(b.dtype, loc).matmul(o, loc);
    return matmul(o.to(a.dtype, loc), loc);
  }
  if (a.dtype != b.dtype)
    fail("expected m1 and m2 to have the same dtype, but got: " +
             strata::toString(a.dtype) + " != " + strata::toString(b.dtype),
         "convert one operand with .to(dtype)", loc);
  const Shape &sa = a.layout.sizes, &sb = b.layout.sizes;
  if (a.dtype == DType::Bool && !sa.empty() && !sb.empty() && !empty)
    fail(sa.size() == 1 && sb.size() == 1
             ? "\"dot\" not implemented for 'Bool'"
             : "\"addmm_impl_cpu_\" not implemented for 'Bool'",
         "convert the operands to an integer or float type first", loc);
  if (sa.empty() || sb.empty())
    fail("both arguments to matmul need to be at least 1D, but they are " +
             std::to_string(sa.size()) + "D and " + std::to_string(sb.size()) +
             "D",
         "", loc);
  int64_t k1 = sa.back(), k2 = sb.size() == 1 ? sb[0] : sb[sb.size() - 2];
  if (k1 != k2 && sa.size() == 1 && sb.size() == 1)
    fail("inconsistent tensor size, expected tensor [" + std::to_string(k1) +
             "] and src [" + std::to_string(k2) +
             "] to have the same number of elements, but got " +
             std::to_string(k1) + " and " + std::to_string(k2) +
             " elements respectively",
         "a dot product needs two vectors of one length", loc);
  if (k1 != k2) {
    auto fmt = [](const Shape &s) {
      std::string r;
      for (size_t i = 0; i < s.size(); ++i)
        r += (i ? "x" : "") + std::to_string(s[i]);
      return r;
    };
    fail("mat1 and mat2 shapes cannot be multiplied (" + fmt(sa) + " and " +
             fmt(sb) + ")",
         "the last dim of the first operand must equal the first (or "
         "second-to-last) dim of the second",
         loc);
  }
  Shape batchA(sa.begin(), sa.end() - std::min<size_t>(sa.size(), 2));
  Shape batchB(sb.begin(), sb.end() - std::min<size_t>(sb.size(), 2));
  Shape shape = check(layout::broadcastShapes(batchA, batchB, "matmul"), loc);
  if (sa.size() >= 2)
    shape.push_back(sa[sa.size() - 2]);
  if (sb.size() >= 2)
    shape.push_back(sb.back());
  if (empty && a.dtype == DType::Bool) // the IR has no bool matmul
    return zeros(shape, TensorOptions(DType::Bool), loc);
  Tensor r = record(Op::Matmul, "matmul", a.dtype, shape, {this, &o}, loc);
  // matrix @ batch: PyTorch 1.13 folds the batch into one mm of the
  // transposed operands and returns the result's mT().contiguous(), which
  // keeps the transposed strides where a size-1 m or n makes it count as
  // contiguous (should_fold; not for a 3-d batch whose last two dims are
  // transposed under a slowest first).
  const Shape &bt = b.layout.strides;
  if (sa.size() == 2 && sb.size() >= 3 &&
      !(sb.size() == 3 && bt[2] != 1 && bt[0] == sb[1] * sb[2])) {
    int64_t m = shape[shape.size() - 2];
    layout::Layout want = layout::contiguous(shape);
    want.strides[shape.size() - 2] = 1;
    want.strides[shape.size() - 1] = m;
    return sizeOneStrides(std::move(r), want);
  }
  return r;
}

Tensor Tensor::clone(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  Tensor c = record(Op::Copy, "copy", t.dtype, t.layout.sizes, {this}, loc);
  // explain() follows the chain through the copy.
  c.impl()->base = impl_;
  c.impl()->viewOp = "copy into new storage: clone/contiguous/reshape";
  return c;
}

Tensor strata::detail::contiguousCopy(const Tensor &t, const SourceLoc &loc) {
  const TensorImpl &impl = implOf(t, loc);
  // strata.contiguous: the row-major copy of contiguous() and reshape (clone
  // keeps the input's layout).
  const char *op = layout::isContiguous(impl.layout) ? "copy" : "contiguous";
  Tensor c = record(Op::Copy, op, impl.dtype, impl.layout.sizes, {&t}, loc);
  c.impl()->base = t.impl();
  c.impl()->viewOp = "copy into new storage: clone/contiguous/reshape";
  return c;
}

Tensor Tensor::to(DType dtype, SourceLoc loc) const {
  implOf(*this, loc);
  Tensor r = castTo(*this, dtype, loc);
  if (r.impl() != impl()) {
    TraceLock lock;
    r.impl()->root->current->userCast = true; // a node of PyTorch's graph
  }
  return r;
}

namespace {
/// where with tensors or numbers (PyTorch's result_type over both).
Tensor whereArgs(const Tensor &cond, const Arg &a, const Arg &b,
                 const SourceLoc &loc) {
  const TensorImpl &c = implOf(cond, loc);
  if (a.tensor)
    implOf(*a.tensor, loc);
  if (b.tensor)
    implOf(*b.tensor, loc);
  if (c.dtype != DType::Bool)
    fail("where expected condition to be a boolean tensor, but got a tensor "
         "with dtype " +
             toString(c.dtype),
         "compare first (x > 0) or convert with .to(strata::kBool)", loc);
  Shape none;
  const Shape &sa = a.tensor ? a.tensor->impl()->layout.sizes : none;
  const Shape &sb = b.tensor ? b.tensor->impl()->layout.sizes : none;
  Shape s1 = check(layout::broadcastShapes(c.layout.sizes, sa, "where"), loc);
  Shape shape = check(layout::broadcastShapes(s1, sb, "where"), loc);
  DType common = resultType({a, b});
  // PyTorch converts a number to the result type, raising where it
  // overflows it (where(mask, int32, 3e9), where(mask, f32, 1e300)).
  for (const Arg *arg : {&a, &b})
    if (arg->scalar)
      checkScalarFits(*arg->scalar, common, "where", loc);
  Tensor x = asTensor(a, common, loc), y = asTensor(b, common, loc);
  return record(Op::Where, "where", common, std::move(shape), {&cond, &x, &y},
                loc);
}
} // namespace

Tensor strata::where(const Tensor &cond, const Tensor &a, const Tensor &b,
                     SourceLoc loc) {
  return whereArgs(cond, Arg{&a, {}}, Arg{&b, {}}, loc);
}

Tensor strata::where(const Tensor &cond, Scalar a, const Tensor &b,
                     SourceLoc loc) {
  return whereArgs(cond, Arg{nullptr, a}, Arg{&b, {}}, loc);
}

Tensor strata::where(const Tensor &cond, const Tensor &a, Scalar b,
                     SourceLoc loc) {
  return whereArgs(cond, Arg{&a, {}}, Arg{nullptr, b}, loc);
}

Tensor strata::where(const Tensor &cond, Scalar a, Scalar b, SourceLoc loc) {
  return whereArgs(cond, Arg{nullptr, a}, Arg{nullptr, b}, loc);
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

Tensor strata::detail::rowMajorResult(const Tensor &r, const SourceLoc &loc) {
  Tensor c = r.contiguous(loc);
  layout::Layout want = layout::contiguous(c.impl()->layout.sizes);
  return sizeOneStrides(std::move(c), want);
}

Tensor Tensor::masked_fill(const Tensor &mask, Scalar value,
                           SourceLoc loc) const {
  implOf(*this, loc);
  checkScalarFits(value, impl()->dtype, "masked_fill", loc);
  // The result keeps this tensor's dtype (the value is converted) and is
  // row-major (PyTorch fills a contiguous clone).
  return composite(
      rowMajorResult(strata::where(mask,
                                   scalarTensor(value, impl()->dtype, loc),
                                   *this, loc),
                     loc),
      "MaskedFillBackward0", {this});
}

Tensor strata::maximum(const Tensor &a, const Tensor &b, SourceLoc loc) {
  return binary("maximum", Kind::MinMax, Arg{&a, {}}, Arg{&b, {}}, loc);
}
Tensor strata::minimum(const Tensor &a, const Tensor &b, SourceLoc loc) {
  return binary("minimum", Kind::MinMax, Arg{&a, {}}, Arg{&b, {}}, loc);
}
Tensor strata::matmul(const Tensor &a, const Tensor &b, SourceLoc loc) {
  return a.matmul(b, loc);
}

//===--- atan2, the division family, lerp, isclose (issue 20) -------------===//

Tensor Tensor::atan2(const Tensor &o, SourceLoc loc) const {
  implOf(*this, loc);
  return binary("atan2", Kind::Float, Arg{this, {}}, Arg{&o, {}}, loc);
}

#define STRATA_MOD(method)                                                     \
  Tensor Tensor::method(const Tensor &o, SourceLoc loc) const {                \
    implOf(*this, loc);                                                        \
    return binary(#method, Kind::Mod, Arg{this, {}}, Arg{&o, {}}, loc);        \
  }                                                                            \
  Tensor Tensor::method(Scalar s, SourceLoc loc) const {                       \
    implOf(*this, loc);                                                        \
    return binary(#method, Kind::Mod, Arg{this, {}}, Arg{nullptr, s}, loc);    \
  }                                                                            \
  Tensor strata::method(const Tensor &a, const Tensor &b, SourceLoc loc) {     \
    return a.method(b, loc);                                                   \
  }                                                                            \
  Tensor strata::method(const Tensor &a, Scalar b, SourceLoc loc) {            \
    return a.method(b, loc);                                                   \
  }
STRATA_MOD(fmod)
STRATA_MOD(remainder)
STRATA_MOD(floor_divide)
#undef STRATA_MOD

Tensor strata::atan2(const Tensor &a, const Tensor &b, SourceLoc loc) {
  return a.atan2(b, loc);
}
Tensor strata::remainder(Scalar a, const Tensor &b, SourceLoc loc) {
  implOf(b, loc);
  return binary("remainder", Kind::Mod, Arg{nullptr, a}, Arg{&b, {}}, loc);
}

const char *strata::detail::cppTypeName(DType t) {
  return runtime::dtypeInfo(t).cpp;
}

namespace {

/// lerp.Scalar (`weight` null) and lerp.Tensor: PyTorch's checks in its
/// order (one dtype for all three, then a float kernel).
Tensor lerpImpl(const Tensor &start, const Tensor &end, const Tensor *weight,
                const Scalar &number, const SourceLoc &loc) {
  const TensorImpl &s = implOf(start, loc), &e = implOf(end, loc);
  auto sameDtype = [&](const TensorImpl &t, const char *what) {
    if (t.dtype != s.dtype)
      fail(std::string("expected dtype ") + cppTypeName(s.dtype) + " for `" +
               what + "` but got dtype " + cppTypeName(t.dtype),
           "convert it with .to(start.dtype())", loc);
  };
  sameDtype(e, "end");
  if (weight)
    sameDtype(implOf(*weight, loc), "weight");
  if (!isFloatingPoint(s.dtype))
    notImplementedFor(weight ? "lerp_kernel_tensor" : "lerp_kernel_scalar",
                      s.dtype, "convert the tensors to a float type first",
                      loc);
  Shape shape = check(
      layout::broadcastShapes(s.layout.sizes, e.layout.sizes, "lerp"), loc);
  if (!weight)
    checkScalarFits(number, s.dtype, "lerp", loc);
  Tensor w = weight ? *weight : scalarTensor(number, s.dtype, loc);
  shape = check(layout::broadcastShapes(shape, w.impl()->layout.sizes, "lerp"),
                loc);
  Tensor r = record(Op::Where, "lerp", s.dtype, std::move(shape),
                    {&start, &end, &w}, loc);
  if (weight)
    return r;
  std::array<layout::Layout, 2> se{s.layout, e.layout};
  return iteratorLayout(std::move(r), se);
}
} // namespace

Tensor Tensor::lerp(const Tensor &end, Scalar weight, SourceLoc loc) const {
  return lerpImpl(*this, end, nullptr, weight, loc);
}
Tensor Tensor::lerp(const Tensor &end, const Tensor &weight,
                    SourceLoc loc) const {
  return lerpImpl(*this, end, &weight, 0, loc);
}
Tensor strata::lerp(const Tensor &start, const Tensor &end, Scalar weight,
                    SourceLoc loc) {
  return start.lerp(end, weight, loc);
}
Tensor strata::lerp(const Tensor &start, const Tensor &end,
                    const Tensor &weight, SourceLoc loc) {
  return start.lerp(end, weight, loc);
}

/// PyTorch 1.13's isclose, op for op (TensorCompare.cpp): equal, or NaNs
/// with equal_nan, or a finite |a - b| <= atol + |rtol * b| (integers and
/// bool converted to f32 first).
Tensor Tensor::isclose(const Tensor &o, double rtol, double atol,
                       bool equal_nan, SourceLoc loc) const {
  const TensorImpl &a = implOf(*this, loc), &b = implOf(o, loc);
  if (a.dtype != b.dtype)
    fail(std::string(torchTypeName(a.dtype)) + " did not match " +
             torchTypeName(b.dtype),
         "convert one tensor with .to() so both have the same dtype", loc);
  for (auto [what, v] : {std::pair{"rtol", rtol}, std::pair{"atol", atol}})
    if (!(v >= 0))
      fail(std::string(what) +
               " must be greater than or equal to zero, but got " +
               (std::ostringstream() << v).str(),
           "tolerances are magnitudes: pass a non-negative value", loc);
  NoGradGuard noGrad; // a bool result: no gradient flows through it
  // PyTorch updates `self == other` in place (|=): the result has its
  // layout, up to the strides of size-1 dims strata's ops order otherwise.
  Tensor close = eq(o, loc);
  const layout::Layout eqLayout = close.impl()->layout;
  if (equal_nan && isFloatingPoint(a.dtype))
    close = close.bitwise_or(isnan(loc).bitwise_and(o.isnan(loc), loc), loc);
  if (rtol == 0 && atol == 0)
    return sizeOneStrides(close, eqLayout);
  // Integers and bool: both in the default float dtype, so |a - b| is
  // computed in f32 (no wrap-around; 2^24 + 1 is close to 2^24).
  Tensor x = isFloatingPoint(a.dtype) ? *this : to(DType::F32, loc);
  Tensor y = isFloatingPoint(b.dtype) ? o : o.to(DType::F32, loc);
  Tensor scaled =
      binary("mul", Kind::Arith, Arg{nullptr, Scalar(rtol)}, Arg{&y, {}}, loc)
          .abs(loc);
  Tensor allowed = binary("add", Kind::Arith, Arg{nullptr, Scalar(atol)},
                          Arg{&scaled, {}}, loc);
  Tensor actual = x.sub(y, loc).abs(loc);
  return sizeOneStrides(
      close.bitwise_or(
          actual.isfinite(loc).bitwise_and(actual.le(allowed, loc), loc), loc),
      eqLayout);
}

bool Tensor::allclose(const Tensor &o, double rtol, double atol, bool equal_nan,
                      SourceLoc loc) const {
  Tensor far = isclose(o, rtol, atol, equal_nan, loc).logical_not(loc);
  return far.sum(loc).item<int64_t>(loc) == 0;
}

Tensor strata::isclose(const Tensor &a, const Tensor &b, double rtol,
                       double atol, bool equal_nan, SourceLoc loc) {
  return a.isclose(b, rtol, atol, equal_nan, loc);
}
bool strata::allclose(const Tensor &a, const Tensor &b, double rtol,
                      double atol, bool equal_nan, SourceLoc loc) {
  return a.allclose(b, rtol, atol, equal_nan, loc);
}

//===--- Operators --------------------------------------------------------===//

#define STRATA_OPERATOR(sym, name, kind)                                       \
  Tensor strata::operator sym(const Tensor &a, LocatedTensor b) {              \
    return binary(name, kind, Arg{&a, {}}, Arg{&b.tensor, {}}, b.loc);         \
  }                                                                            \
  Tensor strata::operator sym(const Tensor &a, Scalar s) {                     \
    return binary(name, kind, Arg{&a, {}}, Arg{nullptr, s}, s.loc());          \
  }
STRATA_OPERATOR(+, "add", Kind::Arith)
STRATA_OPERATOR(-, "sub", Kind::Arith)
STRATA_OPERATOR(*, "mul", Kind::Arith)
STRATA_OPERATOR(/, "div", Kind::Div)
#undef STRATA_OPERATOR

// Comparisons take both operands located: C++20 also considers `b == a`
// for `a == b`, and identical parameter types keep that unambiguous.
#define STRATA_COMPARE(sym, name)                                              \
  Tensor strata::operator sym(LocatedTensor a, LocatedTensor b) {              \
    return binary(name, Kind::Compare, Arg{&a.tensor, {}}, Arg{&b.tensor, {}}, \
                  b.loc);                                                      \
  }                                                                            \
  Tensor strata::operator sym(const Tensor &a, Scalar s) {                     \
    return binary(name, Kind::Compare, Arg{&a, {}}, Arg{nullptr, s}, s.loc()); \
  }
STRATA_COMPARE(==, "eq")
STRATA_COMPARE(!=, "ne")
STRATA_COMPARE(<, "lt")
STRATA_COMPARE(<=, "le")
STRATA_COMPARE(>, "gt")
STRATA_COMPARE(>=, "ge")
#undef STRATA_COMPARE

#define STRATA_ROPERATOR(sym, name, kind)                                      \
  Tensor strata::operator sym(Scalar s, const Tensor &a) {                     \
    return binary(name, kind, Arg{nullptr, s}, Arg{&a, {}}, s.loc());          \
  }
STRATA_ROPERATOR(+, "add", Kind::Arith)
STRATA_ROPERATOR(-, "sub", Kind::Arith)
STRATA_ROPERATOR(*, "mul", Kind::Arith)
#undef STRATA_ROPERATOR

// LibTorch's (and Python's) number / t is t.reciprocal() * number: its
// layout, grad_fn (MulBackward0 over ReciprocalBackward0) and saved tensor
// (the reciprocal) are theirs.
Tensor strata::operator/(Scalar s, const Tensor &a) {
  return a.reciprocal(s.loc()) * s;
}

Tensor strata::operator-(LocatedTensor a) { return a.tensor.neg(a.loc); }

//===--- In place ---------------------------------------------------------===//

void strata::detail::checkNoPartialOverlap(const TensorImpl &dest,
                                           const TensorImpl &in, const char *op,
                                           const SourceLoc &loc) {
  if (&dest == &in || dest.root != in.root)
    return;
  const layout::Layout &a = dest.layout, &b = in.layout;
  if (a.numel() == 0 || b.numel() == 0 ||
      !layout::isNonOverlappingAndDense(a) ||
      !layout::isNonOverlappingAndDense(b))
    return;
  int64_t aEnd = a.offset + a.numel(), bEnd = b.offset + b.numel();
  bool full = a.offset == b.offset && aEnd == bEnd && a.strides == b.strides;
  if (!full && a.offset < bEnd && b.offset < aEnd)
    fail(std::string(op) +
             ": unsupported operation: some elements of the input tensor and "
             "the written-to tensor refer to a single memory location. "
             "Please clone() the tensor before performing the operation.",
         "clone() the input: the op would read elements it already wrote", loc);
}

namespace {
Tensor &inPlace(Tensor &self, const Tensor &result, const char *op,
                const SourceLoc &loc, const Tensor *other = nullptr) {
  const TensorImpl &t = *self.impl();
  if (other)
    checkNoPartialOverlap(t, *other->impl(), op, loc);
  DType rt = result.impl()->dtype;
  if (rt != t.dtype && !canCast(rt, t.dtype))
    fail(std::string(op) + ": result type " + toString(rt) +
             " can't be cast to the desired output type " + toString(t.dtype),
         "convert the destination first (x = x.to(...)) or use the "
         "out-of-place op",
         loc);
  recordWrite(t, result, loc, op);
  return self;
}
} // namespace

namespace {
/// PyTorch checks an in-place op before it computes anything; strata
/// computes the value first (reading the destination, which regenerates a
/// view's grad_fn), so it checks here first too.
void checkInplaceFirst(const Tensor &self, const Tensor *other, const char *op,
                       const SourceLoc &loc) {
  const TensorImpl &t = implOf(self, loc);
  TraceLock lock;
  checkInplace(t, other ? implOf(*other, loc) : t, op, loc);
}
} // namespace

#define STRATA_INPLACE(method, name, kind)                                     \
  Tensor &Tensor::method(const Tensor &o, SourceLoc loc) {                     \
    checkInplaceFirst(*this, &o, #method, loc);                                \
    return inPlace(*this, binary(name, kind, Arg{this, {}}, Arg{&o, {}}, loc), \
                   #method, loc, &o);                                          \
  }                                                                            \
  Tensor &Tensor::method(Scalar s, SourceLoc loc) {                            \
    checkInplaceFirst(*this, nullptr, #method, loc);                           \
    return inPlace(*this,                                                      \
                   binary(name, kind, Arg{this, {}}, Arg{nullptr, s}, loc),    \
                   #method, loc);                                              \
  }
STRATA_INPLACE(add_, "add", Kind::Arith)
STRATA_INPLACE(sub_, "sub", Kind::Arith)
STRATA_INPLACE(mul_, "mul", Kind::Arith)
STRATA_INPLACE(div_, "div", Kind::Div)
STRATA_INPLACE(fmod_, "fmod", Kind::Mod)
STRATA_INPLACE(remainder_, "remainder", Kind::Mod)
STRATA_INPLACE(floor_divide_, "floor_divide", Kind::Mod)
#undef STRATA_INPLACE

Tensor &Tensor::atan2_(const Tensor &o, SourceLoc loc) {
  checkInplaceFirst(*this, &o, "atan2_", loc);
  return inPlace(*this, atan2(o, loc), "atan2_", loc, &o);
}

Tensor &Tensor::lerp_(const Tensor &end, Scalar weight, SourceLoc loc) {
  checkInplaceFirst(*this, &end, "lerp_", loc);
  return inPlace(*this, lerp(end, weight, loc), "lerp_", loc, &end);
}

Tensor &Tensor::lerp_(const Tensor &end, const Tensor &weight, SourceLoc loc) {
  checkInplaceFirst(*this, &end, "lerp_", loc);
  checkNoPartialOverlap(*impl(), implOf(weight, loc), "lerp_", loc);
  return inPlace(*this, lerp(end, weight, loc), "lerp_", loc, &end);
}

namespace {
/// fill_ and zero_ (named apart: their grad_fns are FillBackward0 and
/// ZeroBackward0).
Tensor &fillWith(Tensor &self, Scalar s, const char *op, const SourceLoc &loc) {
  const TensorImpl &t = implOf(self, loc);
  checkScalarFits(s, t.dtype, op, loc);
  if (layout::hasInternalOverlap(t.layout)) {
    // PyTorch fills an expanded view (each element gets the one value):
    // write through the view with its stride-0 dims collapsed to size 1.
    TensorImpl collapsed = t;
    // (Written as t: the copy has t's autograd identity.)
    if (!collapsed.gradBase)
      collapsed.gradBase = const_cast<TensorImpl *>(&t);
    for (size_t d = 0; d < collapsed.layout.sizes.size(); ++d)
      if (collapsed.layout.strides[d] == 0)
        collapsed.layout.sizes[d] = 1;
    recordWrite(collapsed, scalarTensor(s, t.dtype, loc), loc, op);
    t.root->current->overlapWrite = true;
    return self;
  }
  recordWrite(t, scalarTensor(s, t.dtype, loc), loc, op);
  return self;
}
} // namespace

Tensor &Tensor::zero_(SourceLoc loc) {
  return fillWith(*this, 0, "zero_", loc);
}

Tensor &Tensor::fill_(Scalar s, SourceLoc loc) {
  return fillWith(*this, s, "fill_", loc);
}

Tensor &Tensor::copy_(const Tensor &src, SourceLoc loc) {
  const TensorImpl &t = implOf(*this, loc);
  checkNoPartialOverlap(t, implOf(src, loc), "copy_", loc);
  recordWrite(t, src, loc, "copy_");
  return *this;
}

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

Tensor &Tensor::masked_fill_(const Tensor &mask, Scalar value, SourceLoc loc) {
  implOf(*this, loc);
  checkInplaceFirst(*this, nullptr, "masked_fill_", loc);
  return inPlace(*this, masked_fill(mask, value, loc), "masked_fill_", loc);
}

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

Tensor &Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi,
                       SourceLoc loc) {
  implOf(*this, loc);
  checkInplaceFirst(*this, nullptr, "clamp_", loc);
  return inPlace(*this, clamp(lo, hi, loc), "clamp_", loc);
}

Tensor &Tensor::clamp_min_(Scalar lo, SourceLoc loc) {
  implOf(*this, loc);
  checkInplaceFirst(*this, nullptr, "clamp_min_", loc);
  return inPlace(*this, clamp_min(lo, loc), "clamp_min_", loc);
}

Tensor &Tensor::clamp_max_(Scalar hi, SourceLoc loc) {
  implOf(*this, loc);
  checkInplaceFirst(*this, nullptr, "clamp_max_", loc);
  return inPlace(*this, clamp_max(hi, loc), "clamp_max_", loc);
}

Tensor &Tensor::nan_to_num_(std::optional<double> nan,
                            std::optional<double> posinf,
                            std::optional<double> neginf, SourceLoc loc) {
  implOf(*this, loc);
  checkInplaceFirst(*this, nullptr, "nan_to_num_", loc);
  return inPlace(*this, nan_to_num(nan, posinf, neginf, loc), "nan_to_num_",
                 loc);
}
