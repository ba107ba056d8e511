//===- KernelToLLVM.cpp - strata.kernel to LLVM IR with IRBuilder ---------===//
//
// Assumes: a verified strata.kernel whose body holds the arith/math ops
//   --strata-fuse emits; its loop nest (coalesced or not) is static.
// Guarantees: one function with the ABI of KernelToLLVM.h that computes the
//   kernel for outermost-loop iterations [begin, end). Deterministic: the
//   same kernel gives the same text.
// Algorithm: a perfect loop nest, outermost first, with every operand's
//   element index carried as `base + sum(i * stride)` (constants, or in a
//   dynamic kernel values loaded from %dims except strides 0 and +-1:
//   KernelToLLVMDynamic.cpp; so the innermost loop of a unit-stride operand
//   is a plain `p[i]` that LLVM's loop vectorizer takes). A reducing result
//   whose innermost stride is 0 accumulates in a register over the innermost
//   loop (reassociable float adds, so sums vectorize); otherwise it is
//   read-modified-written per point. The runtime fills reducing results with
//   the identity first. When operands disagree on the unit-stride loop
//   (transposed access), the two loops are blocked kBlock x kBlock (TLB and L2
//   reuse) and tiled kTile x kTile within a block (planLoops); a full tile runs
//   8x8 (4x4 for 64-bit elements) micro-kernels on vectors along the innermost
//   loop, whose transposed operands are loaded (stored) as vectors along the
//   other loop and transposed in registers with shuffles (emitMicroKernel);
//   partial tiles at the edges run the scalar loops (emitTileLevel, in
//   KernelToLLVMVector.cpp). The vectors are plain LLVM vectors: AVX2
//   hosts get unpck/shufps/vperm2f128, others a legal split.
//   Before a full tile runs, the lines the next tile along the innermost
//   loop reads are prefetched (prefetchNextTile).
//   Cascade sums (an f64 sum of f32 values that --strata-widen-sums marked)
//   add their f32 values in f32 over bounded runs, at f32 vector width, and
//   each run's partial once into the f64 accumulator: register
//   accumulators over runs of kCascadeRun points of the innermost loop,
//   tile accumulators over a tile, and read-modify-written results over
//   blocks of kCascadeRows iterations of their innermost reduced loop into
//   an f32 scratch row on the stack (emitScratchLevel). Like PyTorch's
//   cascade sum: the error grows with the run length, not the sum length
//   (KernelToLLVMCascade.cpp).
//   emitLevel emits one loop of the plan (`loops`) and recurses: a plain
//   loop moves the point, the innermost loop runs the points (emitPoint:
//   the body of KernelToLLVMOps.cpp) with register accumulators.
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
  // Alignment peel and remainder: a few iterations, not worth vectorizing.
  // A long body (a fused chain of tens of ops) is not interleaved: each
  // copy multiplies LLVM's register allocation time, and the CPU overlaps
  // such iterations by itself.
  bool longBody = k.getBodyBlock().getOperations().size() > kLongBody;
  if (scalarOnly || longBody) {
    llvm::Metadata *hint[] = {
        llvm::MDString::get(ctx, scalarOnly ? "llvm.loop.vectorize.enable"
                                            : "llvm.loop.interleave.count"),
        scalarOnly ? llvm::ConstantAsMetadata::get(b.getFalse())
                   : llvm::ConstantAsMetadata::get(b.getInt32(1))};
    llvm::Metadata *ops[] = {nullptr, llvm::MDNode::get(ctx, hint)};
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

llvm::SmallVector<Value *> Emitter::advance(llvm::ArrayRef<Value *> index,
                                            Value *i, size_t dim) {
  llvm::SmallVector<Value *> next(index);
  for (size_t op = 0; op < next.size(); ++op)
    if (nest.strides[op][dim])
      next[op] = b.CreateAdd(next[op], b.CreateMul(i, strideValue(op, dim)));
  return next;
}

Value *Emitter::clampedEnd(Value *start, int64_t extent, Value *hi) {
  Value *e = b.CreateAdd(start, b.getInt64(extent), "", true, true);
  return b.CreateSelect(b.CreateICmpSLT(e, hi), e, hi);
}

/// One point: load inputs, run the body, store or combine results (the
/// `accumulated` ones into `nextCarried`, from `carried`).
bool Emitter::emitPoint(llvm::ArrayRef<Value *> idx,
                        llvm::ArrayRef<Value *> ivs,
                        llvm::ArrayRef<Value *> carried,
                        llvm::ArrayRef<unsigned> accumulated,
                        llvm::SmallVectorImpl<Value *> &nextCarried,
                        std::string &error) {
  unsigned numInputs = k.getInputs().size(), numResults = k.getNumResults();
  llvm::SmallVector<Value *> args;
  int mapped = indexMapOperand();
  for (unsigned op = 0; op < numInputs; ++op)
    args.push_back(static_cast<int>(op) == mapped ? nullptr
                                                  : load(op, idx[op]));
  if (mapped >= 0 && mapped < static_cast<int>(numInputs))
    args[mapped] = load(mapped, indexedPosition(idx[mapped], args));
  if (k.getIndexed())
    args.append(ivs.begin(), ivs.end());
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
}

bool Emitter::emitLevel(size_t level, llvm::SmallVector<Value *> index,
                        llvm::SmallVector<Value *> ivs, std::string &error) {
  if (nest.sizes.empty()) {
    llvm::SmallVector<Value *> unused;
    return emitPoint(index, ivs, {}, {}, unused, error);
  }
  Level l = levelOf(level, std::move(index), std::move(ivs));
  if (static_cast<int>(l.dim) == scratchDim && l.kind == LoopKind::Full)
    return emitScratchLevel(l, error);
  if (l.kind == LoopKind::InTile && l.dim == size_t(tiledDim) && microLanes)
    return emitTileLevel(l, error);
  if (level + 1 < loops.size())
    return emitOuterLevel(l, error);
  return emitInnermostLevel(l, error);
}

/// Loop `level`'s range: the whole nest loop ([begin, end) for the
/// outermost), blocks of it, or the tile (block) a tile (block) loop
/// around it is at.
Emitter::Level Emitter::levelOf(size_t level, llvm::SmallVector<Value *> index,
                                llvm::SmallVector<Value *> ivs) {
  Level l{level, loops[level].dim, loops[level].kind, nullptr, nullptr,
          1,     std::move(index), std::move(ivs),    {}};
  l.lo = l.dim == 0 ? begin : b.getInt64(0);
  l.hi = l.dim == 0 ? end : sizeValue(l.dim);
  if (l.kind == LoopKind::Block) {
    l.step = kBlock;
  } else if (l.kind == LoopKind::Tile) {
    l.step = kTile;
    l.lo = blockStart.lookup(l.dim);
    l.hi = clampedEnd(l.lo, kBlock, l.hi);
  } else if (l.kind == LoopKind::InTile) {
    l.lo = tileStart.lookup(l.dim);
    l.hi = clampedEnd(l.lo, kTile, l.hi);
  }
  return l;
}

/// A loop with loops inside: a block or tile loop only says where its
/// block or tile starts; a nest loop moves the point.
bool Emitter::emitOuterLevel(const Level &l, std::string &error) {
  bool ok = true;
  emitFor(
      l.lo, l.hi, {},
      [&](Value *i, llvm::ArrayRef<Value *>) {
        if (l.kind == LoopKind::Block || l.kind == LoopKind::Tile) {
          (l.kind == LoopKind::Block ? blockStart : tileStart)[l.dim] = i;
          ok = emitLevel(l.level + 1, l.index, l.ivs, error);
          return llvm::SmallVector<Value *>();
        }
        ok = emitLevel(l.level + 1, advance(l.index, i, l.dim),
                       withIv(l.ivs, i), error);
        return llvm::SmallVector<Value *>();
      },
      l.step);
  return ok;
}

/// The innermost loop: results that do not move along it accumulate in
/// registers (cascade sums in f32 runs: KernelToLLVMCascade.cpp), stored
/// once after it; a non-temporal result runs aligned vectors
/// (KernelToLLVMVector.cpp).
bool Emitter::emitInnermostLevel(Level &l, std::string &error) {
  unsigned numInputs = k.getInputs().size(), numResults = k.getNumResults();
  llvm::SmallVector<Value *> init;
  bool anyCascade = false;
  for (unsigned r = 0; r < numResults; ++r)
    if (!k.getCombiner(r).empty() && nest.strides[numInputs + r][l.dim] == 0) {
      l.accumulated.push_back(r);
      init.push_back(load(numInputs + r, l.index[numInputs + r]));
      anyCascade |= cascade[r];
    }
  if (ntOp >= 0 && tiledDim < 0 && l.dim == nest.sizes.size() - 1)
    return emitNonTemporalLoop(l, init, error);
  bool ok = true;
  auto finals = anyCascade ? emitCascadeRuns(l, init, ok, error)
                           : scalarLoop(l, l.lo, l.hi, false, init, ok, error);
  for (size_t a = 0; a < l.accumulated.size(); ++a) {
    unsigned op = numInputs + l.accumulated[a];
    store(op, l.index[op], finals[a]);
  }
  return ok;
}

llvm::SmallVector<Value *> Emitter::scalarLoop(const Level &l, Value *from,
                                               Value *to, bool scalarOnly,
                                               llvm::ArrayRef<Value *> start,
                                               bool &ok, std::string &error) {
  return emitFor(
      from, to, start,
      [&](Value *i, llvm::ArrayRef<Value *> c) {
        llvm::SmallVector<Value *> nextCarried;
        ok = ok && emitPoint(advance(l.index, i, l.dim), withIv(l.ivs, i), c,
                             l.accumulated, nextCarried, error);
        if (!ok)
          nextCarried.assign(c.begin(), c.end());
        return nextCarried;
      },
      1, scalarOnly);
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
  planDynamic();
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
  // [begin, end), so nest.sizes[0] enters only through the plan below; a
  // dynamic kernel's nest is its class (printNest).
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
  printNest(os);
  os << "\nplan tiled " << tiledDim << " micro " << microLanes << " scratch "
     << scratchDim << " scratch results " << scratchResults.size() << " nt "
     << ntOp << "/" << ntLanes << " cascade";
  for (bool c : cascade)
    os << " " << c;
  os << " loops";
  for (const EmitLoop &l : loops)
    os << " " << l.dim << ":" << static_cast<int>(l.kind);
  os << "\nbody\n";
  printBody(os);
  return os.str();
}

bool Emitter::run(const std::string &name, std::string &error) {
  plan();

  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  auto *fnType = llvm::FunctionType::get(
      b.getVoidTy(), {ptr, b.getInt64Ty(), b.getInt64Ty(), ptr}, false);
  auto *fn = llvm::Function::Create(fnType, llvm::Function::ExternalLinkage,
                                    name, mod);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr(llvm::Attribute::NoFree);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  Value *buffers = fn->getArg(0);
  begin = fn->getArg(1);
  end = fn->getArg(2);
  llvm::SmallVector<Value *> index, offsets;
  loadDims(fn->getArg(3), offsets);
  for (size_t op = 0; op < types.size(); ++op) {
    Value *slot = b.CreateConstInBoundsGEP1_64(ptr, buffers, op);
    Value *base = b.CreateLoad(ptr, slot);
    bases.push_back(b.CreateGEP(memTypes[op], base, offsets[op]));
    index.push_back(b.getInt64(0));
  }
  // Invariant inputs are read once, on a path that runs points (an empty
  // range may come with buffers of no elements).
  llvm::BasicBlock *done = nullptr;
  int mapped = indexMapOperand();
  for (unsigned op = 0; op < k.getInputs().size() && !k.isScan(); ++op) {
    if (static_cast<int>(op) == mapped ||
        llvm::any_of(nest.strides[op], [](int64_t s) { return s != 0; }))
      continue;
    if (!done) {
      auto *points = llvm::BasicBlock::Create(ctx, "invariants", fn);
      done = llvm::BasicBlock::Create(ctx, "done", fn);
      b.CreateCondBr(b.CreateICmpSLT(begin, end), points, done);
      b.SetInsertPoint(points);
      invariants.assign(k.getInputs().size(), nullptr);
    }
    invariants[op] = load(op, b.getInt64(0));
    // Unchanged while the kernel runs: the register allocator reloads
    // (or folds a broadcast of) such a value rather than spilling it.
    if (auto *l = llvm::dyn_cast<llvm::LoadInst>(invariants[op]))
      l->setMetadata(llvm::LLVMContext::MD_invariant_load,
                     llvm::MDNode::get(ctx, {}));
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
  if (done) {
    b.CreateBr(done);
    b.SetInsertPoint(done);
  }
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
  info.outerReduced.assign(k.getNumResults(), false);
  info.dims = detail::kernelDims(k, nest);
  if (nest.sizes.empty())
    return info;
  info.outerSize = nest.sizes[0];
  if (k.isScan()) // lines or blocks of columns (KernelToLLVMScan.cpp)
    info.outerSize = detail::scanOuterSize(k);
  info.innerElements = info.outerSize ? info.numPoints / info.outerSize : 0;
  unsigned numInputs = k.getInputs().size();
  for (unsigned r = 0; r < k.getNumResults(); ++r) {
    info.outerReduced[r] =
        !k.getCombiner(r).empty() && nest.strides[numInputs + r][0] == 0;
    if (info.outerReduced[r] && nest.sizes[0] > 1)
      info.outerParallel = false;
  }
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
  return "kernel-to-llvm-10 (non-temporal stores, tile vector accumulators, "
         "next-tile prefetch, cascade sums, scans, invariant loads, dynamic "
         "sizes and size values in %dims)";
}
