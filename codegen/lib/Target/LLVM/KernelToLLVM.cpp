//===- KernelToLLVM.cpp - strata.kernel to LLVM IR with IRBuilder ---------===//
//
// Assumes: a verified strata.kernel whose body holds the arith/math ops
//   --strata-fuse emits; its loop nest (coalesced or not) is static.
// Guarantees: one function with the ABI of KernelToLLVM.h that computes the
//   kernel for outermost-loop iterations [begin, end). Deterministic: the
//   same kernel gives the same text.
// Algorithm: a perfect loop nest, outermost first, with every operand's
//   element index carried as `base + sum(i * stride)` of constants (so the
//   innermost loop of a unit-stride operand is a plain `p[i]` that LLVM's
//   loop vectorizer takes). A reducing result whose innermost stride is 0
//   accumulates in a register over the innermost loop (reassociable float
//   adds, so sums vectorize); otherwise it is read-modified-written per
//   point. The runtime fills reducing results with the identity first.
//   When operands disagree on the unit-stride loop (transposed access), the
//   two loops are blocked kBlock x kBlock (TLB and L2 reuse) and tiled
//   kTile x kTile within a block (planLoops); a full tile runs 8x8 (4x4 for
//   64-bit elements) micro-kernels on vectors along the innermost loop, whose
//   transposed operands are loaded (stored) as vectors along the other loop
//   and transposed in registers with shuffles (emitMicroKernel); partial
//   tiles at the edges run the scalar loops. The vectors are plain LLVM
//   vectors: AVX2 hosts get unpck/shufps/vperm2f128, others a legal split.
//   Before a full tile runs, the lines the next tile along the innermost
//   loop reads are prefetched (prefetchNextTile).
//   Cascade sums (an f64 sum of f32 values that --strata-widen-sums marked)
//   add their f32 values in f32 over bounded runs, at f32 vector width, and
//   each run's partial once into the f64 accumulator: register
//   accumulators over runs of kCascadeRun points of the innermost loop,
//   tile accumulators over a tile, and read-modify-written results over
//   blocks of kCascadeRows iterations of their innermost reduced loop into
//   an f32 scratch row on the stack (emitScratchLevel). Like PyTorch's
//   cascade sum: the error grows with the run length, not the sum length.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "mlir/IR/AsmState.h"

#include "llvm/IR/Verifier.h"

#include <functional>

using namespace strata::codegen::detail;

llvm::SmallVector<Value *> Emitter::emitFor(Value *lo, Value *hi,
                                            llvm::ArrayRef<Value *> init,
                                            BodyFn body, int64_t step,
                                            bool scalarOnly) {
  llvm::Function *f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock *pre = b.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx, "loop", f);
  auto *exit = llvm::BasicBlock::Create(ctx, "loop.exit", f);
  b.CreateCondBr(b.CreateICmpSLT(lo, hi), header, exit);
  b.SetInsertPoint(header);
  llvm::PHINode *iv = b.CreatePHI(b.getInt64Ty(), 2, "i");
  iv->addIncoming(lo, pre);
  llvm::SmallVector<llvm::PHINode *> phis;
  llvm::SmallVector<Value *> carried;
  for (Value *v : init) {
    phis.push_back(b.CreatePHI(v->getType(), 2));
    phis.back()->addIncoming(v, pre);
    carried.push_back(phis.back());
  }
  llvm::SmallVector<Value *> next = body(iv, carried);
  Value *inext = b.CreateAdd(iv, b.getInt64(step), "", true, true);
  llvm::BasicBlock *latch = b.GetInsertBlock();
  iv->addIncoming(inext, latch);
  for (size_t i = 0; i < phis.size(); ++i)
    phis[i]->addIncoming(next[i], latch);
  llvm::BranchInst *back =
      b.CreateCondBr(b.CreateICmpSLT(inext, hi), header, exit);
  if (scalarOnly) {
    // Alignment peel and remainder: a few iterations, not worth vectorizing.
    llvm::Metadata *off[] = {
        llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
        llvm::ConstantAsMetadata::get(b.getFalse())};
    llvm::Metadata *ops[] = {nullptr, llvm::MDNode::get(ctx, off)};
    auto *loopId = llvm::MDNode::getDistinct(ctx, ops);
    loopId->replaceOperandWith(0, loopId);
    back->setMetadata(llvm::LLVMContext::MD_loop, loopId);
  }
  b.SetInsertPoint(exit);
  llvm::SmallVector<Value *> out;
  for (size_t i = 0; i < init.size(); ++i) {
    llvm::PHINode *p = b.CreatePHI(init[i]->getType(), 2);
    p->addIncoming(init[i], pre);
    p->addIncoming(next[i], latch);
    out.push_back(p);
  }
  return out;
}

Value *Emitter::emitOp(mlir::Operation &op, std::string &error) {
  auto in = [&](unsigned i) { return values.lookup(op.getOperand(i)); };
  if (auto c = llvm::dyn_cast<mlir::arith::ConstantOp>(op)) {
    llvm::Type *t = valueType(c.getType());
    if (auto fa = c.getValue().dyn_cast<mlir::FloatAttr>())
      return llvm::ConstantFP::get(t, fa.getValueAsDouble());
    auto ia = c.getValue().cast<mlir::IntegerAttr>();
    return llvm::ConstantInt::get(t, ia.getValue());
  }
  if (auto c = llvm::dyn_cast<mlir::arith::CmpFOp>(op)) {
    // The two enums agree up to ORD only.
    using F = mlir::arith::CmpFPredicate;
    using L = llvm::CmpInst;
    L::Predicate p;
    switch (c.getPredicate()) {
    case F::AlwaysFalse:
      p = L::FCMP_FALSE;
      break;
    case F::OEQ:
      p = L::FCMP_OEQ;
      break;
    case F::OGT:
      p = L::FCMP_OGT;
      break;
    case F::OGE:
      p = L::FCMP_OGE;
      break;
    case F::OLT:
      p = L::FCMP_OLT;
      break;
    case F::OLE:
      p = L::FCMP_OLE;
      break;
    case F::ONE:
      p = L::FCMP_ONE;
      break;
    case F::ORD:
      p = L::FCMP_ORD;
      break;
    case F::UEQ:
      p = L::FCMP_UEQ;
      break;
    case F::UGT:
      p = L::FCMP_UGT;
      break;
    case F::UGE:
      p = L::FCMP_UGE;
      break;
    case F::ULT:
      p = L::FCMP_ULT;
      break;
    case F::ULE:
      p = L::FCMP_ULE;
      break;
    case F::UNE:
      p = L::FCMP_UNE;
      break;
    case F::UNO:
      p = L::FCMP_UNO;
      break;
    default:
      p = L::FCMP_TRUE;
      break;
    }
    return b.CreateFCmp(p, in(0), in(1));
  }
  if (auto c = llvm::dyn_cast<mlir::arith::CmpIOp>(op)) {
    using P = mlir::arith::CmpIPredicate;
    llvm::CmpInst::Predicate p;
    switch (c.getPredicate()) {
    case P::eq:
      p = llvm::CmpInst::ICMP_EQ;
      break;
    case P::ne:
      p = llvm::CmpInst::ICMP_NE;
      break;
    case P::slt:
      p = llvm::CmpInst::ICMP_SLT;
      break;
    case P::sle:
      p = llvm::CmpInst::ICMP_SLE;
      break;
    case P::sgt:
      p = llvm::CmpInst::ICMP_SGT;
      break;
    case P::sge:
      p = llvm::CmpInst::ICMP_SGE;
      break;
    case P::ult:
      p = llvm::CmpInst::ICMP_ULT;
      break;
    case P::ule:
      p = llvm::CmpInst::ICMP_ULE;
      break;
    case P::ugt:
      p = llvm::CmpInst::ICMP_UGT;
      break;
    default:
      p = llvm::CmpInst::ICMP_UGE;
      break;
    }
    // Booleans are 0/1 unsigned: signed i1 would order true (-1) below false.
    // (Only signed predicates have an unsigned form: eq/ne and the unsigned
    // ones stay as they are.)
    if (in(0)->getType()->getScalarType()->isIntegerTy(1) &&
        llvm::CmpInst::isSigned(p))
      p = llvm::CmpInst::getUnsignedPredicate(p);
    return b.CreateICmp(p, in(0), in(1));
  }
  llvm::Type *rt =
      op.getNumResults() ? valueType(op.getResult(0).getType()) : nullptr;
  llvm::StringRef name = op.getName().getStringRef();
  if (name == "arith.addf")
    return b.CreateFAdd(in(0), in(1));
  if (name == "arith.subf")
    return b.CreateFSub(in(0), in(1));
  if (name == "arith.mulf")
    return b.CreateFMul(in(0), in(1));
  if (name == "arith.divf")
    return b.CreateFDiv(in(0), in(1));
  if (name == "arith.negf")
    return b.CreateFNeg(in(0));
  if (name == "arith.addi")
    return b.CreateAdd(in(0), in(1));
  if (name == "arith.subi")
    return b.CreateSub(in(0), in(1));
  if (name == "arith.muli")
    return b.CreateMul(in(0), in(1));
  if (name == "arith.ori")
    return b.CreateOr(in(0), in(1));
  if (name == "arith.andi")
    return b.CreateAnd(in(0), in(1));
  if (name == "arith.maxf")
    return nanPropagating(true, in(0), in(1));
  if (name == "arith.minf")
    return nanPropagating(false, in(0), in(1));
  bool isBool = op.getNumOperands() > 0 &&
                in(0)->getType()->getScalarType()->isIntegerTy(1);
  if (name == "arith.maxsi")
    return b.CreateSelect(isBool ? b.CreateICmpUGT(in(0), in(1))
                                 : b.CreateICmpSGT(in(0), in(1)),
                          in(0), in(1));
  if (name == "arith.minsi")
    return b.CreateSelect(isBool ? b.CreateICmpULT(in(0), in(1))
                                 : b.CreateICmpSLT(in(0), in(1)),
                          in(0), in(1));
  if (name == "arith.maxui")
    return b.CreateSelect(b.CreateICmpUGT(in(0), in(1)), in(0), in(1));
  if (name == "arith.minui")
    return b.CreateSelect(b.CreateICmpULT(in(0), in(1)), in(0), in(1));
  if (name == "arith.select")
    return b.CreateSelect(in(0), in(1), in(2));
  if (name == "arith.extf")
    return b.CreateFPExt(in(0), rt);
  if (name == "arith.truncf")
    return b.CreateFPTrunc(in(0), rt);
  if (name == "arith.sitofp")
    return b.CreateSIToFP(in(0), rt);
  if (name == "arith.uitofp")
    return b.CreateUIToFP(in(0), rt);
  if (name == "arith.fptosi")
    return b.CreateFPToSI(in(0), rt);
  if (name == "arith.extsi")
    return b.CreateSExt(in(0), rt);
  if (name == "arith.extui")
    return b.CreateZExt(in(0), rt);
  if (name == "arith.trunci")
    return b.CreateTrunc(in(0), rt);
  if (name == "arith.xori")
    return b.CreateXor(in(0), in(1));
  // C's fmod; divisions whose divisor the scalar body made nonzero and not
  // -1 (ScalarBuilder::safeDivisor).
  if (name == "arith.remf")
    return b.CreateFRem(in(0), in(1));
  if (name == "arith.remsi")
    return b.CreateSRem(in(0), in(1));
  if (name == "arith.divsi")
    return b.CreateSDiv(in(0), in(1));
  if (name == "math.copysign")
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, in(0), in(1));
  if (name == "math.fma") // one rounding, as PyTorch's contracted kernels
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {rt}, {in(0), in(1), in(2)});
  // The math dialect's float functions: LLVM intrinsics where LLVM has one
  // (inline instructions or its libm call), else the libm function itself.
  static const std::pair<llvm::StringRef, llvm::Intrinsic::ID> intrinsics[] = {
      {"math.exp", llvm::Intrinsic::exp},
      {"math.exp2", llvm::Intrinsic::exp2},
      {"math.log", llvm::Intrinsic::log},
      {"math.log2", llvm::Intrinsic::log2},
      {"math.log10", llvm::Intrinsic::log10},
      {"math.sqrt", llvm::Intrinsic::sqrt},
      {"math.absf", llvm::Intrinsic::fabs},
      {"math.sin", llvm::Intrinsic::sin},
      {"math.cos", llvm::Intrinsic::cos},
      {"math.floor", llvm::Intrinsic::floor},
      {"math.ceil", llvm::Intrinsic::ceil},
      {"math.roundeven", llvm::Intrinsic::roundeven},
      {"math.trunc", llvm::Intrinsic::trunc}};
  for (auto [mathName, id] : intrinsics)
    if (name == mathName)
      return unaryCall(id, in(0));
  static const llvm::StringRef libm[] = {"tanh",  "tan",   "atan", "atan2",
                                         "expm1", "log1p", "erf"};
  for (llvm::StringRef f : libm)
    if (name.drop_front(5) == f && name.startswith("math.")) {
      llvm::SmallVector<Value *, 2> args;
      for (unsigned i = 0; i < op.getNumOperands(); ++i)
        args.push_back(in(i));
      return libmCall((f + "f").str(), f, args);
    }
  if (name == "math.rsqrt") // 1 / sqrt(x), correctly rounded steps
    return b.CreateFDiv(llvm::ConstantFP::get(rt, 1.0),
                        unaryCall(llvm::Intrinsic::sqrt, in(0)));
  if (name == "math.powf")
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, in(0), in(1));
  if (name == "math.absi") {
    Value *neg = b.CreateSub(llvm::ConstantInt::get(rt, 0), in(0));
    return b.CreateSelect(b.CreateICmpSLT(in(0), llvm::ConstantInt::get(rt, 0)),
                          neg, in(0));
  }
  if (name == "math.ipowi")
    return integerPow(in(0), in(1));
  error = "strata.kernel body: unsupported op '" + name.str() + "'";
  return nullptr;
}

/// PyTorch's powi: square-and-multiply in the integer type (wrapping on
/// overflow, as PyTorch's kernels do), and for a negative exponent 1 for
/// base 1, +-1 for base -1, else 0. Branch-free (one step per exponent bit)
/// so vector bodies take it too; a constant exponent folds away.
Value *Emitter::integerPow(Value *base, Value *exp) {
  llvm::Type *t = base->getType();
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(t, v, true); };
  unsigned bits = t->getScalarSizeInBits();
  Value *result = c(1), *a = base, *e = exp;
  for (unsigned i = 0; i + 1 < bits; ++i) {
    Value *odd = b.CreateICmpNE(b.CreateAnd(e, c(1)), c(0));
    result = b.CreateSelect(odd, b.CreateMul(result, a), result);
    a = b.CreateMul(a, a);
    e = b.CreateLShr(e, c(1));
  }
  Value *negative = b.CreateICmpSLT(exp, c(0));
  Value *oddExp = b.CreateICmpNE(b.CreateAnd(exp, c(1)), c(0));
  Value *forNegative =
      b.CreateSelect(b.CreateICmpEQ(base, c(1)), c(1),
                     b.CreateSelect(b.CreateICmpEQ(base, c(-1)),
                                    b.CreateSelect(oddExp, c(-1), c(1)), c(0)));
  return b.CreateSelect(negative, forNegative, result);
}

bool Emitter::emitBody(llvm::ArrayRef<Value *> args,
                       llvm::SmallVectorImpl<Value *> &yields,
                       std::string &error) {
  mlir::Block &body = k.getBodyBlock();
  for (auto [arg, v] : llvm::zip(body.getArguments(), args))
    values[arg] = v;
  for (mlir::Operation &op : body.without_terminator()) {
    Value *v = emitOp(op, error);
    if (!v)
      return false;
    values[op.getResult(0)] = v;
  }
  mlir::Operation *yield = body.getTerminator();
  for (unsigned r = 0; r < yield->getNumOperands(); ++r)
    yields.push_back(
        values.lookup(cascade[r] ? cascadeSource(r) : yield->getOperand(r)));
  return true;
}

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
    int64_t row = 1;
    for (size_t d = dim + 1; d < n; ++d)
      row *= nest.sizes[d];
    if (row > kMaxScratch)
      continue;
    scratchDim = dim;
    scratchResults.push_back(r);
  }
}

/// The loop of scratchDim in blocks of kCascadeRows iterations: each block
/// sums the scratch results into zeroed f32 rows (dense over the inner
/// loops), then adds each row element once into its f64 result.
bool Emitter::emitScratchLevel(size_t level, llvm::SmallVector<Value *> index,
                               llvm::SmallVector<Value *> ivs,
                               std::string &error) {
  size_t n = nest.sizes.size(), dim = loops[level].dim;
  unsigned numInputs = k.getInputs().size();
  Value *lo = dim == 0 ? begin : b.getInt64(0);
  Value *hi = dim == 0 ? end : b.getInt64(nest.sizes[dim]);
  llvm::SmallVector<int64_t> rowStrides(n, 0);
  int64_t row = 1;
  for (size_t d = n; d-- > dim + 1;) {
    rowStrides[d] = row;
    row *= nest.sizes[d];
  }
  llvm::Function *fn = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&fn->getEntryBlock(), fn->getEntryBlock().begin());
  auto *rowType = llvm::ArrayType::get(b.getFloatTy(), row);
  llvm::SmallVector<Value *> rows;
  for (size_t s = 0; s < scratchResults.size(); ++s) {
    llvm::AllocaInst *a = entry.CreateAlloca(rowType);
    a->setAlignment(llvm::Align(64));
    rows.push_back(a);
  }
  bool ok = true;
  emitFor(
      lo, hi, {},
      [&](Value *c, llvm::ArrayRef<Value *>) {
        Value *e = b.CreateAdd(c, b.getInt64(kCascadeRows), "", true, true);
        e = b.CreateSelect(b.CreateICmpSLT(e, hi), e, hi);
        for (Value *r : rows)
          b.CreateMemSet(r, b.getInt8(0), b.getInt64(row * 4), llvm::Align(64));
        // The block writes the rows instead of the results.
        struct Saved {
          Value *base;
          llvm::Type *memType;
          mlir::Type type;
          llvm::SmallVector<int64_t> strides;
        };
        llvm::SmallVector<Saved> saved;
        llvm::SmallVector<Value *> blockIndex(index);
        for (size_t s = 0; s < scratchResults.size(); ++s) {
          unsigned op = numInputs + scratchResults[s];
          saved.push_back({bases[op], memTypes[op], types[op],
                           llvm::SmallVector<int64_t>(nest.strides[op].begin(),
                                                      nest.strides[op].end())});
          bases[op] = rows[s];
          memTypes[op] = b.getFloatTy();
          types[op] = mlir::Float32Type::get(k.getContext());
          nest.strides[op].assign(rowStrides.begin(), rowStrides.end());
          blockIndex[op] = b.getInt64(0);
        }
        emitFor(c, e, {}, [&](Value *i, llvm::ArrayRef<Value *>) {
          llvm::SmallVector<Value *> next(blockIndex), nextIvs(ivs);
          for (size_t op = 0; op < next.size(); ++op)
            if (int64_t st = nest.strides[op][dim])
              next[op] = b.CreateAdd(next[op], b.CreateMul(i, b.getInt64(st)));
          nextIvs.push_back(i);
          ok = ok && emitLevel(level + 1, next, nextIvs, error);
          return llvm::SmallVector<Value *>();
        });
        for (size_t s = 0; s < scratchResults.size(); ++s) {
          unsigned op = numInputs + scratchResults[s];
          bases[op] = saved[s].base;
          memTypes[op] = saved[s].memType;
          types[op] = saved[s].type;
          nest.strides[op].assign(saved[s].strides.begin(),
                                  saved[s].strides.end());
          // rows[s][j] into the result, over the loops inside dim.
          std::function<void(size_t, Value *, Value *)> flush =
              [&](size_t d, Value *at, Value *out) {
                if (d == n) {
                  Value *v = b.CreateLoad(
                      b.getFloatTy(),
                      b.CreateInBoundsGEP(b.getFloatTy(), rows[s], at));
                  store(op, out, combine("sum", load(op, out), v));
                  return;
                }
                emitFor(b.getInt64(0), b.getInt64(nest.sizes[d]), {},
                        [&](Value *j, llvm::ArrayRef<Value *>) {
                          auto step = [&](Value *x, int64_t st) {
                            return st ? b.CreateAdd(
                                            x, b.CreateMul(j, b.getInt64(st)))
                                      : x;
                          };
                          flush(d + 1, step(at, rowStrides[d]),
                                step(out, nest.strides[op][d]));
                          return llvm::SmallVector<Value *>();
                        });
              };
          flush(dim + 1, b.getInt64(0), index[op]);
        }
        return llvm::SmallVector<Value *>();
      },
      kCascadeRows);
  return ok;
}

/// Cache-blocked tiles for transposed access: when the innermost loop is
/// unit-stride for some operand but another operand is unit-stride along an
/// outer loop T (and strided along the innermost), loops T and innermost
/// are each split into a tile loop and a loop within the tile, and the two
/// within-tile loops go innermost. So every cache line the strided operand
/// touches is used kTile times while it is still in L1.
void Emitter::planLoops() {
  size_t n = nest.sizes.size();
  int tiled = -1;
  if (n >= 2 && !k.getIndexed() && !k.getIndexMap()) {
    size_t inner = n - 1;
    bool someUnit = false;
    for (const auto &st : nest.strides)
      someUnit |= std::abs(st[inner]) == 1;
    for (size_t t = inner; someUnit && tiled < 0 && t-- > 0;) {
      if (nest.sizes[t] < 2 || nest.sizes[inner] <= kTile)
        continue;
      for (const auto &st : nest.strides)
        if (std::abs(st[t]) == 1 && std::abs(st[inner]) > 1) {
          tiled = static_cast<int>(t);
          break;
        }
    }
  }
  for (size_t d = 0; d < n; ++d) {
    bool tile = tiled >= 0 && (d == static_cast<size_t>(tiled) || d == n - 1);
    loops.push_back({d, tile ? LoopKind::Block : LoopKind::Full});
  }
  if (tiled >= 0) {
    loops.push_back({static_cast<size_t>(tiled), LoopKind::Tile});
    loops.push_back({n - 1, LoopKind::Tile});
    loops.push_back({static_cast<size_t>(tiled), LoopKind::InTile});
    loops.push_back({n - 1, LoopKind::InTile});
  }
  tiledDim = tiled;
  if (tiled < 0)
    return;
  // Full tiles run a micro-kernel on microLanes x microLanes blocks: 256-bit
  // vectors of the widest element (the backend splits them where the host
  // has narrower registers).
  // (A cascade sum's vectors hold its f32 values.)
  unsigned widest = 1;
  for (size_t op = 0; op < memTypes.size(); ++op) {
    size_t r = op - k.getInputs().size();
    bool narrow =
        op >= k.getInputs().size() && r < cascade.size() && cascade[r];
    widest = std::max<unsigned>(
        widest, narrow ? 4 : memTypes[op]->getPrimitiveSizeInBits() / 8);
  }
  microLanes = widest <= 4 ? 8 : 4;
  // A non-reducing result that does not move along the innermost loop
  // (several points write one element) keeps the scalar order.
  unsigned numInputs = k.getInputs().size();
  for (unsigned r = 0; r < k.getNumResults(); ++r)
    if (k.getCombiner(r).empty() && nest.strides[numInputs + r][n - 1] == 0)
      microLanes = 0;
}

/// Picks a large result written with unit stride along the innermost loop
/// for non-temporal stores (kernels without reductions or indices only).
bool Emitter::emitLevel(size_t level, llvm::SmallVector<Value *> index,
                        llvm::SmallVector<Value *> ivs, std::string &error) {
  size_t n = nest.sizes.size();
  unsigned numInputs = k.getInputs().size(), numResults = k.getNumResults();
  auto advance = [&](Value *i, size_t dim) {
    llvm::SmallVector<Value *> next(index);
    for (size_t op = 0; op < next.size(); ++op)
      if (int64_t s = nest.strides[op][dim])
        next[op] = b.CreateAdd(next[op], b.CreateMul(i, b.getInt64(s)));
    return next;
  };
  // One point: load inputs, run the body, store or combine results.
  auto point =
      [&](llvm::SmallVector<Value *> idx, llvm::SmallVector<Value *> pointIvs,
          llvm::ArrayRef<Value *> carried, llvm::ArrayRef<unsigned> accumulated,
          llvm::SmallVector<Value *> &nextCarried) {
        llvm::SmallVector<Value *> args;
        int mapped = indexMapOperand();
        for (unsigned op = 0; op < numInputs; ++op)
          args.push_back(static_cast<int>(op) == mapped ? nullptr
                                                        : load(op, idx[op]));
        if (mapped >= 0 && mapped < static_cast<int>(numInputs))
          args[mapped] = load(mapped, indexedPosition(idx[mapped], args));
        if (k.getIndexed())
          args.append(pointIvs.begin(), pointIvs.end());
        llvm::SmallVector<Value *> yields;
        if (!emitBody(args, yields, error))
          return false;
        for (unsigned r = 0; r < numResults; ++r) {
          unsigned op = numInputs + r;
          llvm::StringRef kind = k.getCombiner(r);
          auto acc = llvm::find(accumulated, r);
          if (static_cast<int>(op) == mapped)
            storeIndexed(op, idx[op], args, yields[r]);
          else if (kind.empty())
            store(op, idx[op], yields[r]);
          else if (acc != accumulated.end())
            nextCarried.push_back(
                combine(kind, carried[acc - accumulated.begin()], yields[r]));
          else
            store(op, idx[op], combine(kind, load(op, idx[op]), yields[r]));
        }
        return true;
      };
  if (n == 0) {
    llvm::SmallVector<Value *> unused;
    return point(index, ivs, {}, {}, unused);
  }
  if (static_cast<int>(loops[level].dim) == scratchDim &&
      loops[level].kind == LoopKind::Full)
    return emitScratchLevel(level, index, ivs, error);
  EmitLoop loop = loops[level];
  size_t dim = loop.dim;
  Value *lo = dim == 0 ? begin : b.getInt64(0);
  Value *hi = dim == 0 ? end : b.getInt64(nest.sizes[dim]);
  int64_t step = 1;
  auto clampedEnd = [&](Value *start, int64_t extent) {
    Value *e = b.CreateAdd(start, b.getInt64(extent), "", true, true);
    return b.CreateSelect(b.CreateICmpSLT(e, hi), e, hi);
  };
  if (loop.kind == LoopKind::Block) {
    step = kBlock;
  } else if (loop.kind == LoopKind::Tile) {
    step = kTile;
    lo = blockStart.lookup(dim);
    hi = clampedEnd(lo, kBlock);
  } else if (loop.kind == LoopKind::InTile) {
    lo = tileStart.lookup(dim);
    hi = clampedEnd(lo, kTile);
  }
  bool ok = true;
  if (loop.kind == LoopKind::InTile && dim == size_t(tiledDim) && microLanes) {
    // A full tile runs micro-kernels; a partial one (at the edges) the
    // scalar loops below.
    size_t in = n - 1;
    Value *loI = tileStart.lookup(in);
    Value *full =
        b.CreateAnd(b.CreateICmpEQ(b.CreateSub(hi, lo), b.getInt64(kTile)),
                    b.CreateICmpSLE(b.CreateAdd(loI, b.getInt64(kTile)),
                                    b.getInt64(nest.sizes[in])));
    llvm::Function *f = b.GetInsertBlock()->getParent();
    auto *microBB = llvm::BasicBlock::Create(ctx, "micro", f);
    auto *scalarBB = llvm::BasicBlock::Create(ctx, "edge", f);
    auto *joinBB = llvm::BasicBlock::Create(ctx, "tile.end", f);
    b.CreateCondBr(full, microBB, scalarBB);
    b.SetInsertPoint(microBB);
    Value *tEnd = b.CreateAdd(lo, b.getInt64(kTile));
    Value *iEnd = b.CreateAdd(loI, b.getInt64(kTile));
    prefetchNextTile(index, lo, loI);
    // Results that stay on one element over the tile: one vector
    // accumulator across its micro-kernels, one lane reduction at the end.
    llvm::SmallVector<unsigned> tileAcc;
    llvm::SmallVector<Value *> accInit;
    for (unsigned r = 0; r < numResults; ++r) {
      unsigned op = numInputs + r;
      llvm::StringRef kind = k.getCombiner(r);
      if (kind.empty() || nest.strides[op][dim] || nest.strides[op][in])
        continue;
      tileAcc.push_back(r);
      auto *vt = llvm::FixedVectorType::get(
          cascade[r] ? b.getFloatTy() : scalarType(types[op]), microLanes);
      accInit.push_back(
          kind == "sum" ? llvm::Constant::getNullValue(vt)
                        : b.CreateVectorSplat(microLanes, load(op, index[op])));
    }
    auto accs = emitFor(
        lo, tEnd, accInit,
        [&](Value *mT, llvm::ArrayRef<Value *> accT) {
          return emitFor(
              loI, iEnd, accT,
              [&](Value *mI, llvm::ArrayRef<Value *> accI) {
                llvm::SmallVector<Value *> next;
                ok = ok &&
                     emitMicroKernel(index, mT, mI, tileAcc, accI, next, error);
                if (!ok)
                  next.assign(accI.begin(), accI.end());
                return next;
              },
              microLanes);
        },
        microLanes);
    for (size_t a = 0; a < tileAcc.size(); ++a) {
      unsigned op = numInputs + tileAcc[a];
      llvm::StringRef kind = k.getCombiner(tileAcc[a]);
      lanes = microLanes;
      Value *v = reduceLanes(kind, accs[a]);
      lanes = 0;
      store(op, index[op], combine(kind, load(op, index[op]), v));
    }
    b.CreateBr(joinBB);
    b.SetInsertPoint(scalarBB);
    emitFor(lo, hi, {}, [&](Value *i, llvm::ArrayRef<Value *>) {
      llvm::SmallVector<Value *> nextIvs(ivs);
      nextIvs.push_back(i);
      ok = ok && emitLevel(level + 1, advance(i, dim), nextIvs, error);
      return llvm::SmallVector<Value *>();
    });
    b.CreateBr(joinBB);
    b.SetInsertPoint(joinBB);
    return ok;
  }
  if (level + 1 < loops.size()) {
    emitFor(
        lo, hi, {},
        [&](Value *i, llvm::ArrayRef<Value *>) {
          if (loop.kind == LoopKind::Block || loop.kind == LoopKind::Tile) {
            (loop.kind == LoopKind::Block ? blockStart : tileStart)[dim] = i;
            ok = emitLevel(level + 1, index, ivs, error);
            return llvm::SmallVector<Value *>();
          }
          llvm::SmallVector<Value *> nextIvs(ivs);
          nextIvs.push_back(i);
          ok = emitLevel(level + 1, advance(i, dim), nextIvs, error);
          return llvm::SmallVector<Value *>();
        },
        step);
    return ok;
  }
  // Innermost loop: results that do not move along it accumulate in
  // registers.
  llvm::SmallVector<unsigned> accumulated;
  llvm::SmallVector<Value *> init;
  bool anyCascade = false;
  for (unsigned r = 0; r < numResults; ++r)
    if (!k.getCombiner(r).empty() && nest.strides[numInputs + r][dim] == 0) {
      accumulated.push_back(r);
      init.push_back(load(numInputs + r, index[numInputs + r]));
      anyCascade |= cascade[r];
    }
  auto scalarLoop = [&](Value *from, Value *to, bool scalarOnly,
                        llvm::ArrayRef<Value *> start) {
    return emitFor(
        from, to, start,
        [&](Value *i, llvm::ArrayRef<Value *> c) {
          llvm::SmallVector<Value *> nextIvs(ivs), nextCarried;
          nextIvs.push_back(i);
          ok = ok &&
               point(advance(i, dim), nextIvs, c, accumulated, nextCarried);
          if (!ok)
            nextCarried.assign(c.begin(), c.end());
          return nextCarried;
        },
        1, scalarOnly);
  };
  if (ntOp >= 0 && tiledDim < 0 && dim == n - 1) {
    // Non-temporal stores need aligned vectors: peel to the alignment of
    // ntOp, run ntLanes-wide vectors, then the remainder.
    unsigned op = ntOp, width = ntLanes;
    unsigned bytes = memTypes[op]->getPrimitiveSizeInBits() / 8;
    Value *first = b.CreateInBoundsGEP(memTypes[op], bases[op],
                                       b.CreateAdd(index[op], lo));
    Value *mis =
        b.CreateAnd(b.CreateLShr(b.CreatePtrToInt(first, b.getInt64Ty()),
                                 b.getInt64(llvm::Log2_32(bytes))),
                    b.getInt64(width - 1));
    Value *peel =
        b.CreateAnd(b.CreateSub(b.getInt64(width), mis), b.getInt64(width - 1));
    Value *vecLo = b.CreateAdd(lo, peel);
    vecLo = b.CreateSelect(b.CreateICmpSLT(vecLo, hi), vecLo, hi);
    Value *vecHi = b.CreateAdd(vecLo, b.CreateAnd(b.CreateSub(hi, vecLo),
                                                  b.getInt64(-int64_t(width))));
    scalarLoop(lo, vecLo, true, init);
    emitFor(
        vecLo, vecHi, {},
        [&](Value *i, llvm::ArrayRef<Value *>) {
          llvm::SmallVector<Value *> idx = advance(i, dim);
          lanes = width;
          llvm::SmallVector<Value *> args, yields;
          for (unsigned in = 0; in < numInputs; ++in)
            args.push_back(loadRow(in, idx[in]));
          ok = ok && emitBody(args, yields, error);
          for (unsigned r = 0; ok && r < numResults; ++r) {
            unsigned res = numInputs + r;
            if (res == op)
              storeNonTemporal(res, idx[res], yields[r], width * bytes);
            else
              storeRow(res, idx[res], yields[r]);
          }
          lanes = 0;
          return llvm::SmallVector<Value *>();
        },
        width);
    scalarLoop(vecHi, hi, true, init);
    return ok;
  }
  if (!anyCascade) {
    auto finals = scalarLoop(lo, hi, false, init);
    for (size_t a = 0; a < accumulated.size(); ++a)
      store(numInputs + accumulated[a], index[numInputs + accumulated[a]],
            finals[a]);
    return ok;
  }
  // Cascade sums: an f32 partial per run of kCascadeRun points, added to
  // the f64 accumulator after its run.
  auto finals = emitFor(
      lo, hi, init,
      [&](Value *c, llvm::ArrayRef<Value *> acc) {
        Value *e = b.CreateAdd(c, b.getInt64(kCascadeRun), "", true, true);
        e = b.CreateSelect(b.CreateICmpSLT(e, hi), e, hi);
        llvm::SmallVector<Value *> start, next;
        for (size_t a = 0; a < accumulated.size(); ++a)
          start.push_back(cascade[accumulated[a]]
                              ? llvm::ConstantFP::get(b.getFloatTy(), 0.0)
                              : acc[a]);
        auto part = scalarLoop(c, e, false, start);
        for (size_t a = 0; a < accumulated.size(); ++a)
          next.push_back(cascade[accumulated[a]]
                             ? combine("sum", acc[a], part[a])
                             : part[a]);
        return next;
      },
      kCascadeRun);
  for (size_t a = 0; a < accumulated.size(); ++a)
    store(numInputs + accumulated[a], index[numInputs + accumulated[a]],
          finals[a]);
  return ok;
}

void Emitter::plan() {
  for (mlir::Value v : k.getInputs())
    types.push_back(elementType(v));
  for (mlir::Value v : k.getResults())
    types.push_back(elementType(v));
  if (mlir::Value d = k.getDest())
    types.push_back(elementType(d));
  for (mlir::Type t : types)
    memTypes.push_back(memoryType(t));
  for (unsigned r = 0; r < k.getNumResults(); ++r)
    cascade.push_back(static_cast<bool>(cascadeSource(r)));
  planLoops();
  planCascade();
  planNonTemporal();
}

std::string Emitter::codeKey() {
  plan();
  std::string text;
  llvm::raw_string_ostream os(text);
  auto list = [&](llvm::ArrayRef<int64_t> v) {
    os << "[";
    llvm::interleaveComma(v, os);
    os << "]";
  };
  // Everything emitLevel and its helpers read: the outermost loop runs
  // [begin, end), so nest.sizes[0] enters only through the plan below.
  os << "types";
  for (mlir::Type t : types)
    os << " " << t;
  os << "\nresults " << k.getNumResults() << " dest "
     << static_cast<bool>(k.getDest()) << " indexed " << k.getIndexed()
     << "\ncombiners";
  for (unsigned r = 0; r < k.getNumResults(); ++r)
    os << " '" << k.getCombiner(r) << "'";
  // (An indexed access: operand, index input, stride, bound, accumulate.)
  os << "\nindex_map ";
  if (auto map = k.getIndexMap())
    list(*map);
  // A scan kernel (KernelToLLVMScan.cpp) reads every size, the first too.
  if (k.isScan()) {
    os << "\nscan " << *k.getScanDim() << " " << *k.getScanCombiner() << " "
       << k.getScanReverse() << k.getScanExclusive() << " sizes ";
    list(nest.sizes);
  }
  os << "\nloops " << nest.sizes.size() << " inner sizes ";
  list(llvm::ArrayRef<int64_t>(nest.sizes)
           .drop_front(nest.sizes.empty() ? 0 : 1));
  os << "\nstrides";
  for (const auto &st : nest.strides) {
    os << " ";
    list(st);
  }
  os << "\noffsets ";
  list(nest.offsets);
  os << "\nplan tiled " << tiledDim << " micro " << microLanes << " scratch "
     << scratchDim << " scratch results " << scratchResults.size() << " nt "
     << ntOp << "/" << ntLanes << " cascade";
  for (bool c : cascade)
    os << " " << c;
  os << " loops";
  for (const EmitLoop &l : loops)
    os << " " << l.dim << ":" << static_cast<int>(l.kind);
  os << "\nbody\n";
  mlir::AsmState state(k, mlir::OpPrintingFlags().useLocalScope());
  k.getBodyBlock().print(os, state);
  return os.str();
}

bool Emitter::run(const std::string &name, std::string &error) {
  plan();

  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  auto *fnType = llvm::FunctionType::get(
      b.getVoidTy(), {ptr, b.getInt64Ty(), b.getInt64Ty()}, false);
  auto *fn = llvm::Function::Create(fnType, llvm::Function::ExternalLinkage,
                                    name, mod);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr(llvm::Attribute::NoFree);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  Value *buffers = fn->getArg(0);
  begin = fn->getArg(1);
  end = fn->getArg(2);
  llvm::SmallVector<Value *> index;
  for (size_t op = 0; op < types.size(); ++op) {
    Value *slot = b.CreateConstInBoundsGEP1_64(ptr, buffers, op);
    Value *base = b.CreateLoad(ptr, slot);
    bases.push_back(
        b.CreateGEP(memTypes[op], base, b.getInt64(nest.offsets[op])));
    index.push_back(b.getInt64(0));
  }
  if (k.isScan()) {
    if (!emitScan(index, error))
      return false;
  } else if (!emitLevel(0, index, {}, error)) {
    return false;
  }
  // Non-temporal stores are weakly ordered (x86 movnt*): a release by the
  // thread pool (a plain store on x86) does not order them, so they are
  // fenced before the chunk ends. `fence seq_cst` is portable (mfence on
  // x86, dmb ish on AArch64); `fence release` would emit nothing on x86.
  if (usedNonTemporal)
    b.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
  b.CreateRetVoid();
  std::string verifyLog;
  llvm::raw_string_ostream os(verifyLog);
  if (llvm::verifyFunction(*fn, &os)) {
    error = "internal error: invalid LLVM IR for a kernel: " + os.str();
    return false;
  }
  return true;
}

std::unique_ptr<llvm::Module>
strata::codegen::emitKernelLLVM(mlir::Operation *kernelOp,
                                llvm::LLVMContext &context,
                                const std::string &name, std::string &error) {
  auto module = std::make_unique<llvm::Module>(name, context);
  Emitter emitter(llvm::cast<KernelOp>(kernelOp), *module);
  if (!emitter.run(name, error))
    return nullptr;
  return module;
}

std::string strata::codegen::kernelCodeKey(mlir::Operation *kernelOp) {
  // (The plan reads LLVM types: a context per thread, kept; it holds the
  // few scalar and vector types kernels use.)
  thread_local llvm::LLVMContext context;
  llvm::Module scratch("key", context);
  return Emitter(llvm::cast<KernelOp>(kernelOp), scratch).codeKey();
}

strata::codegen::KernelLaunchInfo
strata::codegen::getLaunchInfo(mlir::Operation *kernelOp) {
  auto k = llvm::cast<KernelOp>(kernelOp);
  KernelOp::LoopNest nest = k.getLoopNest();
  KernelLaunchInfo info;
  info.numPoints = 1;
  for (int64_t s : nest.sizes)
    info.numPoints *= s;
  if (nest.sizes.empty())
    return info;
  info.outerSize = nest.sizes[0];
  if (k.isScan()) // lines or blocks of columns (KernelToLLVMScan.cpp)
    info.outerSize = detail::scanOuterSize(k);
  info.innerElements = info.outerSize ? info.numPoints / info.outerSize : 0;
  unsigned numInputs = k.getInputs().size();
  for (unsigned r = 0; r < k.getNumResults(); ++r)
    if (!k.getCombiner(r).empty() && nest.strides[numInputs + r][0] == 0 &&
        nest.sizes[0] > 1)
      info.outerParallel = false;
  // An indexed store (scatter, scatter_add) may hit one element from
  // several points: run serially, so duplicates add up deterministically.
  auto map = k.getIndexMap();
  info.serial = map && (*map)[0] >= static_cast<int64_t>(numInputs);
  return info;
}

/// Bump when the emitted code changes. The JIT's cache key also holds a
/// hash of this file's source (jit/CMakeLists.txt), so a forgotten bump
/// still never serves stale code; this id is for tools without that hash.
const char *strata::codegen::emitterBuildId() {
  return "kernel-to-llvm-6 (non-temporal stores, tile vector accumulators, "
         "next-tile prefetch, cascade sums, scans)";
}
