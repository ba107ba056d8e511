//===- StrataScanOps.cpp - strata.scan and scan kernels: verifiers --------===//
//
// strata.scan (cumsum, cumprod) infers a contiguous result of its input's
// shape and element type; a scan kernel (`strata.kernel` with `scan_dim`)
// has one result over the space and nothing that would reorder or split
// the scanned loop.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace strata::ir;
namespace layout = strata::layout;

namespace {
bool isScanCombiner(StringRef c) { return c == "sum" || c == "prod"; }
} // namespace

LogicalResult ScanOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       ValueRange operands,
                                       DictionaryAttr attributes, RegionRange,
                                       SmallVectorImpl<Type> &inferred) {
  auto type = operands[0].getType().dyn_cast<StridedTensorType>();
  if (!type)
    return emitOptionalError(loc, "expected a strata tensor operand");
  auto dim = attributes.getAs<IntegerAttr>("dim");
  auto combiner = attributes.getAs<StringAttr>("combiner");
  if (!dim || !combiner)
    return emitOptionalError(loc, "strata.scan needs `dim` and `combiner`");
  if (!isScanCombiner(combiner.getValue()))
    return emitOptionalError(loc,
                             "scan: combiner must be \"sum\" or \"prod\""
                             ", got \"",
                             combiner.getValue(), "\"");
  // PyTorch's maybe_wrap_dim: a 0-d tensor takes dim 0 or -1.
  int64_t rank = std::max<int64_t>(type.getRank(), 1);
  auto wrapped = layout::wrapDim(dim.getInt(), rank, "scan");
  if (!wrapped)
    return emitOptionalError(loc, wrapped.error());
  Type element = type.getElementType();
  if (element.isInteger(1))
    return emitOptionalError(loc, "scan: \"cum", combiner.getValue(),
                             "_out_cpu\" not implemented for 'Bool'; cast "
                             "to i64 first");
  inferred.push_back(
      StridedTensorType::getContiguous(element, type.getShape()));
  return success();
}

int64_t ScanOp::getWrappedDim() {
  int64_t rank = getInput().getType().cast<StridedTensorType>().getRank();
  int64_t d = getDim();
  if (rank == 0)
    return 0;
  return d < 0 ? d + rank : d;
}

LogicalResult KernelOp::verifyScan() {
  int64_t rank = getSpace().size();
  int64_t d = *getScanDim();
  if (d < 0 || d >= rank)
    return emitOpError() << "scan_dim " << d << " out of range for a " << rank
                         << "-d space";
  if (!getScanCombiner() || !isScanCombiner(*getScanCombiner()))
    return emitOpError() << "a scan kernel needs scan_combiner \"sum\" or "
                            "\"prod\"";
  if (getNumResults() != 1 || getReduceDims() || getDest() ||
      getResultPerms() || getIndexed() || getIndexMap())
    return emitOpError() << "a scan kernel has one result and no `reduce`, "
                            "`into`, `result_perms`, `indexed` or "
                            "`index_map`";
  auto t = getResult(0).getType().cast<StridedTensorType>();
  if (t.getShape() != getSpace())
    return emitOpError() << "scan result has shape "
                         << layout::formatList(t.getShape())
                         << ", expected the space "
                         << layout::formatList(getSpace());
  if (t.getElementType().isInteger(1))
    return emitOpError() << "a scan kernel cannot produce i1";
  if (getLoopSizes() && getLoopSizes()->size() != getSpace().size())
    return emitOpError() << "a scan kernel's loops are its space";
  return success();
}
