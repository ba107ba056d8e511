//===- SplitKernels.cpp - bound the length of every kernel body ----------===//
//
// Assumes: strata.kernel ops from --strata-fuse, before --strata-coalesce
//   (no loop_sizes yet); bodies are one block of region-free scalar ops.
// Guarantees: no kernel body holds more than `max-ops` ops (not counting
//   constants and the yield), nor reads more than `max-inputs` values from
//   outside it unless one op does; every result is the same value as
//   before.
// Algorithm: the body's ops, in order, are cut into pieces of `max-ops`,
//   or shorter where the next op would make a piece read more than
//   `max-inputs` outside values (inputs, earlier pieces' values).
//   Each piece but the last becomes a kernel over the same space, reading
//   only the inputs (and indices) its ops use and writing, as contiguous
//   tensors over the space, the values later pieces or the yield use; the
//   next pieces read those as inputs. The last piece keeps the kernel's
//   results, reduction, result orders and destination. Constants are
//   cloned into each piece at their first use. One linear walk per kernel.
// Why: LLVM's code generation of one basic block grows faster than the
//   block (the machine scheduler's live-range walks): a kernel of 8,000
//   scalar ops took ~1 s to compile, the same work in pieces of 512 a few
//   ms each. Inputs cost as much: each is a value live across the loop
//   (a scalar argument is one per op of a chain `y * c_i`), and a piece of
//   512 ops reading 509 scalars took 200-350 ms in the register allocator
//   and schedulers, pieces of 32 a few ms. And a long program of
//   repeated structure (a 10^5-step chain, its gradient) cuts into pieces
//   that are the same kernel, which the kernel cache (keyed by the
//   kernel's text) compiles once. The price is one store and one load per
//   value crossing a cut, per piece.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataDialect.h"
#include "strata/Transforms/KernelPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace strata {
#define GEN_PASS_DEF_SPLITKERNELS
#include "strata/Transforms/KernelPasses.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace {

/// Ops with no operands and no regions (arith.constant): cloned, not cut.
bool isConstantLike(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         op->getNumResults() == 1;
}

/// Whether a scalar of `t` can be a tensor element (f32 f64 i1 i32 i64).
bool isElementType(Type t) {
  if (auto f = t.dyn_cast<FloatType>())
    return f.getWidth() == 32 || f.getWidth() == 64;
  if (auto i = t.dyn_cast<IntegerType>())
    return i.getWidth() == 1 || i.getWidth() == 32 || i.getWidth() == 64;
  return false;
}

/// Splits `kernel` when its body is longer than `maxOps`; true if it did.
bool split(KernelOp kernel, int64_t maxOps, int64_t maxInputs) {
  Block &body = kernel.getBodyBlock();
  unsigned numInputs = kernel.getInputs().size();
  // Piece of each counted op; constants and the yield have none. A piece
  // ends after `maxOps` ops, or before an op that would make it read more
  // than `maxInputs` values from outside it.
  DenseMap<Operation *, int64_t> pieceOf;
  SmallVector<Operation *> ops;
  SmallVector<size_t> starts = {0}; // index into `ops` of each piece's first
  llvm::DenseSet<Value> outside;    // values this piece reads
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions())
      return false;
    if (isConstantLike(&op))
      continue;
    auto readsOutside = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (def && isConstantLike(def))
        return false;
      auto it = def ? pieceOf.find(def) : pieceOf.end();
      return !def || it->second + 1 < static_cast<int64_t>(starts.size());
    };
    unsigned added = 0;
    for (Value v : op.getOperands())
      added += readsOutside(v) && !outside.contains(v);
    size_t length = ops.size() - starts.back();
    if (length == static_cast<size_t>(maxOps) ||
        (length && outside.size() + added > static_cast<size_t>(maxInputs))) {
      starts.push_back(ops.size());
      outside.clear();
    }
    for (Value v : op.getOperands())
      if (readsOutside(v))
        outside.insert(v);
    pieceOf[&op] = static_cast<int64_t>(starts.size()) - 1;
    ops.push_back(&op);
  }
  if (starts.size() == 1)
    return false;
  int64_t last = static_cast<int64_t>(starts.size()) - 1;
  starts.push_back(ops.size());
  // The values each piece writes: defined there, used by a later piece.
  SmallVector<SmallVector<Value>> crossing(last);
  for (Operation *op : ops) {
    int64_t p = pieceOf[op];
    if (p == last)
      continue;
    for (Value v : op->getResults()) {
      bool later = llvm::any_of(v.getUsers(), [&](Operation *user) {
        auto it = pieceOf.find(user);
        return it == pieceOf.end() ? user == body.getTerminator()
                                   : it->second > p;
      });
      if (!later)
        continue;
      if (!isElementType(v.getType()))
        return false;
      crossing[p].push_back(v);
    }
  }

  ArrayRef<int64_t> space = kernel.getSpace();
  OpBuilder outer(kernel);
  // A crossing value -> the tensor a piece wrote it to.
  DenseMap<Value, Value> written;
  size_t next = 0; // index into `ops`
  for (int64_t p = 0; p <= last; ++p) {
    size_t end = starts[p + 1];
    bool isLast = p == last;
    // Inputs of this piece: original inputs and earlier pieces' tensors,
    // each once, in first-use order; indices if any op reads one.
    SmallVector<Value> inputs;
    DenseMap<Value, unsigned> inputIndex; // tensor -> input position
    SmallVector<Value> argOf;             // body value read, per input
    bool usesIndex = false;
    auto needs = [&](Value v) {
      Value tensor;
      if (auto arg = v.dyn_cast<BlockArgument>()) {
        if (arg.getArgNumber() >= numInputs) {
          usesIndex = true;
          return;
        }
        tensor = kernel.getInputs()[arg.getArgNumber()];
      } else if (auto it = written.find(v); it != written.end()) {
        tensor = it->second;
      } else {
        return; // defined in this piece, or a constant
      }
      // Two body arguments may read the same tensor: key by body value.
      if (inputIndex.count(v))
        return;
      inputIndex[v] = inputs.size();
      inputs.push_back(tensor);
      argOf.push_back(v);
    };
    for (size_t i = next; i < end; ++i)
      for (Value v : ops[i]->getOperands())
        needs(v);
    Operation *yield = body.getTerminator();
    if (isLast)
      for (Value v : yield->getOperands())
        needs(v);

    SmallVector<Type> resultTypes;
    if (isLast) {
      resultTypes.assign(kernel.getResultTypes().begin(),
                         kernel.getResultTypes().end());
    } else {
      for (Value v : crossing[p])
        resultTypes.push_back(
            StridedTensorType::getContiguous(v.getType(), space));
    }
    auto piece =
        outer.create<KernelOp>(kernel.getLoc(), resultTypes, space, inputs,
                               isLast ? kernel.getDest() : Value());
    if (isLast) {
      for (NamedAttribute attr : kernel->getAttrs())
        if (attr.getName() != kernel.getOperandSegmentSizesAttrName() &&
            attr.getName() != kernel.getIndexedAttrName())
          piece->setAttr(attr.getName(), attr.getValue());
    }
    if (usesIndex)
      piece.setIndexedAttr(outer.getUnitAttr());
    Block *pieceBody = new Block;
    piece.getBody().push_back(pieceBody);
    IRMapping map;
    for (auto [i, v] : llvm::enumerate(argOf))
      map.map(v, pieceBody->addArgument(v.getType(), v.getLoc()));
    if (usesIndex)
      for (unsigned d = 0; d < space.size(); ++d) {
        BlockArgument index = body.getArgument(numInputs + d);
        map.map(index, pieceBody->addArgument(index.getType(), index.getLoc()));
      }
    OpBuilder inner = OpBuilder::atBlockEnd(pieceBody);
    auto operandsReady = [&](Operation *op) {
      for (Value v : op->getOperands()) {
        if (map.contains(v))
          continue;
        Operation *def = v.getDefiningOp();
        // Not yet mapped and not an argument: a constant, cloned here.
        if (def && isConstantLike(def))
          inner.clone(*def, map);
      }
    };
    for (size_t i = next; i < end; ++i) {
      operandsReady(ops[i]);
      inner.clone(*ops[i], map);
    }
    SmallVector<Value> yields;
    if (isLast) {
      operandsReady(yield);
      for (Value v : yield->getOperands())
        yields.push_back(map.lookup(v));
    } else {
      for (Value v : crossing[p])
        yields.push_back(map.lookup(v));
    }
    inner.create<YieldOp>(kernel.getLoc(), yields);
    if (isLast) {
      kernel->replaceAllUsesWith(piece->getResults());
    } else {
      for (auto [v, r] : llvm::zip(crossing[p], piece.getResults()))
        written[v] = r;
    }
    next = end;
  }
  kernel.erase();
  return true;
}

struct SplitKernelsPass
    : public strata::impl::SplitKernelsBase<SplitKernelsPass> {
  using SplitKernelsBase::SplitKernelsBase;
  void runOnOperation() override {
    if (maxOps < 1 || maxInputs < 1) {
      getOperation().emitError(
          "--strata-split-kernels: max-ops and max-inputs must be >= 1");
      return signalPassFailure();
    }
    SmallVector<KernelOp> kernels;
    getOperation().walk([&](KernelOp k) {
      if (!k.isScan()) // (a scan's body is its input's chain: not split)
        kernels.push_back(k);
    });
    for (KernelOp k : kernels)
      split(k, maxOps, maxInputs);
  }
};

} // namespace
