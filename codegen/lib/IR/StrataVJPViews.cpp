//===- StrataVJPViews.cpp - VJPs of view ops and of strata.write ----------===//
//
// A view's gradient is a view of the gradient (permute -> inverse permute,
// flip -> flip, view/reshape/squeeze -> reshape), a sum (expand -> sum over
// the expanded dims) or a scatter into zeros (slice/select/narrow/diagonal:
// write the gradient through the same view of a zero tensor; unfold: one
// such write per window element, added, since windows may overlap).
// strided_view and as_strided address the storage root directly, so their
// gradient is a scatter-add into a flat gradient of the root read back
// through the input's layout (PyTorch's as_strided_backward, which divides
// by the overlap count of the input). A write (CopySlices) gives its source
// the gradient at the written elements and the older version the rest.
//
//===----------------------------------------------------------------------===//
#include "VJPBuilders.h"

#include "mlir/IR/OperationSupport.h"

using namespace mlir;
using namespace strata::ir;
using namespace strata::ir::vjp;
namespace layout = strata::layout;

namespace {
using layout::mayOverlap;
/// True when `l` addresses each of the `n` elements of its root exactly
/// once (a permutation of the root, maybe with flips): its gradient is a
/// read of the view's gradient in the root's order, no scatter.
bool coversOnce(const layout::Layout &l, int64_t n) {
  return n > 0 && l.numel() == n && !mayOverlap(l);
}
} // namespace

//===--- GradBuilder
//-------------------------------------------------------===//

Value GradBuilder::fill(double value, Type element, ArrayRef<int64_t> shape) {
  return b.create<FillOp>(loc, StridedTensorType::getContiguous(element, shape),
                          b.getF64FloatAttr(value));
}
Value GradBuilder::add(Value x, Value y) { return b.create<AddOp>(loc, x, y); }
Value GradBuilder::sub(Value x, Value y) { return b.create<SubOp>(loc, x, y); }
Value GradBuilder::mul(Value x, Value y) { return b.create<MulOp>(loc, x, y); }
Value GradBuilder::div(Value x, Value y) { return b.create<DivOp>(loc, x, y); }
Value GradBuilder::neg(Value x) { return b.create<NegOp>(loc, x); }
Value GradBuilder::scale(Value x, double c) {
  return mul(x, fill(c, tensorOf(x).getElementType()));
}

Value GradBuilder::cast(Value x, Type element) {
  auto type = tensorOf(x);
  if (type.getElementType() == element)
    return x;
  return b.create<CastOp>(loc, preserveFormatType(type, element), x);
}

Value GradBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  if (tensorOf(x).getShape() == shape)
    return x;
  return b.create<ReshapeOp>(loc, x, b.getDenseI64ArrayAttr(shape));
}

Value GradBuilder::sumTo(Value g, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = tensorOf(g).getShape();
  if (from == shape)
    return g;
  int64_t lead = from.size() - shape.size();
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < int64_t(from.size()); ++d)
    if (d < lead || (shape[d - lead] == 1 && from[d] != 1))
      dims.push_back(d);
  if (dims.empty())
    return reshape(g, shape);
  Value s =
      b.create<SumOp>(loc, g, b.getDenseI64ArrayAttr(dims), b.getUnitAttr());
  return reshape(s, shape);
}

Value GradBuilder::expandReduced(Value g, ArrayRef<int64_t> inShape,
                                 ArrayRef<int64_t> dims) {
  SmallVector<int64_t> keep(inShape);
  int64_t rank = inShape.size();
  if (dims.empty())
    keep.assign(rank, 1);
  // (A 0-d input's dims, 0 or -1, name the tensor itself: nothing to
  // restore. Indexing `keep` by them wrote past its end.)
  if (rank > 0)
    for (int64_t d : dims)
      keep[d < 0 ? d + rank : d] = 1;
  Value k = reshape(g, keep);
  if (ArrayRef<int64_t>(keep) == inShape)
    return k;
  return b.create<ExpandOp>(loc, k, b.getDenseI64ArrayAttr(inShape));
}

Value GradBuilder::reapplyView(Operation *view, Value input) {
  SmallVector<Type, 1> types;
  auto infer = llvm::cast<InferTypeOpInterface>(view);
  if (failed(infer.inferReturnTypes(b.getContext(), loc, ValueRange{input},
                                    view->getAttrDictionary(),
                                    view->getRegions(), types)))
    return {};
  OperationState state(loc, view->getName());
  state.addOperands(input);
  state.addTypes(types);
  state.addAttributes(view->getAttrs());
  return b.create(state)->getResult(0);
}

Value GradBuilder::scatterIntoZeros(Value g, Type element,
                                    ArrayRef<int64_t> shape,
                                    function_ref<Value(Value)> makeView) {
  Value zeros = fill(0.0, element, shape);
  auto zerosType = tensorOf(zeros);
  if (zerosType.getNumElements() == 0 || tensorOf(g).getNumElements() == 0)
    return zeros;
  Value view = makeView(zeros);
  auto storage =
      StorageType::get(b.getContext(), zerosType.getNumElements(), element);
  Value written = b.create<WriteOp>(loc, storage, g, view);
  return b.create<StridedViewOp>(loc, zerosType, written);
}

Value GradBuilder::ownFlat(Value flat) {
  auto type = tensorOf(flat);
  if (type.isContiguous() && type.getOffset() == 0 &&
      getRootStorageSize(getStorageRoot(flat)) == type.getNumElements())
    return flat;
  return createContiguousCopy(b, loc, flat);
}

Value GradBuilder::inverseRead(Value g, const layout::Layout &l, int64_t n) {
  // Root order: the view's dims by decreasing |stride|; a negative stride
  // is walked backwards from the view's last index along it.
  layout::Layout gl = tensorOf(g).getLayout();
  SmallVector<int64_t> order;
  for (int64_t d = 0; d < l.dim(); ++d)
    if (l.sizes[d] > 1)
      order.push_back(d);
  llvm::stable_sort(order, [&](int64_t a, int64_t b) {
    return std::abs(l.strides[a]) > std::abs(l.strides[b]);
  });
  layout::Layout read;
  read.offset = gl.offset;
  for (int64_t d : order) {
    bool back = l.strides[d] < 0;
    read.sizes.push_back(l.sizes[d]);
    read.strides.push_back(back ? -gl.strides[d] : gl.strides[d]);
    if (back)
      read.offset += (l.sizes[d] - 1) * gl.strides[d];
  }
  Value r = readRecomputed(g, read);
  auto type = tensorOf(r);
  if (!type.isContiguous() || type.getOffset() != 0 || getStorageRoot(r) != r)
    r = createContiguousCopy(b, loc, r);
  return reshape(r, {n});
}

Value GradBuilder::gatherFlat(Value flat, const layout::Layout &l) {
  flat = ownFlat(flat);
  auto type = StridedTensorType::get(tensorOf(flat).getElementType(), l);
  if (type == tensorOf(flat))
    return flat;
  return b.create<StridedViewOp>(loc, type, flat);
}

Value GradBuilder::scatterAddFlat(Value g, const layout::Layout &l, int64_t n) {
  Type element = tensorOf(g).getElementType();
  if (!mayOverlap(l))
    return scatterIntoZeros(g, element, {n}, [&](Value zeros) -> Value {
      return b.create<StridedViewOp>(loc, StridedTensorType::get(element, l),
                                     zeros);
    });
  // Stride-0 dims (expand) read one element many times: their sum goes
  // there, so sum them first (what is left is often a plain scatter).
  SmallVector<int64_t> broadcast;
  layout::Layout reduced = l;
  for (int64_t d = 0; d < l.dim(); ++d)
    if (l.strides[d] == 0 && l.sizes[d] > 1) {
      broadcast.push_back(d);
      reduced.sizes[d] = 1;
    }
  if (!broadcast.empty())
    return scatterAddFlat(b.create<SumOp>(loc, g,
                                          b.getDenseI64ArrayAttr(broadcast),
                                          b.getUnitAttr()),
                          reduced, n);
  // Overlap: g[i] goes to flat[addr(i)] for every i, summed: a one-hot
  // reduction. addr is arange(n) read through l (each element's index).
  Type f64 = b.getF64Type();
  Value index =
      b.create<ArangeOp>(loc, StridedTensorType::getContiguous(f64, {n}),
                         b.getF64FloatAttr(0), b.getF64FloatAttr(1));
  Value addr =
      b.create<StridedViewOp>(loc, StridedTensorType::get(f64, l), index);
  int64_t rank = l.dim();
  Value column = b.create<UnsqueezeOp>(loc, addr, b.getI64IntegerAttr(rank));
  Value hit = b.create<EqOp>(loc, column, index);
  Value gc = b.create<UnsqueezeOp>(loc, g, b.getI64IntegerAttr(rank));
  // A select, not a product with a 0/1 mask: 0 * inf would be NaN.
  Value spread =
      b.create<WhereOp>(loc, hit, gc, fill(0.0, element, ArrayRef<int64_t>{}));
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d)
    dims.push_back(d);
  return b.create<SumOp>(loc, spread, b.getDenseI64ArrayAttr(dims), UnitAttr());
}

//===--- View VJPs
//----------------------------------------------------------===//

namespace {
using Out = GradContributions;

/// The gradient of a view's input: the result's gradient read back into the
/// input's shape.
template <typename OpT>
LogicalResult reshapeBack(OpT op, GradBuilder &gb, Value g, Out &out) {
  Value in = op->getOperand(0);
  out.push_back({in, gb.reshape(g, tensorOf(in).getShape())});
  return success();
}

/// Scatter of the gradient through the same view of zeros.
LogicalResult scatterBack(Operation *op, GradBuilder &gb, Value g, Out &out) {
  Value in = op->getOperand(0);
  auto type = tensorOf(in);
  Value r = gb.scatterIntoZeros(g, type.getElementType(), type.getShape(),
                                [&](Value z) { return gb.reapplyView(op, z); });
  if (!r)
    return op->emitOpError("could not rebuild the view for its gradient");
  out.push_back({in, r});
  return success();
}

/// The gradient of a tensor `in` whose elements a view with layout `l` of
/// its storage root read (strided_view, as_strided).
LogicalResult throughRoot(Value in, const layout::Layout &l, GradBuilder &gb,
                          Value g, Out &out) {
  int64_t n = getRootStorageSize(getStorageRoot(in));
  Value flat =
      coversOnce(l, n) ? gb.inverseRead(g, l, n) : gb.scatterAddFlat(g, l, n);
  if (in.getType().isa<StorageType>()) {
    out.push_back({in, flat});
    return success();
  }
  auto inType = tensorOf(in);
  layout::Layout inLayout = inType.getLayout();
  Value r = gb.gatherFlat(flat, inLayout);
  if (mayOverlap(inLayout)) {
    Value ones = gb.fill(1.0, inType.getElementType(), inType.getShape());
    Value count = gb.gatherFlat(gb.scatterAddFlat(ones, inLayout, n), inLayout);
    r = gb.div(r, count);
  }
  out.push_back({in, r});
  return success();
}
} // namespace

namespace strata::ir::vjp {
#define RESHAPE_BACK(OpT)                                                      \
  LogicalResult rule(OpT op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {   \
    return reshapeBack(op, gb, g[0], out);                                     \
  }
RESHAPE_BACK(ViewOp)
RESHAPE_BACK(ReshapeOp)
RESHAPE_BACK(FlattenOp)
RESHAPE_BACK(ContiguousOp)
RESHAPE_BACK(CopyOp)
RESHAPE_BACK(SqueezeOp)
RESHAPE_BACK(UnsqueezeOp)
#undef RESHAPE_BACK

#define SCATTER_BACK(OpT)                                                      \
  LogicalResult rule(OpT op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {   \
    return scatterBack(op, gb, g[0], out);                                     \
  }
SCATTER_BACK(SliceOp)
SCATTER_BACK(SelectOp)
SCATTER_BACK(NarrowOp)
SCATTER_BACK(DiagonalOp)
#undef SCATTER_BACK

LogicalResult rule(PermuteOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  ArrayRef<int64_t> dims = op.getDims();
  int64_t rank = dims.size();
  SmallVector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i)
    inverse[dims[i] < 0 ? dims[i] + rank : dims[i]] = i;
  out.push_back({op.getInput(),
                 gb.b.create<PermuteOp>(gb.loc, g[0],
                                        gb.b.getDenseI64ArrayAttr(inverse))});
  return success();
}

LogicalResult rule(TransposeOp op, GradBuilder &gb, ArrayRef<Value> g,
                   Out &out) {
  out.push_back({op.getInput(), gb.reapplyView(op, g[0])});
  return success();
}

LogicalResult rule(FlipOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  out.push_back({op.getInput(), gb.reapplyView(op, g[0])});
  return success();
}

LogicalResult rule(ExpandOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  out.push_back(
      {op.getInput(), gb.sumTo(g[0], tensorOf(op.getInput()).getShape())});
  return success();
}

LogicalResult rule(UnfoldOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  auto in = tensorOf(op.getInput());
  int64_t size = op.getSize(), step = op.getStep();
  if (step >= size)
    return scatterBack(op, gb, g[0], out);
  // Windows overlap: add one scatter per position k inside the window.
  int64_t rank = in.getRank();
  // I64Attr's getter is unsigned: a negative dim (valid IR, `dim -1`) must
  // be read back as signed before it is wrapped.
  int64_t dim = static_cast<int64_t>(op.getDim());
  if (dim < 0)
    dim += rank;
  int64_t outRank = tensorOf(op.getResult()).getRank();
  int64_t windows = tensorOf(op.getResult()).getShape()[dim];
  Value total;
  for (int64_t k = 0; k < size && windows > 0; ++k) {
    Value gk =
        gb.b.create<SelectOp>(gb.loc, g[0], gb.b.getI64IntegerAttr(outRank - 1),
                              gb.b.getI64IntegerAttr(k));
    Value part = gb.scatterIntoZeros(
        gk, in.getElementType(), in.getShape(), [&](Value z) -> Value {
          return gb.b.create<SliceOp>(
              gb.loc, z, gb.b.getI64IntegerAttr(dim), gb.b.getI64IntegerAttr(k),
              gb.b.getI64IntegerAttr(k + (windows - 1) * step + 1),
              gb.b.getI64IntegerAttr(step));
        });
    total = total ? gb.add(total, part) : part;
  }
  if (!total)
    total = gb.fill(0.0, in.getElementType(), in.getShape());
  out.push_back({op.getInput(), total});
  return success();
}

LogicalResult rule(AsStridedOp op, GradBuilder &gb, ArrayRef<Value> g,
                   Out &out) {
  return throughRoot(op.getInput(), tensorOf(op.getResult()).getLayout(), gb,
                     g[0], out);
}

LogicalResult rule(StridedViewOp op, GradBuilder &gb, ArrayRef<Value> g,
                   Out &out) {
  return throughRoot(op.getSource(), tensorOf(op.getResult()).getLayout(), gb,
                     g[0], out);
}

LogicalResult rule(WriteOp op, GradBuilder &gb, ArrayRef<Value> g, Out &out) {
  auto dest = tensorOf(op.getDest());
  layout::Layout written = dest.getLayout();
  Value flat = gb.ownFlat(g[0]);
  // The source: the gradient at the written elements, summed over the dims
  // it was broadcast along.
  out.push_back({op.getSrc(), gb.sumTo(gb.gatherFlat(flat, written),
                                       tensorOf(op.getSrc()).getShape())});
  // The older version: the gradient everywhere but the written elements.
  // A write over its whole storage (`h.mul_(c)`) leaves none: a fill of
  // zeros, which Differentiate drops where another gradient reaches that
  // version (PyTorch's in-place ops add no zero there; copy_'s zeros pass
  // on to the older version's history alone).
  Type element = dest.getElementType();
  Value root = getStorageRoot(op.getDest());
  int64_t n = tensorOf(flat).getNumElements();
  if (n > 0 && written.numel() == n &&
      layout::isNonOverlappingAndDense(written) &&
      layout::requiredStorageSize(written) == n) {
    out.push_back({root, gb.b.create<FillOp>(gb.loc, gradType(root),
                                             gb.b.getF64FloatAttr(0.0))});
    return success();
  }
  Value masked = flat;
  if (dest.getNumElements() > 0) {
    Value cleared = gb.b.create<WriteOp>(
        gb.loc, StorageType::get(gb.b.getContext(), n, element),
        gb.fill(0.0, element), gb.gatherFlat(flat, written));
    masked = gb.b.create<StridedViewOp>(gb.loc, tensorOf(flat), cleared);
  }
  if (root.getType().isa<StorageType>())
    out.push_back({root, masked});
  else
    out.push_back({root, gb.gatherFlat(masked, tensorOf(root).getLayout())});
  return success();
}

void attachViewModels(MLIRContext &ctx) {
  ViewOp::attachInterface<Model<ViewOp>>(ctx);
  ReshapeOp::attachInterface<Model<ReshapeOp>>(ctx);
  FlattenOp::attachInterface<Model<FlattenOp>>(ctx);
  ContiguousOp::attachInterface<Model<ContiguousOp>>(ctx);
  CopyOp::attachInterface<Model<CopyOp>>(ctx);
  SqueezeOp::attachInterface<Model<SqueezeOp>>(ctx);
  UnsqueezeOp::attachInterface<Model<UnsqueezeOp>>(ctx);
  SliceOp::attachInterface<Model<SliceOp>>(ctx);
  SelectOp::attachInterface<Model<SelectOp>>(ctx);
  NarrowOp::attachInterface<Model<NarrowOp>>(ctx);
  DiagonalOp::attachInterface<Model<DiagonalOp>>(ctx);
  PermuteOp::attachInterface<Model<PermuteOp>>(ctx);
  TransposeOp::attachInterface<Model<TransposeOp>>(ctx);
  FlipOp::attachInterface<Model<FlipOp>>(ctx);
  ExpandOp::attachInterface<Model<ExpandOp>>(ctx);
  UnfoldOp::attachInterface<Model<UnfoldOp>>(ctx);
  AsStridedOp::attachInterface<Model<AsStridedOp>>(ctx);
  StridedViewOp::attachInterface<Model<StridedViewOp>>(ctx);
  WriteOp::attachInterface<Model<WriteOp>>(ctx);
}
} // namespace strata::ir::vjp
