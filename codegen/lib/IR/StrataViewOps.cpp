//===- StrataViewOps.cpp - view ops: inference, folds, roots -------------===//
//
// Every view op's result type comes from the layout algebra; this file only
// adapts op attributes to the algebra's calls and turns its errors into
// located diagnostics.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace strata::ir;
namespace layout = strata::layout;

//===--- Roots ------------------------------------------------------------===//

Value strata::ir::getViewSource(Operation *op) {
  if (!op)
    return {};
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource();
  if (auto sv = dyn_cast<StridedViewOp>(op))
    return sv.getSource();
  if (auto r = dyn_cast<ReshapeOp>(op))
    return r.isView() ? r.getInput() : Value();
  if (auto f = dyn_cast<FlattenOp>(op))
    return f.isView() ? f.getInput() : Value();
  if (auto c = dyn_cast<ContiguousOp>(op))
    return c.isView() ? c.getInput() : Value();
  return {};
}

Value strata::ir::getStorageRoot(Value value) {
  while (Value source = getViewSource(value.getDefiningOp()))
    value = source;
  return value;
}

int64_t strata::ir::getRootStorageSize(Value root) {
  if (auto storage = root.getType().dyn_cast<StorageType>())
    return storage.getSize();
  return layout::requiredStorageSize(
      root.getType().cast<StridedTensorType>().getLayout());
}

//===--- Inference helpers ------------------------------------------------===//

namespace {
/// Applies `rule` to the input's layout and pushes the resulting type, or
/// reports the algebra's error at `loc`.
template <typename Rule>
LogicalResult inferWith(std::optional<Location> loc, Value input, Rule rule,
                        SmallVectorImpl<Type> &inferred) {
  auto type = input.getType().dyn_cast<StridedTensorType>();
  if (!type)
    return emitOptionalError(loc, "expected a strata tensor operand");
  auto result = rule(type.getLayout());
  if (!result)
    return emitOptionalError(loc, result.error());
  if constexpr (std::is_same_v<std::decay_t<decltype(*result)>,
                               layout::MaybeView>)
    inferred.push_back(
        StridedTensorType::get(type.getElementType(), result->layout));
  else
    inferred.push_back(StridedTensorType::get(type.getElementType(), *result));
  return success();
}

/// A view whose result has its input's type addresses the same elements in
/// the same order: it is the identity.
OpFoldResult foldIdentityView(Value input, Value result) {
  if (input.getType() == result.getType())
    return input;
  return {};
}
} // namespace

#define STRATA_INFER(OpClass, ...)                                             \
  LogicalResult OpClass::inferReturnTypes(                                     \
      MLIRContext *, std::optional<Location> loc, ValueRange operands,         \
      DictionaryAttr attributes, RegionRange regions,                          \
      SmallVectorImpl<Type> &inferred) {                                       \
    Adaptor a(operands, attributes, regions);                                  \
    return inferWith(                                                          \
        loc, a.getInput(),                                                     \
        [&]([[maybe_unused]] const layout::Layout &l) { return __VA_ARGS__; }, \
        inferred);                                                             \
  }

STRATA_INFER(ViewOp, layout::view(l, a.getShape()))
STRATA_INFER(ReshapeOp, layout::reshape(l, a.getShape()))
STRATA_INFER(PermuteOp, layout::permute(l, a.getDims()))
STRATA_INFER(TransposeOp, layout::transpose(l, a.getDim0(), a.getDim1()))
STRATA_INFER(SliceOp, layout::slice(l, a.getDim(), a.getStart(), a.getEnd(),
                                    a.getStep()))
STRATA_INFER(SelectOp, layout::select(l, a.getDim(), a.getIndex()))
STRATA_INFER(NarrowOp,
             layout::narrow(l, a.getDim(), a.getStart(), a.getLength()))
STRATA_INFER(ExpandOp, layout::expand(l, a.getShape()))
STRATA_INFER(SqueezeOp, a.getDims() ? layout::squeeze(l, *a.getDims())
                                    : layout::squeeze(l))
STRATA_INFER(UnsqueezeOp, layout::unsqueeze(l, a.getDim()))
STRATA_INFER(FlattenOp, layout::flatten(l, a.getStartDim(), a.getEndDim()))
STRATA_INFER(AsStridedOp, layout::asStrided(
                              a.getSizes(), a.getStrides(), a.getOffset(),
                              getRootStorageSize(getStorageRoot(a.getInput()))))
STRATA_INFER(DiagonalOp,
             layout::diagonal(l, a.getOffset(), a.getDim1(), a.getDim2()))
STRATA_INFER(UnfoldOp, layout::unfold(l, a.getDim(), a.getSize(), a.getStep()))
STRATA_INFER(FlipOp, layout::flip(l, a.getDims()))
#undef STRATA_INFER

// contiguous: the input itself when already contiguous (same layout, same
// root), else a fresh row-major tensor.
LogicalResult ContiguousOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             ValueRange operands,
                                             DictionaryAttr, RegionRange,
                                             SmallVectorImpl<Type> &inferred) {
  auto type = operands[0].getType().dyn_cast<StridedTensorType>();
  if (!type)
    return emitOptionalError(loc, "expected a strata tensor operand");
  inferred.push_back(type.isContiguous()
                         ? type
                         : StridedTensorType::getContiguous(
                               type.getElementType(), type.getShape()));
  return success();
}

//===--- View-or-copy ops -------------------------------------------------===//

bool ReshapeOp::isView() {
  auto r = layout::reshape(getInput().getType().getLayout(), getShape());
  return r && !r->needsCopy;
}

bool FlattenOp::isView() {
  auto r = layout::flatten(getInput().getType().getLayout(), getStartDim(),
                           getEndDim());
  return r && !r->needsCopy;
}

bool ContiguousOp::isView() { return getInput().getType().isContiguous(); }

//===--- Folds ------------------------------------------------------------===//

#define STRATA_IDENTITY_FOLD(OpClass)                                          \
  OpFoldResult OpClass::fold(FoldAdaptor) {                                    \
    return foldIdentityView(getInput(), getResult());                          \
  }
STRATA_IDENTITY_FOLD(ViewOp)
STRATA_IDENTITY_FOLD(PermuteOp)
STRATA_IDENTITY_FOLD(TransposeOp)
STRATA_IDENTITY_FOLD(SliceOp)
STRATA_IDENTITY_FOLD(SelectOp)
STRATA_IDENTITY_FOLD(NarrowOp)
STRATA_IDENTITY_FOLD(ExpandOp)
STRATA_IDENTITY_FOLD(SqueezeOp)
STRATA_IDENTITY_FOLD(UnsqueezeOp)
STRATA_IDENTITY_FOLD(AsStridedOp)
STRATA_IDENTITY_FOLD(DiagonalOp)
STRATA_IDENTITY_FOLD(UnfoldOp)
STRATA_IDENTITY_FOLD(FlipOp)
#undef STRATA_IDENTITY_FOLD

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  return isView() ? foldIdentityView(getInput(), getResult()) : OpFoldResult();
}
OpFoldResult FlattenOp::fold(FoldAdaptor) {
  return isView() ? foldIdentityView(getInput(), getResult()) : OpFoldResult();
}
OpFoldResult ContiguousOp::fold(FoldAdaptor) {
  return isView() ? OpFoldResult(getInput()) : OpFoldResult();
}

Value strata::ir::wholeWriteValue(StridedViewOp view) {
  auto write = view.getSource().getDefiningOp<WriteOp>();
  if (!write)
    return {};
  auto dest = write.getDest().getType().dyn_cast<StridedTensorType>();
  auto storage = write.getType().dyn_cast<StorageType>();
  if (!dest || !storage || write.getSrc().getType() != view.getType() ||
      dest != view.getType())
    return {};
  const layout::Layout &l = dest.getLayout();
  if (!layout::isNonOverlappingAndDense(l) || l.numel() != storage.getSize() ||
      layout::requiredStorageSize(l) != storage.getSize())
    return {};
  // Only reads of the value: a view that is (or leads to) a write's
  // destination names the storage written, which `x` is not.
  for (OpOperand &use : view.getResult().getUses()) {
    Operation *user = use.getOwner();
    if ((isa<WriteOp>(user) && use.getOperandNumber() == 1) ||
        isa<KernelOp>(user) || getViewSource(user) == view.getResult())
      return {};
  }
  return write.getSrc();
}

OpFoldResult StridedViewOp::fold(FoldAdaptor) {
  // strided_view(strided_view(r)) == strided_view(r): layouts are absolute.
  if (auto inner = getSource().getDefiningOp<StridedViewOp>()) {
    getSourceMutable().assign(inner.getSource());
    return getResult();
  }
  if (getSource().getType() == getResult().getType())
    return getSource();
  // A read, as written, of a write that replaced its whole storage is the
  // value written (x.mul_(2) then x: the product, no write kernel).
  if (Value written = wholeWriteValue(*this))
    return written;
  return {};
}

LogicalResult StridedViewOp::verify() {
  Value root = getStorageRoot(getSource());
  Type rootElement =
      root.getType().isa<StorageType>()
          ? root.getType().cast<StorageType>().getElementType()
          : root.getType().cast<StridedTensorType>().getElementType();
  if (rootElement != getType().getElementType())
    return emitOpError() << "element type "
                         << dtypeName(getType().getElementType())
                         << " differs from its storage root's "
                         << dtypeName(rootElement);
  auto inStorage = layout::checkInStorage(
      getType().getLayout(), getRootStorageSize(root), "strided_view");
  if (!inStorage)
    return emitOpError() << inStorage.error();
  return success();
}

//===--- Canonicalization patterns ----------------------------------------===//

namespace {
/// permute(permute(x, p1), p2) -> permute(x, p1[p2[i]]).
struct ComposePermutes : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<PermuteOp>();
    if (!inner)
      return failure();
    int64_t rank = op.getType().getRank();
    SmallVector<int64_t> composed;
    for (int64_t d : op.getDims()) {
      int64_t outer = d < 0 ? d + rank : d;
      int64_t in = inner.getDims()[outer];
      composed.push_back(in < 0 ? in + rank : in);
    }
    rewriter.replaceOpWithNewOp<PermuteOp>(
        op, inner.getInput(), rewriter.getDenseI64ArrayAttr(composed));
    return success();
  }
};

/// transpose(permute-or-transpose(x)) -> one permute; a transpose is the
/// permute that swaps two dims.
struct TransposeToPermute : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Operation *def = op.getInput().getDefiningOp();
    if (!def || !isa<TransposeOp, PermuteOp>(def))
      return failure();
    int64_t rank = op.getType().getRank();
    SmallVector<int64_t> perm;
    for (int64_t i = 0; i < rank; ++i)
      perm.push_back(i);
    // I64Attr getters return uint64_t: convert before testing the sign.
    int64_t d0 = static_cast<int64_t>(op.getDim0());
    int64_t d1 = static_cast<int64_t>(op.getDim1());
    d0 = d0 < 0 ? d0 + rank : d0;
    d1 = d1 < 0 ? d1 + rank : d1;
    std::swap(perm[d0], perm[d1]);
    rewriter.replaceOpWithNewOp<PermuteOp>(op, op.getInput(),
                                           rewriter.getDenseI64ArrayAttr(perm));
    return success();
  }
};
} // namespace

namespace {
/// write(v into view(write(u into d))) where `view` covers its storage
/// whole and densely -> write(v into view'(root of d)): the inner write is
/// overwritten whole, so what it wrote is not part of the result (and,
/// read by nothing else, it goes). A chain of pending whole writes
/// (`h.mul_(c).add_(d)` n times, then h read) is then one write of the
/// last value, its reads folded to the values written (StridedViewOp's
/// fold): one fused kernel instead of a write kernel per op.
struct WriteOverWholeWrite : OpRewritePattern<WriteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WriteOp op,
                                PatternRewriter &rewriter) const override {
    auto view = op.getDest().getDefiningOp<StridedViewOp>();
    if (!view)
      return failure();
    auto inner = view.getSource().getDefiningOp<WriteOp>();
    auto dest = view.getType().dyn_cast<StridedTensorType>();
    auto storage = op.getType().dyn_cast<StorageType>();
    if (!inner || !dest || !storage || inner.getType() != op.getType())
      return failure();
    const layout::Layout &l = dest.getLayout();
    if (!layout::isNonOverlappingAndDense(l) ||
        l.numel() != storage.getSize() ||
        layout::requiredStorageSize(l) != storage.getSize())
      return failure();
    Value root = getStorageRoot(inner.getDest());
    if (!root)
      return failure();
    rewriter.setInsertionPoint(op);
    Value fresh =
        rewriter.create<StridedViewOp>(view.getLoc(), dest, root).getResult();
    rewriter.updateRootInPlace(op, [&] { op.getDestMutable().assign(fresh); });
    return success();
  }
};
} // namespace

void WriteOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<WriteOverWholeWrite>(context);
}

void PermuteOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ComposePermutes>(context);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<TransposeToPermute>(context);
}
