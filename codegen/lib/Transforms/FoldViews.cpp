//===- FoldViews.cpp - every view chain becomes one strided_view ----------===//
//
// Assumes: a view's result type is its layout, absolute within the storage
// root that getStorageRoot reaches (the dialect's verifiers guarantee it), so
// the result type alone says which elements a view addresses, whatever chain
// produced it.
//
// Guarantees: every value produced by a view op (getViewSource non-null: the
// pure views, strided_view of a non-root, and reshape/flatten/contiguous when
// they do not copy) is replaced by `strata.strided_view %root` of the same
// type at the view's location, or by the root itself when the types are
// equal. No value changes type and no use changes root, so writes keep their
// result types. Dead view ops are erased. Runs in O(#ops).
//
// Algorithm: (1) one forward walk records each view's root, reading the
// source's memoized root (a chain is never walked twice); (2) views are
// rewritten in reverse order, so when a view is reached every view reading it
// is already gone and the uses left are the ones that need a replacement.
//
//===----------------------------------------------------------------------===//
#include "StorageRoots.h"
#include "strata/IR/StrataDialect.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace strata {
#define GEN_PASS_DEF_FOLDVIEWS
#include "strata/Transforms/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace {

struct FoldViewsPass : strata::impl::FoldViewsBase<FoldViewsPass> {
  void runOnOperation() override {
    StorageRoots roots;
    SmallVector<std::pair<Operation *, Value>> views; // (view op, its root)
    getOperation().walk([&](Operation *op) {
      if (getViewSource(op))
        views.emplace_back(op, roots.rootOf(op->getResult(0)));
    });

    OpBuilder builder(&getContext());
    for (auto &[op, root] : llvm::reverse(views)) {
      Value result = op->getResult(0);
      // Already in folded form: leave it (its users are not views any more).
      if (auto sv = dyn_cast<StridedViewOp>(op);
          sv && sv.getSource() == root && !result.use_empty())
        continue;
      if (!result.use_empty()) {
        Value replacement = root;
        if (root.getType() != result.getType()) {
          builder.setInsertionPoint(op);
          replacement = builder.create<StridedViewOp>(op->getLoc(),
                                                      result.getType(), root);
        }
        result.replaceAllUsesWith(replacement);
      }
      op->erase();
    }
  }
};

} // namespace
