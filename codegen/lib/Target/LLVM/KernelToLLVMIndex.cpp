//===- KernelToLLVMIndex.cpp - indexed access of the kernel emitter -------===//
//
// A kernel's `index_map` (strata.gather / scatter / scatter_add, see
// StrataKernelOps.td): one operand is addressed at its strided position
// plus the clamped value of an index input times a stride. Such kernels
// take the scalar loops only (planLoops, planNonTemporal), so emitPoint
// (KernelToLLVM.cpp) is the one place that loads and stores them.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

using namespace strata::codegen::detail;

int Emitter::indexMapOperand() {
  auto map = k.getIndexMap();
  return map ? static_cast<int>((*map)[0]) : -1;
}

Value *Emitter::indexedPosition(Value *position, llvm::ArrayRef<Value *> args) {
  auto map = *k.getIndexMap();
  int64_t stride = map[2], bound = map[3];
  Value *i = args[map[1]];
  // Clamped into [0, bound): an index the DSL did not check (textual IR)
  // never addresses memory outside the operand.
  Value *zero = b.getInt64(0),
        *last = b.getInt64(std::max<int64_t>(bound - 1, 0));
  i = b.CreateSelect(b.CreateICmpSLT(i, zero), zero, i);
  i = b.CreateSelect(b.CreateICmpSGT(i, last), last, i);
  return b.CreateAdd(position, b.CreateMul(i, b.getInt64(stride)));
}

void Emitter::storeIndexed(unsigned op, Value *position,
                           llvm::ArrayRef<Value *> args, Value *v) {
  Value *at = indexedPosition(position, args);
  if ((*k.getIndexMap())[4]) {
    Value *old = load(op, at);
    if (v->getType()->isFloatingPointTy())
      v = b.CreateFAdd(old, v);
    else if (v->getType()->isIntegerTy(1))
      v = b.CreateOr(old, v); // bool scatter_add: logical or, as PyTorch
    else
      v = b.CreateAdd(old, v);
  }
  store(op, at, v);
}
