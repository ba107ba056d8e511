//===- IndexOps.cpp - the reference evaluator's gather and scatter --------===//
//
// strata.gather / scatter / scatter_add by their definition, one loop over
// the index (StrataIndexOps.td). An index outside the indexed dim is a
// located error: the oracle never clamps.
//
//===----------------------------------------------------------------------===//
#include "IndexOps.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace strata::ir;
using namespace strata::reference;

namespace {
int64_t wrap(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + std::max<int64_t>(rank, 1) : dim;
}

/// The index of `index` at `p` as a position along `dim` of a tensor of
/// `sizes`, or failure (with a diagnostic on `op`).
FailureOr<int64_t> position(Operation *op, const RefValue &index,
                            ArrayRef<int64_t> p, ArrayRef<int64_t> sizes,
                            int64_t dim) {
  double v = index.at(p);
  int64_t size = sizes.empty() ? 1 : sizes[dim];
  if (!(v >= 0 && v < static_cast<double>(size)))
    return op->emitError() << "reference evaluator: index "
                           << static_cast<int64_t>(v)
                           << " is out of bounds for dimension " << dim
                           << " with size " << size;
  return static_cast<int64_t>(v);
}
} // namespace

FailureOr<RefValue> strata::reference::evalGather(GatherOp op,
                                                  const RefValue &input,
                                                  const RefValue &index) {
  auto type = op.getType().cast<StridedTensorType>();
  int64_t dim = wrap(op.getDim(), input.layout.dim());
  std::vector<double> data;
  bool ok = true;
  forEachIndex(type.getShape(), [&](ArrayRef<int64_t> p) {
    if (!ok)
      return;
    auto at = position(op, index, p, input.layout.sizes, dim);
    if (failed(at)) {
      ok = false;
      return;
    }
    SmallVector<int64_t, 6> q(p.begin(), p.end());
    if (!q.empty())
      q[dim] = *at;
    data.push_back(input.at(q));
  });
  if (!ok)
    return failure();
  return RefValue::fresh(type.getElementType(), type.getShape(),
                         std::move(data));
}

FailureOr<RefValue>
strata::reference::evalScatter(Operation *op, const RefValue &input,
                               const RefValue &index, const RefValue &src,
                               int64_t dimAttr, bool accumulate) {
  auto type = op->getResult(0).getType().cast<StridedTensorType>();
  int64_t dim = wrap(dimAttr, input.layout.dim());
  std::vector<double> data = input.elements();
  auto strides = layout::contiguousStrides(input.layout.sizes);
  bool ok = true, value = src.layout.dim() == 0;
  forEachIndex(index.layout.sizes, [&](ArrayRef<int64_t> p) {
    if (!ok)
      return;
    auto at = position(op, index, p, input.layout.sizes, dim);
    if (failed(at)) {
      ok = false;
      return;
    }
    int64_t flat = 0;
    for (size_t d = 0; d < p.size(); ++d)
      flat += (static_cast<int64_t>(d) == dim ? *at : p[d]) * strides[d];
    double v = value ? src.at({}) : src.at(p);
    if (!accumulate)
      data[flat] = v;
    else if (type.getElementType().isInteger(1))
      data[flat] = (data[flat] != 0 || v != 0) ? 1 : 0;
    else // rounded per addition, as the kernels' element-typed adds
      data[flat] = roundToElementType(data[flat] + v, type.getElementType());
  });
  if (!ok)
    return failure();
  return RefValue::fresh(type.getElementType(), type.getShape(),
                         std::move(data));
}
