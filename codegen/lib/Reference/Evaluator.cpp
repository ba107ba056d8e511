//===- Evaluator.cpp - the reference evaluator of strata IR ---------------===//
//
// Every op is evaluated by the most direct loop over its result's index
// space. Views never copy: they pair the operand's buffer with the layout of
// their result type, so the evaluator checks the layout algebra's layouts
// rather than recomputing them. Element addressing is done here from first
// principles (offset + sum of index * stride), not through the algebra, so
// that the oracle does not share its bugs. Its inputs are Inputs.cpp's, its
// printing Format.cpp's.
//
//===----------------------------------------------------------------------===//
#include "strata/Reference/Evaluator.h"

#include "Checked.h"
#include "IndexOps.h"

#include "strata/IR/StrataDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace strata::ir;
using namespace strata::reference;
namespace layout = strata::layout;

namespace {
using Index = SmallVector<int64_t, 6>;

int64_t storageIndex(const layout::Layout &l, ArrayRef<int64_t> index) {
  int64_t at = l.offset;
  for (size_t k = 0; k < index.size(); ++k)
    at += index[k] * l.strides[k];
  return at;
}

/// The element of `v` that broadcasting maps the result index `out` to:
/// trailing dims aligned, size-1 dims read at 0.
double readBroadcast(const RefValue &v, ArrayRef<int64_t> out) {
  size_t rank = v.layout.sizes.size(), lead = out.size() - rank;
  Index index(rank);
  for (size_t k = 0; k < rank; ++k)
    index[k] = v.layout.sizes[k] == 1 ? 0 : out[lead + k];
  return v.at(index);
}

/// A fill's value as its element type holds it: an integer value rounded
/// once into a float type (as the compiled kernels and PyTorch round it).
double fillValue(FillOp o, Type element) {
  auto i = o.getValue().dyn_cast<IntegerAttr>();
  auto f = element.dyn_cast<FloatType>();
  if (!i || !f)
    return o.getValueAsDouble();
  APFloat v(f.getFloatSemantics());
  v.convertFromAPInt(i.getValue(), /*IsSigned=*/true,
                     APFloat::rmNearestTiesToEven);
  bool lost = false;
  v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return v.convertToDouble();
}

// Types come from users: sizes and strides may be huge, so every product
// and sum on them is checked (signed overflow is undefined behaviour).

/// Fails unless every element `l` addresses lies inside a buffer of `size`.
LogicalResult checkInBuffer(Operation *op, const layout::Layout &l,
                            int64_t size, StringRef what) {
  if (checkedNumel(l.sizes) == 0)
    return success();
  auto range = checkedRange(l);
  if (!range)
    return op->emitError() << "reference evaluator: " << what
                           << " addresses storage indices beyond int64";
  auto [lo, hi] = *range;
  if (lo >= 0 && hi < size)
    return success();
  return op->emitError() << "reference evaluator: " << what
                         << " addresses storage indices [" << lo << ", " << hi
                         << "], outside its root of " << size << " elements";
}

/// Fails for a tensor value of more than kMaxElements elements.
LogicalResult checkSize(Operation *op, Type type) {
  auto tensor = type.dyn_cast<StridedTensorType>();
  if (!tensor)
    return success();
  std::optional<int64_t> n = checkedNumel(tensor.getShape());
  if (n && *n <= kMaxElements)
    return success();
  return op->emitError() << "reference evaluator: a tensor of shape "
                         << layout::formatList(tensor.getShape())
                         << " has more elements than its limit of "
                         << kMaxElements;
}

StridedTensorType tensorType(Value v) {
  return v.getType().dyn_cast<StridedTensorType>();
}

/// NaN-propagating max/min, as torch.maximum/amax.
double nanMax(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
double nanMin(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

enum class ReduceKind { Sum, Mean, Max, Min, Prod };

class Evaluator {
public:
  FailureOr<std::vector<RefValue>> run(func::FuncOp func,
                                       ArrayRef<RefValue> args);

private:
  LogicalResult eval(Operation *op);
  const RefValue &get(Value v) { return values.find(v)->second; }
  LogicalResult set(Value v, RefValue r) {
    values[v] = std::move(r);
    return success();
  }

  LogicalResult view(Operation *op, Value source);
  LogicalResult copy(Value input, Value result);
  LogicalResult elementwise(ElementwiseOpInterface op);
  LogicalResult reduce(Operation *op, ReduceKind kind, ArrayRef<int64_t> dims);
  LogicalResult matmul(MatmulOp op);
  LogicalResult scan(ScanOp op);
  LogicalResult write(WriteOp op);

  DenseMap<Value, RefValue> values;
  std::vector<RefValue> results;
};
} // namespace

//===--- RefValue ---------------------------------------------------------===//

double RefValue::at(ArrayRef<int64_t> index) const {
  return buffer->data[storageIndex(layout, index)];
}

std::vector<double> RefValue::elements() const {
  std::vector<double> out;
  out.reserve(numel());
  forEachIndex(layout.sizes,
               [&](ArrayRef<int64_t> i) { out.push_back(at(i)); });
  return out;
}

RefValue RefValue::storage(Type elementType, std::vector<double> data) {
  for (double &x : data)
    x = roundToElementType(x, elementType);
  int64_t size = static_cast<int64_t>(data.size());
  return {std::make_shared<Buffer>(Buffer{std::move(data), elementType}),
          layout::Layout{{size}, {1}, 0}, elementType, /*isStorage=*/true};
}

RefValue RefValue::fresh(Type elementType, ArrayRef<int64_t> shape,
                         std::vector<double> rowMajor) {
  RefValue v = storage(elementType, std::move(rowMajor));
  v.layout = layout::contiguous(shape, 0);
  v.isStorage = false;
  return v;
}

RefValue RefValue::freshLaidOut(Type elementType, const layout::Layout &l,
                                std::vector<double> rowMajor) {
  if (l == layout::contiguous(l.sizes, 0))
    return fresh(elementType, l.sizes, std::move(rowMajor));
  std::vector<double> data(layout::requiredStorageSize(l), 0.0);
  std::vector<int64_t> at = layout::storageIndices(l);
  for (size_t i = 0; i < at.size(); ++i)
    data[at[i]] = rowMajor[i];
  RefValue v = storage(elementType, std::move(data));
  v.layout = l;
  v.isStorage = false;
  return v;
}

double strata::reference::roundToElementType(double v, Type elementType) {
  if (elementType.isF32())
    return static_cast<double>(static_cast<float>(v));
  if (elementType.isInteger(1))
    return v != 0 ? 1 : 0;
  if (!elementType.isa<IntegerType>())
    return v;
  if (std::isnan(v))
    return 0;
  // Saturate before converting: out-of-range double -> int64 is UB in C++.
  double t = std::trunc(v);
  int64_t i = t >= 0x1p63   ? std::numeric_limits<int64_t>::max()
              : t < -0x1p63 ? std::numeric_limits<int64_t>::min()
                            : static_cast<int64_t>(t);
  if (elementType.getIntOrFloatBitWidth() == 32)
    i = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(i)));
  return static_cast<double>(i);
}

//===--- Evaluation -------------------------------------------------------===//

FailureOr<std::vector<RefValue>> Evaluator::run(func::FuncOp func,
                                                ArrayRef<RefValue> args) {
  if (func.isExternal())
    return func.emitError("reference evaluator: function has no body");
  if (!func.getBody().hasOneBlock())
    return func.emitError(
        "reference evaluator: only single-block functions are supported");
  Block &body = func.getBody().front();
  if (args.size() != body.getNumArguments())
    return func.emitError()
           << "reference evaluator: expected " << body.getNumArguments()
           << " arguments, got " << args.size();
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    const RefValue &given = args[i];
    Type type = arg.getType();
    bool ok = given.buffer && given.elementType &&
              given.buffer->elementType == given.elementType;
    if (auto s = type.dyn_cast<StorageType>())
      ok = ok && given.isStorage && given.elementType == s.getElementType() &&
           static_cast<int64_t>(given.buffer->data.size()) == s.getSize();
    else if (auto t = type.dyn_cast<StridedTensorType>())
      ok = ok && !given.isStorage && given.elementType == t.getElementType() &&
           given.layout == t.getLayout();
    else
      ok = false;
    if (!ok)
      return func.emitError() << "reference evaluator: argument " << i
                              << " does not match its type " << type;
    if (failed(checkSize(func, type)))
      return failure();
    if (!given.isStorage &&
        failed(checkInBuffer(func, given.layout, given.buffer->data.size(),
                             "argument " + std::to_string(i))))
      return failure();
    (void)set(arg, given);
  }
  for (Operation &op : body)
    if (failed(eval(&op)))
      return failure();
  return results;
}

LogicalResult Evaluator::eval(Operation *op) {
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    for (Value v : ret.getOperands())
      results.push_back(get(v));
    return success();
  }
  for (Type type : op->getResultTypes())
    if (failed(checkSize(op, type)))
      return failure();
  if (op->getDialect() && isa<StrataDialect>(op->getDialect()))
    if (Value source = getViewSource(op))
      return view(op, source);

  return TypeSwitch<Operation *, LogicalResult>(op)
      // reshape/flatten/contiguous reach here only when they copy.
      .Case<ReshapeOp, FlattenOp, ContiguousOp, CopyOp>(
          [&](auto o) { return copy(o.getInput(), o.getResult()); })
      // The scalar function of each elementwise op, on its operands'
      // elements (broadcast); the result is rounded to its dtype on store.
      .Case([&](ElementwiseOpInterface o) { return elementwise(o); })
      .Case([&](SumOp o) { return reduce(o, ReduceKind::Sum, o.getDims()); })
      .Case([&](MeanOp o) { return reduce(o, ReduceKind::Mean, o.getDims()); })
      .Case([&](AmaxOp o) { return reduce(o, ReduceKind::Max, o.getDims()); })
      .Case([&](AminOp o) { return reduce(o, ReduceKind::Min, o.getDims()); })
      .Case([&](ProdOp o) { return reduce(o, ReduceKind::Prod, o.getDims()); })
      .Case([&](MatmulOp o) { return matmul(o); })
      .Case([&](ScanOp o) { return scan(o); })
      .Case([&](FillOp o) {
        auto type = o.getType();
        std::vector<double> data(type.getNumElements(),
                                 fillValue(o, type.getElementType()));
        return set(o, RefValue::fresh(type.getElementType(), type.getShape(),
                                      std::move(data)));
      })
      .Case([&](ArangeOp o) {
        auto type = o.getType();
        double start = o.getStartAsDouble(), step = o.getStepAsDouble();
        std::vector<double> data;
        for (int64_t i = 0; i < type.getNumElements(); ++i)
          data.push_back(start + static_cast<double>(i) * step);
        return set(o, RefValue::fresh(type.getElementType(), type.getShape(),
                                      std::move(data)));
      })
      .Case([&](WriteOp o) { return write(o); })
      // The index ops (IndexOps.cpp).
      .Case([&](GatherOp o) -> LogicalResult {
        auto r = evalGather(o, get(o.getInput()), get(o.getIndex()));
        return failed(r) ? failure() : set(o, std::move(*r));
      })
      .Case<ScatterOp, ScatterAddOp>([&](auto o) -> LogicalResult {
        auto r = evalScatter(o, get(o.getInput()), get(o.getIndex()),
                             get(o.getSrc()), o.getDim(),
                             std::is_same_v<decltype(o), ScatterAddOp>);
        return failed(r) ? failure() : set(o, std::move(*r));
      })
      .Default([&](Operation *other) {
        return other->emitError() << "reference evaluator: unsupported op '"
                                  << other->getName() << "'";
      });
}

LogicalResult Evaluator::view(Operation *op, Value source) {
  const RefValue &in = get(source);
  RefValue out{in.buffer, tensorType(op->getResult(0)).getLayout(),
               in.elementType, /*isStorage=*/false};
  if (failed(checkInBuffer(op, out.layout, in.buffer->data.size(), "view")))
    return failure();
  return set(op->getResult(0), std::move(out));
}

LogicalResult Evaluator::copy(Value input, Value result) {
  const RefValue &in = get(input);
  return set(result, RefValue::freshLaidOut(in.elementType,
                                            tensorType(result).getLayout(),
                                            in.elements()));
}

LogicalResult Evaluator::elementwise(ElementwiseOpInterface iface) {
  Operation *op = iface;
  auto type = tensorType(op->getResult(0));
  SmallVector<const RefValue *> in;
  for (Value v : op->getOperands())
    in.push_back(&get(v));
  std::vector<double> data;
  SmallVector<double, 3> x(in.size());
  forEachIndex(type.getShape(), [&](ArrayRef<int64_t> index) {
    for (size_t k = 0; k < in.size(); ++k)
      x[k] = readBroadcast(*in[k], index);
    data.push_back(iface.evalScalar(x));
  });
  return set(op->getResult(0),
             RefValue::freshLaidOut(type.getElementType(), type.getLayout(),
                                    std::move(data)));
}

LogicalResult Evaluator::reduce(Operation *op, ReduceKind kind,
                                ArrayRef<int64_t> dims) {
  const RefValue &in = get(op->getOperand(0));
  auto type = tensorType(op->getResult(0));
  int64_t rank = in.layout.dim();
  // Which dims are reduced (negative dims wrap); none listed means all.
  std::vector<bool> reduced(rank, dims.empty());
  for (int64_t d : dims) {
    int64_t wrapped = d < 0 ? d + rank : d;
    if (rank > 0 && (wrapped < 0 || wrapped >= rank))
      return op->emitError() << "reference evaluator: reduction dim " << d
                             << " out of range for rank " << rank;
    if (rank > 0)
      reduced[wrapped] = true;
  }
  layout::Shape kept = in.layout.sizes;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d]) {
      count *= kept[d];
      kept[d] = 1;
    }
  // The keepdim shape has the result's row-major order with or without
  // keepdim, so accumulators are indexed by the row-major position in it.
  std::vector<double> acc(*checkedNumel(kept),
                          kind == ReduceKind::Max    ? -INFINITY
                          : kind == ReduceKind::Min  ? INFINITY
                          : kind == ReduceKind::Prod ? 1.0
                                                     : 0.0);
  layout::Shape keptStrides = layout::contiguousStrides(kept);
  forEachIndex(in.layout.sizes, [&](ArrayRef<int64_t> index) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        at += index[d] * keptStrides[d];
    double x = in.at(index);
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      acc[at] += x;
      break;
    case ReduceKind::Max:
      acc[at] = nanMax(acc[at], x);
      break;
    case ReduceKind::Prod:
      acc[at] *= x;
      break;
    case ReduceKind::Min:
      acc[at] = nanMin(acc[at], x);
      break;
    }
  });
  if (kind == ReduceKind::Mean)
    for (double &a : acc)
      a /= static_cast<double>(count); // 0 / 0 = nan, as torch.mean of empty.
  return set(
      op->getResult(0),
      RefValue::fresh(type.getElementType(), type.getShape(), std::move(acc)));
}

/// cumsum/cumprod: a running combination along the dim in double, each
/// element rounded to the result dtype on store (PyTorch's CPU acc_type).
LogicalResult Evaluator::scan(ScanOp op) {
  const RefValue &in = get(op.getInput());
  auto type = tensorType(op.getResult());
  int64_t rank = in.layout.dim(), dim = op.getWrappedDim();
  bool prod = op.getCombiner() == "prod";
  std::vector<double> out(type.getNumElements());
  layout::Shape strides = layout::contiguousStrides(in.layout.sizes);
  // Every line along `dim`: the indices with index[dim] == 0.
  layout::Shape lines = in.layout.sizes;
  int64_t n = rank ? lines[dim] : 1;
  if (rank)
    lines[dim] = n ? 1 : 0;
  forEachIndex(lines, [&](ArrayRef<int64_t> start) {
    Index index(start.begin(), start.end());
    double acc = prod ? 1.0 : 0.0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = op.getReverse() ? n - 1 - i : i;
      if (rank)
        index[dim] = k;
      double x = in.at(index);
      int64_t at = 0;
      for (int64_t d = 0; d < rank; ++d)
        at += index[d] * strides[d];
      if (op.getExclusive())
        out[at] = acc;
      acc = prod ? acc * x : acc + x;
      if (!op.getExclusive())
        out[at] = acc;
    }
  });
  return set(op.getResult(), RefValue::fresh(type.getElementType(),
                                             type.getShape(), std::move(out)));
}

LogicalResult Evaluator::matmul(MatmulOp op) {
  const RefValue &a = get(op.getLhs()), &b = get(op.getRhs());
  auto type = op.getType();
  // torch.matmul: a 1-D lhs is a row [1, k], a 1-D rhs a column [k, 1]; the
  // result drops those dims again. The "full" shape is batch + [n, m].
  bool lhsVector = a.layout.dim() == 1, rhsVector = b.layout.dim() == 1;
  int64_t k = a.layout.sizes.back();
  int64_t n = lhsVector ? 1 : a.layout.sizes[a.layout.dim() - 2];
  int64_t m = rhsVector ? 1 : b.layout.sizes.back();
  int64_t batchRank = type.getRank() - !lhsVector - !rhsVector;
  layout::Shape full(type.getShape().begin(),
                     type.getShape().begin() + batchRank);
  full.push_back(n);
  full.push_back(m);
  // The batch index of an operand: its leading dims, broadcast.
  auto operandIndex = [&](const RefValue &v, ArrayRef<int64_t> batch,
                          int64_t row, int64_t col) {
    int64_t vb = v.layout.dim() - 2;
    Index index;
    for (int64_t d = 0; d < vb; ++d)
      index.push_back(v.layout.sizes[d] == 1 ? 0 : batch[batchRank - vb + d]);
    index.push_back(row);
    index.push_back(col);
    return index;
  };
  std::vector<double> data;
  forEachIndex(full, [&](ArrayRef<int64_t> index) {
    ArrayRef<int64_t> batch = index.take_front(batchRank);
    int64_t i = index[batchRank], j = index[batchRank + 1];
    double sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      double x = lhsVector ? a.at({kk}) : a.at(operandIndex(a, batch, i, kk));
      double y = rhsVector ? b.at({kk}) : b.at(operandIndex(b, batch, kk, j));
      sum += x * y;
    }
    data.push_back(sum);
  });
  return set(op, RefValue::fresh(type.getElementType(), type.getShape(),
                                 std::move(data)));
}

LogicalResult Evaluator::write(WriteOp op) {
  const RefValue &src = get(op.getSrc()), &dest = get(op.getDest());
  auto type = op.getType();
  if (static_cast<int64_t>(dest.buffer->data.size()) != type.getSize())
    return op.emitError() << "reference evaluator: the destination's root "
                          << "holds " << dest.buffer->data.size()
                          << " elements but the result type is " << type;
  // A new version: the old buffer stays as it was for its other readers.
  auto next = std::make_shared<Buffer>(*dest.buffer);
  forEachIndex(dest.layout.sizes, [&](ArrayRef<int64_t> index) {
    next->data[storageIndex(dest.layout, index)] =
        roundToElementType(readBroadcast(src, index), dest.elementType);
  });
  return set(op, RefValue{next, layout::Layout{{type.getSize()}, {1}, 0},
                          dest.elementType, /*isStorage=*/true});
}

FailureOr<std::vector<RefValue>>
strata::reference::evaluate(func::FuncOp func, ArrayRef<RefValue> args) {
  return Evaluator().run(func, args);
}
