//===- IndexOps.cpp - the kernels of gather and scatter -----------------===//
//
// Assumes: verified strata.gather / scatter / scatter_add ops (types are
//   absolute layouts within their storage roots).
// Guarantees: each becomes kernels whose work is O(its output), with the
//   same values: gather is one kernel over the index's shape reading the
//   input through an `index_map` (the input viewed with stride 0 along the
//   dim, plus index * its stride there); scatter and scatter_add are a
//   copy of the input into a fresh contiguous tensor, then one kernel over
//   the index's shape `into` that copy whose store is indexed (and adds,
//   for scatter_add). The index op is not fused with its producers or
//   consumers: its input is read at data-dependent positions, so it must
//   exist in memory, and a kernel reading the result at other points than
//   its own would need it too.
//
//===----------------------------------------------------------------------===//
#include "Fuse.h"

#include "strata/IR/StrataDialect.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace strata::ir;

namespace {
StridedTensorType tensorType(Value v) {
  return v.getType().cast<StridedTensorType>();
}

/// `v` viewed over `space` with `strides` (a strided_view; layouts are
/// absolute, so a view of a view is a view of the root).
Value viewAs(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> space,
             ArrayRef<int64_t> strides, int64_t offset) {
  auto t = tensorType(v);
  auto type = StridedTensorType::get(v.getContext(), space, t.getElementType(),
                                     strides, offset);
  if (type == t)
    return v;
  return b.create<StridedViewOp>(loc, type, v);
}

/// A kernel over `space` reading `inputs` whose body yields its input
/// `yieldInput` unchanged.
KernelOp passThrough(OpBuilder &b, Location loc, ArrayRef<Type> results,
                     ArrayRef<int64_t> space, ArrayRef<Value> inputs,
                     unsigned yieldInput, Value dest = {}) {
  auto kernel = b.create<KernelOp>(loc, TypeRange(results), space,
                                   ValueRange(inputs), dest);
  Block *body = new Block;
  for (Value in : inputs)
    body->addArgument(tensorType(in).getElementType(), loc);
  kernel.getBody().push_back(body);
  OpBuilder inner(body, body->end());
  inner.create<YieldOp>(loc, ValueRange{body->getArgument(yieldInput)});
  return kernel;
}

int64_t wrapDim(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + std::max<int64_t>(rank, 1) : dim;
}
} // namespace

Value strata::fuse::fuseIndexOp(Operation *op) {
  if (!isa<GatherOp, ScatterOp, ScatterAddOp>(op))
    return {};
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value input = op->getOperand(0), index = op->getOperand(1);
  auto in = tensorType(input), idx = tensorType(index);
  int64_t rank = in.getRank();
  int64_t dim = wrapDim(op->getAttrOfType<IntegerAttr>("dim").getInt(), rank);
  ArrayRef<int64_t> space = idx.getShape();
  int64_t bound = rank ? in.getShape()[dim] : 1;

  if (isa<GatherOp>(op)) {
    SmallVector<int64_t> strides(in.getStrides());
    int64_t stride = rank ? strides[dim] : 0;
    if (rank)
      strides[dim] = 0;
    Value table = viewAs(b, loc, input, space, strides, in.getOffset());
    KernelOp k = passThrough(b, loc, {op->getResult(0).getType()}, space,
                             {index, table}, 1);
    k.setIndexMapAttr(b.getDenseI64ArrayAttr({1, 0, stride, bound, 0}));
    return k.getResult(0);
  }

  // A fresh contiguous copy of the input, then the indexed store into it.
  auto copyType =
      StridedTensorType::getContiguous(in.getElementType(), in.getShape());
  Value copy =
      passThrough(b, loc, {copyType}, in.getShape(), {input}, 0).getResult(0);
  SmallVector<int64_t> destStrides(copyType.getStrides());
  int64_t stride = rank ? destStrides[dim] : 0;
  if (rank)
    destStrides[dim] = 0;
  Value dest = viewAs(b, loc, copy, space, destStrides, 0);
  Value src = op->getOperand(2);
  auto s = tensorType(src);
  SmallVector<int64_t> srcStrides(s.getStrides());
  if (s.getRank() != rank) // a 0-d src: one value for every index
    srcStrides.assign(space.size(), 0);
  Value srcView = viewAs(b, loc, src, space, srcStrides, s.getOffset());
  auto storage = StorageType::get(b.getContext(), copyType.getNumElements(),
                                  in.getElementType());
  KernelOp k = passThrough(b, loc, {storage}, space, {index, srcView}, 1, dest);
  k.setIndexMapAttr(b.getDenseI64ArrayAttr(
      {2, 0, stride, bound, isa<ScatterAddOp>(op) ? 1 : 0}));
  return b.create<StridedViewOp>(loc, copyType, k.getResult(0));
}
