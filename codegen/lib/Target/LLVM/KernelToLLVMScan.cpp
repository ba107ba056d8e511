//===- KernelToLLVMScan.cpp - scan kernels (cumsum, cumprod) to LLVM IR ---===//
//
// Assumes: a verified scan kernel (`scan_dim`): one result over the space,
//   its loops the space itself (--strata-coalesce leaves it alone).
// Guarantees: the result's element at every point combines the body's
//   values along scan_dim up to it (from the end with `scan_reverse`,
//   without the point itself with `scan_exclusive`), combined in order in
//   the accumulator type: f64 for f32 results (PyTorch's CPU acc_type, so
//   a long f32 cumsum equals PyTorch's), the result type otherwise.
// Algorithm: a loop nest over the other dims, outermost first (the first
//   of them is the ABI's [begin, end), so lines run on the thread pool),
//   and innermost the scanned dim with the accumulator carried in a
//   register. O(n); a scan along an outer dim reads its input strided.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include <functional>

using namespace strata::codegen::detail;

bool Emitter::emitScan(llvm::SmallVector<Value *> index, std::string &error) {
  size_t n = nest.sizes.size();
  size_t dim = static_cast<size_t>(*k.getScanDim());
  unsigned numInputs = k.getInputs().size(), res = numInputs;
  bool prod = *k.getScanCombiner() == "prod";
  bool reverse = k.getScanReverse(), exclusive = k.getScanExclusive();
  llvm::Type *elem = scalarType(types[res]);
  llvm::Type *acc = elem->isFloatTy() ? b.getDoubleTy() : elem;
  Value *identity =
      acc->isFloatingPointTy()
          ? llvm::ConstantFP::get(acc, prod ? 1.0 : 0.0)
          : static_cast<Value *>(llvm::ConstantInt::get(acc, prod ? 1 : 0));
  auto advance = [&](const llvm::SmallVector<Value *> &idx, Value *i,
                     size_t d) {
    llvm::SmallVector<Value *> next(idx);
    for (size_t op = 0; op < next.size(); ++op)
      if (int64_t s = nest.strides[op][d])
        next[op] = b.CreateAdd(next[op], b.CreateMul(i, b.getInt64(s)));
    return next;
  };
  auto toResult = [&](Value *v) {
    return v->getType() == elem ? v : b.CreateFPTrunc(v, elem);
  };
  // The scanned line at `idx`: a register accumulator along `dim`.
  auto line = [&](const llvm::SmallVector<Value *> &idx) {
    int64_t size = nest.sizes[dim];
    bool ok = true;
    emitFor(
        b.getInt64(0), b.getInt64(size), {identity},
        [&](Value *i, llvm::ArrayRef<Value *> carried) {
          Value *at = reverse ? b.CreateSub(b.getInt64(size - 1), i) : i;
          llvm::SmallVector<Value *> p = advance(idx, at, dim);
          llvm::SmallVector<Value *> args, yields;
          for (unsigned op = 0; op < numInputs; ++op)
            args.push_back(load(op, p[op]));
          ok = ok && emitBody(args, yields, error);
          if (!ok)
            return llvm::SmallVector<Value *>(carried.begin(), carried.end());
          Value *v = yields[0];
          if (v->getType() != acc)
            v = b.CreateFPExt(v, acc);
          Value *a = carried[0];
          // In order, no fast-math flags: each step rounds as PyTorch's.
          Value *next = acc->isFloatingPointTy()
                            ? (prod ? b.CreateFMul(a, v) : b.CreateFAdd(a, v))
                            : (prod ? b.CreateMul(a, v) : b.CreateAdd(a, v));
          store(res, p[res], toResult(exclusive ? a : next));
          return llvm::SmallVector<Value *>{next};
        },
        1, /*scalarOnly=*/true);
    return ok;
  };
  llvm::SmallVector<size_t> others;
  for (size_t d = 0; d < n; ++d)
    if (d != dim)
      others.push_back(d);
  // Loops over the other dims, the first over [begin, end).
  std::function<bool(size_t, llvm::SmallVector<Value *>)> level =
      [&](size_t l, llvm::SmallVector<Value *> idx) -> bool {
    if (l == others.size())
      return line(idx);
    size_t d = others[l];
    Value *lo = l == 0 ? begin : b.getInt64(0);
    Value *hi = l == 0 ? end : b.getInt64(nest.sizes[d]);
    bool ok = true;
    emitFor(lo, hi, {}, [&](Value *i, llvm::ArrayRef<Value *>) {
      ok = ok && level(l + 1, advance(idx, i, d));
      return llvm::SmallVector<Value *>();
    });
    return ok;
  };
  if (!others.empty())
    return level(0, index);
  // Only the scanned dim: one line, run when [begin, end) holds point 0.
  bool ok = true;
  emitFor(begin, end, {}, [&](Value *, llvm::ArrayRef<Value *>) {
    ok = ok && line(index);
    return llvm::SmallVector<Value *>();
  });
  return ok;
}
