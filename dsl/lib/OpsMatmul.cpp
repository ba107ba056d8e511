//===- OpsMatmul.cpp - torch.matmul ---------------------------------------===//
//
// One strata.matmul with PyTorch 1.13's checks and messages (dtypes, 1-D
// operands, sizes), the batch dims broadcast, and the dtype and layout
// PyTorch's mm/mv/bmm paths give an empty product and a folded batch.
//
//===----------------------------------------------------------------------===//
#include "OpBuilders.h"

#include <algorithm>

using namespace strata;
using namespace strata::detail;

Tensor Tensor::matmul(const Tensor &o, SourceLoc loc) const {
  const TensorImpl &a = implOf(*this, loc), &b = implOf(o, loc);
  // PyTorch checks dtypes (and refuses bool) only where there is a product
  // to compute: an empty matmul is an empty or zero result, of the first
  // operand's dtype (of the vector's in matrix @ vector, PyTorch's mv).
  bool empty = (a.layout.numel() == 0 || b.layout.numel() == 0) &&
               !(a.layout.dim() == 1 && b.layout.dim() == 1);
  if (empty && a.dtype != b.dtype && a.layout.dim() > 0 && b.layout.dim() > 0) {
    // PyTorch's paths: mv (matrix @ vector) and bmm (batched, unless only
    // the first operand has batch dims) take the second operand's dtype; a
    // vector @ batch (unsqueezed, folded into one mm) and a batch folded
    // into one mm the first's.
    int64_t da = a.layout.dim(), db = b.layout.dim();
    // (A 3-d first operand whose last two dims are transposed under a
    // slowest first dim is not folded: bmm, PyTorch 1.13's should_fold.)
    bool unfolded = db == 2 && layout::isTransposedBatch(a.layout);
    if ((db == 1 && da >= 2) || (db >= 3 && da >= 2) || unfolded)
      return to(b.dtype, loc).matmul(o, loc);
    return matmul(o.to(a.dtype, loc), loc);
  }
  if (a.dtype != b.dtype)
    fail("expected m1 and m2 to have the same dtype, but got: " +
             strata::toString(a.dtype) + " != " + strata::toString(b.dtype),
         "convert one operand with .to(dtype)", loc);
  const Shape &sa = a.layout.sizes, &sb = b.layout.sizes;
  if (a.dtype == DType::Bool && !sa.empty() && !sb.empty() && !empty)
    fail(sa.size() == 1 && sb.size() == 1
             ? "\"dot\" not implemented for 'Bool'"
             : "\"addmm_impl_cpu_\" not implemented for 'Bool'",
         "convert the operands to an integer or float type first", loc);
  if (sa.empty() || sb.empty())
    fail("both arguments to matmul need to be at least 1D, but they are " +
             std::to_string(sa.size()) + "D and " + std::to_string(sb.size()) +
             "D",
         "", loc);
  int64_t k1 = sa.back(), k2 = sb.size() == 1 ? sb[0] : sb[sb.size() - 2];
  if (k1 != k2 && sa.size() == 1 && sb.size() == 1)
    fail("inconsistent tensor size, expected tensor [" + std::to_string(k1) +
             "] and src [" + std::to_string(k2) +
             "] to have the same number of elements, but got " +
             std::to_string(k1) + " and " + std::to_string(k2) +
             " elements respectively",
         "a dot product needs two vectors of one length", loc);
  if (k1 != k2) {
    auto fmt = [](const Shape &s) {
      std::string r;
      for (size_t i = 0; i < s.size(); ++i)
        r += (i ? "x" : "") + std::to_string(s[i]);
      return r;
    };
    fail("mat1 and mat2 shapes cannot be multiplied (" + fmt(sa) + " and " +
             fmt(sb) + ")",
         "the last dim of the first operand must equal the first (or "
         "second-to-last) dim of the second",
         loc);
  }
  Shape batchA(sa.begin(), sa.end() - std::min<size_t>(sa.size(), 2));
  Shape batchB(sb.begin(), sb.end() - std::min<size_t>(sb.size(), 2));
  Shape shape = check(layout::broadcastShapes(batchA, batchB, "matmul"), loc);
  if (sa.size() >= 2)
    shape.push_back(sa[sa.size() - 2]);
  if (sb.size() >= 2)
    shape.push_back(sb.back());
  if (empty && a.dtype == DType::Bool) // the IR has no bool matmul
    return zeros(shape, TensorOptions(DType::Bool), loc);
  Tensor r = record(Op::Matmul, "matmul", a.dtype, shape, {this, &o}, loc);
  // (The IR's result is row-major; PyTorch's folded matrix @ batch differs
  // from it on size-1 dims only.)
  return sizeOneStrides(std::move(r),
                        layout::matmulResult(a.layout, b.layout, shape));
}

Tensor strata::matmul(const Tensor &a, const Tensor &b, SourceLoc loc) {
  return a.matmul(b, loc);
}
