//===- Emitter.h - the kernel-to-LLVM emitter, shared by its files -*- C++
//-*-===//
//
// Private to codegen/lib/Target/LLVM: KernelToLLVM.cpp holds the loop plan,
// the loop nest and the driver; KernelToLLVMOps.cpp the body's scalar ops;
// KernelToLLVMVector.cpp the vector paths (non-temporal stores, the
// in-register transpose micro-kernel); KernelToLLVMCascade.cpp cascade
// sums; KernelToLLVMScan.cpp scan kernels; KernelToLLVMIndex.cpp indexed
// access. See the top of KernelToLLVM.cpp for the algorithm.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_CODEGEN_TARGET_LLVM_EMITTER_H
#define STRATA_CODEGEN_TARGET_LLVM_EMITTER_H

#include "strata/IR/StrataDialect.h"
#include "strata/Target/LLVM/KernelToLLVM.h"
#include "strata/Target/ScalarOps.h"
#include "strata/Transforms/KernelPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"

namespace strata::codegen::detail {
using namespace strata::ir;
using llvm::Value;
/// The ABI's outermost range of scan kernel `k` (KernelToLLVMScan.cpp).
int64_t scanOuterSize(KernelOp k);
/// The ABI's %dims of kernel `k` with loop nest `nest`
/// (KernelToLLVMDynamic.cpp).
std::vector<int64_t> kernelDims(KernelOp k, const KernelOp::LoopNest &nest);
/// The constants of `k`'s body that are size values (kSizeValueAttrName)
/// of f32 or f64, in body order: the last entries of %dims hold their bits.
llvm::SmallVector<mlir::arith::ConstantOp> sizeValueConstants(KernelOp k);

/// Emits one strata.kernel as an LLVM function (KernelToLLVM.h's ABI).
class Emitter {
public:
  Emitter(KernelOp kernel, llvm::Module &module)
      : k(kernel), mod(module), ctx(module.getContext()), b(ctx),
        nest(kernel.getLoopNest()) {}

  bool run(const std::string &name, std::string &error);
  /// kernelCodeKey (KernelToLLVM.h): plans the loops, then prints what the
  /// emitted code depends on.
  std::string codeKey();

private:
  llvm::Type *scalarType(mlir::Type t) {
    if (t.isF32())
      return b.getFloatTy();
    if (t.isF64())
      return b.getDoubleTy();
    return b.getIntNTy(t.getIntOrFloatBitWidth());
  }
  /// The type of a body value: a scalar, or a vector of `lanes` of them
  /// while a transpose micro-kernel is emitted.
  llvm::Type *valueType(llvm::Type *scalar) {
    return lanes ? llvm::FixedVectorType::get(scalar, lanes) : scalar;
  }
  llvm::Type *valueType(mlir::Type t) { return valueType(scalarType(t)); }
  /// i1 lives in memory as one byte.
  llvm::Type *memoryType(mlir::Type t) {
    return t.isInteger(1) ? b.getInt8Ty() : scalarType(t);
  }
  mlir::Type elementType(mlir::Value v) {
    mlir::Type t = v.getType();
    if (auto s = t.dyn_cast<StorageType>())
      return s.getElementType();
    return t.cast<StridedTensorType>().getElementType();
  }
  Value *load(unsigned op, Value *index) {
    if (op < invariants.size() && invariants[op])
      return invariants[op];
    Value *p = b.CreateInBoundsGEP(memTypes[op], bases[op], index);
    Value *v = b.CreateLoad(memTypes[op], p);
    return types[op].isInteger(1) ? b.CreateTrunc(v, b.getInt1Ty()) : v;
  }
  void store(unsigned op, Value *index, Value *v) {
    if (types[op].isInteger(1))
      v = b.CreateZExt(v, b.getInt8Ty());
    b.CreateStore(v, b.CreateInBoundsGEP(memTypes[op], bases[op], index));
  }
  Value *nanPropagating(bool isMax, Value *x, Value *y) {
    Value *pick = isMax ? b.CreateFCmpOGT(x, y) : b.CreateFCmpOLT(x, y);
    Value *r = b.CreateSelect(pick, x, y);
    return b.CreateSelect(b.CreateFCmpUNO(x, y), b.CreateFAdd(x, y), r);
  }
  Value *combine(llvm::StringRef kind, Value *acc, Value *v) {
    bool f = v->getType()->isFPOrFPVectorTy();
    if (kind == "sum") {
      if (!f)
        return b.CreateAdd(acc, v);
      // A cascade sum's f32 value (or partial) into its f64 accumulator.
      if (acc->getType() != v->getType())
        v = b.CreateFPExt(v, acc->getType());
      llvm::FastMathFlags fmf;
      fmf.setAllowReassoc();
      Value *add = b.CreateFAdd(acc, v);
      if (auto *inst = llvm::dyn_cast<llvm::Instruction>(add))
        inst->setFastMathFlags(fmf);
      return add;
    }
    if (kind == "prod") // in order (no reassociation), as the scalar loop
      return f ? b.CreateFMul(acc, v) : b.CreateMul(acc, v);
    bool isMax = kind == "max";
    return f ? nanPropagating(isMax, acc, v)
             : integerMinMax(isMax, /*isSigned=*/true, acc, v);
  }
  /// max(x, y) or min(x, y) of integers; booleans (i1) compare unsigned
  /// (true = 1 > false = 0), whatever `isSigned` says.
  Value *integerMinMax(bool isMax, bool isSigned, Value *x, Value *y) {
    using P = llvm::CmpInst::Predicate;
    bool s = isSigned && !x->getType()->getScalarType()->isIntegerTy(1);
    P p = isMax ? (s ? P::ICMP_SGT : P::ICMP_UGT)
                : (s ? P::ICMP_SLT : P::ICMP_ULT);
    return b.CreateSelect(b.CreateICmp(p, x, y), x, y);
  }
  Value *integerPow(Value *base, Value *exp);
  /// `index_map` (KernelToLLVMIndex.cpp): the indexed loop operand or -1,
  /// its position at a point given the point's loaded inputs, and its store
  /// (plain, or accumulating).
  int indexMapOperand();
  /// Inputs every point reads at one element (all strides 0: a C++ number
  /// or a broadcast scalar), loaded once before the loops: a loop that
  /// stores cannot hoist their loads, and LLVM's vectorizer would check
  /// each at run time against every stored pointer.
  llvm::SmallVector<Value *> invariants;
  /// Ops in a kernel body past which its loops are not interleaved.
  static constexpr size_t kLongBody = 24;
  Value *indexedPosition(Value *position, llvm::ArrayRef<Value *> args);
  void storeIndexed(unsigned op, Value *position, llvm::ArrayRef<Value *> args,
                    Value *v);
  /// The f32 value a cascade sum result adds (the operand of its marked
  /// `arith.extf`), or null when result `r` is not a cascade sum.
  mlir::Value cascadeSource(unsigned r);
  void planCascade();
  Value *unaryCall(llvm::Intrinsic::ID id, Value *x) {
    return b.CreateUnaryIntrinsic(id, x);
  }
  Value *libmCall(llvm::StringRef f32Name, llvm::StringRef f64Name,
                  llvm::ArrayRef<Value *> args) {
    llvm::Type *t = args[0]->getType()->getScalarType();
    llvm::SmallVector<llvm::Type *> params(args.size(), t);
    auto callee =
        mod.getOrInsertFunction(t->isFloatTy() ? f32Name : f64Name,
                                llvm::FunctionType::get(t, params, false));
    if (!args[0]->getType()->isVectorTy())
      return b.CreateCall(callee, args);
    // No vector libm here: one call per lane.
    Value *out = llvm::PoisonValue::get(args[0]->getType());
    for (unsigned l = 0; l < lanes; ++l) {
      llvm::SmallVector<Value *> laneArgs;
      for (Value *a : args)
        laneArgs.push_back(b.CreateExtractElement(a, l));
      out = b.CreateInsertElement(out, b.CreateCall(callee, laneArgs), l);
    }
    return out;
  }
  /// The body at one point (or `lanes` points) given its arguments: the
  /// yielded values (a cascade sum's f32 value); false and `error` on an op
  /// KernelToLLVMOps.cpp does not take.
  bool emitBody(llvm::ArrayRef<Value *> args,
                llvm::SmallVectorImpl<Value *> &yields, std::string &error);
  /// One body op (KernelToLLVMOps.cpp): the family emitters below in turn.
  Value *emitOp(mlir::Operation &op, std::string &error);
  Value *emitConstant(mlir::arith::ConstantOp c);
  Value *emitIntCompare(mlir::arith::CmpIOp c);
  Value *emitInstruction(mlir::Operation &op, unsigned opcode);
  /// Operand `i` of body op `op`, as emitted.
  Value *operand(mlir::Operation &op, unsigned i) {
    return values.lookup(op.getOperand(i));
  }
  using BodyFn = llvm::function_ref<llvm::SmallVector<Value *>(
      Value *, llvm::ArrayRef<Value *>)>;
  llvm::SmallVector<Value *> emitFor(Value *lo, Value *hi,
                                     llvm::ArrayRef<Value *> init, BodyFn body,
                                     int64_t step = 1, bool scalarOnly = false);
  /// Loop `level` of `loops` and the ones inside it, from the point whose
  /// operand element indices are `index` and loop variables `ivs`.
  bool emitLevel(size_t level, llvm::SmallVector<Value *> index,
                 llvm::SmallVector<Value *> ivs, std::string &error);
  /// A scan kernel (KernelToLLVMScan.cpp).
  bool emitScan(llvm::SmallVector<Value *> index, std::string &error);
  /// What every part of a scan emits with.
  struct ScanPlan {
    size_t dim;   ///< the scanned loop
    unsigned res; ///< the result operand (after the inputs)
    bool prod, reverse, exclusive;
    bool columns; ///< blocks of columns scan together (the file's top)
    llvm::Type *elem, *acc; ///< the result's type, the accumulator's
    Value *identity;
    Value *accs = nullptr; ///< the column blocks' accumulators (stack)
  };
  bool emitScanLine(const ScanPlan &s, llvm::ArrayRef<Value *> idx,
                    std::string &error);
  bool emitScanBlocks(const ScanPlan &s, llvm::ArrayRef<Value *> idx,
                      Value *jbLo, Value *jbHi, std::string &error);
  /// The body's value at point `p` in the accumulator type; null and
  /// `error` when the body does not emit.
  Value *scanValue(const ScanPlan &s, llvm::ArrayRef<Value *> p,
                   std::string &error);
  /// Combines `v` into accumulator value `a` (into `cell` too, when given)
  /// and stores the result's element at `at` (the old value when
  /// exclusive): the new accumulator value.
  Value *scanStep(const ScanPlan &s, Value *a, Value *v, Value *at,
                  Value *cell = nullptr);
  /// Element types, cascade flags and every plan* decision (run and
  /// codeKey both start with it).
  void plan();
  void planLoops();
  void planNonTemporal();
  void storeNonTemporal(unsigned op, Value *index, Value *v, unsigned align);
  Value *loadVector(unsigned op, Value *index);
  void storeVector(unsigned op, Value *index, Value *v);
  Value *loadRow(unsigned op, Value *index);
  void storeRow(unsigned op, Value *index, Value *v);
  Value *reduceLanes(llvm::StringRef kind, Value *v);
  llvm::SmallVector<Value *> transpose(llvm::ArrayRef<Value *> rows);
  bool emitMicroKernel(llvm::ArrayRef<Value *> index, Value *mT, Value *mI,
                       llvm::ArrayRef<unsigned> tileAcc,
                       llvm::ArrayRef<Value *> accIn,
                       llvm::SmallVectorImpl<Value *> &accOut,
                       std::string &error);
  void prefetchNextTile(llvm::ArrayRef<Value *> index, Value *tileT,
                        Value *tileI);
  Value *combineTree(llvm::StringRef kind, llvm::ArrayRef<Value *> vs);
  /// Dynamic emission (planDynamic): sizes, strides and offsets that are
  /// not facts of the layout class are read from %dims once, at entry.
  bool dynamic = false;
  /// Innermost trip counts below this stay constants in a dynamic kernel
  /// (docs/performance.md, "Dynamic shapes").
  static constexpr int64_t kDynamicInnerMin = 8;
  void planDynamic();
  /// Whether loop `d`'s trip count, or stride `s`, is a constant of the
  /// emitted code (always, for a static kernel).
  bool staticSize(size_t d) const;
  bool staticStride(int64_t s) const {
    return !dynamic || s == 0 || s == 1 || s == -1;
  }
  /// The values read from %dims (dynamic), null where static.
  llvm::SmallVector<Value *> dynSizes;
  llvm::SmallVector<llvm::SmallVector<Value *>> dynStrides;
  /// Loop `d`'s trip count (not the outermost: [begin, end)).
  Value *sizeValue(size_t d) {
    return dynSizes.empty() || !dynSizes[d] ? b.getInt64(nest.sizes[d])
                                            : dynSizes[d];
  }
  /// Operand `op`'s stride along loop `d`.
  Value *strideValue(unsigned op, size_t d) {
    return dynStrides.empty() || !dynStrides[op][d]
               ? b.getInt64(nest.strides[op][d])
               : dynStrides[op][d];
  }
  /// Loads the dynamic values from `dims` (the ABI's layout); `offsets`:
  /// each operand's offset, loaded or constant.
  void loadDims(Value *dims, llvm::SmallVectorImpl<Value *> &offsets);
  /// The key's loop nest: the values the code has as constants, `?` for
  /// those it reads from %dims.
  void printNest(llvm::raw_ostream &os);
  /// The key's body: as printed, but without the size values' values.
  void printBody(llvm::raw_ostream &os);
  /// The body's size values (sizeValueConstants) that this kernel reads
  /// from %dims (every kernel, unless dynamic shapes are off), and their
  /// values as loaded at entry.
  llvm::SmallVector<mlir::arith::ConstantOp> sizeValueOps;
  llvm::DenseMap<mlir::Operation *, Value *> sizeValues;
  Value *offset(Value *index, int64_t elements) {
    return elements ? b.CreateAdd(index, b.getInt64(elements)) : index;
  }

  /// One emitted loop: a whole nest loop, or the tile loop (step kTile) or
  /// the loop within a tile of a tiled nest loop.
  enum class LoopKind { Full, Block, Tile, InTile };
  struct EmitLoop {
    size_t dim;
    LoopKind kind;
  };
  static constexpr int64_t kTile = 16;
  /// Tiles run in kBlock x kBlock blocks, so that the pages (TLB entries)
  /// and lines of both layouts a block touches stay cached.
  static constexpr int64_t kBlock = 128;
  std::vector<EmitLoop> loops;
  /// One level of the loop nest as it is emitted: its loop and range, the
  /// point it starts from (each operand's element index, the loop
  /// variables so far) and, innermost, the results it accumulates in
  /// registers.
  struct Level {
    size_t level, dim;
    LoopKind kind;
    Value *lo, *hi;
    int64_t step;
    llvm::SmallVector<Value *> index, ivs;
    llvm::SmallVector<unsigned> accumulated;
  };
  Level levelOf(size_t level, llvm::SmallVector<Value *> index,
                llvm::SmallVector<Value *> ivs);
  bool emitOuterLevel(const Level &l, std::string &error);
  bool emitInnermostLevel(Level &l, std::string &error);
  bool emitPoint(llvm::ArrayRef<Value *> idx, llvm::ArrayRef<Value *> ivs,
                 llvm::ArrayRef<Value *> carried,
                 llvm::ArrayRef<unsigned> accumulated,
                 llvm::SmallVectorImpl<Value *> &nextCarried,
                 std::string &error);
  /// The points of [from, to) of innermost level `l` one at a time,
  /// carrying `start` for l.accumulated: their values after the loop.
  /// Clears `ok` when a body fails.
  llvm::SmallVector<Value *> scalarLoop(const Level &l, Value *from, Value *to,
                                        bool scalarOnly,
                                        llvm::ArrayRef<Value *> start, bool &ok,
                                        std::string &error);
  /// The vector paths (KernelToLLVMVector.cpp).
  bool emitNonTemporalLoop(const Level &l, llvm::ArrayRef<Value *> init,
                           std::string &error);
  bool emitTileLevel(const Level &l, std::string &error);
  bool emitFullTile(const Level &l, Value *loI, std::string &error);
  /// Cascade sums (KernelToLLVMCascade.cpp): scratch rows of a
  /// read-modify-written result, f32 runs of a register accumulator.
  struct ScratchRows {
    int64_t elements = 1;               ///< f32 elements per row
    llvm::SmallVector<int64_t> strides; ///< per nest loop (0 outside dim's)
    /// The strides as values (a dynamic kernel's row is dense over sizes
    /// read from %dims; null where constant) and the row's bytes.
    llvm::SmallVector<Value *> strideValues;
    Value *bytes = nullptr;
    llvm::SmallVector<Value *> rows; ///< one per scratchResults entry
  };
  bool emitScratchLevel(const Level &l, std::string &error);
  bool emitScratchBlock(const Level &l, const ScratchRows &s, Value *c,
                        std::string &error);
  void flushScratchRow(unsigned op, Value *row, const ScratchRows &s,
                       size_t dim, Value *index);
  llvm::SmallVector<Value *> emitCascadeRuns(const Level &l,
                                             llvm::ArrayRef<Value *> init,
                                             bool &ok, std::string &error);
  /// Each operand's element index `i` iterations along loop `dim` from
  /// `index`.
  llvm::SmallVector<Value *> advance(llvm::ArrayRef<Value *> index, Value *i,
                                     size_t dim);
  /// `ivs` and then `i`.
  static llvm::SmallVector<Value *> withIv(llvm::ArrayRef<Value *> ivs,
                                           Value *i) {
    llvm::SmallVector<Value *> next(ivs);
    next.push_back(i);
    return next;
  }
  /// min(start + extent, hi).
  Value *clampedEnd(Value *start, int64_t extent, Value *hi);
  /// The loop tiled with the innermost one, or -1.
  int tiledDim = -1;
  /// Width of the transpose micro-kernel (0: the tiles run scalar loops).
  unsigned microLanes = 0;
  /// Non-zero while a micro-kernel body is emitted on vectors.
  unsigned lanes = 0;
  llvm::DenseMap<size_t, Value *> tileStart, blockStart;
  /// Results at least this large (bytes) that the innermost loop of an
  /// untiled kernel writes with unit stride use non-temporal stores:
  /// they would not stay cached anyway, and write-allocate caches would
  /// first read every line they write (docs/performance.md).
  static constexpr int64_t kNonTemporalBytes = int64_t(4) << 20;
  /// The operand written with non-temporal stores, or -1.
  int ntOp = -1;
  /// Its vector width in the flat innermost loop.
  unsigned ntLanes = 0;
  bool usedNonTemporal = false;
  /// Cascade summation (kCascadeAttrName): per result, whether it is an
  /// f64 sum of f32 values, which add up in f32 over runs of at most
  /// kCascadeRun points (kCascadeRows rows for scratch results) before one
  /// f64 addition.
  static constexpr int64_t kCascadeRun = 256;
  static constexpr int64_t kCascadeRows = 128;
  /// Scratch rows hold at most this many f32 elements (stack memory).
  static constexpr int64_t kMaxScratch = 8192;
  llvm::SmallVector<bool> cascade;
  /// The nest loop whose blocks of kCascadeRows iterations sum into f32
  /// scratch rows (one per result in scratchResults) before they are added
  /// to the f64 results, or -1: for cascade results written at every point
  /// of the innermost loop (read-modify-write), e.g. `a.sum(0)`.
  int scratchDim = -1;
  llvm::SmallVector<unsigned> scratchResults;

  KernelOp k;
  llvm::Module &mod;
  llvm::LLVMContext &ctx;
  llvm::IRBuilder<> b;
  KernelOp::LoopNest nest;
  std::vector<mlir::Type> types;
  std::vector<llvm::Type *> memTypes;
  std::vector<Value *> bases;
  llvm::DenseMap<mlir::Value, Value *> values;
  Value *begin = nullptr, *end = nullptr;
};

} // namespace strata::codegen::detail

#endif // STRATA_CODEGEN_TARGET_LLVM_EMITTER_H
