//===- StorageRoots.h - memoized getStorageRoot for passes ------*- C++ -*-===//
//
// Private to codegen/lib/Transforms. getStorageRoot walks a view chain each
// time it is asked; a pass that asks for every value would be quadratic in
// the chain length. StorageRoots resolves each view once.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TRANSFORMS_STORAGEROOTS_H
#define STRATA_TRANSFORMS_STORAGEROOTS_H

#include "strata/IR/StrataDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace strata::ir {

/// getStorageRoot with memoization, plus redirection of a root that a pass
/// removed (a copy replaced by its source) to the root that replaced it.
/// Answers stay valid while view ops are erased or bypassed (a root never
/// changes that way); a pass that creates ops must not reuse the object.
class StorageRoots {
public:
  /// The storage root of `value`, O(1) amortized.
  mlir::Value rootOf(mlir::Value value) {
    llvm::SmallVector<mlir::Value, 8> pending;
    mlir::Value root = value;
    while (true) {
      auto it = memo.find(root);
      if (it != memo.end()) {
        root = it->second;
        break;
      }
      mlir::Value source = getViewSource(root.getDefiningOp());
      if (!source)
        break;
      pending.push_back(root);
      root = source;
    }
    root = follow(root);
    for (mlir::Value v : pending)
      memo[v] = root;
    return root;
  }

  /// Every value whose root was `from` now has root `to` (a root itself).
  void redirect(mlir::Value from, mlir::Value to) { redirected[from] = to; }

private:
  mlir::Value follow(mlir::Value root) {
    for (auto it = redirected.find(root); it != redirected.end();
         it = redirected.find(root))
      root = it->second;
    return root;
  }

  llvm::DenseMap<mlir::Value, mlir::Value> memo;
  llvm::DenseMap<mlir::Value, mlir::Value> redirected;
};

} // namespace strata::ir

#endif // STRATA_TRANSFORMS_STORAGEROOTS_H
