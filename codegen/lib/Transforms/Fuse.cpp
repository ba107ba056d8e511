//===- Fuse.cpp - group compute ops into strata.kernel ops ----------------===//
//
// Assumes: a func.func of strata ops (views may or may not be folded); every
//   type's layout is absolute within its storage root.
// Guarantees: afterwards the function holds only view ops, strided_views,
//   strata.kernel ops, func ops, and the return; every compute op and write
//   is inside (or is) a kernel. Results are unchanged: a kernel computes
//   exactly the values of the ops it replaces.
// Algorithm: an elementwise op is *inlined* into its consumer when its value
//   has exactly one use, by an elementwise op, a reduction or a write, over
//   the same shape (no broadcast of an intermediate, so nothing is computed
//   twice). Every other compute op is the root of a group: its kernel's body
//   is built by walking the operands back through inlined ops; anything else
//   becomes a kernel input, broadcast to the space by a strided_view (stride
//   0), and 0-d fills become constants. So a value that is used several
//   times, by a non-elementwise op, or returned is written exactly once.
//   A result whose layout is not row-major (TensorIterator's, e.g. the
//   [1, 4] of `relu(x.t())`) is written in its storage order
//   (`result_perms`) and read through a strided_view with the op's type.
//   Then *sibling fusion* merges elementwise kernels that read the same
//   data: when kernel B's space is a permutation of kernel A's and, seen
//   through that permutation, B reads some (non-broadcast) input with the
//   same layout as A, the two become one kernel over A's space that reads
//   the shared inputs once and writes B's results in B's own order
//   (`result_perms`); equal scalar ops of the two bodies are computed once.
//   The merged kernel sits where B was; views of A's results between A and
//   B move after it, and kernels that depend on each other never merge.
//   (The gradient of `(x.t() * w)`-style expressions thus reads x and w once
//   and writes both gradients, each in its argument's layout.)
//
//===----------------------------------------------------------------------===//
#include "FuseIndexOps.h"
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

namespace strata {
#define GEN_PASS_DEF_FUSE
#include "strata/Transforms/KernelPasses.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace {

bool isElementwise(Operation *op) { return isa<ElementwiseOpInterface>(op); }

bool isReduction(Operation *op) { return isa<ReductionOpInterface>(op); }

StridedTensorType tensorType(Value v) {
  return v.getType().cast<StridedTensorType>();
}

bool isZeroDimFill(Value v) {
  auto fill = v.getDefiningOp<FillOp>();
  return fill && fill.getType().getRank() == 0;
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
      bool inlined = !isZeroDimFill(u) && def && isInlined(def);
      if (inlined && !operandsDone) {
        stack.push_back({u, true});
        for (Value o : llvm::reverse(def->getOperands()))
          stack.push_back({o, false});
        continue;
      }
      Value s;
      if (isZeroDimFill(u)) {
        auto fill = cast<FillOp>(def);
        s = scalar.constant(fill.getType().getElementType(), fill.getValue());
      } else if (inlined) {
        SmallVector<Value> operands;
        for (Value o : def->getOperands())
          operands.push_back(scalars.lookup(o));
        s = applyScalar(scalar, def, operands);
      } else {
        inputs.push_back(broadcast(u, space));
        s = body->addArgument(tensorType(u).getElementType(), root->getLoc());
      }
      scalars[u] = s;
    }
    return scalars.lookup(v);
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

  /// PyTorch broadcasting of `v` to `shape` (trailing dims aligned).
  Value broadcast(Value v, ArrayRef<int64_t> shape) {
    auto t = tensorType(v);
    int64_t n = shape.size(), r = t.getRank();
    SmallVector<int64_t> strides(n, 0);
    for (int64_t d = 0; d < n; ++d) {
      int64_t k = d - (n - r);
      if (k >= 0 && !(t.getShape()[k] == 1 && shape[d] != 1))
        strides[d] = t.getStrides()[k];
    }
    return view(v, strides);
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
  DenseMap<Value, Value> scalars;
};

/// sum/mean/amax/amin: the input's chain + the reduction, one kernel.
KernelOp buildReduction(Operation *op) {
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
  auto batchStrides = [&](ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
    SmallVector<int64_t> out(nb, 0);
    int64_t r = sizes.size();
    for (int64_t d = 0; d < nb; ++d) {
      int64_t kk = d - (nb - r);
      if (kk >= 0 && !(sizes[kk] == 1 && space[d] != 1))
        out[d] = strides[kk];
    }
    return out;
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

/// The kernel replacing group root `op`, or null when `op` is not compute.
KernelOp buildKernel(Operation *op) {
  if (isElementwise(op)) {
    auto type = tensorType(op->getResult(0));
    KernelBuilder kb(op, type.getShape());
    SmallVector<Value> operands;
    for (Value o : op->getOperands())
      operands.push_back(kb.emit(o));
    return kb.finish({applyScalar(kb.scalar, op, operands)}, {type});
  }
  if (isReduction(op))
    return buildReduction(op);
  if (auto mm = dyn_cast<MatmulOp>(op))
    return buildMatmul(mm);
  if (auto scan = dyn_cast<ScanOp>(op))
    return buildScan(scan);
  if (auto write = dyn_cast<WriteOp>(op)) {
    KernelBuilder kb(op, tensorType(write.getDest()).getShape());
    Value s = kb.emit(write.getSrc());
    return kb.finish({s}, {write.getType()}, write.getDest());
  }
  if (auto fill = dyn_cast<FillOp>(op)) {
    KernelBuilder kb(op, fill.getType().getShape());
    Value c =
        kb.scalar.constant(fill.getType().getElementType(), fill.getValue());
    return kb.finish({c}, {fill.getType()});
  }
  if (auto ar = dyn_cast<ArangeOp>(op)) {
    auto type = ar.getType();
    KernelBuilder kb(op, type.getShape());
    Location loc = op->getLoc();
    Type i64 = kb.inner.getI64Type();
    Value i = kb.body->addArgument(i64, loc);
    Value v;
    if (ar.isIntegral()) {
      // Exact in i64 (wrapping), as PyTorch's integer arange.
      v = kb.inner.create<arith::AddIOp>(
          loc, kb.scalar.constant(i64, ar.getStart()),
          kb.inner.create<arith::MulIOp>(
              loc, i, kb.scalar.constant(i64, ar.getStep())));
    } else {
      Type f64 = kb.inner.getF64Type();
      v = kb.inner.create<arith::AddFOp>(
          loc, kb.scalar.constant(f64, ar.getStartAsDouble()),
          kb.inner.create<arith::MulFOp>(
              loc, kb.inner.create<arith::SIToFPOp>(loc, f64, i),
              kb.scalar.constant(f64, ar.getStepAsDouble())));
    }
    KernelOp k =
        kb.finish({kb.scalar.convert(v, type.getElementType())}, {type});
    k.setIndexed(true);
    return k;
  }
  if (isa<CopyOp, ContiguousOp, ReshapeOp, FlattenOp>(op) &&
      !getViewSource(op)) {
    // A copy into a fresh tensor (contiguous, or clone's preserve_format).
    Value input = op->getOperand(0);
    KernelBuilder kb(op, tensorType(input).getShape());
    return kb.finish({kb.emit(input)}, {op->getResult(0).getType()});
  }
  return {};
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

//===----------------------------------------------------------------------===//
// Sibling fusion
//===----------------------------------------------------------------------===//

/// The value a chain of strided_views starts from. Layouts are absolute
/// within the storage root, so a view of `v` may be taken of this instead.
Value viewRoot(Value v) {
  while (auto sv = v.getDefiningOp<StridedViewOp>())
    v = sv.getSource();
  return v;
}

bool isBroadcastOnly(StridedTensorType t) {
  return llvm::all_of(t.getStrides(), [](int64_t s) { return s == 0; });
}

/// Merging stops at this many operands, so kernels stay register-friendly.
constexpr unsigned kMaxSiblingInputs = 12;
constexpr unsigned kMaxSiblingResults = 6;
/// Kernels after a kernel that it may merge with: siblings sit close
/// together (a gradient and its loss), and this keeps the pass linear in
/// the number of kernels.
constexpr unsigned kSiblingWindow = 64;
/// Permutations tried per pair (spaces of many equal sizes have many).
constexpr int kMaxPermutations = 720;

/// A kernel sibling fusion may merge: fresh results (elementwise or
/// reduced), no indices, loops not yet chosen.
bool isSiblingCandidate(KernelOp k) {
  return !k.getDest() && !k.getIndexed() && !k.getIndexMap() &&
         !k.getLoopSizes() && !k.isScan() && !isMatrixProduct(k) &&
         k.getNumResults() > 0 && k.getNumResults() <= kMaxSiblingResults;
}

/// B's input `in` seen over A's space: B's dim i is A's dim perm[i].
StridedTensorType permutedType(StridedTensorType t, ArrayRef<int64_t> perm,
                               ArrayRef<int64_t> spaceA) {
  SmallVector<int64_t> strides(spaceA.size(), 0);
  for (auto [i, d] : llvm::enumerate(perm))
    strides[d] = t.getStrides()[i];
  return StridedTensorType::get(t.getContext(), spaceA, t.getElementType(),
                                strides, t.getOffset());
}

/// The index of A's input with `root` and `type`, or -1.
int findInput(ArrayRef<Value> inputs, Value root, StridedTensorType type) {
  for (auto [i, in] : llvm::enumerate(inputs))
    if (viewRoot(in) == root && tensorType(in) == type)
      return static_cast<int>(i);
  return -1;
}

/// The permutation of A's dims under which B shares the most non-broadcast
/// inputs with A (and how many), trying at most kMaxPermutations.
std::pair<SmallVector<int64_t>, int> bestPermutation(KernelOp a, KernelOp b) {
  ArrayRef<int64_t> sa = a.getSpace(), sb = b.getSpace();
  SmallVector<int64_t> best;
  int bestShared = 0;
  if (sa.size() != sb.size())
    return {best, 0};
  SmallVector<Value> inputsA(a.getInputs().begin(), a.getInputs().end());
  SmallVector<int64_t> perm;
  SmallVector<bool> used(sa.size(), false);
  int tried = 0;
  std::function<void()> search = [&] {
    if (tried >= kMaxPermutations)
      return;
    if (perm.size() == sb.size()) {
      ++tried;
      int shared = 0;
      for (Value in : b.getInputs()) {
        auto t = tensorType(in);
        if (!isBroadcastOnly(t) &&
            findInput(inputsA, viewRoot(in), permutedType(t, perm, sa)) >= 0)
          ++shared;
      }
      if (shared > bestShared) {
        bestShared = shared;
        best = perm;
      }
      return;
    }
    for (size_t d = 0; d < sa.size(); ++d) {
      if (used[d] || sa[d] != sb[perm.size()])
        continue;
      used[d] = true;
      perm.push_back(d);
      search();
      perm.pop_back();
      used[d] = false;
    }
  };
  search();
  return {best, bestShared};
}

/// Block positions of the ops fuseSiblings meets, numbered once: asking
/// MLIR (`isBeforeInBlock`) after each merge inserted an op renumbered the
/// whole block, O(n) per merge and O(n^2) for an eval of n outputs
/// (docs/performance.md). A merged kernel takes the position of the kernel
/// whose place it took.
using Positions = DenseMap<Operation *, int64_t>;

bool isBefore(const Positions &at, Operation *x, Operation *y) {
  auto ix = at.find(x), iy = at.find(y);
  if (ix != at.end() && iy != at.end())
    return ix->second < iy->second;
  return x->isBeforeInBlock(y);
}

/// Merges sibling kernel `b` (later in the block) into `a` when they share
/// inputs and neither depends on the other: the merged kernel (where `b`
/// was, or, with `atB` false, where `a` was), or null. Cheap checks first: this
/// runs for every pair of kernels that read a common root.
KernelOp mergeSiblings(KernelOp a, KernelOp b, bool &atB, Positions &at) {
  if (a.getNumResults() + b.getNumResults() > kMaxSiblingResults ||
      a->getBlock() != b->getBlock() || !isBefore(at, a, b))
    return {};
  auto [perm, shared] = bestPermutation(a, b);
  if (shared == 0)
    return {};
  // Reduced dims over A's space: both kernels' must agree when both reduce.
  SmallVector<int64_t> reduceA = a.getReducedDims(), reduceB;
  llvm::sort(reduceA);
  for (int64_t d : b.getReducedDims())
    reduceB.push_back(perm[d]);
  llvm::sort(reduceB);
  if (!reduceA.empty() && !reduceB.empty() && reduceA != reduceB)
    return {};
  SmallVector<int64_t> reduce = reduceA.empty() ? reduceB : reduceA;

  // Inputs: A's, then B's that A does not read already (seen over A's
  // space), each once.
  ArrayRef<int64_t> space = a.getSpace();
  SmallVector<Value> inputsA(a.getInputs().begin(), a.getInputs().end());
  struct NewInput {
    Value root;
    StridedTensorType type;
  };
  SmallVector<NewInput> added;
  SmallVector<unsigned> argOfB;
  for (Value in : b.getInputs()) {
    auto type = permutedType(tensorType(in), perm, space);
    Value root = viewRoot(in);
    int found = findInput(inputsA, root, type);
    if (found < 0) {
      auto it = llvm::find_if(added, [&](const NewInput &n) {
        return n.root == root && n.type == type;
      });
      found = inputsA.size() + (it - added.begin());
      if (it == added.end())
        added.push_back({root, type});
    }
    argOfB.push_back(found);
  }
  if (inputsA.size() + added.size() > kMaxSiblingInputs)
    return {};

  // Where the merged kernel goes: where B was, if the ops between A and B
  // that depend on A are views (they move after it) and B does not depend
  // on A; else where A was, if every root B reads is defined before A.
  SmallPtrSet<Value, 8> tainted;
  for (Value r : a.getResults())
    tainted.insert(r);
  SmallVector<Operation *> dependents;
  atB = true;
  for (Operation *op = a->getNextNode(); op != b.getOperation() && atB;
       op = op->getNextNode()) {
    if (!llvm::any_of(op->getOperands(),
                      [&](Value v) { return tainted.contains(v); }))
      continue;
    atB = isa<StridedViewOp>(op) || getViewSource(op);
    dependents.push_back(op);
    for (Value r : op->getResults())
      tainted.insert(r);
  }
  for (Value in : b.getInputs())
    atB &= !tainted.contains(in);
  if (!atB) {
    dependents.clear();
    for (Value in : b.getInputs()) {
      Operation *def = viewRoot(in).getDefiningOp();
      if (def && (def->getBlock() != a->getBlock() || !isBefore(at, def, a)))
        return {};
    }
  }

  OpBuilder outer = atB ? OpBuilder(b) : OpBuilder(a);
  SmallVector<Value> inputs = inputsA;
  for (const NewInput &n : added)
    inputs.push_back(
        n.root.getType() == n.type
            ? n.root
            : outer.create<StridedViewOp>(b.getLoc(), n.type, n.root)
                  .getResult());

  SmallVector<Type> resultTypes(a.getResultTypes());
  resultTypes.append(b.getResultTypes().begin(), b.getResultTypes().end());
  auto merged =
      outer.create<KernelOp>(outer.getFusedLoc({a.getLoc(), b.getLoc()}),
                             resultTypes, space, inputs, Value());
  Block *body = new Block;
  merged.getBody().push_back(body);
  for (Value in : inputs)
    body->addArgument(tensorType(in).getElementType(), a.getLoc());
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  IRMapping map;
  SmallVector<Value> yields;
  for (auto [i, arg] : llvm::enumerate(a.getBodyBlock().getArguments()))
    map.map(arg, body->getArgument(i));
  for (Operation &op : a.getBodyBlock().without_terminator())
    inner.clone(op, map);
  for (Value y : a.getBodyBlock().getTerminator()->getOperands())
    yields.push_back(map.lookup(y));
  for (auto [i, arg] : llvm::enumerate(b.getBodyBlock().getArguments()))
    map.map(arg, body->getArgument(argOfB[i]));
  for (Operation &op : b.getBodyBlock().without_terminator()) {
    Operation *copy = inner.clone(op, map);
    // The same scalar op of the same operands is computed once.
    for (Operation &prior : *body) {
      if (&prior == copy)
        break;
      if (OperationEquivalence::isEquivalentTo(
              &prior, copy, OperationEquivalence::exactValueMatch,
              OperationEquivalence::ignoreValueEquivalence,
              OperationEquivalence::IgnoreLocations)) {
        for (auto [from, to] : llvm::zip(op.getResults(), prior.getResults()))
          map.map(from, to);
        copy->erase();
        break;
      }
    }
  }
  for (Value y : b.getBodyBlock().getTerminator()->getOperands())
    yields.push_back(map.lookup(y));
  inner.create<YieldOp>(a.getLoc(), yields);

  // Each result's order over A's space.
  SmallVector<int64_t> perms;
  bool identity = true;
  for (unsigned r = 0; r < a.getNumResults(); ++r)
    for (int64_t d : a.getResultPerm(r))
      perms.push_back(d);
  for (unsigned r = 0; r < b.getNumResults(); ++r)
    for (int64_t d : b.getResultPerm(r))
      perms.push_back(perm[d]);
  for (size_t i = 0; i < perms.size(); ++i)
    identity &= perms[i] == static_cast<int64_t>(i % space.size());
  if (!identity)
    merged.setResultPermsAttr(outer.getDenseI64ArrayAttr(perms));
  if (!reduce.empty()) {
    SmallVector<StringRef> combiners;
    for (KernelOp k : {a, b})
      for (unsigned r = 0; r < k.getNumResults(); ++r)
        combiners.push_back(k.getCombiner(r).empty() ? "none"
                                                     : k.getCombiner(r));
    merged.setReduceDimsAttr(outer.getDenseI64ArrayAttr(reduce));
    merged.setCombinersAttr(outer.getStrArrayAttr(combiners));
  }

  at[merged] = at.lookup(atB ? b.getOperation() : a.getOperation());
  for (auto [i, r] : llvm::enumerate(a.getResults()))
    r.replaceAllUsesWith(merged.getResult(i));
  for (auto [i, r] : llvm::enumerate(b.getResults()))
    r.replaceAllUsesWith(merged.getResult(a.getNumResults() + i));
  Operation *last = merged;
  for (Operation *op : dependents) {
    op->moveAfter(last);
    last = op;
  }
  // Erase A and B, then the views only they read.
  SmallVector<Operation *> feeders;
  for (KernelOp k : {a, b})
    for (Value in : k.getInputs())
      if (auto view = in.getDefiningOp<StridedViewOp>())
        feeders.push_back(view);
  at.erase(a);
  at.erase(b);
  a.erase();
  b.erase();
  while (!feeders.empty()) {
    Operation *view = feeders.pop_back_val();
    if (!view->use_empty() || llvm::is_contained(feeders, view))
      continue;
    if (auto source = view->getOperand(0).getDefiningOp<StridedViewOp>())
      feeders.push_back(source);
    at.erase(view);
    view->erase();
  }
  return merged;
}

/// Merges sibling kernels in `block`: each kernel, in order, with the
/// first of the next kSiblingWindow kernels it can merge with; the merged
/// kernel takes the place of the kernel whose position it took and is
/// tried again from there. At most kSiblingWindow pair checks per kernel.
void fuseSiblings(Block &block) {
  SmallVector<KernelOp> kernels;
  Positions at;
  for (Operation &op : block) {
    at[&op] = static_cast<int64_t>(at.size());
    if (auto k = dyn_cast<KernelOp>(op); k && isSiblingCandidate(k))
      kernels.push_back(k);
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!kernels[i])
      continue;
    // Cheap filter: B must read some root A reads.
    SmallPtrSet<Value, 8> roots;
    for (Value in : kernels[i].getInputs())
      if (!isBroadcastOnly(tensorType(in)))
        roots.insert(viewRoot(in));
    unsigned scanned = 0;
    for (size_t j = i + 1; j < kernels.size() && scanned < kSiblingWindow;
         ++j) {
      if (kernels[j])
        ++scanned;
      if (!kernels[j] || llvm::none_of(kernels[j].getInputs(), [&](Value in) {
            return roots.contains(viewRoot(in));
          }))
        continue;
      bool atB = true;
      KernelOp merged = mergeSiblings(kernels[i], kernels[j], atB, at);
      if (!merged)
        continue;
      // Keep the list in block order: the merged kernel takes the slot of
      // the kernel whose place it took, and is tried from there.
      if (atB) {
        kernels[i] = nullptr;
        kernels[j] = merged;
        break;
      }
      kernels[i] = merged;
      kernels[j] = nullptr;
      for (Value in : merged.getInputs())
        if (!isBroadcastOnly(tensorType(in)))
          roots.insert(viewRoot(in));
    }
  }
}

struct FusePass : public strata::impl::FuseBase<FusePass> {
  using FuseBase::FuseBase;

  /// mean as PyTorch's CPU mean computes it: sum(x), then one division by
  /// the count (summing x / n rounds otherwise: the f64 mean of six ones
  /// was 1 - 2^-53, and pow of a negative base by it NaN). The division
  /// fuses into the reduction's consumers; an empty mean is 0 / 0 = NaN.
  void splitMeans() {
    SmallVector<MeanOp> means;
    getOperation().walk([&](MeanOp m) {
      if (!m->getParentOfType<KernelOp>())
        means.push_back(m);
    });
    for (MeanOp m : means) {
      auto in = tensorType(m.getInput());
      int64_t rank = in.getRank();
      SmallVector<bool> reduced(rank, m.getDims().empty());
      for (int64_t d : m.getDims())
        if (rank > 0)
          reduced[d < 0 ? d + rank : d] = true;
      int64_t count = 1;
      for (int64_t d = 0; d < rank; ++d)
        if (reduced[d])
          count *= in.getShape()[d];
      OpBuilder b(m);
      Location loc = m.getLoc();
      Type element = tensorType(m.getResult()).getElementType();
      Value sum = b.create<SumOp>(loc, m.getInput(), m.getDimsAttr(),
                                  m.getKeepdimAttr());
      Value n =
          b.create<FillOp>(loc, StridedTensorType::getContiguous(element, {}),
                           b.getF64FloatAttr(double(count)));
      auto div = b.create<DivOp>(loc, sum, n);
      if (div.getType() != m.getType()) { // (not expected: keep the mean)
        div.erase();
        n.getDefiningOp()->erase();
        sum.getDefiningOp()->erase();
        continue;
      }
      m.getResult().replaceAllUsesWith(div.getResult());
      m.erase();
    }
  }

  void runOnOperation() override {
    splitMeans();
    SmallVector<Operation *> roots;
    getOperation().walk([&](Operation *op) {
      if (op->getDialect() && isa<StrataDialect>(op->getDialect()) &&
          !isa<KernelOp, YieldOp>(op) && !op->getParentOfType<KernelOp>() &&
          !isInlined(op) &&
          !isZeroDimFill(op->getNumResults() ? op->getResult(0) : Value()))
        roots.push_back(op);
    });
    SmallVector<Operation *> replaced;
    for (Operation *op : roots) {
      if (Value v = strata::fuseIndexOp(op)) { // FuseIndexOps.cpp
        op->getResult(0).replaceAllUsesWith(v);
        replaced.push_back(op);
        continue;
      }
      KernelOp kernel = buildKernel(op);
      if (!kernel)
        continue;
      op->getResult(0).replaceAllUsesWith(resultValue(kernel, op));
      replaced.push_back(op);
    }
    // Erase the replaced ops and whatever only fed them, last user first.
    SmallVector<Operation *> all;
    getOperation().walk([&](Operation *op) {
      if (op->getDialect() && isa<StrataDialect>(op->getDialect()) &&
          !isa<KernelOp, YieldOp>(op) && !op->getParentOfType<KernelOp>())
        all.push_back(op);
    });
    for (Operation *op : llvm::reverse(all))
      if (op->use_empty() && (isElementwise(op) || isReduction(op) ||
                              isa<FillOp, ArangeOp, MatmulOp, ScanOp, WriteOp,
                                  CopyOp, ContiguousOp, ReshapeOp, FlattenOp,
                                  GatherOp, ScatterOp, ScatterAddOp>(op)))
        op->erase();
    // 0-d fills still used outside kernels (returned, viewed) get a kernel.
    getOperation().walk([&](FillOp fill) {
      KernelOp kernel = buildKernel(fill);
      fill.getResult().replaceAllUsesWith(kernel.getResult(0));
      fill.erase();
    });
    if (siblings)
      for (Block &block : getOperation().getBody())
        fuseSiblings(block);
  }
};

} // namespace
