//===- StrataOps.cpp - compute and write ops: inference, verifiers --------===//
//
// Compute ops produce fresh tensors (offset 0, their own root). Their shape
// rules (broadcasting, reductions) and the layouts of their results come
// from the layout algebra: elementwise results follow the operands as
// PyTorch's TensorIterator does, cast and copy keep a dense input's strides
// (preserve_format), reductions, matmul, fills and arange are contiguous.
// Their dtype rules follow PyTorch with explicit casts instead of implicit
// promotion.
//
//===----------------------------------------------------------------------===//
#include "VJPBuilders.h"
#include "strata/IR/ScalarBuilder.h"
#include "strata/IR/StrataDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace mlir;
using namespace strata::ir;
namespace layout = strata::layout;

/// The value of a fill or an arange bound: a decimal integer literal is an
/// i64 attribute (exact for integer tensors), anything else a float: a
/// literal with '.' or an exponent, or the hex bits MLIR writes for inf and
/// NaN. The two kinds print back as they parse.
static ParseResult parseScalarValue(OpAsmParser &parser, Attribute &value) {
  const char *p = parser.getCurrentLocation().getPointer();
  const char *q = p + (*p == '-');
  bool digits = *q >= '0' && *q <= '9', decimal = digits;
  while (*q >= '0' && *q <= '9')
    ++q;
  if (*q == 'x' || *q == 'X' || *q == '.' || *q == 'e' || *q == 'E')
    decimal = false;
  Builder &b = parser.getBuilder();
  if (digits && decimal) {
    // Through APInt: parseInteger<int64_t> rejects INT64_MIN's magnitude.
    APInt v;
    SMLoc at = parser.getCurrentLocation();
    OptionalParseResult r = parser.parseOptionalInteger(v);
    if (!r.has_value() || failed(*r))
      return failure();
    if (v.getMinSignedBits() > 64)
      return parser.emitError(at, "integer value does not fit in i64");
    value = b.getI64IntegerAttr(v.getSExtValue());
    return success();
  }
  double v;
  if (parser.parseFloat(v))
    return failure();
  value = b.getF64FloatAttr(v);
  return success();
}

static void printScalarValue(OpAsmPrinter &printer, Operation *,
                             Attribute value) {
  if (auto i = value.dyn_cast<IntegerAttr>())
    printer << i.getInt();
  else
    printer.printAttributeWithoutType(value);
}

#include "strata/IR/StrataElementwiseInterface.cpp.inc"

// The scalar formulas and VJPs of StrataUnaryOps.td use <cmath> and the
// GradBuilder (VJPBuilders.h). MLIR 16's generated builders and
// inferReturnTypes leave parameters unused (LLVM builds itself with
// -Wno-unused-parameter): silenced for the generated code only (issue 19).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "strata/IR/StrataOps.cpp.inc"
#pragma GCC diagnostic pop

namespace {
StridedTensorType tensorType(Value v) {
  return v.getType().dyn_cast<StridedTensorType>();
}

/// The short op name ("add") of "strata.add", for messages.
StringRef shortName(StringRef opName) {
  return opName.drop_front(opName.find('.') + 1);
}

bool isFloat(Type t) { return t.isa<FloatType>(); }
bool isBool(Type t) { return t.isInteger(1); }

/// The TensorIterator result of `operands` over `shape`.
StridedTensorType elementwiseType(Type element, ArrayRef<int64_t> shape,
                                  ArrayRef<StridedTensorType> operands) {
  std::vector<layout::Layout> ins;
  for (StridedTensorType t : operands)
    ins.push_back(t.getLayout());
  return StridedTensorType::get(element, layout::elementwiseResult(ins, shape));
}

/// Whether `v` is a C++ number: a fill (a bool number: a cast of one).
bool isNumber(Value v) {
  if (auto cast = v.getDefiningOp<CastOp>())
    v = cast.getInput();
  return bool(v.getDefiningOp<FillOp>());
}
} // namespace

StridedTensorType strata::ir::preserveFormatType(StridedTensorType input,
                                                 Type element) {
  return StridedTensorType::get(element,
                                layout::preserveFormat(input.getLayout()));
}

Value strata::ir::createContiguousCopy(OpBuilder &b, Location loc, Value v) {
  auto type = tensorType(v);
  if (!type.isContiguous())
    return b.create<ContiguousOp>(loc, v);
  // preserve_format of a contiguous tensor; its size-1 dims keep their
  // strides, which a view makes row-major (the same elements).
  Value copy = b.create<CopyOp>(loc, v);
  auto rowMajor =
      StridedTensorType::getContiguous(type.getElementType(), type.getShape());
  if (copy.getType() == rowMajor)
    return copy;
  return b.create<StridedViewOp>(loc, rowMajor, copy);
}

LogicalResult strata::ir::inferUnaryType(std::optional<Location> loc,
                                         StringRef opName, ValueRange operands,
                                         DTypeRule rule,
                                         SmallVectorImpl<Type> &inferred) {
  auto type = tensorType(operands[0]);
  if (!type)
    return emitOptionalError(loc, "expected a strata tensor operand");
  StringRef name = shortName(opName);
  Type element = type.getElementType();
  if (takesFloatsOnly(rule) && !isFloat(element))
    return emitOptionalError(
        loc, name, " expects a floating-point tensor, got ", dtypeName(element),
        "; cast it first (strata.cast to f32 or f64)");
  if (rule == DTypeRule::Number && isBool(element))
    return emitOptionalError(loc, name,
                             " is not defined for bool tensors; "
                             "cast to an integer or float first");
  if (rule == DTypeRule::Integral && isFloat(element))
    return emitOptionalError(loc, name,
                             " expects an integer or bool tensor, "
                             "got ",
                             dtypeName(element));
  inferred.push_back(elementwiseType(element, type.getShape(), {type}));
  return success();
}

LogicalResult strata::ir::inferBinaryType(std::optional<Location> loc,
                                          StringRef opName, ValueRange operands,
                                          DTypeRule rule, bool isCompare,
                                          SmallVectorImpl<Type> &inferred,
                                          DictionaryAttr attributes) {
  auto lhs = tensorType(operands[0]), rhs = tensorType(operands[1]);
  if (!lhs || !rhs)
    return emitOptionalError(loc, "expected strata tensor operands");
  StringRef name = shortName(opName);
  Type element = lhs.getElementType();
  // pow's `scalar_exponent`: a number's value as an argument (0-d), maybe
  // f64 for an f32 base (an exponent f32 cannot hold).
  bool scalarExponent =
      name == "pow" && attributes && attributes.get("scalar_exponent");
  if (scalarExponent && rhs.getRank() != 0)
    return emitOptionalError(loc, "pow: a scalar_exponent is 0-d, got rank ",
                             rhs.getRank());
  if (element != rhs.getElementType() &&
      !(scalarExponent && element.isF32() && rhs.getElementType().isF64()))
    return emitOptionalError(
        loc, name, ": dtype mismatch: lhs is ", dtypeName(element), ", rhs is ",
        dtypeName(rhs.getElementType()),
        "; cast one operand with strata.cast so both have the same dtype");
  // The op's `dtype` in StrataOps.td (PyTorch computes bool add (or) and mul
  // (and); not sub, pow or the division family).
  if (rule == DTypeRule::Number && isBool(element))
    return emitOptionalError(loc, name,
                             " is not defined for bool tensors; "
                             "cast to an integer or float first");
  if (rule == DTypeRule::Integral && isFloat(element))
    return emitOptionalError(loc, name,
                             " expects integer or bool tensors, "
                             "got ",
                             dtypeName(element));
  if (takesFloatsOnly(rule) && !isFloat(element)) {
    if (name == "div") // (what PyTorch's div of integers is)
      return emitOptionalError(loc, "div of ", dtypeName(element),
                               " tensors is true division in PyTorch; cast "
                               "the operands to f32 or f64 first");
    return emitOptionalError(loc, name, " expects floating-point tensors, got ",
                             dtypeName(element),
                             "; cast the operands to f32 or f64 first");
  }
  auto shape = layout::broadcastShapes(lhs.getShape(), rhs.getShape(),
                                       name.str().c_str());
  if (!shape)
    return emitOptionalError(loc, shape.error());
  Type resultElement =
      isCompare ? IntegerType::get(lhs.getContext(), 1) : element;
  // pow by a number (a 0-d fill, or an argument marked scalar_exponent) is
  // PyTorch's pow(Tensor, Scalar): a unary TensorIterator, which keeps a
  // dense base's strides on size-1 dims too. (A bool number is a cast of a
  // bool fill.)
  if (name == "pow" && rhs.getRank() == 0 &&
      (scalarExponent || isNumber(operands[1]))) {
    inferred.push_back(elementwiseType(resultElement, *shape, {lhs}));
  } else {
    inferred.push_back(elementwiseType(resultElement, *shape, {lhs, rhs}));
  }
  return success();
}

LogicalResult strata::ir::inferReduceType(std::optional<Location> loc,
                                          StringRef opName, Value input,
                                          ArrayRef<int64_t> dims, bool keepdim,
                                          SmallVectorImpl<Type> &inferred) {
  auto type = tensorType(input);
  if (!type)
    return emitOptionalError(loc, "expected a strata tensor operand");
  StringRef name = shortName(opName);
  std::string op = name.str();
  auto shape = layout::reduceShape(type.getShape(), dims, keepdim, op.c_str());
  if (!shape)
    return emitOptionalError(loc, shape.error());
  Type element = type.getElementType();
  if (name == "mean" && !isFloat(element))
    return emitOptionalError(
        loc,
        "mean: could not infer output dtype. Input dtype must be either "
        "a floating point or complex dtype. Got: ",
        dtypeName(element), "; cast to f32 or f64 first");
  if ((name == "amax" || name == "amin") && type.getNumElements() == 0) {
    // PyTorch: a max over an empty dimension has no identity element.
    SmallVector<int64_t> reduced(dims.begin(), dims.end());
    if (reduced.empty())
      for (int64_t d = 0; d < type.getRank(); ++d)
        reduced.push_back(d);
    for (int64_t d : reduced) {
      int64_t w = d < 0 ? d + type.getRank() : d;
      if (type.getShape()[w] == 0)
        return emitOptionalError(loc, name, "(): Expected reduction dim ", w,
                                 " to have non-zero size.");
    }
  }
  if ((name == "sum" || name == "prod") && !isFloat(element))
    element = IntegerType::get(type.getContext(), 64);
  inferred.push_back(StridedTensorType::getContiguous(element, *shape));
  return success();
}

LogicalResult CopyOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       ValueRange operands, DictionaryAttr,
                                       RegionRange,
                                       SmallVectorImpl<Type> &inferred) {
  auto type = tensorType(operands[0]);
  if (!type)
    return emitOptionalError(loc, "expected a strata tensor operand");
  inferred.push_back(preserveFormatType(type, type.getElementType()));
  return success();
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        ValueRange operands, DictionaryAttr,
                                        RegionRange,
                                        SmallVectorImpl<Type> &inferred) {
  auto cond = tensorType(operands[0]), lhs = tensorType(operands[1]),
       rhs = tensorType(operands[2]);
  if (!cond || !lhs || !rhs)
    return emitOptionalError(loc, "expected strata tensor operands");
  if (!isBool(cond.getElementType()))
    return emitOptionalError(loc,
                             "where: expected condition to be a bool (i1) "
                             "tensor, got ",
                             dtypeName(cond.getElementType()));
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(
        loc, "where: dtype mismatch: lhs is ", dtypeName(lhs.getElementType()),
        ", rhs is ", dtypeName(rhs.getElementType()),
        "; cast one operand with strata.cast so both have the same dtype");
  auto ab = layout::broadcastShapes(lhs.getShape(), rhs.getShape(), "where");
  if (!ab)
    return emitOptionalError(loc, ab.error());
  auto all = layout::broadcastShapes(cond.getShape(), *ab, "where");
  if (!all)
    return emitOptionalError(loc, all.error());
  inferred.push_back(
      elementwiseType(lhs.getElementType(), *all, {cond, lhs, rhs}));
  return success();
}

LogicalResult LerpOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       ValueRange operands, DictionaryAttr,
                                       RegionRange,
                                       SmallVectorImpl<Type> &inferred) {
  auto start = tensorType(operands[0]), end = tensorType(operands[1]),
       weight = tensorType(operands[2]);
  if (!start || !end || !weight)
    return emitOptionalError(loc, "expected strata tensor operands");
  Type element = start.getElementType();
  if (!isFloat(element))
    return emitOptionalError(loc, "lerp expects floating-point tensors, got ",
                             dtypeName(element),
                             "; cast the operands to f32 or f64 first");
  for (auto [what, t] : {std::pair{"end", end}, std::pair{"weight", weight}})
    if (t.getElementType() != element)
      return emitOptionalError(loc, "lerp: expected dtype ", dtypeName(element),
                               " for `", what, "` but got dtype ",
                               dtypeName(t.getElementType()),
                               "; cast it with strata.cast");
  auto se = layout::broadcastShapes(start.getShape(), end.getShape(), "lerp");
  if (!se)
    return emitOptionalError(loc, se.error());
  auto all = layout::broadcastShapes(*se, weight.getShape(), "lerp");
  if (!all)
    return emitOptionalError(loc, all.error());
  inferred.push_back(elementwiseType(element, *all, {start, end, weight}));
  return success();
}

LogicalResult FmaOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      ValueRange operands, DictionaryAttr,
                                      RegionRange,
                                      SmallVectorImpl<Type> &inferred) {
  auto a = tensorType(operands[0]), b = tensorType(operands[1]),
       c = tensorType(operands[2]);
  if (!a || !b || !c)
    return emitOptionalError(loc, "expected strata tensor operands");
  Type element = a.getElementType();
  if (!isFloat(element))
    return emitOptionalError(loc, "fma expects floating-point tensors, got ",
                             dtypeName(element),
                             "; cast the operands to f32 or f64 first");
  for (auto t : {b, c})
    if (t.getElementType() != element)
      return emitOptionalError(loc, "fma: operands of one dtype expected, got ",
                               dtypeName(element), " and ",
                               dtypeName(t.getElementType()));
  auto ab = layout::broadcastShapes(a.getShape(), b.getShape(), "fma");
  if (!ab)
    return emitOptionalError(loc, ab.error());
  auto all = layout::broadcastShapes(*ab, c.getShape(), "fma");
  if (!all)
    return emitOptionalError(loc, all.error());
  inferred.push_back(elementwiseType(element, *all, {a, b, c}));
  return success();
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         ValueRange operands, DictionaryAttr,
                                         RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  auto lhs = tensorType(operands[0]), rhs = tensorType(operands[1]);
  if (!lhs || !rhs)
    return emitOptionalError(loc, "expected strata tensor operands");
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(
        loc, "matmul: expected both operands to have the same dtype, but got ",
        dtypeName(lhs.getElementType()), " and ",
        dtypeName(rhs.getElementType()));
  if (isBool(lhs.getElementType()))
    return emitOptionalError(loc, "matmul is not defined for bool tensors");
  if (lhs.getRank() == 0 || rhs.getRank() == 0)
    return emitOptionalError(
        loc,
        "matmul: both arguments to matmul need to be at least 1D, but "
        "they are ",
        lhs.getRank(), "D and ", rhs.getRank(), "D");
  // torch.matmul: a 1-D lhs is a row (dim removed after), a 1-D rhs a column.
  SmallVector<int64_t> a(lhs.getShape()), b(rhs.getShape());
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  int64_t n = a[a.size() - 2], k = a.back(), k2 = b[b.size() - 2], m = b.back();
  if (k != k2) {
    if (lhs.getRank() == 1 && rhs.getRank() == 1)
      return emitOptionalError(
          loc, "matmul: inconsistent tensor size, expected tensor [", k,
          "] and src [", k2, "] to have the same number of elements, but got ",
          k, " and ", k2, " elements respectively");
    return emitOptionalError(loc,
                             "matmul: mat1 and mat2 shapes cannot be "
                             "multiplied (",
                             n, "x", k, " and ", k2, "x", m, ")");
  }
  auto batch = layout::broadcastShapes(ArrayRef(a).drop_back(2),
                                       ArrayRef(b).drop_back(2), "matmul");
  if (!batch)
    return emitOptionalError(loc, batch.error());
  SmallVector<int64_t> shape(batch->begin(), batch->end());
  if (!lhsVector)
    shape.push_back(n);
  if (!rhsVector)
    shape.push_back(m);
  inferred.push_back(
      StridedTensorType::getContiguous(lhs.getElementType(), shape));
  return success();
}

LogicalResult CastOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (in.getShape() != out.getShape())
    return emitOpError() << "result shape "
                         << layout::formatList(out.getShape())
                         << " differs from the input's "
                         << layout::formatList(in.getShape());
  auto expected = preserveFormatType(in, out.getElementType());
  if (out != expected)
    return emitOpError() << "result must be a fresh tensor with the input's "
                            "layout (preserve_format): strides "
                         << layout::formatList(expected.getStrides())
                         << " offset 0, got strides "
                         << layout::formatList(out.getStrides()) << " offset "
                         << out.getOffset();
  return success();
}

namespace {
LogicalResult verifyFreshResult(Operation *op, StridedTensorType type) {
  if (type !=
      StridedTensorType::getContiguous(type.getElementType(), type.getShape()))
    return op->emitOpError() << "result must be a fresh contiguous tensor "
                                "(offset 0, row-major strides), got strides "
                             << layout::formatList(type.getStrides())
                             << " offset " << type.getOffset();
  return success();
}
} // namespace

namespace {
double attrAsDouble(Attribute a) {
  if (auto f = a.dyn_cast<FloatAttr>())
    return f.getValueAsDouble();
  return static_cast<double>(a.cast<IntegerAttr>().getInt());
}
} // namespace

double FillOp::getValueAsDouble() { return attrAsDouble(getValue()); }
double ArangeOp::getStartAsDouble() { return attrAsDouble(getStart()); }
double ArangeOp::getStepAsDouble() { return attrAsDouble(getStep()); }
bool ArangeOp::isIntegral() {
  return getStart().isa<IntegerAttr>() && getStep().isa<IntegerAttr>();
}

LogicalResult FillOp::verify() { return verifyFreshResult(*this, getType()); }

LogicalResult ArangeOp::verify() {
  if (getStart().isa<IntegerAttr>() != getStep().isa<IntegerAttr>())
    return emitOpError() << "start and step must be both i64 or both f64";
  if (isIntegral() && getType().getElementType().isa<FloatType>())
    return emitOpError() << "an i64 start and step need an integer result; "
                            "write them as f64 for a float arange";
  if (getType().getRank() != 1)
    return emitOpError() << "result must be 1-D, got rank "
                         << getType().getRank();
  return verifyFreshResult(*this, getType());
}

LogicalResult WriteOp::verify() {
  auto src = getSrc().getType(), dest = getDest().getType();
  if (src.getElementType() != dest.getElementType())
    return emitOpError() << "dtype mismatch: writing "
                         << dtypeName(src.getElementType()) << " into "
                         << dtypeName(dest.getElementType())
                         << "; cast the source with strata.cast first";
  auto shape =
      layout::broadcastShapes(src.getShape(), dest.getShape(), "write");
  if (!shape || ArrayRef<int64_t>(*shape) != dest.getShape())
    return emitOpError() << "source of shape "
                         << layout::formatList(src.getShape())
                         << " doesn't match the broadcast shape "
                         << layout::formatList(dest.getShape())
                         << " of the destination";
  if (layout::hasInternalOverlap(dest.getLayout()))
    return emitOpError()
           << "unsupported operation: more than one element of the "
              "written-to tensor refers to a single memory location. Please "
              "clone() the tensor before performing the operation.";
  Value root = getStorageRoot(getDest());
  auto expected = StorageType::get(getContext(), getRootStorageSize(root),
                                   dest.getElementType());
  if (getType() != expected)
    return emitOpError() << "result must be the new version of the "
                            "destination's storage root, "
                         << expected << ", got " << getType();
  return success();
}

//===--- The dtype rules by name (strata/IR/OpDTypes.h) -------------------===//

namespace {
/// Adds `Op`'s ODS dtype rule when it is an elementwise op (one that has
/// one: Strata_UnaryOp, Strata_BinaryOp).
template <typename Op>
void addDTypes(llvm::StringMap<ElementwiseDTypes> &table) {
  if constexpr (requires { Op::kDTypeRule; })
    table[shortName(Op::getOperationName())] = {Op::kDTypeRule, Op::kCompare};
}

template <typename... Ops> llvm::StringMap<ElementwiseDTypes> dtypeTable() {
  llvm::StringMap<ElementwiseDTypes> table;
  (addDTypes<Ops>(table), ...);
  return table;
}
} // namespace

const ElementwiseDTypes *strata::ir::elementwiseDTypes(std::string_view name) {
  // Every op of the dialect, from ODS's list: a new op is in it.
  static const llvm::StringMap<ElementwiseDTypes> table = dtypeTable<
#define GET_OP_LIST
#include "strata/IR/StrataOps.cpp.inc"
      >();
  auto it = table.find(StringRef(name.data(), name.size()));
  return it == table.end() ? nullptr : &it->getValue();
}
