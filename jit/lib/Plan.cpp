//===- Plan.cpp - a function as steps over buffer slots, any backend ------===//
//
// Plan.h. Builds the slots and steps every backend runs; the backend's
// KernelCompiler compiles each kernel once, here.
//
//===----------------------------------------------------------------------===//
#include "Plan.h"

#include "strata/Layout/LayoutAlgebra.h"

#include "llvm/Support/raw_ostream.h"

using namespace strata::jit;
using namespace strata::jit::detail;
using namespace strata::ir;

DType strata::jit::detail::dtypeOf(mlir::Type t) {
  return elementDType(t).value_or(DType::I64);
}

bool Plan::fail(mlir::Operation *op, const std::string &message) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getLoc() << ": " << message;
  error = os.str();
  return false;
}

int Plan::slotOf(mlir::Value v) const {
  auto it = slots.find(getStorageRoot(v));
  return it == slots.end() ? -1 : static_cast<int>(it->second);
}

bool Plan::addKernel(KernelOp kernel, const KernelCompiler &compile) {
  Step step;
  for (mlir::Value in : kernel.getInputs()) {
    int slot = slotOf(in);
    if (slot < 0)
      return fail(kernel, "kernel input has no buffer");
    step.inputSlots.push_back(slot);
  }
  if (mlir::Value dest = kernel.getDest()) {
    // Reading the old buffer with the dest's own layout is elementwise safe
    // in place; another layout must address a disjoint index range.
    auto destType = dest.getType().cast<StridedTensorType>();
    step.inPlace = true;
    for (mlir::Value in : kernel.getInputs()) {
      if (slotOf(in) != slotOf(dest) || in.getType() == dest.getType())
        continue;
      auto inType = in.getType().cast<StridedTensorType>();
      if (inType.getNumElements() == 0 || destType.getNumElements() == 0)
        continue;
      auto a = strata::layout::indexRange(inType.getLayout());
      auto b = strata::layout::indexRange(destType.getLayout());
      if (!(a.second < b.first || b.second < a.first))
        step.inPlace = false;
    }
  }
  for (auto [r, result] : llvm::enumerate(kernel.getResults())) {
    ResultSpec spec;
    spec.slot = numSlots++;
    if (result.getType().isa<StorageType>()) {
      if (slotOf(kernel.getDest()) < 0)
        return fail(kernel, "destination has no buffer");
      spec.isStorage = true;
      spec.dtype = dtypeOf(result.getType());
      spec.elements = 0;
    } else {
      auto t = result.getType().cast<StridedTensorType>();
      spec.isStorage = false;
      spec.dtype = dtypeOf(t.getElementType());
      spec.elements = t.getNumElements();
      spec.sizes.assign(t.getShape().begin(), t.getShape().end());
      spec.strides.assign(t.getStrides().begin(), t.getStrides().end());
      spec.combiner = kernel.getCombiner(r).str();
    }
    step.results.push_back(std::move(spec));
  }
  KernelOp::LoopNest nest = kernel.getLoopNest();
  step.noPoints = llvm::is_contained(nest.sizes, 0);
  if (mlir::Value dest = kernel.getDest())
    step.destSlot = slotOf(dest);
  std::string compileError;
  if (!compile(kernel, step, *this, compileError))
    return fail(kernel, compileError);
  // Results become slots only now, so a kernel never reads its own results.
  for (auto [r, result] : llvm::enumerate(kernel.getResults()))
    slots[result] = step.results[r].slot;
  steps.push_back(std::move(step));
  ++numKernels;
  return true;
}

/// Keeps `inPlace` only on writes whose dest slot no later step uses.
void Plan::markDeadWrites() {
  std::vector<int> lastUse(numSlots, -1);
  for (auto [i, step] : llvm::enumerate(steps)) {
    for (unsigned slot : step.inputSlots)
      lastUse[slot] = i;
    if (step.destSlot >= 0)
      lastUse[step.destSlot] = i;
    for (const Step::Returned &r : step.returned)
      lastUse[r.slot] = i;
  }
  for (auto [i, step] : llvm::enumerate(steps))
    if (step.destSlot >= 0 && lastUse[step.destSlot] != static_cast<int>(i))
      step.inPlace = false;
}

void Plan::build(mlir::func::FuncOp func, const KernelCompiler &compile) {
  for (mlir::BlockArgument arg : func.getArguments()) {
    args.push_back({dtypeOf(arg.getType()), getRootStorageSize(arg)});
    slots[arg] = numSlots++;
  }
  for (mlir::Operation &op : func.getBody().front()) {
    if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
      if (!addKernel(kernel, compile))
        break;
      continue;
    }
    if (getViewSource(&op))
      continue;
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      Step step;
      step.isReturn = true;
      for (mlir::Value v : ret.getOperands()) {
        int slot = slotOf(v);
        if (slot < 0) {
          fail(&op, "returned value has no buffer");
          break;
        }
        Step::Returned out{static_cast<unsigned>(slot), true, {}, {}, 0};
        if (auto t = v.getType().dyn_cast<StridedTensorType>()) {
          out.isStorage = false;
          out.sizes.assign(t.getShape().begin(), t.getShape().end());
          out.strides.assign(t.getStrides().begin(), t.getStrides().end());
          out.offset = t.getOffset();
        }
        step.returned.push_back(std::move(out));
      }
      if (!error.empty())
        break;
      steps.push_back(std::move(step));
      markDeadWrites();
      slots.shrink_and_clear(); // (only build() needs the function's values)
      return;
    }
    fail(&op, "'" + op.getName().getStringRef().str() +
                  "' cannot run: run the strata pipeline and --strata-fuse "
                  "first");
    break;
  }
  if (error.empty())
    error = "function has no return";
  slots.shrink_and_clear();
}

std::string Plan::checkArguments(const std::vector<JitValue> &values) const {
  if (values.size() != args.size())
    return "expected " + std::to_string(args.size()) + " arguments, got " +
           std::to_string(values.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const JitValue &value = values[i];
    if (args[i].dtype != value.dtype || !value.buffer ||
        value.storageElements() < args[i].need)
      return "argument #" + std::to_string(i) + ": expected " +
             std::to_string(args[i].need) + " elements of " +
             dtypeName(args[i].dtype) + ", got " +
             std::to_string(value.storageElements()) + " of " +
             dtypeName(value.dtype);
  }
  return "";
}
