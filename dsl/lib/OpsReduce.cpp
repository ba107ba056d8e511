//===- OpsReduce.cpp - sum, mean, prod, amax, amin ------------------------===//
//
// The reductions that are one strata op (strata.sum, ...): the shape from
// the layout algebra, PyTorch's result dtype (integer sums and products are
// i64) and its errors (mean of integers, a max over nothing). Reductions
// composed of these are in CompositeReductions.cpp.
//
//===----------------------------------------------------------------------===//
#include "OpBuilders.h"

#include <algorithm>

using namespace strata;
using namespace strata::detail;

namespace {

/// Records reduction `name` of `in` over `dims` (all when empty; `dimList`:
/// the overload taking dims, PyTorch's SumBackward1) with PyTorch's result
/// dtype and errors.
Tensor reduce(const Tensor &in, const char *name, const Shape &dims,
              bool keepdim, const SourceLoc &loc, bool dimList = true) {
  const TensorImpl &t = implOf(in, loc);
  Shape shape =
      check(layout::reduceShape(t.layout.sizes, dims, keepdim, name), loc);
  Shape wrapped;
  for (int64_t d : dims)
    wrapped.push_back(check(layout::wrapDim(d, t.layout.dim(), name), loc));
  std::sort(wrapped.begin(), wrapped.end());
  DType out = t.dtype;
  std::string_view n(name);
  if ((n == "sum" || n == "prod") && !isFloatingPoint(t.dtype))
    out = DType::I64; // PyTorch: integer and bool sums and products
  if (n == "amax" || n == "amin") {
    // PyTorch: a max/min over nothing has no identity to return.
    if (wrapped.empty() && t.layout.numel() == 0)
      fail(std::string(name) +
               "(): Expected reduction dim to be specified for "
               "input.numel() == 0. Specify the reduction dim with the "
               "'dim' argument.",
           "reduce over the dims that are not empty", loc);
    for (int64_t d : wrapped)
      if (t.layout.dim() > 0 && t.layout.sizes[d] == 0)
        fail(std::string(name) + "(): Expected reduction dim " +
                 std::to_string(d) + " to have non-zero size.",
             "reduce over the dims that are not empty", loc);
  }
  if (n == "mean" && !isFloatingPoint(t.dtype))
    fail("mean(): could not infer output dtype. Input dtype must be either a "
         "floating point or complex dtype. Got: " +
             toString(t.dtype),
         "convert first: x.to(strata::kFloat32).mean()", loc);
  return record(Op::Reduce, name, out, std::move(shape), {&in}, loc,
                std::move(wrapped), keepdim, dimList);
}

} // namespace

#define STRATA_REDUCE(method)                                                  \
  Tensor Tensor::method(const Shape &dims, bool keepdim, SourceLoc loc)        \
      const {                                                                  \
    return reduce(*this, #method, dims, keepdim, loc);                         \
  }
STRATA_REDUCE(sum)
STRATA_REDUCE(mean)
Tensor Tensor::sum(SourceLoc loc) const {
  return reduce(*this, "sum", {}, false, loc, false);
}
Tensor Tensor::mean(SourceLoc loc) const {
  return reduce(*this, "mean", {}, false, loc, false);
}
Tensor Tensor::prod(SourceLoc loc) const {
  return reduce(*this, "prod", {}, false, loc, false);
}
Tensor Tensor::prod(int64_t dim, bool keepdim, SourceLoc loc) const {
  return reduce(*this, "prod", {dim}, keepdim, loc);
}
STRATA_REDUCE(amax)
STRATA_REDUCE(amin)
#undef STRATA_REDUCE
