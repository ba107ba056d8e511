//===- Canonicalize.cpp - the strata dialect's canonicalization patterns --===//
//
// Assumes: a view's result type is its absolute layout within its storage
// root, so two values of one view chain (same root) with equal types are the
// same tensor, and an op whose result depends only on the root (as_strided,
// strided_view) may read any value of the chain.
//
// Guarantees: every pattern keeps result types exactly and never changes
// which root a value resolves to (candidates are checked against the layout
// algebra before any IR is touched). Registered on the dialect
// (StrataDialect::getCanonicalizationPatterns), so `--canonicalize` runs
// them next to the ops' own folds and patterns (StrataViewOps.cpp).
//
// Patterns, each O(1) per match (chains are searched to depth 8):
//  - a view equal in type to a value earlier in its chain is that value
//    (transpose∘transpose, flip∘flip, unsqueeze∘squeeze, slice of a whole
//    dim, ...);
//  - view/reshape of a reshape-like view (view, reshape or flatten that do
//    not copy, squeeze, unsqueeze) is one view/reshape of the inner input;
//  - expand∘expand, flip∘flip, slice∘slice of one dim compose into one op;
//  - strided_view and as_strided read the earliest value of their chain.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataDialect.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace strata::ir;
namespace layout = strata::layout;

namespace {

/// How far back a pattern looks along a view chain.
constexpr int kMaxChainDepth = 8;

StridedTensorType tensorType(Value v) {
  return v.getType().dyn_cast<StridedTensorType>();
}

/// True when `candidate` is a valid layout that equals `type`'s.
template <typename T>
bool matches(const layout::Result<T> &candidate, StridedTensorType type) {
  if (!candidate)
    return false;
  if constexpr (std::is_same_v<T, layout::MaybeView>)
    return candidate->layout == type.getLayout();
  else
    return *candidate == type.getLayout();
}

/// Any view op whose result has the type of a value up to kMaxChainDepth
/// steps back along its own chain (hence the same root) is that value.
struct FoldToEarlierChainValue : RewritePattern {
  FoldToEarlierChainValue(StringRef opName, MLIRContext *context)
      : RewritePattern(opName, /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    Type type = op->getResult(0).getType();
    Value value = getViewSource(op);
    for (int depth = 0; value && depth < kMaxChainDepth; ++depth) {
      if (value.getType() == type) {
        rewriter.replaceOp(op, value);
        return success();
      }
      value = getViewSource(value.getDefiningOp());
    }
    return failure();
  }
};

/// The input of a view that keeps elements in row-major order (so a
/// view/reshape after it may start from its input instead), or null.
Value reshapeLikeSource(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def || !isa<ViewOp, ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(def))
    return {};
  return getViewSource(def);
}

/// view(reshape-like(x)) -> view(x) when the algebra gives the same type.
struct ComposeViews : OpRewritePattern<ViewOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ViewOp op,
                                PatternRewriter &rewriter) const override {
    Value source = reshapeLikeSource(op.getInput());
    if (!source ||
        !matches(layout::view(tensorType(source).getLayout(), op.getShape()),
                 op.getType()))
      return failure();
    rewriter.replaceOpWithNewOp<ViewOp>(op, source, op.getShapeAttr());
    return success();
  }
};

/// reshape(reshape-like(x)) -> reshape(x) when the algebra gives the same
/// type and the same choice between view and copy (a copy is a fresh root).
struct ComposeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    Value source = reshapeLikeSource(op.getInput());
    if (!source)
      return failure();
    auto candidate =
        layout::reshape(tensorType(source).getLayout(), op.getShape());
    if (!matches(candidate, op.getType()) ||
        candidate->needsCopy == op.isView())
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, source, op.getShapeAttr());
    return success();
  }
};

/// expand(expand(x, s1), s2) -> expand(x, s2 with its -1s resolved).
struct ComposeExpands : OpRewritePattern<ExpandOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExpandOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ExpandOp>();
    if (!inner)
      return failure();
    // -1 keeps the intermediate size, which the intermediate type states.
    ArrayRef<int64_t> middle = inner.getType().getShape();
    int64_t lead = op.getType().getRank() - inner.getType().getRank();
    SmallVector<int64_t> shape(op.getShape());
    for (int64_t i = lead, e = shape.size(); i < e; ++i)
      if (shape[i] == -1)
        shape[i] = middle[i - lead];
    if (!matches(layout::expand(inner.getInput().getType().getLayout(), shape),
                 op.getType()))
      return failure();
    rewriter.replaceOpWithNewOp<ExpandOp>(op, inner.getInput(),
                                          rewriter.getDenseI64ArrayAttr(shape));
    return success();
  }
};

/// flip(flip(x, a), b) -> flip(x, a xor b).
struct ComposeFlips : OpRewritePattern<FlipOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FlipOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<FlipOp>();
    if (!inner)
      return failure();
    int64_t rank = op.getType().getRank();
    SmallVector<bool> flipped(rank, false);
    for (ArrayRef<int64_t> dims : {inner.getDims(), op.getDims()})
      for (int64_t d : dims) {
        auto w = layout::wrapDim(d, rank, "flip");
        if (!w || rank == 0)
          return failure();
        flipped[*w] = !flipped[*w];
      }
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (flipped[d])
        dims.push_back(d);
    if (!matches(layout::flip(inner.getInput().getType().getLayout(), dims),
                 op.getType()))
      return failure();
    rewriter.replaceOpWithNewOp<FlipOp>(op, inner.getInput(),
                                        rewriter.getDenseI64ArrayAttr(dims));
    return success();
  }
};

/// slice(slice(x, d, ..., s1), d, ..., s2) -> slice(x, d, k, end, s1 * s2).
/// The start k is read off the result's offset, so no bound rule is
/// repeated here; the algebra checks the candidate.
struct ComposeSlices : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<SliceOp>();
    if (!inner)
      return failure();
    StridedTensorType x = inner.getInput().getType(), out = op.getType();
    auto dim = layout::wrapDim(op.getDim(), out.getRank(), "slice");
    auto innerDim = layout::wrapDim(inner.getDim(), out.getRank(), "slice");
    if (!dim || !innerDim || *dim != *innerDim)
      return failure();
    int64_t step, stride = x.getStrides()[*dim], delta,
                  size = out.getShape()[*dim], start = 0, end;
    if (__builtin_mul_overflow(inner.getStep(), op.getStep(), &step) ||
        __builtin_sub_overflow(out.getOffset(), x.getOffset(), &delta))
      return failure();
    if (stride != 0) {
      if (delta % stride != 0)
        return failure();
      start = delta / stride;
    }
    if (size == 0)
      end = start;
    else if (__builtin_mul_overflow(size - 1, step, &end) ||
             __builtin_add_overflow(end, start + 1, &end))
      return failure();
    if (!matches(layout::slice(x.getLayout(), *dim, start, end, step), out))
      return failure();
    rewriter.replaceOpWithNewOp<SliceOp>(op, inner.getInput(), *dim,
                                         rewriter.getI64IntegerAttr(start),
                                         rewriter.getI64IntegerAttr(end), step);
    return success();
  }
};

/// The value up to kMaxChainDepth steps back along `value`'s view chain
/// (same root), stopping before a value that `accept` rejects.
template <typename Accept> Value earliestInChain(Value value, Accept accept) {
  for (int depth = 0; depth < kMaxChainDepth; ++depth) {
    Value source = getViewSource(value.getDefiningOp());
    if (!source || !accept(source))
      break;
    value = source;
  }
  return value;
}

/// strided_view's layout is absolute within the root: any value of the
/// source's chain gives the same result.
struct StridedViewReadsEarliest : OpRewritePattern<StridedViewOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StridedViewOp op,
                                PatternRewriter &rewriter) const override {
    Value earliest =
        earliestInChain(op.getSource(), [](Value) { return true; });
    if (earliest == op.getSource())
      return failure();
    rewriter.updateRootInPlace(op,
                               [&] { op.getSourceMutable().assign(earliest); });
    return success();
  }
};

/// So is as_strided's (sizes, strides, offset); its input stays a tensor.
struct AsStridedReadsEarliest : OpRewritePattern<AsStridedOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AsStridedOp op,
                                PatternRewriter &rewriter) const override {
    Value earliest = earliestInChain(
        op.getInput(), [](Value v) { return bool(tensorType(v)); });
    if (earliest == op.getInput())
      return failure();
    rewriter.updateRootInPlace(op,
                               [&] { op.getInputMutable().assign(earliest); });
    return success();
  }
};

template <typename... Ops>
void addChainFolds(RewritePatternSet &results, MLIRContext *context) {
  (results.add<FoldToEarlierChainValue>(Ops::getOperationName(), context), ...);
}

} // namespace

void StrataDialect::getCanonicalizationPatterns(
    RewritePatternSet &results) const {
  MLIRContext *context = getContext();
  addChainFolds<ViewOp, PermuteOp, TransposeOp, SliceOp, SelectOp, NarrowOp,
                ExpandOp, SqueezeOp, UnsqueezeOp, AsStridedOp, DiagonalOp,
                UnfoldOp, FlipOp, StridedViewOp, ReshapeOp, FlattenOp,
                ContiguousOp>(results, context);
  results.add<ComposeViews, ComposeReshapes, ComposeExpands, ComposeFlips,
              ComposeSlices, StridedViewReadsEarliest, AsStridedReadsEarliest>(
      context);
}
