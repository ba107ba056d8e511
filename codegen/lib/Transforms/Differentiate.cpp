//===- Differentiate.cpp - reverse mode over strata IR --------------------===//
//
// Assumes: a func.func with one block of strata ops (views, compute ops,
// writes) ending in func.return, marked `strata.wrt = array<i64: ...>` (or
// the `wrt` option). Kernel ops are not differentiated: run this pass first.
//
// Guarantees: the function gains one argument per floating-point result
// (the gradient of that result, `grad_outputs`) and returns, after its own
// results, the gradient of each listed argument as a fresh contiguous
// tensor (a 1-D tensor of the element count for a storage argument; zeros
// when the result does not depend on it). The forward ops are unchanged,
// except the autograd markers: no gradient flows through `strata.detach`,
// and `strata.recorded %r as %v` passes its gradient to %r, then every use
// of %r and of its result reads %v (the value the forward computed); both
// are removed, from every function (marked or not), with what became dead.
// An op without a VJP on a differentiated path is a located error.
//
// Algorithm: (1) forward: mark the values that depend on a listed argument
// (active); (2) seed each differentiable result with its new argument;
// (3) walk the ops in reverse, and for each op with an active result that
// has a gradient ask its VJPOpInterface for contributions, summing the
// contributions that reach one value (but for an in-place op's write
// through a view, `strata.inplace_op`: its self read's gradient replaces
// the written elements', as PyTorch's CopySlices). Gradient code is appended
// before the return, in the order it is built.
//
//===----------------------------------------------------------------------===//
#include "../IR/VJPBuilders.h"
#include "strata/IR/StrataAutodiff.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace strata {
#define GEN_PASS_DEF_DIFFERENTIATE
#include "strata/Transforms/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace {

/// The attribute naming the arguments to differentiate with respect to.
constexpr llvm::StringLiteral kWrtAttr = "strata.wrt";
/// A write that is an in-place op through a view (`v.mul_(2)`, not
/// `v.copy_(...)`): its value's read of those elements is the op's `self`,
/// whose gradient replaces theirs (replaceWrittenPart).
constexpr llvm::StringLiteral kInplaceOpAttr = "strata.inplace_op";

/// Removes the autograd markers: `detach` becomes its input, `recorded` its
/// value (which also replaces the recomputation's other uses); then the ops
/// that became dead.
void removeMarkers(Block &block) {
  bool any = false;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto d = dyn_cast<DetachOp>(op)) {
      d.getResult().replaceAllUsesWith(d.getInput());
    } else if (auto r = dyn_cast<RecordedOp>(op)) {
      Value value = r.getValue();
      if (!r.getValueOnly())
        r.getRecompute().replaceAllUsesExcept(value, r);
      r.getResult().replaceAllUsesWith(value);
    } else {
      continue;
    }
    op.erase();
    any = true;
  }
  if (!any)
    return;
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
}

/// True when `v` reads all of a compute result, in its row-major order
/// (the result itself, or a reshape of it): returning it as a fresh
/// contiguous tensor needs no copy unless another result shares that root.
bool isWholeComputeResult(Value v) {
  auto type = v.getType().dyn_cast<StridedTensorType>();
  if (!type || type != StridedTensorType::getContiguous(type.getElementType(),
                                                        type.getShape()))
    return false;
  Value root = getStorageRoot(v);
  Operation *def = root.getDefiningOp();
  if (!def || !root.getType().isa<StridedTensorType>() || isa<WriteOp>(def) ||
      getViewSource(def) || isa<StridedViewOp>(def))
    return false;
  return getRootStorageSize(root) == type.getNumElements();
}

/// `v` as `strided_view(write %src into %dest)`, maybe through more
/// strided_views (the gradient a write or a view's scatter builds), or null.
WriteOp viewedWrite(Value v) {
  auto view = v.getDefiningOp<StridedViewOp>();
  if (!view)
    return {};
  while (auto below = view.getSource().getDefiningOp<StridedViewOp>())
    view = below;
  return view.getSource().getDefiningOp<WriteOp>();
}

bool isZeroFill(Value v) {
  auto fill = v.getDefiningOp<FillOp>();
  return fill && fill.getValueAsDouble() == 0;
}

/// PyTorch's CopySlices: the gradient of a version written in place through
/// a view is the incoming gradient with the written elements *replaced* by
/// the in-place op's gradient for its `self`, nothing added. `masked` is
/// what WriteOp's rule gives that version (the incoming gradient, zeros
/// written at the elements), `scattered` the gradient a view reading those
/// same elements gives it (written into zeros): their sum, as one write
/// (a -0.0 on either side stays -0.0, which `+ 0.0` would make +0.0).
/// Null when the two are not of those forms.
Value replaceWrittenPart(OpBuilder &b, Value masked, Value scattered) {
  WriteOp cleared = viewedWrite(masked), part = viewedWrite(scattered);
  if (!cleared || !part || masked.getType() != scattered.getType() ||
      cleared.getType() != part.getType() || !isZeroFill(cleared.getSrc()) ||
      !isZeroFill(getStorageRoot(part.getDest())) ||
      vjp::tensorOf(cleared.getDest()).getLayout() !=
          vjp::tensorOf(part.getDest()).getLayout())
    return {};
  auto written = b.create<WriteOp>(masked.getLoc(), cleared.getType(),
                                   part.getSrc(), cleared.getDest());
  return b.create<StridedViewOp>(masked.getLoc(), masked.getType(), written);
}

struct DifferentiatePass : strata::impl::DifferentiateBase<DifferentiatePass> {
  using DifferentiateBase::DifferentiateBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<int64_t> wrt;
    bool marked = true;
    if (auto attr = func->getAttrOfType<DenseI64ArrayAttr>(kWrtAttr))
      wrt.assign(attr.asArrayRef().begin(), attr.asArrayRef().end());
    else if (!this->wrt.empty())
      wrt.assign(this->wrt.begin(), this->wrt.end());
    else
      marked = false;
    if (marked) {
      func->removeAttr(kWrtAttr);
      if (failed(differentiate(func, wrt)))
        return signalPassFailure();
    }
    func.walk([](WriteOp w) { w->removeAttr(kInplaceOpAttr); });
    if (!keepMarkers && func.getBody().hasOneBlock())
      removeMarkers(func.getBody().front());
  }

  LogicalResult differentiate(func::FuncOp func, ArrayRef<int64_t> wrt) {
    if (!func.getBody().hasOneBlock())
      return func.emitOpError("strata-differentiate expects one block");
    Block &block = func.getBody().front();
    auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
    if (!ret)
      return func.emitOpError("strata-differentiate expects a func.return");
    for (int64_t i : wrt)
      if (i < 0 || i >= int64_t(func.getNumArguments()))
        return func.emitOpError("strata.wrt names argument ")
               << i << " but the function has " << func.getNumArguments();

    // (0) A whole in-place write read back as written is its value
    // (StridedViewOp's fold): `h.mul_(c).add_(d)` then differentiates as
    // the out-of-place chain, with no write and zero-fill kernels per op.
    SmallVector<StridedViewOp> views;
    for (Operation &op : block.without_terminator())
      if (auto view = dyn_cast<StridedViewOp>(op))
        views.push_back(view);
    for (StridedViewOp view : views)
      if (Value written = wholeWriteValue(view)) {
        view.getResult().replaceAllUsesWith(written);
        view.erase();
      }
    // A write's destination gets a zero gradient where it was overwritten
    // (PyTorch's CopyBackwards: zeros for self), and its producer's VJP
    // runs with it (0 * NaN is NaN): each erased write passes that zero
    // on to its destination's root (through the writes erased below it).
    SmallVector<Value> zeroTargets;
    llvm::SmallPtrSet<Operation *, 8> zeroPending;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
      auto write = dyn_cast<WriteOp>(op);
      bool pending = write && zeroPending.contains(&op);
      if (!isa<WriteOp, StridedViewOp>(op) || !op.use_empty()) {
        if (pending)
          zeroTargets.push_back(write.getResult());
        continue;
      }
      if (write) {
        Value root = getStorageRoot(write.getDest());
        if (auto below = root.getDefiningOp<WriteOp>())
          zeroPending.insert(below);
        else
          zeroTargets.push_back(root);
      }
      op.erase(); // (a dead write, then the view it wrote through)
    }

    // (1) Values that depend on a listed argument.
    DenseSet<Value> active;
    for (int64_t i : wrt)
      if (isDifferentiableType(func.getArgument(i).getType()))
        active.insert(func.getArgument(i));
    for (Operation &op : block.without_terminator())
      if (!isa<DetachOp>(op) && llvm::any_of(op.getOperands(), [&](Value v) {
            return active.contains(v);
          }))
        for (Value r : op.getResults())
          if (isDifferentiableType(r.getType()))
            active.insert(r);

    // (2) Seeds: one new argument per differentiable result.
    DenseMap<Value, Value> grads;
    OpBuilder b(ret);
    // `overwritten`: the zeros a write gives the version it replaced, which
    // count only where no other gradient reaches that version (no `+ 0`:
    // a -0.0 gradient stays -0.0, as PyTorch's in-place ops leave it, and
    // a chain of n in-place ops adds no n zero kernels).
    DenseSet<Value> zeroOnly;
    // The gradients a kInplaceOpAttr write gives the version it wrote
    // (zeros at the written elements), which its self view's replaces.
    DenseSet<Value> replaceable;
    auto accumulate = [&](Value target, Value g, bool overwritten = false) {
      auto [it, inserted] = grads.try_emplace(target, g);
      if (inserted) {
        if (overwritten)
          zeroOnly.insert(target);
      } else if (zeroOnly.erase(target)) {
        if (!overwritten)
          it->second = g;
        else
          zeroOnly.insert(target);
      } else if (!overwritten) {
        Value replaced = replaceable.contains(it->second)
                             ? replaceWrittenPart(b, it->second, g)
                             : Value();
        it->second =
            replaced ? replaced : b.create<AddOp>(g.getLoc(), it->second, g);
      }
    };
    SmallVector<Type> newArgs;
    for (Value r : ret.getOperands())
      if (isDifferentiableType(r.getType())) {
        Type t = gradType(r);
        newArgs.push_back(t);
        Value seed = block.addArgument(t, func.getLoc());
        if (active.contains(r))
          accumulate(r, seed);
      }
    for (Value t : zeroTargets)
      if (active.contains(t))
        accumulate(
            t,
            b.create<FillOp>(t.getLoc(), gradType(t), b.getF64FloatAttr(0.0)),
            /*overwritten=*/true);

    // (3) Reverse sweep.
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      SmallVector<Value> resultGrads;
      bool any = false;
      for (Value r : op->getResults()) {
        Value g = active.contains(r) ? grads.lookup(r) : Value();
        resultGrads.push_back(g);
        any |= bool(g);
      }
      if (!any)
        continue;
      if (auto r = dyn_cast<RecordedOp>(op)) {
        if (active.contains(r.getRecompute()))
          accumulate(r.getRecompute(), resultGrads[0]);
        continue;
      }
      auto vjp = dyn_cast<VJPOpInterface>(op);
      if (!vjp)
        return op->emitOpError("has no VJP (strata-differentiate cannot "
                               "differentiate through it)");
      // A rule may read only the gradients of results that have one.
      for (auto [r, g] : llvm::zip(op->getResults(), resultGrads))
        if (!g)
          g = b.create<FillOp>(op->getLoc(), gradType(r),
                               b.getF64FloatAttr(0.0));
      SmallVector<std::pair<Value, Value>> contributions;
      if (failed(vjp.buildVJP(b, resultGrads, contributions)))
        return failure();
      for (auto [target, g] : contributions) {
        if (!g || !active.contains(target))
          continue;
        bool toOld =
            isa<WriteOp>(op) && target == getStorageRoot(op->getOperand(1));
        if (toOld && op->hasAttr(kInplaceOpAttr))
          replaceable.insert(g);
        accumulate(target, g, toOld && g.getDefiningOp<FillOp>());
      }
    }

    // Results: the gradient of each listed argument, each computed for
    // itself (elementwise ops it shares with other gradients or the
    // forward are recomputed in its kernel rather than stored and re-read)
    // and never sharing a root with another result.
    SmallVector<Value> results(ret.getOperands());
    SmallVector<Type> resultTypes(func.getFunctionType().getResults());
    DenseSet<Value> returnedRoots;
    for (Value r : results)
      if (r.getType().isa<StridedTensorType>())
        returnedRoots.insert(getStorageRoot(r));
    vjp::GradBuilder gb{b, func.getLoc()};
    for (int64_t i : wrt) {
      Value arg = func.getArgument(i);
      if (!isDifferentiableType(arg.getType()))
        return func.emitOpError("cannot differentiate with respect to "
                                "argument ")
               << i << " of type " << arg.getType()
               << ": only f32/f64 tensors and storages have gradients";
      StridedTensorType t = gradType(arg);
      Value g = grads.lookup(arg);
      if (!g) {
        g = b.create<FillOp>(func.getLoc(), t, b.getF64FloatAttr(0.0));
      } else {
        g = gb.recomputed(g);
        if (!isWholeComputeResult(g) || g.getType() != t ||
            returnedRoots.contains(getStorageRoot(g)))
          g = createContiguousCopy(b, func.getLoc(), g);
      }
      returnedRoots.insert(getStorageRoot(g));
      results.push_back(g);
      resultTypes.push_back(t);
    }
    ret->setOperands(results);

    // Rules also build gradients for values nothing asks for (a constant
    // operand): drop them.
    SmallVector<Operation *> built;
    for (Operation *op = ops.empty() ? &block.front()
                                     : ops.back()->getNextNode();
         op != ret; op = op->getNextNode())
      built.push_back(op);
    for (Operation *op : llvm::reverse(built))
      if (isOpTriviallyDead(op))
        op->erase();

    SmallVector<Type> argTypes(func.getFunctionType().getInputs());
    argTypes.append(newArgs);
    func.setType(FunctionType::get(func.getContext(), argTypes, resultTypes));
    return success();
  }
};
} // namespace
