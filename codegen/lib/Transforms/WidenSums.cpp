//===- WidenSums.cpp - accumulate f32 sums and means in f64 ---------------===//
//
// Assumes: compute ops before --strata-fuse.
// Guarantees: no f32 sum or mean is left; each became cast(f64 op(cast(x)))
//   with the same shape, dims and keepdim, so results differ only by being
//   rounded once instead of once per addition.
// Algorithm: one walk collecting the ops, then a local rewrite of each. The
//   widening cast carries kCascadeAttrName, so the emitters may add f32
//   partials of bounded runs into the f64 accumulator (cascade summation:
//   f32 vector speed, about f64 accuracy).
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataDialect.h"
#include "strata/Transforms/KernelPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace strata {
#define GEN_PASS_DEF_WIDENSUMS
#include "strata/Transforms/KernelPasses.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace {
StridedTensorType tensorType(Value v) {
  return v.getType().cast<StridedTensorType>();
}

struct WidenSumsPass : public strata::impl::WidenSumsBase<WidenSumsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> sums;
    getOperation().walk([&](Operation *op) {
      if (isa<SumOp, MeanOp>(op) &&
          tensorType(op->getResult(0)).getElementType().isF32())
        sums.push_back(op);
    });
    for (Operation *op : sums) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Type f64 = b.getF64Type();
      StridedTensorType in = tensorType(op->getOperand(0));
      StridedTensorType result = tensorType(op->getResult(0));
      auto widen =
          b.create<CastOp>(loc, preserveFormatType(in, f64), op->getOperand(0));
      widen->setAttr(strata::kCascadeAttrName, b.getUnitAttr());
      Value wideIn = widen;
      Operation *wide = b.clone(*op);
      wide->setOperand(0, wideIn);
      wide->getResult(0).setType(
          StridedTensorType::getContiguous(f64, result.getShape()));
      Value narrow = b.create<CastOp>(loc, result, wide->getResult(0));
      op->getResult(0).replaceAllUsesWith(narrow);
      op->erase();
    }
  }
};
} // namespace
