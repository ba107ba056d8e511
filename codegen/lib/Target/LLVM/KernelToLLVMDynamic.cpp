//===- KernelToLLVMDynamic.cpp - dynamic kernels: sizes as arguments ------===//
//
// Assumes: the loop plan is made (planLoops, planCascade, planNonTemporal).
// Guarantees: a kernel of two loops or more (or of one loop reading or
//   writing at an offset other than 0) whose plan is plain (no tiles,
//   no non-temporal stores, no scan, no index_map) is dynamic: the
//   code reads its inner trip counts, the strides that are not 0 or +-1
//   and every operand's offset from the ABI's %dims (KernelToLLVM.h),
//   loaded once at the function's entry, so it is correct for every loop
//   nest of its layout class and one compiled function serves them all.
//   What stays a constant is the class, which is in kernelCodeKey: the
//   rank of the (coalesced) nest, which strides are 0 (a broadcast, a
//   register accumulator, an input read once), 1 or -1 (the unit-stride
//   innermost loop the vectorizer takes), sizes of 1, and an innermost
//   trip count below kDynamicInnerMin (a short row: a constant lets LLVM
//   unroll it whole). A cascade's f32 scratch rows are dense over the
//   loops inside its scratch loop at this call's sizes, in stack arrays of
//   kMaxScratch elements (planCascade's bound). Plan decisions that read sizes
//   (whether to tile, scratch rows, non-temporal stores) are in the key too, so
//   a size that changes the plan changes the kernel.
//   In every kernel (dynamic shapes on), the body's size values — float
//   constants marked kSizeValueAttrName, a mean's count — are read from the
//   end of %dims as their bits, and the key prints them without their value:
//   a mean over T divides by T loaded at run time, the same IEEE division
//   as by the constant, so one compiled kernel serves every T.
// Algorithm: planDynamic decides; loadDims loads the values; sizeValue and
//   strideValue (Emitter.h) hand out a loaded value or a constant;
//   emitConstant takes a size value's loaded value.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "strata/Runtime/Settings.h"

#include "mlir/IR/AsmState.h"

using namespace strata::codegen::detail;

void Emitter::planDynamic() {
  // A nest of one loop gains only where an operand's offset is not 0 (its
  // trip count is the ABI's [begin, end) already): the pieces of one
  // storage a program writes or reads at many offsets (10^4 pending
  // `x.narrow(0, i, 1).add_(1)`, the rows of a `stack`, the pieces of a
  // `cat`) are then one kernel, not one each. At offsets 0 it stays
  // static: loaded offsets cost LLVM's alias analysis (a 512-op chain's
  // kernels took 50% longer to compile, strata-bench-linear --only chain).
  bool on = strata::runtime::settings::dynamicShapes();
  bool offsets = llvm::any_of(nest.offsets, [](int64_t o) { return o != 0; });
  dynamic = on && !k.isScan() && !k.getIndexMap() && tiledDim < 0 && ntOp < 0 &&
            (nest.sizes.size() >= 2 || (nest.sizes.size() == 1 && offsets));
  // A size value is one load at entry in any kernel: the division by a
  // mean's count sits in whatever kernel consumes the sum, often one of
  // one loop (`x.mean(1).sum()`).
  sizeValueOps.clear();
  if (on)
    sizeValueOps = sizeValueConstants(k);
}

llvm::SmallVector<mlir::arith::ConstantOp>
strata::codegen::detail::sizeValueConstants(KernelOp k) {
  llvm::SmallVector<mlir::arith::ConstantOp> out;
  for (mlir::Operation &op : k.getBodyBlock())
    if (auto c = llvm::dyn_cast<mlir::arith::ConstantOp>(op))
      if (c->hasAttr(kSizeValueAttrName) &&
          (c.getType().isF32() || c.getType().isF64()))
        out.push_back(c);
  return out;
}

bool Emitter::staticSize(size_t d) const {
  size_t n = nest.sizes.size();
  return !dynamic || nest.sizes[d] == 1 ||
         (d + 1 == n && nest.sizes[d] < kDynamicInnerMin);
}

void Emitter::loadDims(Value *dims, llvm::SmallVectorImpl<Value *> &offsets) {
  size_t n = nest.sizes.size(), numOps = types.size();
  auto at = [&](size_t i) {
    auto *v = b.CreateLoad(
        b.getInt64Ty(), b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), dims, i));
    v->setMetadata(llvm::LLVMContext::MD_invariant_load,
                   llvm::MDNode::get(ctx, {}));
    return v;
  };
  // The size values: their bits, after the offsets.
  sizeValues.clear();
  for (size_t j = 0; j < sizeValueOps.size(); ++j) {
    Value *bits = at(n + numOps * n + numOps + j);
    mlir::arith::ConstantOp c = sizeValueOps[j];
    sizeValues[c.getOperation()] =
        c.getType().isF64()
            ? b.CreateBitCast(bits, b.getDoubleTy())
            : b.CreateBitCast(b.CreateTrunc(bits, b.getInt32Ty()),
                              b.getFloatTy());
  }
  offsets.clear();
  if (!dynamic) {
    for (size_t op = 0; op < numOps; ++op)
      offsets.push_back(b.getInt64(nest.offsets[op]));
    return;
  }
  dynSizes.assign(n, nullptr);
  for (size_t d = 1; d < n; ++d)
    if (!staticSize(d))
      dynSizes[d] = at(d);
  dynStrides.assign(numOps, llvm::SmallVector<Value *>(n, nullptr));
  for (size_t op = 0; op < numOps; ++op)
    for (size_t d = 0; d < n; ++d)
      if (!staticStride(nest.strides[op][d]))
        dynStrides[op][d] = at(n + op * n + d);
  for (size_t op = 0; op < numOps; ++op)
    offsets.push_back(at(n + numOps * n + op));
}

std::vector<int64_t> strata::codegen::detail::kernelDims(
    KernelOp k, const strata::ir::KernelOp::LoopNest &nest) {
  std::vector<int64_t> dims(nest.sizes);
  for (const auto &st : nest.strides)
    dims.insert(dims.end(), st.begin(), st.end());
  dims.insert(dims.end(), nest.offsets.begin(), nest.offsets.end());
  for (mlir::arith::ConstantOp c : sizeValueConstants(k)) {
    llvm::APInt bits =
        c.getValue().cast<mlir::FloatAttr>().getValue().bitcastToAPInt();
    dims.push_back(static_cast<int64_t>(bits.getZExtValue()));
  }
  return dims;
}

void Emitter::printNest(llvm::raw_ostream &os) {
  auto value = [&](int64_t v, bool isStatic) {
    if (isStatic)
      os << v;
    else
      os << "?";
  };
  size_t n = nest.sizes.size();
  os << "\ndynamic " << dynamic << " loops " << n << " inner sizes [";
  for (size_t d = 1; d < n; ++d) {
    os << (d > 1 ? ", " : "");
    value(nest.sizes[d], staticSize(d));
  }
  os << "]\nstrides";
  for (const auto &st : nest.strides) {
    os << " [";
    for (size_t d = 0; d < st.size(); ++d) {
      os << (d ? ", " : "");
      value(st[d], staticStride(st[d]));
    }
    os << "]";
  }
  os << "\noffsets [";
  for (size_t op = 0; op < nest.offsets.size(); ++op) {
    os << (op ? ", " : "");
    value(nest.offsets[op], !dynamic);
  }
  os << "]";
}

void Emitter::printBody(llvm::raw_ostream &os) {
  mlir::AsmState state(k, mlir::OpPrintingFlags().useLocalScope());
  mlir::Block &body = k.getBodyBlock();
  if (sizeValueOps.empty()) {
    body.print(os, state);
    return;
  }
  os << "arguments";
  for (mlir::BlockArgument a : body.getArguments()) {
    os << " ";
    a.printAsOperand(os, state);
    os << ": " << a.getType();
  }
  for (mlir::Operation &op : body) {
    os << "\n";
    auto c = llvm::dyn_cast<mlir::arith::ConstantOp>(op);
    if (c && llvm::is_contained(sizeValueOps, c)) {
      op.getResult(0).printAsOperand(os, state);
      os << " = size value : " << op.getResult(0).getType();
      continue;
    }
    op.print(os, state);
  }
}
