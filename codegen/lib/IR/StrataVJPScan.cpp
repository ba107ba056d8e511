//===- StrataVJPScan.cpp - VJPs of strata.scan (cumsum, cumprod) ----------===//
//
// derivatives.yaml of PyTorch 1.13, as strata IR:
// - cumsum: the gradient's cumsum from the other end (a scan with
//   `reverse` flipped; `exclusive` stays).
// - cumprod: cumprod_backward's O(n) form (the one backward runs, grad
//   mode off), per line along the dim, with z1 its first zero: before z1
//   the reversed cumsum of output * grad (cut at z1) divided by the input;
//   at z1 the product of the elements before it times
//   sum_j grad_j * cumprod(input, between z1 and the next zero)_j; 0 after.
//   No branch on the values: masks from a scan of the zero count, so a
//   line without zeros gets PyTorch's reversed_cumsum(w) / input and
//   infinities and NaNs give PyTorch's values. A dim of size 1 (or one
//   element) passes the gradient through, as PyTorch.
//
//===----------------------------------------------------------------------===//
#include "VJPBuilders.h"

using namespace mlir;
using namespace strata::ir;
using namespace strata::ir::vjp;

Value vjp::scan(GradBuilder &gb, Value x, int64_t dim, StringRef combiner,
                bool reverse, bool exclusive) {
  return gb.b.create<ScanOp>(gb.loc, x, gb.b.getI64IntegerAttr(dim),
                             gb.b.getStringAttr(combiner),
                             reverse ? gb.b.getUnitAttr() : UnitAttr(),
                             exclusive ? gb.b.getUnitAttr() : UnitAttr());
}

namespace strata::ir::vjp {

LogicalResult rule(ScanOp op, GradBuilder &gb, ArrayRef<Value> g,
                   GradContributions &out) {
  Value x = op.getInput(), y = op.getResult();
  Value grad = g[0];
  // cumsum/cumprod(self, dtype=...) of a float self (the DSL casts self,
  // then scans, and marks the scan): PyTorch's backward converts the
  // gradient to self's dtype first and computes there (a cumprod to f32
  // of f64 values near 1e20 overflows in f32, not in f64), its gradient
  // going to self, not to the cast.
  if (op->hasAttr(kScanGradInSourceAttrName))
    if (auto cast = x.getDefiningOp<CastOp>();
        cast && tensorOf(cast.getInput()).getElementType().isa<FloatType>()) {
      x = cast.getInput();
      Type source = tensorOf(x).getElementType();
      grad = gb.cast(grad, source);
      y = gb.cast(y, source);
    }
  auto in = tensorOf(x);
  int64_t dim = op.getWrappedDim();
  if (op.getCombiner() == "sum") {
    out.push_back(
        {x, scan(gb, grad, dim, "sum", !op.getReverse(), op.getExclusive())});
    return success();
  }
  if (op.getReverse() || op.getExclusive())
    return op.emitError() << "the gradient of a reversed or exclusive "
                             "product scan is not implemented";
  if (in.getNumElements() <= 1 || in.getShape()[dim] == 1) {
    out.push_back({x, grad});
    return success();
  }
  Type e = in.getElementType();
  auto dims = gb.b.getDenseI64ArrayAttr({dim});
  Value zero = gb.fill(0.0, e), one = gb.fill(1.0, e);
  auto where = [&](Value c, Value a, Value b) -> Value {
    return gb.b.create<WhereOp>(gb.loc, c, a, b);
  };
  Value isZero = gb.b.create<EqOp>(gb.loc, x, zero);
  // Zeros up to and including each element: 0 before z1, 1 from z1 to z2.
  Value zeros = scan(gb, gb.maskOf(isZero, e), dim, "sum");
  Value before = gb.b.create<EqOp>(gb.loc, zeros, zero);
  Value oneZero = gb.b.create<EqOp>(gb.loc, zeros, one);
  Value first = gb.b.create<BitwiseAndOp>(gb.loc, oneZero, isZero);
  Value between = gb.b.create<BitwiseAndOp>(gb.loc, oneZero,
                                            gb.b.create<NeOp>(gb.loc, x, zero));
  // k < z1: reversed_cumsum(w masked to [0, z1)) / x.
  Value w = where(before, gb.mul(y, grad), zero);
  // (Divided by 1 at the zeros, where it is not selected: its derivative,
  // create_graph's second one, then reads no 0 / 0.)
  Value atBefore =
      gb.div(scan(gb, w, dim, "sum", /*reverse=*/true), where(isZero, one, x));
  // k = z1: prod(x[:z1]) * sum(grad[z1:z2] * cumprod(x[z1+1:z2])).
  Value c = scan(gb, where(between, x, one), dim, "prod");
  Value sum = gb.b.create<SumOp>(gb.loc, gb.mul(c, where(oneZero, grad, zero)),
                                 dims, gb.b.getUnitAttr());
  Value prefix = scan(gb, where(before, x, one), dim, "prod");
  Value atFirst = gb.mul(prefix, sum);
  out.push_back(
      {x, where(before, atBefore, where(first, atFirst, gb.fill(0.0, e)))});
  return success();
}

} // namespace strata::ir::vjp

void vjp::attachScanModels(MLIRContext &ctx) {
  ScanOp::attachInterface<Model<ScanOp>>(ctx);
}
