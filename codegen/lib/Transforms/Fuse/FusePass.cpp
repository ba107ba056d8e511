//===- FusePass.cpp - group compute ops into strata.kernel ops ------------===//
//
// Assumes: a func.func of strata ops (views may or may not be folded); every
//   type's layout is absolute within its storage root.
// Guarantees: afterwards the function holds only view ops, strided_views,
//   strata.kernel ops, func ops, and the return; every compute op and write
//   is inside (or is) a kernel. Results are unchanged: a kernel computes
//   exactly the values of the ops it replaces.
// Algorithm: an elementwise op is *inlined* into its consumer when its value
//   has exactly one use, by an elementwise op, a reduction or a write, over
//   the same shape (no broadcast of an intermediate, so nothing is computed
//   twice). Every other compute op is the root of a group: its kernel's body
//   is built by walking the operands back through inlined ops; anything else
//   becomes a kernel input, broadcast to the space by a strided_view (stride
//   0), except *generators*: a fill (any rank) or an arange, or a view of
//   one, is computed where it is read (a constant; the arange's formula at
//   the position the view reads, from the space's indices: the kernel
//   becomes `indexed`; scans, which take no indices, and kernels that would
//   lose their transposed tiles to it load an arange). A
//   generator gets a kernel of its own only if something still reads it
//   from memory (returned, a write's destination, a matmul operand). So a
//   value that is used several times, by a non-elementwise op, or returned
//   is written exactly once, and `arange(n).mul(2).sum()` is one kernel.
//   A result whose layout is not row-major (TensorIterator's, e.g. the
//   [1, 4] of `relu(x.t())`) is written in its storage order
//   (`result_perms`) and read through a strided_view with the op's type.
//   Then *sibling fusion* merges elementwise kernels that read the same
//   data: when kernel B's space is a permutation of kernel A's and, seen
//   through that permutation, B reads some (non-broadcast) input with the
//   same layout as A, the two become one kernel over A's space that reads
//   the shared inputs once and writes B's results in B's own order
//   (`result_perms`); equal scalar ops of the two bodies are computed once.
//   The merged kernel sits where B was; views of A's results between A and
//   B move after it, and kernels that depend on each other never merge.
//   (The gradient of `(x.t() * w)`-style expressions thus reads x and w once
//   and writes both gradients, each in its argument's layout.)
//
//
// Files: Groups.cpp (the groups and their kernel bodies), Siblings.cpp
// (sibling fusion), IndexOps.cpp (gather and scatter's kernels); Fuse.h is
// what they share.
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
#include "strata/Transforms/KernelPasses.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace strata {
#define GEN_PASS_DEF_FUSE
#include "strata/Transforms/KernelPasses.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;
using namespace strata::fuse;

namespace {

/// Erases the views of `v` (and theirs) that nothing reads.
void eraseDeadViews(Value v) {
  for (Operation *user : llvm::make_early_inc_range(v.getUsers())) {
    if (getViewSource(user) != v)
      continue;
    eraseDeadViews(user->getResult(0));
    if (user->use_empty())
      user->erase();
  }
}

struct FusePass : public strata::impl::FuseBase<FusePass> {
  using FuseBase::FuseBase;

  /// The f32 cast that is the only user of f64 mean `m` when
  /// --strata-widen-sums made the pair of an f32 mean (`m` reads a cast
  /// marked kCascadeAttrName); null otherwise.
  static CastOp narrowingCastOf(MeanOp m) {
    auto wide = m.getInput().getDefiningOp<CastOp>();
    if (!wide || !wide->hasAttr(strata::kCascadeAttrName) || !m->hasOneUse())
      return {};
    auto narrow = dyn_cast<CastOp>(*m->user_begin());
    if (!narrow || !tensorType(narrow.getResult()).getElementType().isF32())
      return {};
    return narrow;
  }

  /// mean as PyTorch's CPU mean computes it: sum(x), then one division by
  /// the count in the mean's dtype (summing x / n rounds otherwise: the
  /// f64 mean of six ones was 1 - 2^-53, and pow of a negative base by it
  /// NaN). An f32 mean (widened: cast(f64 mean(cast x))) rounds its f64 sum
  /// to f32 and divides that by the count as an f32, as PyTorch divides its
  /// f32 sum (2^24 + 1 elements: by 2^24). The division fuses into the
  /// reduction's consumers; an empty mean is 0 / 0 = NaN. The count is
  /// marked a size value (kSizeValueAttrName): the LLVM kernels that
  /// divide by it read it at run time, so a new size of the reduced dims
  /// compiles nothing.
  void splitMeans() {
    SmallVector<MeanOp> means;
    getOperation().walk([&](MeanOp m) {
      if (!m->getParentOfType<KernelOp>())
        means.push_back(m);
    });
    for (MeanOp m : means) {
      auto in = tensorType(m.getInput());
      int64_t rank = in.getRank();
      SmallVector<bool> reduced(rank, m.getDims().empty());
      for (int64_t d : m.getDims())
        if (rank > 0)
          reduced[d < 0 ? d + rank : d] = true;
      int64_t count = 1;
      for (int64_t d = 0; d < rank; ++d)
        if (reduced[d])
          count *= in.getShape()[d];
      OpBuilder b(m);
      Location loc = m.getLoc();
      Operation *replaced = m; // (or its narrowing cast)
      SmallVector<Operation *> made;
      Value sum = b.create<SumOp>(loc, m.getInput(), m.getDimsAttr(),
                                  m.getKeepdimAttr());
      made.push_back(sum.getDefiningOp());
      if (CastOp narrow = narrowingCastOf(m)) {
        sum = b.create<CastOp>(loc, narrow.getType(), sum);
        made.push_back(sum.getDefiningOp());
        replaced = narrow;
      }
      Type element = tensorType(sum).getElementType();
      auto n =
          b.create<FillOp>(loc, StridedTensorType::getContiguous(element, {}),
                           b.getF64FloatAttr(double(count)));
      n->setAttr(strata::kSizeValueAttrName, b.getUnitAttr());
      made.push_back(n);
      auto div = b.create<DivOp>(loc, sum, n);
      made.push_back(div);
      if (div.getType() != replaced->getResult(0).getType()) {
        // (not expected: keep the mean)
        for (Operation *op : llvm::reverse(made))
          op->erase();
        continue;
      }
      replaced->getResult(0).replaceAllUsesWith(div.getResult());
      if (replaced != m)
        replaced->erase();
      m.erase();
    }
  }

  void runOnOperation() override {
    splitMeans();
    SmallVector<Operation *> roots;
    getOperation().walk([&](Operation *op) {
      if (op->getDialect() && isa<StrataDialect>(op->getDialect()) &&
          !isa<KernelOp, YieldOp>(op) && !op->getParentOfType<KernelOp>() &&
          !isInlined(op) && !isGenerator(op))
        roots.push_back(op);
    });
    SmallVector<Operation *> replaced;
    for (Operation *op : roots) {
      if (Value v = fuseIndexOp(op)) { // IndexOps.cpp
        op->getResult(0).replaceAllUsesWith(v);
        replaced.push_back(op);
        continue;
      }
      KernelOp kernel = buildKernel(op);
      if (!kernel)
        continue;
      op->getResult(0).replaceAllUsesWith(resultValue(kernel, op));
      replaced.push_back(op);
    }
    // Erase the replaced ops and whatever only fed them, last user first.
    SmallVector<Operation *> all;
    getOperation().walk([&](Operation *op) {
      if (op->getDialect() && isa<StrataDialect>(op->getDialect()) &&
          !isa<KernelOp, YieldOp>(op) && !op->getParentOfType<KernelOp>())
        all.push_back(op);
    });
    for (Operation *op : llvm::reverse(all))
      if (op->use_empty() && (isElementwise(op) || isReduction(op) ||
                              isa<FillOp, ArangeOp, MatmulOp, ScanOp, WriteOp,
                                  CopyOp, ContiguousOp, ReshapeOp, FlattenOp,
                                  GatherOp, ScatterOp, ScatterAddOp>(op)))
        op->erase();
    // Generators whose values every reader computed go; those still read
    // from memory (returned, a write's destination, a matmul operand...)
    // get a kernel.
    SmallVector<Operation *> generators;
    getOperation().walk([&](Operation *op) {
      if (isGenerator(op))
        generators.push_back(op);
    });
    for (Operation *op : generators) {
      eraseDeadViews(op->getResult(0));
      if (op->use_empty()) {
        op->erase();
        continue;
      }
      KernelOp kernel = buildKernel(op);
      op->getResult(0).replaceAllUsesWith(kernel.getResult(0));
      op->erase();
    }
    if (siblings)
      for (Block &block : getOperation().getBody())
        fuseSiblings(block);
  }
};

} // namespace
