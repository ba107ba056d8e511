//===- StrataIndexOps.cpp - gather/scatter: types, index maps, VJPs -------===//
//
// Result types and checks of strata.gather, strata.scatter and
// strata.scatter_add (PyTorch 1.13's messages), the verifier of a kernel's
// `index_map` (the indexed access --strata-fuse gives them), and their
// reverse-mode rules: gather's gradient is a scatter_add into zeros,
// scatter's masks the scattered positions of the input's gradient and
// gathers src's, scatter_add passes the input's through and gathers src's.
//
//===----------------------------------------------------------------------===//
#include "VJPBuilders.h"
#include "strata/IR/StrataDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace strata::ir;
namespace layout = strata::layout;

namespace {
StridedTensorType tensorType(Value v) {
  return v.getType().dyn_cast<StridedTensorType>();
}

/// `dim` wrapped into [0, rank) (a 0-d tensor has one dim here, as
/// PyTorch's maybe_wrap_dim); -1 when out of range.
int64_t wrapDim(int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r)
    return -1;
  return dim < 0 ? dim + r : dim;
}

LogicalResult dimError(std::optional<Location> loc, int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  return emitOptionalError(loc,
                           "Dimension out of range (expected to be in "
                           "range of [",
                           -r, ", ", r - 1, "], but got ", dim, ")");
}
} // namespace

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         ValueRange operands,
                                         DictionaryAttr attributes, RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  auto input = tensorType(operands[0]), index = tensorType(operands[1]);
  auto dimAttr = attributes.getAs<IntegerAttr>("dim");
  if (!input || !index || !dimAttr)
    return emitOptionalError(loc, "gather: expected two strata tensors and "
                                  "a dim");
  if (!index.getElementType().isInteger(64))
    return emitOptionalError(loc, "gather(): Expected dtype int64 for index");
  int64_t rank = input.getRank(), dim = wrapDim(dimAttr.getInt(), rank);
  if (dim < 0)
    return dimError(loc, dimAttr.getInt(), rank);
  if (std::max<int64_t>(index.getRank(), 1) != std::max<int64_t>(rank, 1) ||
      (index.getRank() != rank))
    return emitOptionalError(loc, "Index tensor must have the same number of "
                                  "dimensions as input tensor");
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim && index.getShape()[d] > input.getShape()[d])
      return emitOptionalError(
          loc, "Size does not match at dimension ", d, " expected index ",
          layout::formatList(index.getShape()), " to be smaller than self ",
          layout::formatList(input.getShape()), " apart from dimension ", dim);
  inferred.push_back(StridedTensorType::getContiguous(input.getElementType(),
                                                      index.getShape()));
  return success();
}

static LogicalResult inferScatter(StringRef name, std::optional<Location> loc,
                                  ValueRange operands,
                                  DictionaryAttr attributes,
                                  SmallVectorImpl<Type> &inferred) {
  auto input = tensorType(operands[0]), index = tensorType(operands[1]),
       src = tensorType(operands[2]);
  auto dimAttr = attributes.getAs<IntegerAttr>("dim");
  if (!input || !index || !src || !dimAttr)
    return emitOptionalError(loc, name,
                             ": expected three strata tensors and "
                             "a dim");
  if (!index.getElementType().isInteger(64))
    return emitOptionalError(loc, name, "(): Expected dtype int64 for index");
  if (src.getElementType() != input.getElementType())
    return emitOptionalError(
        loc, name, "(): Expected self.dtype to be equal to src.dtype");
  int64_t rank = input.getRank(), dim = wrapDim(dimAttr.getInt(), rank);
  if (dim < 0)
    return dimError(loc, dimAttr.getInt(), rank);
  if (index.getRank() != rank)
    return emitOptionalError(loc, "Index tensor must have the same number of "
                                  "dimensions as self tensor");
  bool value = src.getRank() == 0 && rank > 0;
  if (!value && src.getRank() != rank)
    return emitOptionalError(loc, "Index tensor must have the same number of "
                                  "dimensions as src tensor");
  for (int64_t d = 0; d < rank; ++d)
    if ((d != dim && index.getShape()[d] > input.getShape()[d]) ||
        (!value && index.getShape()[d] > src.getShape()[d]))
      return emitOptionalError(
          loc, "Expected index ", layout::formatList(index.getShape()),
          " to be smaller than self ", layout::formatList(input.getShape()),
          " apart from dimension ", dim, " and to be smaller size than src ",
          layout::formatList(src.getShape()));
  inferred.push_back(StridedTensorType::getContiguous(input.getElementType(),
                                                      input.getShape()));
  return success();
}

LogicalResult
ScatterOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                            ValueRange operands, DictionaryAttr attributes,
                            RegionRange, SmallVectorImpl<Type> &inferred) {
  return inferScatter("scatter", loc, operands, attributes, inferred);
}

LogicalResult
ScatterAddOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                               ValueRange operands, DictionaryAttr attributes,
                               RegionRange, SmallVectorImpl<Type> &inferred) {
  return inferScatter("scatter_add", loc, operands, attributes, inferred);
}

LogicalResult strata::ir::verifyIndexMap(KernelOp k) {
  auto map = k.getIndexMap();
  if (!map)
    return success();
  unsigned numInputs = k.getInputs().size();
  if (map->size() != 5)
    return k.emitOpError() << "`index_map` needs [operand, index, stride, "
                              "bound, accumulate], got "
                           << map->size() << " values";
  int64_t op = (*map)[0], index = (*map)[1], bound = (*map)[3], acc = (*map)[4];
  bool intoResult = k.getDest() && op == numInputs;
  if (op < 0 || (op >= numInputs && !intoResult))
    return k.emitOpError() << "`index_map` operand " << op
                           << " is neither an input nor the result of a "
                              "kernel `into` a destination";
  if (index < 0 || index >= numInputs || index == op ||
      !k.getInputs()[index]
           .getType()
           .cast<StridedTensorType>()
           .getElementType()
           .isInteger(64))
    return k.emitOpError() << "`index_map` index " << index
                           << " must be another input, of i64";
  int64_t points = 1;
  for (int64_t s : k.getSpace())
    points *= s;
  if (bound < 1 && points > 0)
    return k.emitOpError() << "`index_map` bound must be >= 1, got " << bound;
  if (acc != 0 && acc != 1)
    return k.emitOpError() << "`index_map` accumulate must be 0 or 1";
  if (acc && !intoResult)
    return k.emitOpError() << "`index_map` accumulates only into a result";
  if (k.getReduceDims() || k.getIndexed())
    return k.emitOpError() << "`index_map` needs a kernel without `reduce` "
                              "and `indexed`";
  return success();
}

//===--- VJPs -------------------------------------------------------------===//

namespace strata::ir::vjp {
namespace {
using Out = GradContributions;

/// `g` (of `index`'s shape) as a tensor of `shape` >= it: zeros around it.
Value padTo(GradBuilder &gb, Value g, ArrayRef<int64_t> shape) {
  auto type = tensorOf(g);
  if (type.getShape() == shape)
    return g;
  Type element = type.getElementType();
  return gb.scatterIntoZeros(g, element, shape, [&](Value zeros) -> Value {
    auto z = tensorOf(zeros);
    auto view = StridedTensorType::get(gb.b.getContext(), type.getShape(),
                                       element, z.getStrides(), 0);
    return gb.b.create<StridedViewOp>(gb.loc, view, zeros);
  });
}

/// The gradient of a scatter's src: g gathered at the index, zeros where
/// src is larger than the index (PyTorch's engine would refuse that shape).
Value srcGrad(GradBuilder &gb, Value g, Value index, Value src,
              IntegerAttr dim) {
  Value gathered = gb.b.create<GatherOp>(gb.loc, g, index, dim);
  auto s = tensorOf(src);
  if (s.getRank() == 0 && tensorOf(index).getRank() > 0)
    return gb.sumTo(gathered, {});
  return padTo(gb, gathered, s.getShape());
}
} // namespace

LogicalResult rule(GatherOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  auto in = tensorOf(op.getInput());
  Value zeros = gb.fill(0.0, in.getElementType(), in.getShape());
  out.push_back(
      {op.getInput(), gb.b.create<ScatterAddOp>(gb.loc, zeros, op.getIndex(),
                                                g[0], op.getDimAttr())});
  return success();
}

LogicalResult rule(ScatterOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  Type element = tensorOf(g[0]).getElementType();
  out.push_back({op.getInput(), gb.b.create<ScatterOp>(
                                    gb.loc, g[0], op.getIndex(),
                                    gb.fill(0.0, element), op.getDimAttr())});
  out.push_back({op.getSrc(), srcGrad(gb, g[0], op.getIndex(), op.getSrc(),
                                      op.getDimAttr())});
  return success();
}

LogicalResult rule(ScatterAddOp op, GradBuilder &gb, ArrayRef<Value> g,
                   Out &out) {
  out.push_back({op.getInput(), g[0]});
  out.push_back({op.getSrc(), srcGrad(gb, g[0], op.getIndex(), op.getSrc(),
                                      op.getDimAttr())});
  return success();
}

void attachIndexModels(MLIRContext &ctx) {
  GatherOp::attachInterface<Model<GatherOp>>(ctx);
  ScatterOp::attachInterface<Model<ScatterOp>>(ctx);
  ScatterAddOp::attachInterface<Model<ScatterAddOp>>(ctx);
}
} // namespace strata::ir::vjp
