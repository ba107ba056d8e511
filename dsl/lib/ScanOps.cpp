//===- ScanOps.cpp - cumsum, cumprod and their in-place forms -------------===//
//
// One `strata.scan` node each (docs/design.md, "Scans"), with PyTorch
// 1.13's rules: integer and bool inputs give int64 unless a dtype is
// given; the input is converted to the dtype first (a visible cast); a
// bool result is refused as PyTorch's kernels refuse Bool (but a 0-d or
// empty tensor, for which PyTorch runs no kernel, is converted); the in-place
// forms keep the tensor's dtype ("Bad in-place call" for another one).
//
//===----------------------------------------------------------------------===//
#include "Impl.h"

#include <string>

using namespace strata;
using namespace strata::detail;

namespace {

/// cumsum/cumprod (`name`) of `x` along `dim` with result dtype `out`.
Tensor scan(const Tensor &x, const char *name, int64_t dim, DType out,
            const SourceLoc &loc) {
  const TensorImpl &t = implOf(x, loc);
  int64_t rank = t.layout.dim();
  // PyTorch's maybe_wrap_dim: a 0-d tensor takes dim 0 or -1.
  int64_t wrapped =
      check(layout::wrapDim(dim, std::max<int64_t>(rank, 1), name), loc,
            "count dims from 0, or from the end with negative dims (a 0-d "
            "tensor takes 0 or -1)");
  Tensor in = t.dtype == out ? x : x.to(out, loc);
  if (out == DType::Bool) {
    // PyTorch runs no kernel for a 0-d tensor (the value) or an empty one,
    // so only those take a Bool result.
    if (rank == 0 || t.layout.numel() == 0)
      return in.clone(loc);
    notImplementedFor(std::string(name) == "cumsum" ? "cumsum_out_cpu"
                                                    : "cumprod_out_cpu",
                      out, "give an integer dtype: x.cumsum(dim, kInt64)", loc);
  }
  const TensorImpl &i = *in.impl();
  checkStorageSize(i.layout.sizes, elementSize(out), name, loc);
  TraceLock lock;
  auto node = std::make_shared<Node>();
  node->op = Op::Scan;
  node->name = name;
  node->dtype = out;
  node->sizes = i.layout.sizes;
  node->rareFields().dims = {rank ? wrapped : 0};
  node->scanGradInSource =
      t.dtype != out && isFloatingPoint(t.dtype) && isFloatingPoint(out);
  if (isFloatingPoint(out))
    checkViewRead(i, loc);
  markGradLeaf(in.impl());
  node->inputs.push_back(operandOf(i));
  return makeResult(std::move(node), loc, requiresGradOf(i));
}

DType resultType(const Tensor &x, std::optional<DType> dtype,
                 const SourceLoc &loc) {
  DType t = implOf(x, loc).dtype;
  return dtype ? *dtype : (isFloatingPoint(t) ? t : DType::I64);
}

Tensor &scanInPlace(Tensor &self, const char *name, const char *op, int64_t dim,
                    std::optional<DType> dtype, const SourceLoc &loc) {
  const TensorImpl &t = implOf(self, loc);
  if (dtype && *dtype != t.dtype)
    fail(std::string("Bad in-place call: input tensor dtype ") +
             cppTypeName(t.dtype) + " and output tensor dtype " +
             cppTypeName(*dtype) + " should match",
         "leave the dtype out (the result keeps the tensor's), or use the "
         "out-of-place form",
         loc);
  {
    TraceLock lock;
    checkInplace(t, requiresGradOf(t), op, loc);
  }
  Tensor result = scan(self, name, dim, t.dtype, loc);
  recordWrite(t, result, loc, op);
  return self;
}

} // namespace

Tensor Tensor::cumsum(int64_t dim, std::optional<DType> dtype,
                      SourceLoc loc) const {
  return scan(*this, "cumsum", dim, resultType(*this, dtype, loc), loc);
}
Tensor Tensor::cumprod(int64_t dim, std::optional<DType> dtype,
                       SourceLoc loc) const {
  return scan(*this, "cumprod", dim, resultType(*this, dtype, loc), loc);
}
Tensor &Tensor::cumsum_(int64_t dim, std::optional<DType> dtype,
                        SourceLoc loc) {
  return scanInPlace(*this, "cumsum", "cumsum_", dim, dtype, loc);
}
Tensor &Tensor::cumprod_(int64_t dim, std::optional<DType> dtype,
                         SourceLoc loc) {
  return scanInPlace(*this, "cumprod", "cumprod_", dim, dtype, loc);
}
Tensor strata::cumsum(const Tensor &x, int64_t dim, std::optional<DType> dtype,
                      SourceLoc loc) {
  return x.cumsum(dim, dtype, loc);
}
Tensor strata::cumprod(const Tensor &x, int64_t dim, std::optional<DType> dtype,
                       SourceLoc loc) {
  return x.cumprod(dim, dtype, loc);
}
