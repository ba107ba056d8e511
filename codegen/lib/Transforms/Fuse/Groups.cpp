//===- Groups.cpp - one kernel per group of fused compute ops -------------===//
//
// Part of --strata-fuse (FusePass.cpp has the whole algorithm): an
// elementwise op is inlined into its consumer when its value has one use
// over the same shape; every other compute op roots a group whose kernel
// body is built by walking its operands back through the inlined ops
// (KernelBuilder: the ops' scalar form, ScalarBuilder.h), reading anything
// else as a kernel input broadcast to the kernel's space.
//
//===----------------------------------------------------------------------===//
#include "Fuse.h"
#include "strata/IR/ScalarBuilder.h"
#include "strata/IR/StrataDialect.h"
#include "strata/Transforms/KernelPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata::ir;

namespace strata::fuse {

bool isElementwise(Operation *op) { return isa<ElementwiseOpInterface>(op); }

bool isReduction(Operation *op) { return isa<ReductionOpInterface>(op); }

StridedTensorType tensorType(Value v) {
  return v.getType().cast<StridedTensorType>();
}

bool isGenerator(Operation *op) { return op && isa<FillOp, ArangeOp>(op); }

Operation *generatorOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isGenerator(def))
      return def;
    v = getViewSource(def);
    if (!v)
      return nullptr;
  }
  return nullptr;
}

/// The shape a consumer iterates over when it reads `operand`.
std::optional<ArrayRef<int64_t>> consumerSpace(OpOperand &use) {
  Operation *user = use.getOwner();
  if (isElementwise(user))
    return tensorType(user->getResult(0)).getShape();
  if (isReduction(user) || isa<ScanOp>(user))
    return tensorType(user->getOperand(0)).getShape();
  // A copy into a fresh tensor (e.g. the row-major copy of an elementwise
  // result that keeps a transposed layout) computes its input in its kernel.
  if (isa<CopyOp, ContiguousOp, ReshapeOp, FlattenOp>(user) &&
      !getViewSource(user))
    return tensorType(user->getOperand(0)).getShape();
  if (auto write = dyn_cast<WriteOp>(user))
    if (use.get() == write.getSrc())
      return tensorType(write.getDest()).getShape();
  return std::nullopt;
}

/// True when `op` is computed inside its only consumer's kernel.
bool isInlined(Operation *op) {
  if (!isElementwise(op) || !op->getResult(0).hasOneUse())
    return false;
  OpOperand &use = *op->getResult(0).getUses().begin();
  auto space = consumerSpace(use);
  return space && *space == tensorType(op->getResult(0)).getShape();
}

/// The scalar of elementwise op `op` given its operands' scalars.
Value applyScalar(ScalarBuilder &s, Operation *op, ArrayRef<Value> in) {
  return cast<ElementwiseOpInterface>(op).buildScalar(s, in);
}

/// Builds one kernel: its body block, its inputs (broadcast to the space).
class KernelBuilder {
public:
  KernelBuilder(Operation *root, ArrayRef<int64_t> space)
      : root(root), space(space.begin(), space.end()), body(new Block),
        outer(root), inner(root->getContext()), scalar{inner, root->getLoc()} {
    inner.setInsertionPointToEnd(body);
  }

  /// The scalar of tensor `v` at the current point of the space. Walks the
  /// inlined ops with an explicit stack (a chain of 10^5 inlined ops must
  /// not overflow the thread's stack), in the order a recursive walk over
  /// the operands, left to right, would visit them: the kernel body and
  /// its inputs come out the same.
  Value emit(Value v) {
    // (value, its operands are emitted already)
    SmallVector<std::pair<Value, bool>> stack{{v, false}};
    while (!stack.empty()) {
      auto [u, operandsDone] = stack.pop_back_val();
      if (scalars.lookup(u))
        continue;
      Operation *def = u.getDefiningOp();
      bool inlined = def && isInlined(def);
      if (inlined && !operandsDone) {
        stack.push_back({u, true});
        for (Value o : llvm::reverse(def->getOperands()))
          stack.push_back({o, false});
        continue;
      }
      Operation *generator = generatorOf(u);
      if (generator && isa<ArangeOp>(generator) && !indicesAllowed)
        generator = nullptr; // (read from memory)
      Value s;
      if (generator) {
        s = generated(u, generator);
      } else if (inlined) {
        SmallVector<Value> operands;
        for (Value o : def->getOperands())
          operands.push_back(scalars.lookup(o));
        s = applyScalar(scalar, def, operands);
      } else {
        // (Inputs come before the indices: StrataKernelOps.td.)
        inputs.push_back(broadcast(u, space));
        s = body->insertArgument(
            inputs.size() - 1, tensorType(u).getElementType(), root->getLoc());
      }
      scalars[u] = s;
    }
    return scalars.lookup(v);
  }

  /// The i64 index of space dim `d` at the current point (the kernel
  /// becomes `indexed`: one body argument per space dim, after the inputs).
  Value index(size_t d) {
    if (indices.empty())
      for (size_t i = 0; i < space.size(); ++i)
        indices.push_back(
            body->addArgument(inner.getI64Type(), root->getLoc()));
    return indices[d];
  }

  /// The scalar of `v`, a view of (or) the result of fill or arange
  /// `generator`, at the current point, computed instead of loaded: a
  /// fill's value, or arange's element at the position the view reads
  /// (its offset plus each space index times its stride there).
  Value generated(Value v, Operation *generator) {
    Type element = tensorType(v).getElementType();
    if (auto fill = dyn_cast<FillOp>(generator)) {
      Value c = scalar.constant(element, fill.getValue());
      if (fill->hasAttr(strata::kSizeValueAttrName) && element.isa<FloatType>())
        c.getDefiningOp()->setAttr(strata::kSizeValueAttrName,
                                   inner.getUnitAttr());
      return c;
    }
    auto l = strata::layout::expand(tensorType(v).getLayout(), space);
    assert(l.ok() && "fusion broadcasts to broadcast shapes only");
    Type i64 = inner.getI64Type();
    Value position;
    auto add = [&](Value term) {
      position = position ? scalar.create<arith::AddIOp>(position, term) : term;
    };
    for (size_t d = 0; d < space.size(); ++d) {
      if (int64_t stride = l->strides[d])
        add(stride == 1 ? index(d)
                        : scalar.create<arith::MulIOp>(
                              index(d), scalar.constant(i64, stride)));
    }
    if (l->offset != 0 || !position)
      add(scalar.constant(i64, l->offset));
    return arangeElement(cast<ArangeOp>(generator), position, element);
  }

  /// Element `i` (an i64) of arange `ar` as `element`: start + i * step,
  /// exactly in i64 for an integral arange (PyTorch's integer arange),
  /// else in f64, rounded once.
  Value arangeElement(ArangeOp ar, Value i, Type element) {
    Location loc = root->getLoc();
    Value v;
    if (ar.isIntegral()) {
      Type i64 = inner.getI64Type();
      Value step = scalar.constant(i64, ar.getStep());
      Value scaled = inner.create<arith::MulIOp>(loc, i, step);
      Value start = scalar.constant(i64, ar.getStart());
      v = inner.create<arith::AddIOp>(loc, start, scaled);
    } else {
      Type f64 = inner.getF64Type();
      Value step = scalar.constant(f64, ar.getStepAsDouble());
      Value x = inner.create<arith::SIToFPOp>(loc, f64, i);
      Value scaled = inner.create<arith::MulFOp>(loc, x, step);
      Value start = scalar.constant(f64, ar.getStartAsDouble());
      v = inner.create<arith::AddFOp>(loc, start, scaled);
    }
    return scalar.convert(v, element);
  }

  /// `v` viewed with `sizes`/`strides` per space dim (a strided_view
  /// unless the type already matches).
  Value view(Value v, ArrayRef<int64_t> strides) {
    auto t = tensorType(v);
    auto type = StridedTensorType::get(
        v.getContext(), space, t.getElementType(), strides, t.getOffset());
    if (type == t)
      return v;
    return outer.create<StridedViewOp>(root->getLoc(), type, v);
  }

  /// PyTorch broadcasting of `v` to `shape` (trailing dims aligned): the
  /// layout algebra's expand.
  Value broadcast(Value v, ArrayRef<int64_t> shape) {
    auto l = strata::layout::expand(tensorType(v).getLayout(), shape);
    assert(l.ok() && "fusion broadcasts to broadcast shapes only");
    return view(v, l->strides);
  }

  Block &getBody() { return *body; }

  /// Finishes the body with `yields` and creates the kernel before `root`.
  /// An elementwise result laid out in another order than row-major (a
  /// TensorIterator layout) is written in its storage order: the kernel's
  /// result is row-major over its dims outermost first (`result_perms`),
  /// and `resultValue` views it with the op's type.
  KernelOp finish(ArrayRef<Value> yields, TypeRange resultTypes,
                  Value dest = {}) {
    inner.create<YieldOp>(root->getLoc(), yields);
    SmallVector<Type> types;
    SmallVector<int64_t> perms;
    bool permuted = false;
    for (Type t : resultTypes) {
      auto type = t.dyn_cast<StridedTensorType>();
      SmallVector<int64_t> perm;
      for (int64_t d = 0; d < static_cast<int64_t>(space.size()); ++d)
        perm.push_back(d);
      if (type && !dest && type.getShape() == ArrayRef<int64_t>(space) &&
          type !=
              StridedTensorType::getContiguous(type.getElementType(), space)) {
        // Outermost first: decreasing strides (size-1 dims anywhere).
        llvm::stable_sort(perm, [&](int64_t a, int64_t b) {
          return type.getStrides()[a] > type.getStrides()[b];
        });
        SmallVector<int64_t> sizes;
        for (int64_t d : perm)
          sizes.push_back(space[d]);
        t = StridedTensorType::getContiguous(type.getElementType(), sizes);
        permuted = true;
      }
      types.push_back(t);
      perms.append(perm);
    }
    auto kernel =
        outer.create<KernelOp>(root->getLoc(), types, space, inputs, dest);
    kernel.getBody().push_back(body);
    if (!indices.empty())
      kernel.setIndexed(true);
    if (permuted)
      kernel.setResultPermsAttr(outer.getDenseI64ArrayAttr(perms));
    return kernel;
  }

  Operation *root;
  SmallVector<int64_t> space;
  Block *body;
  OpBuilder outer, inner;
  ScalarBuilder scalar;
  SmallVector<Value> inputs;
  /// The space's indices (body arguments), made on first use; a scan
  /// kernel has none (StrataScanOps.cpp), so it loads an arange.
  SmallVector<Value> indices;
  bool indicesAllowed = true;
  DenseMap<Value, Value> scalars;
};

/// sum/mean/amax/amin: the input's chain + the reduction, one kernel.
KernelOp buildReduction(Operation *op, bool indices) {
  Value input = op->getOperand(0);
  auto inType = tensorType(input);
  auto resultType = tensorType(op->getResult(0));
  int64_t rank = inType.getRank();
  auto dimsAttr = op->getAttrOfType<DenseI64ArrayAttr>("dims");
  SmallVector<int64_t> dims;
  // A 0-d tensor's dim 0 (or -1) names the tensor itself: no dims.
  if (rank > 0)
    for (int64_t d : dimsAttr.asArrayRef())
      dims.push_back(d < 0 ? d + rank : d);
  if (dims.empty())
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(d);
  llvm::sort(dims);
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  int64_t count = 1;
  for (int64_t d : dims)
    count *= inType.getShape()[d];

  KernelBuilder kb(op, inType.getShape());
  kb.indicesAllowed = indices;
  Type element = resultType.getElementType();
  Value s = kb.emit(input);
  s = kb.scalar.convert(s, element);
  StringRef combiner = isa<AmaxOp>(op)   ? "max"
                       : isa<AminOp>(op) ? "min"
                       : isa<ProdOp>(op) ? "prod"
                                         : "sum";
  if (isa<MeanOp>(op)) {
    // mean = sum(x / n); an empty mean is NaN as in PyTorch (0/0).
    Value n = kb.scalar.constant(element, static_cast<double>(count));
    s = kb.inner.create<arith::DivFOp>(op->getLoc(), s, n);
  }
  KernelOp k = kb.finish({s}, {resultType});
  k.setReduceDimsAttr(kb.outer.getDenseI64ArrayAttr(dims));
  k.setCombinersAttr(kb.outer.getStrArrayAttr({combiner}));
  if (isa<MeanOp>(op) && count == 0) {
    // Sum of nothing is 0; PyTorch's mean of nothing is NaN: fill instead.
    KernelBuilder fill(op, resultType.getShape());
    Value nan = fill.scalar.constant(element, std::nan(""));
    KernelOp f = fill.finish({nan}, {resultType});
    k.erase();
    return f;
  }
  return k;
}

/// torch.matmul as a kernel over [batch..., M, N, K] reducing K.
KernelOp buildMatmul(MatmulOp op) {
  auto a = tensorType(op.getLhs()), b = tensorType(op.getRhs());
  // Promote 1-d operands: a [K] -> [1, K], b [K] -> [K, 1] (stride 0).
  SmallVector<int64_t> as(a.getShape()), ast(a.getStrides());
  SmallVector<int64_t> bs(b.getShape()), bst(b.getStrides());
  if (as.size() == 1) {
    as.insert(as.begin(), 1);
    ast.insert(ast.begin(), 0);
  }
  if (bs.size() == 1) {
    bs.push_back(1);
    bst.push_back(0);
  }
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  auto batchA = ArrayRef<int64_t>(as).drop_back(2);
  auto batchB = ArrayRef<int64_t>(bs).drop_back(2);
  auto batch = strata::layout::broadcastShapes(batchA, batchB, "matmul");
  SmallVector<int64_t> space(batch->begin(), batch->end());
  int64_t nb = space.size();
  space.append({m, n, k});
  // (Each operand's batch dims broadcast to the batch: expand.)
  auto batchStrides = [&](ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
    strata::layout::Layout own{
        strata::layout::Shape(sizes.begin(), sizes.end()),
        strata::layout::Shape(strides.begin(), strides.end()), 0};
    auto l =
        strata::layout::expand(own, ArrayRef<int64_t>(space).take_front(nb));
    assert(l.ok() && "the batch is the operands' broadcast shape");
    return SmallVector<int64_t>(l->strides.begin(), l->strides.end());
  };
  SmallVector<int64_t> sa = batchStrides(batchA, ast),
                       sb = batchStrides(batchB, bst);
  sa.append({ast[ast.size() - 2], 0, ast.back()});
  sb.append({0, bst.back(), bst[bst.size() - 2]});

  KernelBuilder kb(op, space);
  Value va = kb.view(op.getLhs(), sa), vb = kb.view(op.getRhs(), sb);
  kb.inputs = {va, vb};
  Value x = kb.body->addArgument(a.getElementType(), op.getLoc());
  Value y = kb.body->addArgument(b.getElementType(), op.getLoc());
  Value p = a.getElementType().isa<FloatType>()
                ? kb.inner.create<arith::MulFOp>(op.getLoc(), x, y).getResult()
                : kb.inner.create<arith::MulIOp>(op.getLoc(), x, y).getResult();
  KernelOp kernel = kb.finish({p}, {op.getType()});
  kernel.setReduceDimsAttr(kb.outer.getDenseI64ArrayAttr({nb + 2}));
  kernel.setCombinersAttr(kb.outer.getStrArrayAttr({"sum"}));
  return kernel;
}

/// cumsum/cumprod: the input's chain + the scan, one kernel with
/// `scan_dim` (a 0-d scan is its value, or the identity when exclusive).
KernelOp buildScan(ScanOp op) {
  auto type = op.getType();
  KernelBuilder kb(op, type.getShape());
  kb.indicesAllowed = false;
  bool prod = op.getCombiner() == "prod";
  Value s = kb.emit(op.getInput());
  if (type.getRank() == 0) {
    if (op.getExclusive())
      s = kb.scalar.constant(type.getElementType(), prod ? 1.0 : 0.0);
    return kb.finish({s}, {type});
  }
  KernelOp k = kb.finish({s}, {type});
  k.setScanDimAttr(kb.outer.getI64IntegerAttr(op.getWrappedDim()));
  k.setScanCombinerAttr(kb.outer.getStringAttr(op.getCombiner()));
  k.setScanReverse(op.getReverse());
  k.setScanExclusive(op.getExclusive());
  return k;
}

/// The kernel replacing group root `op` (computing aranges it reads only
/// if `indices`), or null when `op` is not compute.
KernelOp buildKernelWith(Operation *op, bool indices) {
  if (isElementwise(op)) {
    auto type = tensorType(op->getResult(0));
    KernelBuilder kb(op, type.getShape());
    kb.indicesAllowed = indices;
    SmallVector<Value> operands;
    for (Value o : op->getOperands())
      operands.push_back(kb.emit(o));
    return kb.finish({applyScalar(kb.scalar, op, operands)}, {type});
  }
  if (isReduction(op))
    return buildReduction(op, indices);
  if (auto mm = dyn_cast<MatmulOp>(op))
    return buildMatmul(mm);
  if (auto scan = dyn_cast<ScanOp>(op))
    return buildScan(scan);
  if (auto write = dyn_cast<WriteOp>(op)) {
    KernelBuilder kb(op, tensorType(write.getDest()).getShape());
    kb.indicesAllowed = indices;
    Value s = kb.emit(write.getSrc());
    return kb.finish({s}, {write.getType()}, write.getDest());
  }
  if (isGenerator(op)) {
    // A fill or arange still read from memory (returned, viewed by a
    // write's destination, a matmul operand, ...): its kernel.
    auto type = tensorType(op->getResult(0));
    KernelBuilder kb(op, type.getShape());
    return kb.finish({kb.emit(op->getResult(0))}, {type});
  }
  if (isa<CopyOp, ContiguousOp, ReshapeOp, FlattenOp>(op) &&
      !getViewSource(op)) {
    // A copy into a fresh tensor (contiguous, or clone's preserve_format).
    Value input = op->getOperand(0);
    KernelBuilder kb(op, tensorType(input).getShape());
    kb.indicesAllowed = indices;
    return kb.finish({kb.emit(input)}, {op->getResult(0).getType()});
  }
  return {};
}

/// True when `kernel` moves its operands in different orders: one is
/// unit-stride along the innermost dim, another along an outer dim and
/// strided along the innermost. The emitters run such a kernel in
/// transposed tiles, which an indexed kernel does not get.
bool isTransposed(KernelOp kernel) {
  KernelOp::LoopNest nest = kernel.getSpaceLoopNest();
  size_t n = nest.sizes.size();
  if (n < 2)
    return false;
  bool unitInner = false, unitOuter = false;
  for (const std::vector<int64_t> &st : nest.strides) {
    if (std::abs(st[n - 1]) == 1) {
      unitInner = true;
      continue;
    }
    for (size_t d = 0; d + 1 < n && st[n - 1] != 0; ++d)
      unitOuter |= std::abs(st[d]) == 1 && nest.sizes[d] > 1;
  }
  return unitInner && unitOuter;
}

/// buildKernelWith, computing the aranges `op` reads unless that costs the
/// kernel its transposed tiles: then they are loaded (and get a kernel).
KernelOp buildKernel(Operation *op) {
  KernelOp kernel = buildKernelWith(op, /*indices=*/true);
  if (!kernel || !kernel.getIndexed() || isGenerator(op) ||
      !isTransposed(kernel))
    return kernel;
  SmallVector<Value> inputs(kernel.getInputs());
  kernel.erase();
  for (Value v : inputs) // (the broadcasts made for it)
    if (auto view = v.getDefiningOp<StridedViewOp>(); view && view->use_empty())
      view.erase();
  return buildKernelWith(op, /*indices=*/false);
}

/// The kernel's result as `op`'s result type: a strided_view of a result
/// written in storage order (KernelBuilder::finish), else the result.
Value resultValue(KernelOp kernel, Operation *op) {
  Value r = kernel.getResult(0);
  Type want = op->getResult(0).getType();
  if (r.getType() == want)
    return r;
  OpBuilder b(kernel->getContext());
  b.setInsertionPointAfter(kernel);
  return b.create<StridedViewOp>(op->getLoc(), want, r);
}

} // namespace strata::fuse
