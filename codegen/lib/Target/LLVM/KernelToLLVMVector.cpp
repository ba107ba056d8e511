//===- KernelToLLVMVector.cpp - vector paths of the kernel emitter -------===//
//
// Non-temporal stores for large unit-stride outputs (the innermost loop of
// such a kernel: emitNonTemporalLoop), and the 8x8 (4x4 for 64-bit
// elements) in-register transpose micro-kernel of transposed tiles (the
// loop within a tile: emitTileLevel). The loop nest that calls them is in
// KernelToLLVM.cpp.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

using namespace strata::codegen::detail;

/// Picks a large result written with unit stride along the innermost loop
/// for non-temporal stores (kernels without reductions or indices only).
void Emitter::planNonTemporal() {
  size_t n = nest.sizes.size();
  unsigned numInputs = k.getInputs().size(), numResults = k.getNumResults();
  // Not for tiled (transposed) kernels: their micro-kernels write 32-byte
  // pieces of 8 lines at a time, and non-temporal stores of partial lines
  // measured 10-25% slower there ((b), (e) in docs/performance.md).
  if (n == 0 || k.getIndexed() || k.getIndexMap() || tiledDim >= 0)
    return;
  for (unsigned r = 0; r < numResults; ++r)
    if (!k.getCombiner(r).empty())
      return;
  for (unsigned r = 0; r < numResults && ntOp < 0; ++r) {
    unsigned op = numInputs + r;
    const auto &st = nest.strides[op];
    int64_t bytes = memTypes[op]->getPrimitiveSizeInBits() / 8;
    if (st[n - 1] != 1 || (bytes != 4 && bytes != 8) || types[op].isInteger(1))
      continue;
    int64_t total = bytes;
    for (size_t d = 0; d < n; ++d)
      if (st[d])
        total *= nest.sizes[d];
    if (total < kNonTemporalBytes)
      continue;
    ntOp = static_cast<int>(op);
    ntLanes = static_cast<unsigned>(32 / bytes);
  }
}

/// The innermost loop of a kernel with a non-temporal result: non-temporal
/// stores need aligned vectors, so it peels to the alignment of ntOp, runs
/// ntLanes-wide vectors, then the remainder.
bool Emitter::emitNonTemporalLoop(const Level &l, llvm::ArrayRef<Value *> init,
                                  std::string &error) {
  unsigned numInputs = k.getInputs().size(), numResults = k.getNumResults();
  bool ok = true;
  unsigned op = ntOp, width = ntLanes;
  unsigned bytes = memTypes[op]->getPrimitiveSizeInBits() / 8;
  Value *lo = l.lo, *hi = l.hi;
  Value *first = b.CreateInBoundsGEP(memTypes[op], bases[op],
                                     b.CreateAdd(l.index[op], lo));
  Value *mis = b.CreateAnd(b.CreateLShr(b.CreatePtrToInt(first, b.getInt64Ty()),
                                        b.getInt64(llvm::Log2_32(bytes))),
                           b.getInt64(width - 1));
  Value *peel =
      b.CreateAnd(b.CreateSub(b.getInt64(width), mis), b.getInt64(width - 1));
  Value *vecLo = b.CreateAdd(lo, peel);
  vecLo = b.CreateSelect(b.CreateICmpSLT(vecLo, hi), vecLo, hi);
  Value *vecHi = b.CreateAdd(
      vecLo, b.CreateAnd(b.CreateSub(hi, vecLo), b.getInt64(-int64_t(width))));
  scalarLoop(l, lo, vecLo, true, init, ok, error);
  emitFor(
      vecLo, vecHi, {},
      [&](Value *i, llvm::ArrayRef<Value *>) {
        llvm::SmallVector<Value *> idx = advance(l.index, i, l.dim);
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
  scalarLoop(l, vecHi, hi, true, init, ok, error);
  return ok;
}

void Emitter::storeNonTemporal(unsigned op, Value *index, Value *v,
                               unsigned align) {
  Value *p = b.CreateInBoundsGEP(memTypes[op], bases[op], index);
  llvm::StoreInst *st = b.CreateAlignedStore(v, p, llvm::Align(align));
  st->setMetadata(
      llvm::LLVMContext::MD_nontemporal,
      llvm::MDNode::get(ctx, llvm::ConstantAsMetadata::get(b.getInt32(1))));
  usedNonTemporal = true;
}

/// Software prefetch for transposed tiles: before a full tile runs, every
/// line of every input that the next tile along the innermost loop (kTile
/// further) reads is prefetched into L1 (`prefetcht0` on x86). A tile reads
/// kTile rows of each operand of a transposed pair, one 64-byte piece each
/// (the rows are a power-of-two stride apart, each a page stream of its
/// own): too many concurrent streams for the hardware prefetchers, so
/// without this the first load of each piece is a demand miss. Measured
/// in docs/performance.md: (d) `(a.t() * b).sum()` 30-35% less time, (e)
/// ~10%, (b) unchanged. After the last tile of a block it prefetches the
/// next block's (used later), and past the end of an operand nothing
/// faults (a prefetch is a hint; the address is formed without
/// `inbounds`).
void Emitter::prefetchNextTile(llvm::ArrayRef<Value *> index, Value *tileT,
                               Value *tileI) {
  size_t t = tiledDim, in = nest.sizes.size() - 1;
  unsigned numInputs = k.getInputs().size();
  llvm::Function *fn = llvm::Intrinsic::getDeclaration(
      &mod, llvm::Intrinsic::prefetch, {b.getPtrTy()});
  for (unsigned op = 0; op < numInputs; ++op) {
    int64_t st = nest.strides[op][t], si = nest.strides[op][in];
    if (si == 0)
      continue; // the next tile reads what this one reads
    // The tile's footprint: `rows` runs of kTile elements along the
    // unit-stride (+1 or -1) loop, `other` elements apart.
    int64_t other, unit;
    if (std::abs(si) == 1)
      other = st, unit = si;
    else if (std::abs(st) == 1)
      other = si, unit = st;
    else
      continue; // no unit stride: gathers, not lines
    int64_t bytes = memTypes[op]->getPrimitiveSizeInBits() / 8;
    int64_t rows = other == 0 ? 1 : kTile;
    Value *base =
        b.CreateAdd(index[op], b.CreateAdd(b.CreateMul(tileT, b.getInt64(st)),
                                           b.CreateMul(tileI, b.getInt64(si))));
    base = offset(base, kTile * si);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t byte = 0; byte < kTile * bytes; byte += 64) {
        Value *p = b.CreateGEP(memTypes[op], bases[op],
                               offset(base, r * other + unit * byte / bytes));
        // read, locality 3 (keep in all levels), data cache
        b.CreateCall(fn, {p, b.getInt32(0), b.getInt32(3), b.getInt32(1)});
      }
  }
}

/// Combines values pairwise (a tree: short dependency chains).
Value *Emitter::combineTree(llvm::StringRef kind, llvm::ArrayRef<Value *> vs) {
  llvm::SmallVector<Value *> level(vs.begin(), vs.end());
  while (level.size() > 1) {
    llvm::SmallVector<Value *> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back(combine(kind, level[i], level[i + 1]));
    if (level.size() % 2)
      next.push_back(level.back());
    level = next;
  }
  return level[0];
}

/// `lanes` consecutive elements of operand `op` from `index` on.
Value *Emitter::loadVector(unsigned op, Value *index) {
  auto *vt = llvm::FixedVectorType::get(memTypes[op], lanes);
  Value *p = b.CreateInBoundsGEP(memTypes[op], bases[op], index);
  Value *v = b.CreateAlignedLoad(
      vt, p, llvm::Align(memTypes[op]->getPrimitiveSizeInBits() / 8));
  return types[op].isInteger(1)
             ? b.CreateTrunc(v,
                             llvm::FixedVectorType::get(b.getInt1Ty(), lanes))
             : v;
}

void Emitter::storeVector(unsigned op, Value *index, Value *v) {
  if (types[op].isInteger(1))
    v = b.CreateZExt(v, llvm::FixedVectorType::get(b.getInt8Ty(), lanes));
  Value *p = b.CreateInBoundsGEP(memTypes[op], bases[op], index);
  b.CreateAlignedStore(v, p,
                       llvm::Align(memTypes[op]->getPrimitiveSizeInBits() / 8));
}

/// The `lanes` elements of one micro-kernel row of operand `op` (along the
/// innermost loop) starting at `index`.
Value *Emitter::loadRow(unsigned op, Value *index) {
  int64_t s = nest.strides[op].back();
  if (s == 1)
    return loadVector(op, index);
  if (s == 0)
    return b.CreateVectorSplat(lanes, load(op, index));
  Value *v = llvm::PoisonValue::get(
      llvm::FixedVectorType::get(load(op, index)->getType(), lanes));
  for (unsigned l = 0; l < lanes; ++l)
    v = b.CreateInsertElement(v, load(op, offset(index, l * s)), l);
  return v;
}

void Emitter::storeRow(unsigned op, Value *index, Value *v) {
  int64_t s = nest.strides[op].back();
  if (s == 1)
    return storeVector(op, index, v);
  for (unsigned l = 0; l < lanes; ++l)
    store(op, offset(index, l * s), b.CreateExtractElement(v, l));
}

Value *Emitter::reduceLanes(llvm::StringRef kind, Value *v) {
  Value *acc = b.CreateExtractElement(v, uint64_t(0));
  for (unsigned l = 1; l < lanes; ++l)
    acc = combine(kind, acc, b.CreateExtractElement(v, l));
  return acc;
}

/// Transposes a lanes x lanes block held as one vector per row: for every
/// bit of the lane index, swap that bit of the row index with it (one
/// two-input shuffle per row per bit: unpack/shufps/vperm2f128 on AVX).
llvm::SmallVector<Value *> Emitter::transpose(llvm::ArrayRef<Value *> rows) {
  llvm::SmallVector<Value *> m(rows.begin(), rows.end());
  unsigned n = lanes;
  for (unsigned bit = 1; bit < n; bit <<= 1) {
    llvm::SmallVector<int> lo, hi;
    for (unsigned c = 0; c < n; ++c) {
      lo.push_back(c & bit ? n + (c ^ bit) : c);
      hi.push_back(c & bit ? n + c : c | bit);
    }
    llvm::SmallVector<Value *> next(m);
    for (unsigned r = 0; r < n; ++r)
      if (!(r & bit)) {
        next[r] = b.CreateShuffleVector(m[r], m[r | bit], lo);
        next[r | bit] = b.CreateShuffleVector(m[r], m[r | bit], hi);
      }
    m = next;
  }
  return m;
}

/// One lanes x lanes block of a tile at (mT, mI) of the tiled loop and the
/// innermost loop, on vectors along the innermost loop: operands that are
/// unit-stride along the tiled loop instead are loaded (stored) as vectors
/// along it and transposed in registers.
bool Emitter::emitMicroKernel(llvm::ArrayRef<Value *> index, Value *mT,
                              Value *mI, llvm::ArrayRef<unsigned> tileAcc,
                              llvm::ArrayRef<Value *> accIn,
                              llvm::SmallVectorImpl<Value *> &accOut,
                              std::string &error) {
  size_t t = tiledDim, in = nest.sizes.size() - 1;
  unsigned numInputs = k.getInputs().size(), numResults = k.getNumResults();
  lanes = microLanes;
  auto transposed = [&](unsigned op) {
    int64_t si = nest.strides[op][in];
    return nest.strides[op][t] == 1 && si != 1 && si != 0;
  };
  llvm::SmallVector<Value *> base;
  for (unsigned op = 0; op < index.size(); ++op) {
    Value *v = index[op];
    if (int64_t st = nest.strides[op][t])
      v = b.CreateAdd(v, b.CreateMul(mT, b.getInt64(st)));
    if (int64_t si = nest.strides[op][in])
      v = b.CreateAdd(v, b.CreateMul(mI, b.getInt64(si)));
    base.push_back(v);
  }
  // rows[op][r]: operand op along the innermost loop in row r.
  std::vector<llvm::SmallVector<Value *>> rows(numInputs);
  for (unsigned op = 0; op < numInputs; ++op) {
    int64_t st = nest.strides[op][t], si = nest.strides[op][in];
    if (transposed(op)) {
      llvm::SmallVector<Value *> cols;
      for (unsigned c = 0; c < lanes; ++c)
        cols.push_back(loadVector(op, offset(base[op], c * si)));
      rows[op] = transpose(cols);
    } else {
      for (unsigned r = 0; r < lanes; ++r)
        rows[op].push_back(loadRow(op, offset(base[op], r * st)));
    }
  }
  std::vector<llvm::SmallVector<Value *>> yields(lanes);
  for (unsigned r = 0; r < lanes; ++r) {
    llvm::SmallVector<Value *> args;
    for (unsigned op = 0; op < numInputs; ++op)
      args.push_back(rows[op][r]);
    if (!emitBody(args, yields[r], error)) {
      lanes = 0;
      return false;
    }
  }
  for (unsigned res = 0; res < numResults; ++res) {
    unsigned op = numInputs + res;
    int64_t st = nest.strides[op][t], si = nest.strides[op][in];
    llvm::StringRef kind = k.getCombiner(res);
    llvm::SmallVector<Value *> ys;
    for (unsigned r = 0; r < lanes; ++r)
      ys.push_back(yields[r][res]);
    if (kind.empty()) {
      if (transposed(op)) {
        llvm::SmallVector<Value *> cols = transpose(ys);
        for (unsigned c = 0; c < lanes; ++c)
          storeVector(op, offset(base[op], c * si), cols[c]);
      } else {
        for (unsigned r = 0; r < lanes; ++r)
          storeRow(op, offset(base[op], r * st), ys[r]);
      }
      continue;
    }
    // Rows that land on the same elements combine in registers first.
    if (st == 0)
      ys.assign(1, combineTree(kind, ys));
    // A result that stays on one element over the whole tile accumulates
    // in a vector carried across the tile's micro-kernels.
    if (auto it = llvm::find(tileAcc, res); it != tileAcc.end()) {
      accOut.push_back(combine(kind, accIn[it - tileAcc.begin()], ys[0]));
      continue;
    }
    for (unsigned r = 0; r < ys.size(); ++r) {
      Value *at = offset(base[op], r * st);
      if (si == 0) {
        Value *v = reduceLanes(kind, ys[r]);
        store(op, at, combine(kind, load(op, at), v));
      } else {
        storeRow(op, at, combine(kind, loadRow(op, at), ys[r]));
      }
    }
  }
  lanes = 0;
  return true;
}

/// The loop within a tile along tiledDim when tiles run micro-kernels: a
/// full tile runs micro-kernels (emitFullTile); a partial one (at the
/// edges) the scalar loops.
bool Emitter::emitTileLevel(const Level &l, std::string &error) {
  size_t in = nest.sizes.size() - 1;
  Value *lo = l.lo, *hi = l.hi;
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
  bool ok = emitFullTile(l, loI, error);
  b.CreateBr(joinBB);
  b.SetInsertPoint(scalarBB);
  emitFor(lo, hi, {}, [&](Value *i, llvm::ArrayRef<Value *>) {
    ok = ok && emitLevel(l.level + 1, advance(l.index, i, l.dim),
                         withIv(l.ivs, i), error);
    return llvm::SmallVector<Value *>();
  });
  b.CreateBr(joinBB);
  b.SetInsertPoint(joinBB);
  return ok;
}

/// A full tile from (l.lo, loI) of the tiled and the innermost loop, in
/// microLanes x microLanes micro-kernels. Results that stay on one element
/// over the tile: one vector accumulator across its micro-kernels, one
/// lane reduction at the end.
bool Emitter::emitFullTile(const Level &l, Value *loI, std::string &error) {
  size_t in = nest.sizes.size() - 1;
  unsigned numInputs = k.getInputs().size(), numResults = k.getNumResults();
  Value *tEnd = b.CreateAdd(l.lo, b.getInt64(kTile));
  Value *iEnd = b.CreateAdd(loI, b.getInt64(kTile));
  prefetchNextTile(l.index, l.lo, loI);
  llvm::SmallVector<unsigned> tileAcc;
  llvm::SmallVector<Value *> accInit;
  for (unsigned r = 0; r < numResults; ++r) {
    unsigned op = numInputs + r;
    llvm::StringRef kind = k.getCombiner(r);
    if (kind.empty() || nest.strides[op][l.dim] || nest.strides[op][in])
      continue;
    tileAcc.push_back(r);
    auto *vt = llvm::FixedVectorType::get(
        cascade[r] ? b.getFloatTy() : scalarType(types[op]), microLanes);
    accInit.push_back(
        kind == "sum" ? llvm::Constant::getNullValue(vt)
                      : b.CreateVectorSplat(microLanes, load(op, l.index[op])));
  }
  bool ok = true;
  auto accs = emitFor(
      l.lo, tEnd, accInit,
      [&](Value *mT, llvm::ArrayRef<Value *> accT) {
        return emitFor(
            loI, iEnd, accT,
            [&](Value *mI, llvm::ArrayRef<Value *> accI) {
              llvm::SmallVector<Value *> next;
              ok = ok &&
                   emitMicroKernel(l.index, mT, mI, tileAcc, accI, next, error);
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
    store(op, l.index[op], combine(kind, load(op, l.index[op]), v));
  }
  return ok;
}
