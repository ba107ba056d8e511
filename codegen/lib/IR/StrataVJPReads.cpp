//===- StrataVJPReads.cpp - what an op's VJP reads of the forward ---------===//
//
// Assumes: `op` implements VJPOpInterface. Guarantees: for each operand, the
// operands and result of `op` that the IR its VJP builds for that operand's
// gradient depends on, and no change to the IR (what the probe built is
// erased). Algorithm: build the VJP right after `op` on a placeholder
// gradient (a fill, no forward value), then walk each contribution's
// use-def chains back, stopping at `op`'s operands and result. The DSL asks
// this once per op (dsl/lib/SavedTensors.cpp) to know what PyTorch saves
// for backward: one place, the VJP itself, says what a gradient reads.
//
//===----------------------------------------------------------------------===//
#include "VJPBuilders.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace strata::ir;

namespace {
/// The bits of `VJPReads::reads` that `v` depends on, walking back from it
/// to `op`'s operands and result.
uint64_t readsOf(Value v, Operation *op) {
  uint64_t bits = 0;
  SmallVector<Value> work{v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (x.getDefiningOp() == op) {
      bits |= uint64_t(1) << VJPReads::kResultBit;
      continue;
    }
    bool operand = false;
    for (OpOperand &o : op->getOpOperands())
      if (o.get() == x) {
        bits |= uint64_t(1) << o.getOperandNumber();
        operand = true;
      }
    if (operand)
      continue;
    if (Operation *def = x.getDefiningOp())
      for (Value in : def->getOperands())
        work.push_back(in);
  }
  return bits;
}
} // namespace

FailureOr<VJPReads> strata::ir::vjpReads(Operation *op) {
  auto vjp = dyn_cast<VJPOpInterface>(op);
  if (!vjp || op->getNumOperands() >= VJPReads::kResultBit || !op->getBlock())
    return failure();
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  Operation *next = op->getNextNode();
  vjp::GradBuilder gb{b, op->getLoc()};
  SmallVector<Value> grads;
  for (Value r : op->getResults())
    grads.push_back(isDifferentiableType(r.getType()) &&
                            r.getType().isa<StridedTensorType>()
                        ? gb.fill(0.0, vjp::tensorOf(r).getElementType(),
                                  vjp::tensorOf(r).getShape())
                        : Value());
  SmallVector<std::pair<Value, Value>> out;
  LogicalResult built = vjp.buildVJP(b, grads, out);
  VJPReads reads;
  reads.differentiated.assign(op->getNumOperands(), false);
  reads.reads.assign(op->getNumOperands(), 0);
  if (succeeded(built))
    for (auto &[target, grad] : out)
      for (OpOperand &o : op->getOpOperands())
        if (o.get() == target) {
          reads.differentiated[o.getOperandNumber()] = true;
          reads.reads[o.getOperandNumber()] |= readsOf(grad, op);
        }
  // Erase what the probe built, last first (each op's users come after it).
  SmallVector<Operation *> probe;
  for (Operation *o = op->getNextNode(); o && o != next; o = o->getNextNode())
    probe.push_back(o);
  for (Operation *o : llvm::reverse(probe)) {
    o->dropAllUses();
    o->erase();
  }
  if (failed(built))
    return failure();
  return reads;
}
