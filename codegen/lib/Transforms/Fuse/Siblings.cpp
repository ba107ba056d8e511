//===- Siblings.cpp - merge kernels that read the same data ---------------===//
//
// Part of --strata-fuse (FusePass.cpp has the whole algorithm): sibling
// fusion, after the groups are kernels.
//
//===----------------------------------------------------------------------===//
#include "Fuse.h"
#include "strata/IR/ScalarBuilder.h"
#include "strata/IR/StrataDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata::ir;

namespace strata::fuse {

/// The value a chain of strided_views starts from. Layouts are absolute
/// within the storage root, so a view of `v` may be taken of this instead.
Value viewRoot(Value v) {
  while (auto sv = v.getDefiningOp<StridedViewOp>())
    v = sv.getSource();
  return v;
}

bool isBroadcastOnly(StridedTensorType t) {
  return llvm::all_of(t.getStrides(), [](int64_t s) { return s == 0; });
}

/// Merging stops at this many operands, so kernels stay register-friendly.
constexpr unsigned kMaxSiblingInputs = 12;
constexpr unsigned kMaxSiblingResults = 6;
/// Kernels after a kernel that it may merge with: siblings sit close
/// together (a gradient and its loss), and this keeps the pass linear in
/// the number of kernels.
constexpr unsigned kSiblingWindow = 64;
/// Permutations tried per pair (spaces of many equal sizes have many).
constexpr int kMaxPermutations = 720;

/// A kernel sibling fusion may merge: fresh results (elementwise or
/// reduced), no indices, loops not yet chosen.
bool isSiblingCandidate(KernelOp k) {
  return !k.getDest() && !k.getIndexed() && !k.getIndexMap() &&
         !k.getLoopSizes() && !k.isScan() && !isMatrixProduct(k) &&
         k.getNumResults() > 0 && k.getNumResults() <= kMaxSiblingResults;
}

/// B's input `in` seen over A's space: B's dim i is A's dim perm[i].
StridedTensorType permutedType(StridedTensorType t, ArrayRef<int64_t> perm,
                               ArrayRef<int64_t> spaceA) {
  SmallVector<int64_t> strides(spaceA.size(), 0);
  for (auto [i, d] : llvm::enumerate(perm))
    strides[d] = t.getStrides()[i];
  return StridedTensorType::get(t.getContext(), spaceA, t.getElementType(),
                                strides, t.getOffset());
}

/// The index of A's input with `root` and `type`, or -1.
int findInput(ArrayRef<Value> inputs, Value root, StridedTensorType type) {
  for (auto [i, in] : llvm::enumerate(inputs))
    if (viewRoot(in) == root && tensorType(in) == type)
      return static_cast<int>(i);
  return -1;
}

/// The permutation of A's dims under which B shares the most non-broadcast
/// inputs with A (and how many), trying at most kMaxPermutations.
std::pair<SmallVector<int64_t>, int> bestPermutation(KernelOp a, KernelOp b) {
  ArrayRef<int64_t> sa = a.getSpace(), sb = b.getSpace();
  SmallVector<int64_t> best;
  int bestShared = 0;
  if (sa.size() != sb.size())
    return {best, 0};
  SmallVector<Value> inputsA(a.getInputs().begin(), a.getInputs().end());
  SmallVector<int64_t> perm;
  SmallVector<bool> used(sa.size(), false);
  int tried = 0;
  std::function<void()> search = [&] {
    if (tried >= kMaxPermutations)
      return;
    if (perm.size() == sb.size()) {
      ++tried;
      int shared = 0;
      for (Value in : b.getInputs()) {
        auto t = tensorType(in);
        if (!isBroadcastOnly(t) &&
            findInput(inputsA, viewRoot(in), permutedType(t, perm, sa)) >= 0)
          ++shared;
      }
      if (shared > bestShared) {
        bestShared = shared;
        best = perm;
      }
      return;
    }
    for (size_t d = 0; d < sa.size(); ++d) {
      if (used[d] || sa[d] != sb[perm.size()])
        continue;
      used[d] = true;
      perm.push_back(d);
      search();
      perm.pop_back();
      used[d] = false;
    }
  };
  search();
  return {best, bestShared};
}

/// Block positions of the ops fuseSiblings meets, numbered once: asking
/// MLIR (`isBeforeInBlock`) after each merge inserted an op renumbered the
/// whole block, O(n) per merge and O(n^2) for an eval of n outputs
/// (docs/performance.md). A merged kernel takes the position of the kernel
/// whose place it took.
using Positions = DenseMap<Operation *, int64_t>;

bool isBefore(const Positions &at, Operation *x, Operation *y) {
  auto ix = at.find(x), iy = at.find(y);
  if (ix != at.end() && iy != at.end())
    return ix->second < iy->second;
  return x->isBeforeInBlock(y);
}

/// Merges sibling kernel `b` (later in the block) into `a` when they share
/// inputs and neither depends on the other: the merged kernel (where `b`
/// was, or, with `atB` false, where `a` was), or null. Cheap checks first: this
/// runs for every pair of kernels that read a common root.
KernelOp mergeSiblings(KernelOp a, KernelOp b, bool &atB, Positions &at) {
  if (a.getNumResults() + b.getNumResults() > kMaxSiblingResults ||
      a->getBlock() != b->getBlock() || !isBefore(at, a, b))
    return {};
  auto [perm, shared] = bestPermutation(a, b);
  if (shared == 0)
    return {};
  // Reduced dims over A's space: both kernels' must agree when both reduce.
  SmallVector<int64_t> reduceA = a.getReducedDims(), reduceB;
  llvm::sort(reduceA);
  for (int64_t d : b.getReducedDims())
    reduceB.push_back(perm[d]);
  llvm::sort(reduceB);
  if (!reduceA.empty() && !reduceB.empty() && reduceA != reduceB)
    return {};
  SmallVector<int64_t> reduce = reduceA.empty() ? reduceB : reduceA;

  // Inputs: A's, then B's that A does not read already (seen over A's
  // space), each once.
  ArrayRef<int64_t> space = a.getSpace();
  SmallVector<Value> inputsA(a.getInputs().begin(), a.getInputs().end());
  struct NewInput {
    Value root;
    StridedTensorType type;
  };
  SmallVector<NewInput> added;
  SmallVector<unsigned> argOfB;
  for (Value in : b.getInputs()) {
    auto type = permutedType(tensorType(in), perm, space);
    Value root = viewRoot(in);
    int found = findInput(inputsA, root, type);
    if (found < 0) {
      auto it = llvm::find_if(added, [&](const NewInput &n) {
        return n.root == root && n.type == type;
      });
      found = inputsA.size() + (it - added.begin());
      if (it == added.end())
        added.push_back({root, type});
    }
    argOfB.push_back(found);
  }
  if (inputsA.size() + added.size() > kMaxSiblingInputs)
    return {};

  // Where the merged kernel goes: where B was, if the ops between A and B
  // that depend on A are views (they move after it) and B does not depend
  // on A; else where A was, if every root B reads is defined before A.
  SmallPtrSet<Value, 8> tainted;
  for (Value r : a.getResults())
    tainted.insert(r);
  SmallVector<Operation *> dependents;
  atB = true;
  for (Operation *op = a->getNextNode(); op != b.getOperation() && atB;
       op = op->getNextNode()) {
    if (!llvm::any_of(op->getOperands(),
                      [&](Value v) { return tainted.contains(v); }))
      continue;
    atB = isa<StridedViewOp>(op) || getViewSource(op);
    dependents.push_back(op);
    for (Value r : op->getResults())
      tainted.insert(r);
  }
  for (Value in : b.getInputs())
    atB &= !tainted.contains(in);
  if (!atB) {
    dependents.clear();
    for (Value in : b.getInputs()) {
      Operation *def = viewRoot(in).getDefiningOp();
      if (def && (def->getBlock() != a->getBlock() || !isBefore(at, def, a)))
        return {};
    }
  }

  OpBuilder outer = atB ? OpBuilder(b) : OpBuilder(a);
  SmallVector<Value> inputs = inputsA;
  for (const NewInput &n : added)
    inputs.push_back(
        n.root.getType() == n.type
            ? n.root
            : outer.create<StridedViewOp>(b.getLoc(), n.type, n.root)
                  .getResult());

  SmallVector<Type> resultTypes(a.getResultTypes());
  resultTypes.append(b.getResultTypes().begin(), b.getResultTypes().end());
  auto merged =
      outer.create<KernelOp>(outer.getFusedLoc({a.getLoc(), b.getLoc()}),
                             resultTypes, space, inputs, Value());
  Block *body = new Block;
  merged.getBody().push_back(body);
  for (Value in : inputs)
    body->addArgument(tensorType(in).getElementType(), a.getLoc());
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  IRMapping map;
  SmallVector<Value> yields;
  for (auto [i, arg] : llvm::enumerate(a.getBodyBlock().getArguments()))
    map.map(arg, body->getArgument(i));
  for (Operation &op : a.getBodyBlock().without_terminator())
    inner.clone(op, map);
  for (Value y : a.getBodyBlock().getTerminator()->getOperands())
    yields.push_back(map.lookup(y));
  for (auto [i, arg] : llvm::enumerate(b.getBodyBlock().getArguments()))
    map.map(arg, body->getArgument(argOfB[i]));
  for (Operation &op : b.getBodyBlock().without_terminator()) {
    Operation *copy = inner.clone(op, map);
    // The same scalar op of the same operands is computed once.
    for (Operation &prior : *body) {
      if (&prior == copy)
        break;
      if (OperationEquivalence::isEquivalentTo(
              &prior, copy, OperationEquivalence::exactValueMatch,
              OperationEquivalence::ignoreValueEquivalence,
              OperationEquivalence::IgnoreLocations)) {
        for (auto [from, to] : llvm::zip(op.getResults(), prior.getResults()))
          map.map(from, to);
        copy->erase();
        break;
      }
    }
  }
  for (Value y : b.getBodyBlock().getTerminator()->getOperands())
    yields.push_back(map.lookup(y));
  inner.create<YieldOp>(a.getLoc(), yields);

  // Each result's order over A's space.
  SmallVector<int64_t> perms;
  bool identity = true;
  for (unsigned r = 0; r < a.getNumResults(); ++r)
    for (int64_t d : a.getResultPerm(r))
      perms.push_back(d);
  for (unsigned r = 0; r < b.getNumResults(); ++r)
    for (int64_t d : b.getResultPerm(r))
      perms.push_back(perm[d]);
  for (size_t i = 0; i < perms.size(); ++i)
    identity &= perms[i] == static_cast<int64_t>(i % space.size());
  if (!identity)
    merged.setResultPermsAttr(outer.getDenseI64ArrayAttr(perms));
  if (!reduce.empty()) {
    SmallVector<StringRef> combiners;
    for (KernelOp k : {a, b})
      for (unsigned r = 0; r < k.getNumResults(); ++r)
        combiners.push_back(k.getCombiner(r).empty() ? "none"
                                                     : k.getCombiner(r));
    merged.setReduceDimsAttr(outer.getDenseI64ArrayAttr(reduce));
    merged.setCombinersAttr(outer.getStrArrayAttr(combiners));
  }

  at[merged] = at.lookup(atB ? b.getOperation() : a.getOperation());
  for (auto [i, r] : llvm::enumerate(a.getResults()))
    r.replaceAllUsesWith(merged.getResult(i));
  for (auto [i, r] : llvm::enumerate(b.getResults()))
    r.replaceAllUsesWith(merged.getResult(a.getNumResults() + i));
  Operation *last = merged;
  for (Operation *op : dependents) {
    op->moveAfter(last);
    last = op;
  }
  // Erase A and B, then the views only they read.
  SmallVector<Operation *> feeders;
  for (KernelOp k : {a, b})
    for (Value in : k.getInputs())
      if (auto view = in.getDefiningOp<StridedViewOp>())
        feeders.push_back(view);
  at.erase(a);
  at.erase(b);
  a.erase();
  b.erase();
  while (!feeders.empty()) {
    Operation *view = feeders.pop_back_val();
    if (!view->use_empty() || llvm::is_contained(feeders, view))
      continue;
    if (auto source = view->getOperand(0).getDefiningOp<StridedViewOp>())
      feeders.push_back(source);
    at.erase(view);
    view->erase();
  }
  return merged;
}

/// Merges sibling kernels in `block`: each kernel, in order, with the
/// first of the next kSiblingWindow kernels it can merge with; the merged
/// kernel takes the place of the kernel whose position it took and is
/// tried again from there. At most kSiblingWindow pair checks per kernel.
void fuseSiblings(Block &block) {
  SmallVector<KernelOp> kernels;
  Positions at;
  for (Operation &op : block) {
    at[&op] = static_cast<int64_t>(at.size());
    if (auto k = dyn_cast<KernelOp>(op); k && isSiblingCandidate(k))
      kernels.push_back(k);
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!kernels[i])
      continue;
    // Cheap filter: B must read some root A reads.
    SmallPtrSet<Value, 8> roots;
    for (Value in : kernels[i].getInputs())
      if (!isBroadcastOnly(tensorType(in)))
        roots.insert(viewRoot(in));
    unsigned scanned = 0;
    for (size_t j = i + 1; j < kernels.size() && scanned < kSiblingWindow;
         ++j) {
      if (kernels[j])
        ++scanned;
      if (!kernels[j] || llvm::none_of(kernels[j].getInputs(), [&](Value in) {
            return roots.contains(viewRoot(in));
          }))
        continue;
      bool atB = true;
      KernelOp merged = mergeSiblings(kernels[i], kernels[j], atB, at);
      if (!merged)
        continue;
      // Keep the list in block order: the merged kernel takes the slot of
      // the kernel whose place it took, and is tried from there.
      if (atB) {
        kernels[i] = nullptr;
        kernels[j] = merged;
        break;
      }
      kernels[i] = merged;
      kernels[j] = nullptr;
      for (Value in : merged.getInputs())
        if (!isBroadcastOnly(tensorType(in)))
          roots.insert(viewRoot(in));
    }
  }
}

} // namespace strata::fuse
