//===- StrataVJPRecompute.cpp - reads of gradients that fuse -----------===//
//
// A gradient is usually an elementwise expression of the incoming gradient
// and of forward values (relu's mask, mul's other operand). Two things
// would make the fuser write it to memory and read it back: a value with
// several uses (the forward's relu result feeds both the loss and the mask;
// the masked gradient feeds both products), and a view of it that is not
// its row-major order (the gradient of x in x.t() must be stored in x's
// order). `readRecomputed` reads a value through a layout by rebuilding the
// elementwise ops that define it on correspondingly re-viewed operands: the
// clone has one use and the same shape as its consumer, so it is computed
// inside the consumer's kernel, which reads the leaves (arguments, matmul
// and reduction results, returned values, which are stored anyway) in
// whatever order the read needs. A bounded number of ops is recomputed;
// beyond it the value is read as it is.
//
//===----------------------------------------------------------------------===//
#include "VJPBuilders.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace strata::ir;
using namespace strata::ir::vjp;
namespace layout = strata::layout;

namespace {

bool isElementwise(Operation *op) {
  return isa_and_nonnull<ElementwiseOpInterface>(op);
}

/// For each dim of a read `l` of a dense tensor `root` (offset 0, its dims
/// in any order: a compute result's layout): the dim of `root` it walks (-1
/// for a size-1 or stride-0 dim) and the direction, plus the multi-index of
/// the first element. Fails unless every dim walks one dim of `root`, each
/// at most once, within bounds.
struct DimMap {
  SmallVector<int64_t> dims, signs, base;
};

std::optional<DimMap> mapDims(const layout::Layout &l,
                              const layout::Layout &root) {
  int64_t rank = root.dim();
  ArrayRef<int64_t> shape = root.sizes, strides = root.strides;
  DimMap m;
  m.base.assign(rank, 0);
  // The first element's index: the offset's digits, outermost dim first.
  SmallVector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d) {
    if (shape[d] == 0)
      return std::nullopt;
    if (shape[d] > 1)
      order.push_back(d);
  }
  llvm::stable_sort(
      order, [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  int64_t rest = l.offset;
  if (rest < 0)
    return std::nullopt;
  for (int64_t d : order) {
    m.base[d] = rest / strides[d];
    rest %= strides[d];
    if (m.base[d] >= shape[d])
      return std::nullopt;
  }
  if (rest != 0)
    return std::nullopt;
  SmallVector<bool> used(rank, false);
  for (int64_t k = 0; k < l.dim(); ++k) {
    int64_t size = l.sizes[k], stride = l.strides[k];
    if (size == 1 || stride == 0) {
      m.dims.push_back(-1);
      m.signs.push_back(1);
      continue;
    }
    int64_t d = 0;
    while (d < rank && !(shape[d] > 1 && strides[d] == std::abs(stride)))
      ++d;
    if (d == rank || used[d])
      return std::nullopt;
    used[d] = true;
    int64_t sign = stride > 0 ? 1 : -1;
    int64_t last = m.base[d] + sign * (size - 1);
    if (last < 0 || last >= shape[d])
      return std::nullopt;
    m.dims.push_back(d);
    m.signs.push_back(sign);
  }
  return m;
}

struct Recompute {
  GradBuilder &gb;
  int budget;
  SmallVector<std::tuple<Value, layout::Layout, Value>> memo;

  /// A tensor with `l`'s sizes whose elements are those `l` addresses in
  /// `root` (a storage or a tensor that is not a view).
  Value read(Value root, const layout::Layout &l, Type element) {
    for (auto &[r, ml, v] : memo)
      if (r == root && ml == l)
        return v;
    // A rebuilt op is not shared (memoized): shared, it would have two
    // uses and be stored again.
    if (Value v = rebuild(root, l))
      return v;
    auto type = StridedTensorType::get(element, l);
    Value v = root.getType() == type
                  ? root
                  : gb.b.create<StridedViewOp>(gb.loc, type, root).getResult();
    memo.push_back({root, l, v});
    return v;
  }

  /// The elementwise op defining `root` rebuilt over `l`, or null.
  Value rebuild(Value root, const layout::Layout &l) {
    Operation *def = root.getDefiningOp();
    if (!isElementwise(def) || budget <= 0)
      return {};
    // A returned value is stored anyway: read it rather than recompute it.
    // A recorded one (strata.recorded) too: removeMarkers replaces its
    // reads by the value the forward computed, which a rebuilt op would
    // not see (its inputs may have been written in place since).
    if (llvm::any_of(root.getUsers(), [&](Operation *u) {
          if (isa<func::ReturnOp>(u))
            return true;
          auto r = dyn_cast<RecordedOp>(u);
          return r && !r.getValueOnly() && r.getRecompute() == root;
        }))
      return {};
    auto type = tensorOf(root);
    if (!layout::isNonOverlappingAndDense(type.getLayout()) ||
        type.getOffset() != 0)
      return {};
    std::optional<DimMap> m = mapDims(l, type.getLayout());
    if (!m)
      return {};
    --budget;
    int64_t rank = type.getRank();
    SmallVector<Value> operands;
    bool shaped = l.dim() == 0;
    for (Value o : def->getOperands()) {
      auto ot = tensorOf(o);
      auto fill = o.getDefiningOp<FillOp>();
      if (ot.getRank() == 0 && fill) { // a constant broadcasts as it is
        operands.push_back(o);
        continue;
      }
      shaped = true;
      // The operand's strides per result dim (0 where it is broadcast:
      // the layout algebra's expand).
      layout::Layout own = ot.getLayout();
      auto expanded = layout::expand(own, type.getShape());
      assert(expanded.ok() && "an elementwise operand broadcasts");
      const layout::Shape &strides = expanded->strides;
      layout::Layout composed;
      composed.sizes = l.sizes;
      composed.offset = own.offset;
      for (int64_t d = 0; d < rank; ++d)
        composed.offset += m->base[d] * strides[d];
      for (int64_t k = 0; k < l.dim(); ++k)
        composed.strides.push_back(
            m->dims[k] < 0 ? 0 : m->signs[k] * strides[m->dims[k]]);
      operands.push_back(
          read(getStorageRoot(o), composed, ot.getElementType()));
    }
    if (!shaped) // only constants: the op would not have l's shape
      return {};
    OperationState state(def->getLoc(), def->getName());
    state.addOperands(operands);
    state.addAttributes(def->getAttrs());
    // The rebuilt op's layout follows its new operands (TensorIterator).
    SmallVector<Type> types;
    if (auto c = dyn_cast<CastOp>(def))
      types.push_back(
          preserveFormatType(tensorOf(operands[0]), type.getElementType()));
    else if (failed(cast<InferTypeOpInterface>(def).inferReturnTypes(
                 def->getContext(), std::nullopt, operands,
                 def->getAttrDictionary(), def->getRegions(), types)))
      return {};
    state.addTypes(types);
    return gb.b.create(state)->getResult(0);
  }
};

} // namespace

Value GradBuilder::readRecomputed(Value v, const layout::Layout &l,
                                  int budget) {
  Recompute r{*this, budget, {}};
  return r.read(getStorageRoot(v), l, tensorOf(v).getElementType());
}

Value GradBuilder::recomputed(Value v, int budget) {
  if (!v.getType().isa<StridedTensorType>())
    return v;
  Recompute r{*this, budget, {}};
  Value rebuilt = r.rebuild(getStorageRoot(v), tensorOf(v).getLayout());
  return rebuilt ? rebuilt : v;
}
