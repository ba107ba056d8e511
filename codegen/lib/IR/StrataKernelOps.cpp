//===- StrataKernelOps.cpp - strata.kernel: builder, verifier, loop nest --===//
//
// The kernel's loop nest is derived here once (space + operand layouts, or
// the coalesced loops) so that coalescing, code generation and the runtime
// agree on it.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace strata::ir;
namespace layout = strata::layout;

void KernelOp::build(OpBuilder &builder, OperationState &state,
                     TypeRange resultTypes, ArrayRef<int64_t> space,
                     ValueRange inputs, Value dest) {
  state.addTypes(resultTypes);
  state.addOperands(inputs);
  if (dest)
    state.addOperands(dest);
  state.addAttribute(getSpaceAttrName(state.name),
                     builder.getDenseI64ArrayAttr(space));
  state.addAttribute(getOperandSegmentSizesAttrName(state.name),
                     builder.getDenseI32ArrayAttr(
                         {static_cast<int32_t>(inputs.size()), dest ? 1 : 0}));
  state.addRegion();
}

SmallVector<int64_t> KernelOp::getReducedDims() {
  SmallVector<int64_t> dims;
  if (auto r = getReduceDims())
    dims.assign(r->begin(), r->end());
  return dims;
}

SmallVector<int64_t> KernelOp::getResultPerm(unsigned result) {
  int64_t rank = getSpace().size();
  SmallVector<int64_t> perm;
  if (auto p = getResultPerms())
    perm.assign(p->begin() + result * rank, p->begin() + (result + 1) * rank);
  else
    for (int64_t d = 0; d < rank; ++d)
      perm.push_back(d);
  return perm;
}

StringRef KernelOp::getCombiner(unsigned result) {
  auto c = getCombiners();
  if (!c || result >= c->size())
    return "";
  StringRef kind = (*c)[result].cast<StringAttr>().getValue();
  return kind == "none" ? "" : kind;
}

KernelOp::LoopNest KernelOp::getSpaceLoopNest() {
  LoopNest nest;
  ArrayRef<int64_t> space = getSpace();
  nest.sizes.assign(space.begin(), space.end());
  for (Value in : getInputs()) {
    auto t = in.getType().cast<StridedTensorType>();
    nest.strides.emplace_back(t.getStrides().begin(), t.getStrides().end());
    nest.offsets.push_back(t.getOffset());
  }
  // Results: row-major over their kept (non-reduced) dims in their own
  // order (result_perms, else the space's), 0 on the dims they reduce.
  SmallVector<int64_t> reduced = getReducedDims();
  for (auto [i, r] : llvm::enumerate(getResults())) {
    if (r.getType().isa<StorageType>()) {
      // The new version of dest's root: written through dest's layout.
      auto t = getDest().getType().cast<StridedTensorType>();
      nest.strides.emplace_back(t.getStrides().begin(), t.getStrides().end());
      nest.offsets.push_back(t.getOffset());
      continue;
    }
    bool reduces = !getCombiner(i).empty();
    std::vector<int64_t> strides(space.size(), 0);
    int64_t stride = 1;
    SmallVector<int64_t> perm = getResultPerm(i);
    for (int64_t d : llvm::reverse(perm)) {
      if (reduces && llvm::is_contained(reduced, d))
        continue;
      strides[d] = stride;
      stride *= space[d];
    }
    nest.strides.push_back(std::move(strides));
    nest.offsets.push_back(0);
  }
  if (Value dest = getDest()) {
    auto t = dest.getType().cast<StridedTensorType>();
    nest.strides.emplace_back(t.getStrides().begin(), t.getStrides().end());
    nest.offsets.push_back(t.getOffset());
  }
  return nest;
}

KernelOp::LoopNest KernelOp::getLoopNest() {
  LoopNest nest = getSpaceLoopNest();
  auto sizes = getLoopSizes();
  auto strides = getLoopStrides();
  if (!sizes || !strides)
    return nest;
  size_t n = sizes->size();
  nest.sizes.assign(sizes->begin(), sizes->end());
  for (size_t op = 0; op < nest.strides.size(); ++op)
    nest.strides[op].assign(strides->begin() + op * n,
                            strides->begin() + (op + 1) * n);
  return nest;
}

LogicalResult KernelOp::verify() {
  ArrayRef<int64_t> space = getSpace();
  int64_t rank = space.size();
  for (int64_t s : space)
    if (s < 0)
      return emitOpError() << "space sizes must be >= 0, got "
                           << layout::formatList(space);
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    auto t = in.getType().cast<StridedTensorType>();
    if (t.getShape() != space)
      return emitOpError() << "input #" << i << " has shape "
                           << layout::formatList(t.getShape())
                           << ", expected the space "
                           << layout::formatList(space)
                           << " (broadcast it with strata.strided_view)";
  }
  SmallVector<int64_t> reduced = getReducedDims();
  int64_t kept = 1, all = 1;
  for (int64_t d = 0; d < rank; ++d) {
    all *= space[d];
    if (!llvm::is_contained(reduced, d))
      kept *= space[d];
  }
  for (int64_t d : reduced)
    if (d < 0 || d >= rank)
      return emitOpError() << "reduce dim " << d << " out of range for a "
                           << rank << "-d space";
  if (getReduceDims().has_value() !=
      (getCombiners().has_value() && !getCombiners()->empty()))
    return emitOpError() << "`reduce` and `combiners` go together";
  if (auto c = getCombiners()) {
    if (c->size() != getNumResults())
      return emitOpError() << "needs one combiner per result, got " << c->size()
                           << " for " << getNumResults();
    for (Attribute a : *c) {
      StringRef s = a.cast<StringAttr>().getValue();
      if (s != "sum" && s != "prod" && s != "max" && s != "min" && s != "none")
        return emitOpError()
               << "combiner must be sum, prod, max, min or none, got " << s;
    }
  }
  if (auto perms = getResultPerms()) {
    if (getDest())
      return emitOpError() << "`result_perms` needs a kernel without `into`";
    if (perms->size() != getNumResults() * space.size())
      return emitOpError() << "`result_perms` needs " << space.size()
                           << " dims per result (" << getNumResults()
                           << " results), got " << perms->size();
    for (unsigned r = 0; r < getNumResults(); ++r) {
      SmallVector<int64_t> perm = getResultPerm(r), sorted = perm;
      llvm::sort(sorted);
      for (int64_t d = 0; d < rank; ++d)
        if (sorted[d] != d)
          return emitOpError() << "`result_perms` of result #" << r << " is "
                               << layout::formatList(perm)
                               << ", not a permutation of the space dims";
    }
  }
  if (Value dest = getDest()) {
    auto t = dest.getType().cast<StridedTensorType>();
    if (t.getShape() != space)
      return emitOpError() << "destination shape "
                           << layout::formatList(t.getShape())
                           << " differs from the space";
    if (getNumResults() != 1 || !getResult(0).getType().isa<StorageType>() ||
        getReduceDims())
      return emitOpError() << "a kernel `into` a destination has exactly one "
                              "storage result and no reduction";
    if (layout::hasInternalOverlap(t.getLayout()) && !getIndexMap())
      return emitOpError() << "destination has several elements at one "
                              "memory location (stride 0)";
  } else {
    for (auto [i, r] : llvm::enumerate(getResults())) {
      auto t = r.getType().dyn_cast<StridedTensorType>();
      if (!t)
        return emitOpError() << "result #" << i
                             << " is a storage but the kernel has no `into`";
      if (t !=
          StridedTensorType::getContiguous(t.getElementType(), t.getShape()))
        return emitOpError()
               << "result #" << i << " must be fresh and contiguous (offset 0)";
      bool reduces = !getCombiner(i).empty();
      int64_t expected = reduces ? kept : all;
      if (t.getNumElements() != expected)
        return emitOpError()
               << "result #" << i << " has " << t.getNumElements()
               << " elements, the space "
               << (reduces ? "(without reduced dims) has " : "has ")
               << expected;
    }
  }
  // The body: one scalar argument per input (+ indices), one yield per result.
  Block &body = getBodyBlock();
  unsigned numArgs = getInputs().size() + (getIndexed() ? rank : 0);
  if (body.getNumArguments() != numArgs)
    return emitOpError() << "body needs " << numArgs << " arguments, has "
                         << body.getNumArguments();
  for (auto [i, in] : llvm::enumerate(getInputs()))
    if (body.getArgument(i).getType() !=
        in.getType().cast<StridedTensorType>().getElementType())
      return emitOpError() << "body argument #" << i
                           << " must have the element type of input #" << i;
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "body must end with strata.yield";
  if (yield.getValues().size() != getNumResults())
    return emitOpError() << "yields " << yield.getValues().size()
                         << " values for " << getNumResults() << " results";
  for (auto [i, v] : llvm::enumerate(yield.getValues())) {
    Type r = getResult(i).getType();
    Type element = r.isa<StorageType>()
                       ? r.cast<StorageType>().getElementType()
                       : r.cast<StridedTensorType>().getElementType();
    if (v.getType() != element)
      return emitOpError() << "yield #" << i << " has type " << v.getType()
                           << ", result element type is " << element;
  }
  if (failed(verifyIndexMap(*this)))
    return failure();
  if (auto sizes = getLoopSizes()) {
    int64_t n = 1, m = 1;
    for (int64_t s : *sizes)
      n *= s;
    for (int64_t s : space)
      m *= s;
    if (n != m || !getLoopStrides() ||
        getLoopStrides()->size() != sizes->size() * getNumLoopOperands())
      return emitOpError() << "loop_sizes/loop_strides do not describe the "
                              "space";
  }
  if (isScan() || getScanCombiner() || getScanReverse() || getScanExclusive())
    return isScan() ? verifyScan()
                    : emitOpError() << "scan flags need `scan_dim`";
  return success();
}

bool strata::ir::isMatrixProduct(KernelOp kernel) {
  if (kernel.getInputs().size() != 2 || kernel.getNumResults() != 1 ||
      kernel.getDest() || kernel.getIndexed() ||
      kernel.getCombiner(0) != "sum" || kernel.getReducedDims().size() != 1)
    return false;
  auto type = kernel.getResult(0).getType().dyn_cast<StridedTensorType>();
  if (!type ||
      !(type.getElementType().isF32() || type.getElementType().isF64()))
    return false;
  for (mlir::Value in : kernel.getInputs())
    if (in.getType().cast<StridedTensorType>().getElementType() !=
        type.getElementType())
      return false;
  mlir::Block &body = kernel.getBodyBlock();
  if (body.getNumArguments() != 2 || body.getOperations().size() != 2)
    return false;
  auto mul = llvm::dyn_cast<mlir::arith::MulFOp>(body.front());
  auto yield = llvm::dyn_cast<YieldOp>(body.back());
  if (!mul || !yield || yield.getValues().size() != 1 ||
      yield.getValues()[0] != mul.getResult())
    return false;
  mlir::Value x = body.getArgument(0), y = body.getArgument(1);
  return (mul.getLhs() == x && mul.getRhs() == y) ||
         (mul.getLhs() == y && mul.getRhs() == x);
}
