//===- CreateGraph.cpp - Gradients recorded as a graph (create_graph) -----===//
//
// The differentiated gradient program, replayed as DSL ops (CreateGraph.h).
// Each IR value becomes a tensor whose elements are the value's; where IR
// reinterprets a value's storage (a view's result type is its layout in the
// root), the tensor is first given the IR value's exact layout, so the view
// becomes one `as_strided` of it. Compute ops are recorded with the IR's
// mnemonic, dtype and sizes (recordOp), so the second differentiation uses
// the same VJPs as the first.
//
//===----------------------------------------------------------------------===//

#include "CreateGraph.h"

#include "AutogradEngine.h"
#include "Impl.h"
#include "ProgramCache.h"

#include "strata/Functions.h"
#include "strata/IR/ProgramModule.h"
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/Jit.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

using namespace strata;
using namespace strata::detail;
using namespace strata::ir;
using strata::detail::engine::stridedView;

namespace {

/// The IR mnemonic as a name of static lifetime (Node::name).
const char *intern(llvm::StringRef name) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> names;
  std::lock_guard<std::mutex> lock(mutex);
  return names.emplace(name.str()).first->c_str();
}

DType dtypeOf(mlir::Type type, const SourceLoc &loc) {
  if (std::optional<DType> dtype = elementDType(type))
    return *dtype;
  fail("create_graph: a gradient value of an unsupported element type",
       "this is a strata bug", loc);
}

layout::Layout layoutOf(mlir::Value v) {
  return v.getType().cast<StridedTensorType>().getLayout();
}

/// The largest storage index `l` reaches, plus one (0 when empty).
int64_t extentOf(const layout::Layout &l) {
  if (l.numel() == 0)
    return 0;
  auto [lo, hi] = layout::indexRange(l);
  (void)lo;
  return hi + 1;
}

struct Replay {
  explicit Replay(const SourceLoc &l) : loc(l) {}
  const SourceLoc &loc;
  llvm::DenseMap<mlir::Value, Tensor> values;
  /// Storage values: the tensor addressing the storage and its element 0.
  llvm::DenseMap<mlir::Value, std::pair<Tensor, int64_t>> storages;
  /// Values computed from an argument that requires grad: that argument's
  /// tensor (a comparison or a cast to bool ends requires_grad, not this).
  llvm::DenseMap<mlir::Value, Tensor> taint;

  [[noreturn]] void unsupported(mlir::Operation *op) {
    fail("create_graph: strata cannot yet record the gradient through '" +
             op->getName().getStringRef().str() + "' as a differentiable graph",
         "this is a strata bug (every op a gradient program holds has a "
         "recorded form); compute this gradient without create_graph",
         loc);
  }

  /// A tensor with `v`'s elements whose layout in its storage is `v`'s
  /// IR type's (sizes, strides, offset): a copy when the recorded layout
  /// differs, into a fresh storage of the extent `want` reaches.
  Tensor laidOut(mlir::Value v, int64_t extent) {
    Tensor t = values.lookup(v);
    layout::Layout want = layoutOf(v);
    const layout::Layout &have = t.impl()->layout;
    if (have == want && t.impl()->root->numel >= extent)
      return t;
    Tensor fresh = empty({std::max(extent, extentOf(want))},
                         TensorOptions(t.dtype()), loc);
    stridedView(fresh, want, 0, loc).copy_(t, loc);
    return fresh;
  }

  /// A view op: the result type is its layout in the source's root.
  Tensor view(mlir::Operation *op, mlir::Value source) {
    layout::Layout l = layoutOf(op->getResult(0));
    if (source.getType().isa<StorageType>()) {
      auto &[t, base] = storages[source];
      return stridedView(t, l, base, loc);
    }
    return stridedView(laidOut(source, extentOf(l)), l, 0, loc);
  }

  Tensor compute(mlir::Operation *op, Op kind, Shape dims = {},
                 bool keepdim = false) {
    std::vector<Tensor> ins;
    for (mlir::Value v : op->getOperands())
      ins.push_back(values.lookup(v));
    std::vector<const Tensor *> ptrs;
    for (const Tensor &t : ins)
      ptrs.push_back(&t);
    auto type = op->getResult(0).getType().cast<StridedTensorType>();
    Shape sizes(type.getShape().begin(), type.getShape().end());
    return recordOp(kind, intern(op->getName().stripDialect()),
                    dtypeOf(type, loc), std::move(sizes), ptrs, loc,
                    std::move(dims), keepdim);
  }

  Tensor fill(FillOp op) {
    auto type = op.getResult().getType().cast<StridedTensorType>();
    DType dtype = dtypeOf(type, loc);
    Scalar value =
        op.getValue().isa<mlir::IntegerAttr>()
            ? Scalar(op.getValue().cast<mlir::IntegerAttr>().getInt())
            : Scalar(op.getValue().cast<mlir::FloatAttr>().getValueAsDouble());
    if (dtype == DType::Bool)
      value = Scalar(value.toDouble() != 0);
    Tensor number = scalarTensor(value, dtype, loc);
    if (type.getRank() == 0)
      return number;
    Shape sizes(type.getShape().begin(), type.getShape().end());
    return number.expand(sizes, loc);
  }

  /// `strata.arange`: a node of its own (the IR's start and step, exact
  /// for integers).
  Tensor arange(ArangeOp op) {
    auto type = op.getResult().getType().cast<StridedTensorType>();
    Shape sizes(type.getShape().begin(), type.getShape().end());
    Tensor t =
        recordOp(Op::Arange, "arange", dtypeOf(type, loc), sizes, {}, loc);
    Node &n = *t.impl()->root->current;
    auto start = op.getStart().dyn_cast<mlir::IntegerAttr>();
    auto step = op.getStep().dyn_cast<mlir::IntegerAttr>();
    if (start && step) {
      n.exact = true;
      n.ia = start.getInt();
      n.ib = step.getInt();
      n.a = static_cast<double>(n.ia);
      n.b = static_cast<double>(n.ib);
    } else {
      auto number = [](mlir::Attribute a) {
        if (auto i = a.dyn_cast<mlir::IntegerAttr>())
          return static_cast<double>(i.getInt());
        return a.cast<mlir::FloatAttr>().getValueAsDouble();
      };
      n.a = number(op.getStart());
      n.b = number(op.getStep());
    }
    return t;
  }

  Tensor straightThrough(const Tensor &old, const Tensor &value) {
    return strata::detail::straightThrough(old, value, loc);
  }

  /// `strata.recorded %recompute as %value`: the value recorded (an
  /// untracked write's, with value_only), differentiated as `recompute`.
  void recorded(RecordedOp op) {
    mlir::Value old = op.getRecompute(), value = op.getValue();
    if (auto type = old.getType().dyn_cast<StorageType>()) {
      int64_t n = type.getSize();
      auto flat = [&](mlir::Value v) {
        auto &[t, base] = storages[v];
        return t.as_strided({n}, {1}, base, loc);
      };
      storages[op.getResult()] = {straightThrough(flat(old), flat(value)), 0};
      return;
    }
    values[op.getResult()] =
        straightThrough(values.lookup(old), values.lookup(value));
  }

  /// A scan: cumsum/cumprod, reversed by flips, made exclusive by shifting
  /// the inclusive scan one place (the identity first).
  Tensor scan(ScanOp op) {
    Tensor x = values.lookup(op.getInput());
    int64_t dim = op.getDim();
    bool sum = op.getCombiner() == "sum";
    if (op.getReverse())
      x = x.flip({dim}, loc);
    Tensor r = sum ? x.cumsum(dim, std::nullopt, loc)
                   : x.cumprod(dim, std::nullopt, loc);
    if (op.getExclusive() && x.dim() > 0 && x.size(dim) > 0) {
      Tensor first = full_like(r.narrow(dim, 0, 1, loc), sum ? 0 : 1,
                               TensorOptions(), loc);
      r = cat({first, r.narrow(dim, 0, x.size(dim) - 1, loc)}, dim, loc);
    } else if (op.getExclusive()) {
      r = full_like(r, sum ? 0 : 1, TensorOptions(), loc);
    }
    return op.getReverse() ? r.flip({dim}, loc) : r;
  }

  /// `write %v into %dest`: a new version of dest's root storage (IR
  /// writes are functional: the old version stays readable), a copy of
  /// it with v copied into dest's elements, as a storage value.
  void write(WriteOp op) {
    mlir::Value dest = op.getDest();
    mlir::Value root = getStorageRoot(dest);
    int64_t size = op.getResult().getType().cast<StorageType>().getSize();
    Tensor flat;
    if (root.getType().isa<StorageType>()) {
      auto &[t, base] = storages[root];
      flat = t.as_strided({size}, {1}, base, loc);
    } else {
      flat = laidOut(root, size).as_strided({size}, {1}, 0, loc);
    }
    Tensor copy = flat.clone(loc);
    layout::Layout l = layoutOf(dest);
    stridedView(copy, l, 0, loc).copy_(values.lookup(op.getSrc()), loc);
    storages[op.getResult()] = {copy, 0};
  }

  Tensor replay(mlir::Operation *op) {
    if (mlir::Value source = getViewSource(op))
      return view(op, source);
    auto sizesOf = [&] {
      auto type = op->getResult(0).getType().cast<StridedTensorType>();
      return Shape(type.getShape().begin(), type.getShape().end());
    };
    if (isa<ReshapeOp, FlattenOp>(op)) // (copies: the view case is above)
      return values.lookup(op->getOperand(0)).reshape(sizesOf(), loc);
    if (isa<ContiguousOp>(op))
      return values.lookup(op->getOperand(0)).contiguous(loc);
    if (auto d = dyn_cast<DetachOp>(op))
      return values.lookup(d.getInput()).detach(loc);
    if (auto f = dyn_cast<FillOp>(op))
      return fill(f);
    if (auto a = dyn_cast<ArangeOp>(op))
      return arange(a);
    if (auto s = dyn_cast<ScanOp>(op))
      return scan(s);
    if (isa<CastOp>(op))
      return compute(op, Op::Cast);
    if (isa<CopyOp>(op))
      return compute(op, Op::Copy);
    if (isa<WhereOp, LerpOp, FmaOp>(op))
      return compute(op, Op::Where);
    if (isa<MatmulOp>(op))
      return compute(op, Op::Matmul);
    if (auto g = dyn_cast<GatherOp>(op))
      return compute(op, Op::Index, {static_cast<int64_t>(g.getDim())});
    if (auto s = dyn_cast<ScatterOp>(op))
      return compute(op, Op::Index, {static_cast<int64_t>(s.getDim())});
    if (auto s = dyn_cast<ScatterAddOp>(op))
      return compute(op, Op::Index, {static_cast<int64_t>(s.getDim())});
    if (isa<ReductionOpInterface>(op)) {
      auto dims = op->getAttrOfType<mlir::DenseI64ArrayAttr>("dims");
      if (!dims)
        unsupported(op);
      return compute(op, Op::Reduce,
                     Shape(dims.asArrayRef().begin(), dims.asArrayRef().end()),
                     op->hasAttr("keepdim"));
    }
    if (isa<ElementwiseOpInterface>(op))
      return compute(op, op->getNumOperands() == 1 ? Op::Unary : Op::Binary);
    unsupported(op);
  }
};

} // namespace

Tensor strata::detail::straightThrough(const Tensor &old, const Tensor &value,
                                       const SourceLoc &loc) {
  // PyTorch's own idiom: a copy of `old` written in no-grad mode keeps
  // old's history and takes value's elements (an untracked write).
  Tensor r = old.clone(loc);
  NoGradGuard noGrad;
  r.copy_(value, loc);
  return r;
}

namespace {
/// The program value (ir::Program::Value) of a forward op, or of a rule's
/// copy of it, in the differentiated program.
constexpr llvm::StringLiteral kValueAttr = "strata.value";

/// A differentiated gradient program, kept for the next step of the same
/// structure (parsing and differentiating cost more than the replay).
struct Differentiated {
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// The context is single-threaded: one replay at a time reads it.
  std::mutex mutex;
};

ProgramCache<Differentiated> &differentiatedCache() {
  static ProgramCache<Differentiated> cache;
  return cache;
}

std::unique_ptr<Differentiated> differentiate(const ir::Program &program,
                                              const SourceLoc &loc) {
  auto d = std::make_unique<Differentiated>();
  jit::loadDialects(d->context);
  std::string error;
  d->module = ir::buildModule(program, d->context, error);
  if (!d->module)
    fail("strata could not build the gradient program: " + error,
         "this is a strata bug; the program was:\n" + program.print(), loc);
  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &d->context, diagOS);
  // Each op's program value, on the op: the ops rules rebuild from the
  // forward's (StrataVJPRecompute.cpp) keep it, those they make have none.
  mlir::Builder b(&d->context);
  auto func = d->module->lookupSymbol<mlir::func::FuncOp>("main");
  for (auto [op, o] :
       llvm::zip(func.getBody().front().without_terminator(), program.opList()))
    if (!getViewSource(&op))
      op.setAttr(kValueAttr, b.getI64IntegerAttr(o.result));
  mlir::PassManager pm(&d->context);
  DifferentiateOptions options;
  options.keepMarkers = true;
  pm.addNestedPass<mlir::func::FuncOp>(createDifferentiate(options));
  if (mlir::failed(pm.run(*d->module)))
    fail("strata could not differentiate the gradient program: " + diagOS.str(),
         "this is a strata bug; the program was:\n" + program.print(), loc);
  return d;
}
} // namespace

std::vector<Tensor> strata::detail::replayGradientProgram(
    const ir::Program &program, const std::vector<ReplayArg> &args,
    const std::unordered_map<ir::Program::Value, NodePtr> &origins,
    const SourceLoc &loc) {
  bool hit = false;
  std::shared_ptr<Differentiated> d = differentiatedCache().get(
      program.key(), [&] { return differentiate(program, loc); }, hit);
  std::lock_guard<std::mutex> lock(d->mutex);
  mlir::ModuleOp module = *d->module;
  if (runtime::settings::debugLevel() >= 3) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os);
    fprintf(stderr, "[strata] create_graph replays:\n%s\n", os.str().c_str());
  }
  auto func = module.lookupSymbol<mlir::func::FuncOp>("main");
  if (!func || func.getNumArguments() != args.size())
    fail("create_graph: the gradient program's arguments do not match",
         "this is a strata bug", loc);
  Replay r(loc);
  for (auto [v, a] : llvm::zip(func.getArguments(), args)) {
    if (a.storage)
      r.storages[v] = {a.tensor, a.base};
    else
      r.values[v] = a.tensor;
    if (a.tensor.requires_grad())
      r.taint[v] = a.tensor;
  }
  std::vector<Tensor> results;
  for (mlir::Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<mlir::func::ReturnOp>(op)) {
      for (mlir::Value v : ret.getOperands()) {
        Tensor g = r.values.lookup(v);
        // PyTorch's backward of relu, abs, ... reads a saved tensor that
        // requires grad, so its result does too (with a zero derivative
        // where only a comparison reads it): the same here, through a
        // where() that never selects the anchor.
        auto t = r.taint.find(v);
        if (!g.requires_grad() && t != r.taint.end() &&
            isFloatingPoint(g.dtype())) {
          Tensor anchor = t->second.sum(loc).to(g.dtype(), loc);
          g = where(scalarTensor(Scalar(false), DType::Bool, loc), anchor, g,
                    loc);
        }
        results.push_back(g);
      }
      break;
    }
    for (mlir::Value in : op.getOperands())
      if (auto t = r.taint.find(in); t != r.taint.end()) {
        Tensor source = t->second; // (inserting may move the entries)
        for (mlir::Value out : op.getResults())
          r.taint[out] = source;
        break;
      }
    // The copy of a forward op stands for it (see `origins`): the node
    // the op's replay made (not one an earlier op made, which a reshape's
    // view reads).
    NodePtr origin;
    uint64_t before = 0;
    if (auto v = op.getAttrOfType<mlir::IntegerAttr>(kValueAttr))
      if (auto it = origins.find(v.getInt()); it != origins.end()) {
        origin = it->second->recomputes();
        if (!origin)
          origin = it->second;
        before = Node::nextSeq();
      }
    auto standFor = [&](const Tensor &t) {
      const NodePtr &n = t.impl()->root->current;
      if (origin && n->seq > before)
        n->rareFields().recomputes = origin;
    };
    if (auto w = dyn_cast<WriteOp>(op)) {
      r.write(w);
      standFor(r.storages[w.getResult()].first);
      continue;
    }
    if (auto rec = dyn_cast<RecordedOp>(op)) {
      r.recorded(rec);
      continue;
    }
    if (auto d = dyn_cast<DetachOp>(op);
        d && d.getInput().getType().isa<StorageType>()) {
      auto [t, base] = r.storages[d.getInput()];
      r.storages[d.getResult()] = {t.detach(loc), base};
      continue;
    }
    if (op.getNumResults() != 1 ||
        !op.getResult(0).getType().isa<StridedTensorType>())
      r.unsupported(&op);
    r.values[op.getResult(0)] = r.replay(&op);
    standFor(r.values[op.getResult(0)]);
  }
  return results;
}
