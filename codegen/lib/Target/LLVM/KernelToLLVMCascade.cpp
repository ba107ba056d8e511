//===- KernelToLLVMCascade.cpp - cascade sums of the kernel emitter -------===//
//
// Assumes: results that --strata-widen-sums marked (an f64 sum whose body
//   value is an `arith.extf` of an f32 value carrying kCascadeAttrName).
// Guarantees: such a result adds its f32 values in f32 over bounded runs,
//   then each run's partial once into its f64 accumulator, so the error
//   grows with the run length, not the sum length (PyTorch's cascade sum).
// Algorithm: a result the innermost loop accumulates in a register runs
//   kCascadeRun points per f32 partial (emitCascadeRuns); one written at
//   every point of the innermost loop (read-modify-write, e.g. `a.sum(0)`)
//   sums blocks of kCascadeRows iterations of its innermost reduced loop
//   into an f32 scratch row on the stack, added to the result once per
//   block (emitScratchLevel). Tile accumulators (KernelToLLVMVector.cpp)
//   hold f32 vectors of a tile's values.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"
#include "strata/Layout/LayoutAlgebra.h"

#include <functional>

using namespace strata::codegen::detail;

namespace {

/// The layout of a scratch row of the level at nest loop `dim`: dense
/// (row-major) over the loops inside `dim`, as the layout algebra lays out
/// a fresh tensor of those sizes.
strata::layout::Layout scratchRow(const std::vector<int64_t> &sizes,
                                  size_t dim) {
  return strata::layout::contiguous(
      strata::layout::IntList(sizes).subspan(dim + 1));
}

} // namespace

mlir::Value Emitter::cascadeSource(unsigned r) {
  if (k.getCombiner(r) != "sum")
    return {};
  mlir::Value y = k.getBodyBlock().getTerminator()->getOperand(r);
  auto ext = y.getDefiningOp<mlir::arith::ExtFOp>();
  if (!ext || !ext->hasAttr(kCascadeAttrName) ||
      !ext.getIn().getType().isF32() || !ext.getType().isF64())
    return {};
  return ext.getIn();
}

/// Picks the loop whose blocks sum into scratch rows: the innermost loop
/// with size > 1 that a cascade result does not move along, for results
/// that move along the innermost loop (untiled nests; each row at most
/// kMaxScratch elements; one such loop per kernel, the first result's).
void Emitter::planCascade() {
  size_t n = nest.sizes.size();
  unsigned numInputs = k.getInputs().size();
  if (n == 0 || tiledDim >= 0)
    return;
  for (unsigned r = 0; r < k.getNumResults(); ++r) {
    const auto &st = nest.strides[numInputs + r];
    if (!cascade[r] || st[n - 1] == 0)
      continue;
    int dim = -1;
    for (size_t d = n; d-- > 0 && dim < 0;)
      if (st[d] == 0 && nest.sizes[d] > 1)
        dim = static_cast<int>(d);
    if (dim < 0 || (scratchDim >= 0 && dim != scratchDim))
      continue;
    if (scratchRow(nest.sizes, dim).numel() > kMaxScratch)
      continue;
    scratchDim = dim;
    scratchResults.push_back(r);
  }
}

/// The loop of scratchDim in blocks of kCascadeRows iterations: each block
/// sums the scratch results into zeroed f32 rows (dense over the inner
/// loops), then adds each row element once into its f64 result.
bool Emitter::emitScratchLevel(const Level &l, std::string &error) {
  ScratchRows s;
  strata::layout::Layout row = scratchRow(nest.sizes, l.dim);
  s.elements = row.numel();
  s.strides.assign(l.dim + 1, 0); // the row does not move along these
  s.strides.append(row.strides.begin(), row.strides.end());
  // A dynamic kernel's row is dense over the sizes of this call (at most
  // kMaxScratch elements: planCascade's condition, in the key), in an
  // array of kMaxScratch.
  size_t n = nest.sizes.size();
  bool dynamicRow = false;
  for (size_t d = l.dim + 1; d < n; ++d)
    dynamicRow |= !staticSize(d);
  s.strideValues.assign(n, nullptr);
  Value *elements = b.getInt64(1);
  for (size_t d = n; d-- > l.dim + 1;) {
    s.strideValues[d] = elements;
    elements = b.CreateMul(elements, sizeValue(d));
  }
  s.bytes = b.CreateMul(elements, b.getInt64(4));
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  auto *rowType = llvm::ArrayType::get(b.getFloatTy(),
                                       dynamicRow ? kMaxScratch : s.elements);
  for (size_t r = 0; r < scratchResults.size(); ++r) {
    llvm::AllocaInst *a = entry.CreateAlloca(rowType);
    a->setAlignment(llvm::Align(64));
    s.rows.push_back(a);
  }
  bool ok = true;
  emitFor(
      l.lo, l.hi, {},
      [&](Value *c, llvm::ArrayRef<Value *>) {
        ok = emitScratchBlock(l, s, c, error);
        return llvm::SmallVector<Value *>();
      },
      kCascadeRows);
  return ok;
}

/// One block of the scratch loop from `c`: the rows zeroed, the block's
/// iterations run with the scratch results' stores redirected to the rows,
/// then the rows added into the results.
bool Emitter::emitScratchBlock(const Level &l, const ScratchRows &s, Value *c,
                               std::string &error) {
  unsigned numInputs = k.getInputs().size();
  Value *e = clampedEnd(c, kCascadeRows, l.hi);
  for (Value *r : s.rows)
    b.CreateMemSet(r, b.getInt8(0), s.bytes, llvm::Align(64));
  // The block writes the rows instead of the results.
  struct Saved {
    Value *base;
    llvm::Type *memType;
    mlir::Type type;
    llvm::SmallVector<int64_t> strides;
    llvm::SmallVector<Value *> dynStrides;
  };
  llvm::SmallVector<Saved> saved;
  llvm::SmallVector<Value *> blockIndex(l.index);
  for (size_t r = 0; r < scratchResults.size(); ++r) {
    unsigned op = numInputs + scratchResults[r];
    saved.push_back({bases[op],
                     memTypes[op],
                     types[op],
                     llvm::SmallVector<int64_t>(nest.strides[op].begin(),
                                                nest.strides[op].end()),
                     {}});
    if (!dynStrides.empty()) {
      saved.back().dynStrides = dynStrides[op];
      dynStrides[op].assign(s.strideValues.begin(), s.strideValues.end());
    }
    bases[op] = s.rows[r];
    memTypes[op] = b.getFloatTy();
    types[op] = mlir::Float32Type::get(k.getContext());
    nest.strides[op].assign(s.strides.begin(), s.strides.end());
    blockIndex[op] = b.getInt64(0);
  }
  bool ok = true;
  emitFor(c, e, {}, [&](Value *i, llvm::ArrayRef<Value *>) {
    ok = ok && emitLevel(l.level + 1, advance(blockIndex, i, l.dim),
                         withIv(l.ivs, i), error);
    return llvm::SmallVector<Value *>();
  });
  for (size_t r = 0; r < scratchResults.size(); ++r) {
    unsigned op = numInputs + scratchResults[r];
    bases[op] = saved[r].base;
    memTypes[op] = saved[r].memType;
    types[op] = saved[r].type;
    nest.strides[op].assign(saved[r].strides.begin(), saved[r].strides.end());
    if (!dynStrides.empty())
      dynStrides[op] = saved[r].dynStrides;
    flushScratchRow(op, s.rows[r], s, l.dim, l.index[op]);
  }
  return ok;
}

/// Adds `row`[j] into result operand `op` at `index`, over the loops
/// inside `dim`.
void Emitter::flushScratchRow(unsigned op, Value *row, const ScratchRows &s,
                              size_t dim, Value *index) {
  size_t n = nest.sizes.size();
  std::function<void(size_t, Value *, Value *)> flush = [&](size_t d, Value *at,
                                                            Value *out) {
    if (d == n) {
      Value *v = b.CreateLoad(b.getFloatTy(),
                              b.CreateInBoundsGEP(b.getFloatTy(), row, at));
      store(op, out, combine("sum", load(op, out), v));
      return;
    }
    emitFor(b.getInt64(0), sizeValue(d), {},
            [&](Value *j, llvm::ArrayRef<Value *>) {
              auto step = [&](Value *x, int64_t st, Value *stride) {
                return st ? b.CreateAdd(x, b.CreateMul(j, stride)) : x;
              };
              flush(d + 1, step(at, s.strides[d], s.strideValues[d]),
                    step(out, nest.strides[op][d], strideValue(op, d)));
              return llvm::SmallVector<Value *>();
            });
  };
  flush(dim + 1, b.getInt64(0), index);
}

/// The innermost loop's cascade sums: an f32 partial per run of
/// kCascadeRun points, added to the f64 accumulator after its run. The
/// accumulators' final values.
llvm::SmallVector<Value *>
Emitter::emitCascadeRuns(const Level &l, llvm::ArrayRef<Value *> init, bool &ok,
                         std::string &error) {
  return emitFor(
      l.lo, l.hi, init,
      [&](Value *c, llvm::ArrayRef<Value *> acc) {
        Value *e = clampedEnd(c, kCascadeRun, l.hi);
        llvm::SmallVector<Value *> start, next;
        for (size_t a = 0; a < l.accumulated.size(); ++a)
          start.push_back(cascade[l.accumulated[a]]
                              ? llvm::ConstantFP::get(b.getFloatTy(), 0.0)
                              : acc[a]);
        auto part = scalarLoop(l, c, e, false, start, ok, error);
        for (size_t a = 0; a < l.accumulated.size(); ++a)
          next.push_back(cascade[l.accumulated[a]]
                             ? combine("sum", acc[a], part[a])
                             : part[a]);
        return next;
      },
      kCascadeRun);
}
