//===- Coalesce.cpp - reorder and merge kernel loops ----------------------===//
//
// Assumes: strata.kernel ops (from --strata-fuse) with static layouts.
// Guarantees: every kernel gets `loop_sizes` / `loop_strides` describing the
//   same set of (point, address) pairs as its space, with no size-1 loop
//   (unless the space has one point), the innermost loop unit-stride for the
//   first operand that tells loops apart, and no two neighbouring loops that
//   could be one. Results are unchanged up to the order of a reduction's
//   accumulation.
// Algorithm (PyTorch's TensorIterator::reorder_dimensions + coalesce):
//   1. drop size-1 dims; 2. insertion-sort dims innermost first, where dim a
//   goes inside dim b when, for the first operand (results first, then
//   inputs) whose |strides| on a and b are both non-zero and differ, a's is
//   smaller; 3. merge outer dim b into inner dim a when, for every operand,
//   stride[b] == size[a] * stride[a].
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataDialect.h"
#include "strata/Transforms/KernelPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace strata {
#define GEN_PASS_DEF_COALESCE
#include "strata/Transforms/KernelPasses.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace {

struct Loop {
  int64_t size;
  SmallVector<int64_t> strides; // one per operand
};

/// Loops innermost first, in TensorIterator's order.
SmallVector<Loop> coalesce(const KernelOp::LoopNest &nest,
                           ArrayRef<unsigned> priority) {
  SmallVector<Loop> loops;
  int64_t numel = 1;
  for (int64_t s : nest.sizes)
    numel *= s;
  for (int64_t d = static_cast<int64_t>(nest.sizes.size()) - 1; d >= 0; --d) {
    if (nest.sizes[d] == 1 && numel != 0)
      continue;
    Loop l{nest.sizes[d], {}};
    for (const auto &s : nest.strides)
      l.strides.push_back(s[d]);
    loops.push_back(std::move(l));
  }
  if (numel == 0) // nothing runs: one empty loop
    return {Loop{0, SmallVector<int64_t>(nest.strides.size(), 0)}};
  // 1 when `inner` should go outside `outer`, -1 when it is right, 0 unknown.
  auto shouldSwap = [&](const Loop &inner, const Loop &outer) {
    for (unsigned op : priority) {
      int64_t a = std::abs(inner.strides[op]), b = std::abs(outer.strides[op]);
      if (a == 0 || b == 0)
        continue;
      if (a < b)
        return -1;
      if (a > b)
        return 1;
    }
    return 0;
  };
  for (size_t i = 1; i < loops.size(); ++i) {
    size_t d1 = i;
    for (size_t d0 = i; d0-- > 0;) {
      int c = shouldSwap(loops[d0], loops[d1]);
      if (c > 0) {
        std::swap(loops[d0], loops[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  SmallVector<Loop> merged;
  for (Loop &l : loops) {
    if (!merged.empty()) {
      Loop &in = merged.back();
      bool ok = true;
      for (size_t op = 0; op < l.strides.size() && ok; ++op)
        ok = l.strides[op] == in.size * in.strides[op];
      if (ok) {
        in.size *= l.size;
        continue;
      }
    }
    merged.push_back(l);
  }
  if (merged.empty()) // a single point
    merged.push_back(Loop{1, SmallVector<int64_t>(nest.strides.size(), 0)});
  return merged;
}

struct CoalescePass : public strata::impl::CoalesceBase<CoalescePass> {
  void runOnOperation() override {
    getOperation().walk([](KernelOp kernel) {
      KernelOp::LoopNest nest = kernel.getSpaceLoopNest();
      // Indexed bodies read the space's own indices: keep the space.
      if (kernel.getIndexed() || kernel.isScan())
        return; // (a scan's emitters need its dim whole and in order)
      unsigned numInputs = kernel.getInputs().size();
      SmallVector<unsigned> priority;
      for (unsigned op = numInputs; op < nest.strides.size(); ++op)
        priority.push_back(op);
      for (unsigned op = 0; op < numInputs; ++op)
        priority.push_back(op);
      SmallVector<Loop> loops = coalesce(nest, priority);
      SmallVector<int64_t> sizes, strides;
      for (const Loop &l : llvm::reverse(loops))
        sizes.push_back(l.size);
      for (size_t op = 0; op < nest.strides.size(); ++op)
        for (const Loop &l : llvm::reverse(loops))
          strides.push_back(l.strides[op]);
      Builder b(kernel.getContext());
      kernel.setLoopSizesAttr(b.getDenseI64ArrayAttr(sizes));
      kernel.setLoopStridesAttr(b.getDenseI64ArrayAttr(strides));
    });
  }
};

} // namespace
