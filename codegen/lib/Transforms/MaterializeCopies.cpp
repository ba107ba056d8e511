//===- MaterializeCopies.cpp - copy only where strides cannot express it --===//
//
// Assumes: types are absolute layouts within storage roots (getStorageRoot);
// compute ops (elementwise, where, cast, reductions, matmul, copy) and the
// source operand of a write read any layout; the layouts of elementwise,
// cast and copy results follow their operands' (TensorIterator,
// preserve_format), those of reductions and matmul do not. Runs after
// fold-views in the pipeline (a copy's views are then one hop away) but does
// not need it.
//
// Guarantees: no observable value changes type (function results, views,
// write destinations, operands of other ops); every write's destination
// keeps its root; no function result comes to alias an argument, another
// result or a written storage. After the pass:
//  (a) no reshape/flatten copies: each becomes `strata.contiguous` (the copy,
//      a fresh root) + `strata.view` to the new shape;
//  (b) no contiguous of a contiguous value (it is that value);
//  (c) a copy C of X (`copy`, or `contiguous` that copies) is replaced by X
//      when every use of C, and of every view of C, allows it:
//      - a compute op reading strided input: when its result type is
//        unchanged (reductions and matmul: always), or when the layouts
//        that change downstream are those of intermediates only: the
//        elementwise results whose layout follows X are read by compute
//        ops only, up to results whose layout does not change (e.g.
//        `sum(exp(contiguous(x.t())))` loses its copy and `exp` gets
//        x.t()'s layout; `exp(contiguous(x.t()))` returned keeps it, as
//        PyTorch's row-major result);
//      - a view op or a return: only if X has C's type (contiguous, offset
//        0), so nobody sees another layout; a returned C also needs X's root
//        to be a compute result that nothing else returns or writes;
//      - the destination of a write: never (the write would land in X's
//        storage and its result type is C's storage);
//      - the source of a write into X's own storage: never (the copy breaks
//        the overlap, as PyTorch requires for copy_);
//      - any other op (func.call, ...): never.
//  (d) a second copy of one value is the first one, under the same rule.
// Every copy kept is reported (option `remarks=true`) by one remark at its
// location: "copy kept: <reshape> to [..] cannot be a view of strides [..]",
// "... the layout of <op>'s result follows it and is observed by <op>",
// "... destination of a write", "... its result is returned [and would
// otherwise alias ...]", "... read by a view op", "... its source overlaps
// the destination of a write", "... read by <op>".
//
// Algorithm: one walk materializes reshape copies; one forward walk decides
// each copy from its uses and the uses of its views (each view has one root,
// so each is visited once: linear), with roots memoized (StorageRoots) and
// merged as copies disappear.
//
//===----------------------------------------------------------------------===//
#include "StorageRoots.h"
#include "strata/IR/StrataDialect.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace strata {
#define GEN_PASS_DEF_MATERIALIZECOPIES
#include "strata/Transforms/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;
namespace layout = strata::layout;

namespace {

/// Compute ops that read each operand through its own strides and whose
/// result type does not depend on the operands' layouts.
bool readsStridedInput(Operation *op) {
  return isa<ElementwiseOpInterface, ReductionOpInterface, MatmulOp, ScanOp,
             CopyOp>(op);
}

/// A copy op: `copy`, or a `contiguous` of a non-contiguous value.
bool isCopy(Operation *op) {
  if (isa<CopyOp>(op))
    return true;
  auto c = dyn_cast<ContiguousOp>(op);
  return c && !c.isView();
}

/// The rewrite of one function; its state lives as long as one run.
class CopyMaterializer {
public:
  CopyMaterializer(func::FuncOp func, bool emitRemarks)
      : func(func), emitRemarks(emitRemarks) {}
  LogicalResult run();

private:
  LogicalResult materializeReshapes();
  /// Why `copy` must stay rather than be replaced by `by` (its source, or
  /// an equal copy kept earlier), or an empty string when it may go.
  std::string keepReason(Operation *copy, Value by);
  /// Replaces the copy by `by` (its source, or an equal copy kept earlier).
  void replaceCopy(Operation *copy, Value by);
  /// Gives `result` the type `type` and re-infers the result types of the
  /// compute ops downstream whose layout follows it. When some changed
  /// value is observed (returned, viewed, written into, read by another
  /// op), restores every type and returns {the first op whose result
  /// changed, that observer}; else keeps the new types and returns nulls.
  std::pair<Operation *, Operation *> retype(Value result, Type type);

  func::FuncOp func;
  bool emitRemarks;
  StorageRoots roots;
  /// How many returned values resolve to each root.
  DenseMap<Value, unsigned> returnCount;
  /// Roots some write's destination resolves to.
  DenseSet<Value> writtenRoots;
  /// Copies created by (a), with the reason they exist.
  DenseMap<Operation *, std::string> reshapeCopies;
  /// The first copy kept of each value, per block.
  DenseMap<std::pair<Block *, Value>, Operation *> keptCopyOf;
};

//===--- (a) reshape/flatten copies ---------------------------------------===//

LogicalResult CopyMaterializer::materializeReshapes() {
  SmallVector<Operation *> copying;
  func.walk([&](Operation *op) {
    if (isa<ReshapeOp, FlattenOp>(op) && !getViewSource(op))
      copying.push_back(op);
  });
  OpBuilder builder(func.getContext());
  for (Operation *op : copying) {
    Value result = op->getResult(0);
    if (result.use_empty()) {
      op->erase();
      continue;
    }
    Value input = op->getOperand(0);
    auto resultType = result.getType().cast<StridedTensorType>();
    builder.setInsertionPoint(op);
    auto copy = builder.create<ContiguousOp>(op->getLoc(), input);
    auto view = builder.create<ViewOp>(
        op->getLoc(), copy,
        builder.getDenseI64ArrayAttr(resultType.getShape()));
    if (view.getType() != resultType) {
      // The algebra promised a contiguous offset-0 result; a mismatch is a
      // bug in it, not in the program.
      view.erase();
      copy.erase();
      return op->emitError("internal error: the copy of this ")
             << op->getName() << " has type " << view.getType()
             << " instead of " << resultType;
    }
    auto inputType = input.getType().cast<StridedTensorType>();
    reshapeCopies[copy] = "copy kept: " + op->getName().stripDialect().str() +
                          " to " + layout::formatList(resultType.getShape()) +
                          " cannot be a view of strides " +
                          layout::formatList(inputType.getStrides()) +
                          " (sizes " +
                          layout::formatList(inputType.getShape()) + ")";
    result.replaceAllUsesWith(view.getResult());
    op->erase();
  }
  return success();
}

//===--- (b), (c) removable copies ----------------------------------------===//

std::string CopyMaterializer::keepReason(Operation *copy, Value by) {
  Value result = copy->getResult(0);
  bool sameType = by.getType() == result.getType();
  Value sourceRoot = roots.rootOf(by);

  bool writeDest = false, returned = false, viewRead = false, overlap = false;
  Operation *other = nullptr;
  // `result` and the views of it, each visited once.
  SmallVector<Value, 4> worklist{result};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto write = dyn_cast<WriteOp>(user)) {
        if (use.getOperandNumber() == 1) // `write %src into %dest`
          writeDest = true;
        else if (roots.rootOf(write.getDest()) == sourceRoot)
          overlap = true;
      } else if (readsStridedInput(user)) {
        continue;
      } else if (getViewSource(user) == value) {
        viewRead = true;
        worklist.push_back(user->getResult(0));
      } else if (user->hasTrait<OpTrait::ReturnLike>()) {
        returned = true;
      } else if (!other) {
        other = user;
      }
    }
  }

  if (writeDest)
    return "copy kept: destination of a write";
  if (returned) {
    if (!sameType)
      return "copy kept: its result is returned";
    if (auto arg = sourceRoot.dyn_cast<BlockArgument>())
      return "copy kept: its result is returned and would otherwise alias "
             "argument #" +
             std::to_string(arg.getArgNumber());
    if (returnCount.lookup(sourceRoot))
      return "copy kept: its result is returned and would otherwise alias "
             "another result";
    if (writtenRoots.contains(sourceRoot) ||
        isa_and_nonnull<WriteOp>(sourceRoot.getDefiningOp()))
      return "copy kept: its result is returned and would otherwise alias a "
             "written storage";
  }
  if (viewRead && !sameType)
    return "copy kept: read by a view op";
  if (overlap)
    return "copy kept: its source overlaps the destination of a write";
  if (other)
    return "copy kept: read by " + other->getName().getStringRef().str();
  if (!sameType) {
    // Last: on success the types downstream are already X's.
    auto [follows, observer] = retype(result, by.getType());
    if (follows)
      return "copy kept: the layout of " +
             follows->getName().getStringRef().str() +
             "'s result follows it and is observed by " +
             observer->getName().getStringRef().str();
  }
  return "";
}

namespace {
/// The result type compute op `op` infers from its operands' current types
/// (null when it cannot infer one).
Type inferredType(Operation *op) {
  if (auto cast = dyn_cast<CastOp>(op)) {
    auto in = cast.getInput().getType().dyn_cast<StridedTensorType>();
    return in ? preserveFormatType(in, cast.getType().getElementType())
              : Type();
  }
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  SmallVector<Type> types;
  if (!infer || op->getNumResults() != 1 ||
      failed(infer.inferReturnTypes(op->getContext(), std::nullopt,
                                    op->getOperands(), op->getAttrDictionary(),
                                    op->getRegions(), types)) ||
      types.size() != 1)
    return {};
  return types[0];
}
} // namespace

std::pair<Operation *, Operation *> CopyMaterializer::retype(Value result,
                                                             Type type) {
  SmallVector<std::pair<Value, Type>> old{{result, result.getType()}};
  result.setType(type);
  Operation *follows = nullptr, *observer = nullptr;
  SmallVector<Value> worklist{result};
  while (!worklist.empty() && !observer) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<WriteOp>(user) && use.getOperandNumber() == 0)
        continue; // the source of a write: read with its own strides
      Type inferred = readsStridedInput(user) ? inferredType(user) : Type();
      if (value != result && !inferred) {
        observer = user;
        break;
      }
      if (!inferred || inferred == user->getResult(0).getType())
        continue; // `result`'s own views and returns are checked already
      Value changed = user->getResult(0);
      if (!follows)
        follows = user;
      old.push_back({changed, changed.getType()});
      changed.setType(inferred);
      worklist.push_back(changed);
    }
  }
  if (!observer)
    return {nullptr, nullptr};
  for (auto &[value, t] : llvm::reverse(old))
    value.setType(t);
  return {follows, observer};
}

void CopyMaterializer::replaceCopy(Operation *copy, Value by) {
  Value result = copy->getResult(0), byRoot = roots.rootOf(by);
  // `result` was a root; everything that resolved to it now resolves to
  // `by`'s root, returns included.
  if (unsigned n = returnCount.lookup(result))
    returnCount[byRoot] += n;
  roots.redirect(result, byRoot);
  result.replaceAllUsesWith(by);
  copy->erase();
}

LogicalResult CopyMaterializer::run() {
  if (failed(materializeReshapes()))
    return failure();

  SmallVector<Operation *> copies;
  func.walk([&](Operation *op) {
    if (isa<CopyOp, ContiguousOp>(op))
      copies.push_back(op);
    else if (auto write = dyn_cast<WriteOp>(op))
      writtenRoots.insert(roots.rootOf(write.getDest()));
    else if (op->hasTrait<OpTrait::ReturnLike>())
      for (Value v : op->getOperands())
        ++returnCount[roots.rootOf(v)];
  });

  for (Operation *op : copies) {
    Value result = op->getResult(0);
    // contiguous of a contiguous value is that value (same type, same root).
    if (!isCopy(op)) {
      result.replaceAllUsesWith(op->getOperand(0));
      op->erase();
      continue;
    }
    if (result.use_empty()) {
      op->erase();
      continue;
    }
    std::string reason = reshapeCopies.lookup(op);
    if (reason.empty())
      reason = keepReason(op, op->getOperand(0));
    if (reason.empty()) {
      replaceCopy(op, op->getOperand(0));
      continue;
    }
    // A second copy of one value is the first one, under the same rule.
    auto [it, first] = keptCopyOf.try_emplace(
        std::make_pair(op->getBlock(), op->getOperand(0)), op);
    if (!first && keepReason(op, it->second->getResult(0)).empty()) {
      replaceCopy(op, it->second->getResult(0));
      continue;
    }
    if (emitRemarks)
      op->emitRemark(reason);
  }
  return success();
}

struct MaterializeCopiesPass
    : strata::impl::MaterializeCopiesBase<MaterializeCopiesPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(CopyMaterializer(getOperation(), emitRemarks).run()))
      signalPassFailure();
  }
};

} // namespace
