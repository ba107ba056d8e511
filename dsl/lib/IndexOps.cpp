//===- IndexOps.cpp - index_select, gather, scatter, scatter_add, index_add
//===//
//
// PyTorch 1.13's index ops over the IR's strata.gather / scatter /
// scatter_add (StrataIndexOps.td): index_select is a gather of the index
// viewed along `dim` and expanded to the result's shape, index_add a
// scatter_add of `alpha * source` at the index expanded to source's shape
// (views: no copy of the index; a float alpha != 1 on more than one dim:
// PyTorch's fma per index, indexAddFused). Each costs O(its output) in its
// own kernel.
//
// The values of the index are checked at the call (PyTorch's messages):
// like PyTorch's own check, this reads them, so a pending index is
// evaluated there (a sync, as PyTorch's kernels sync on a CUDA index).
// An out-of-range index thus raises at the user's line and never reaches
// a kernel (which clamps anyway: memory outside the input is never read).
//
//===----------------------------------------------------------------------===//
#include "Composite.h"
#include "CompositeNode.h"
#include "Impl.h"
#include "OpBuilders.h"

#include <algorithm>

using namespace strata;
using namespace strata::detail;

namespace {

std::string sizesText(const Shape &s) { return layout::formatList(s); }

/// Records strata.<name> of `inputs` along `dim` (wrapped).
Tensor recordIndexOp(const char *name, DType dtype, Shape sizes,
                     const std::vector<const Tensor *> &inputs, int64_t dim,
                     const SourceLoc &loc) {
  checkStorageSize(sizes, elementSize(dtype), name, loc);
  TraceLock lock;
  auto node = std::make_shared<Node>();
  node->op = Op::Index;
  node->name = name;
  node->dtype = dtype;
  node->sizes = std::move(sizes);
  node->rareFields().dims = {dim};
  bool requiresGrad = false;
  for (const Tensor *t : inputs) {
    if (isFloatingPoint(dtype))
      checkViewRead(*t->impl(), loc);
    markGradLeaf(t->impl());
    node->inputs.push_back(operandOf(*t->impl()));
    requiresGrad |= requiresGradOf(*t->impl());
  }
  return makeResult(std::move(node), loc, requiresGrad);
}

/// The index's values (evaluating a pending index: PyTorch's sync).
std::vector<int64_t> indexValues(const Tensor &index, const SourceLoc &loc) {
  if (index.numel(loc) == 0)
    return {};
  return index.to(DType::I64, loc).to_vector<int64_t>(loc);
}

/// gather/scatter: every index in [0, size), else PyTorch's message naming
/// the first one out of range.
void checkBounds(const Tensor &index, int64_t dim, int64_t size,
                 const SourceLoc &loc) {
  for (int64_t v : indexValues(index, loc))
    if (v < 0 || v >= size)
      throw Error("index " + std::to_string(v) +
                      " is out of bounds for dimension " + std::to_string(dim) +
                      " with size " + std::to_string(size),
                  "indices along dim " + std::to_string(dim) + " are in [0, " +
                      std::to_string(size) + ")",
                  loc);
}

/// index_select/index_add: PyTorch's IndexError.
void checkSelectBounds(const Tensor &index, int64_t size,
                       const SourceLoc &loc) {
  for (int64_t v : indexValues(index, loc))
    if (v < 0 || v >= size)
      throw Error("index out of range in self",
                  "indices are in [0, " + std::to_string(size) +
                      ") (the size of self along dim; negative indices are "
                      "not allowed)",
                  loc);
}

int64_t sizeAt(const Tensor &t, int64_t d, const SourceLoc &loc) {
  return t.dim(loc) == 0 ? 1 : t.size(d, loc);
}

/// The 1-D index of index_select/index_add (int32 or int64, at most 1-D)
/// as int64 of n elements.
Tensor vectorIndex(const Tensor &index, const char *op, const SourceLoc &loc) {
  DType t = index.dtype(loc);
  if (t != DType::I64 && t != DType::I32)
    throw Error(std::string(op) + "(): Expected dtype int32 or int64 for index",
                "pass an integer index tensor (x.to(kLong))", loc);
  if (index.dim(loc) > 1)
    throw Error(std::string(op) + "(): Index is supposed to be a vector",
                "flatten the index first", loc);
  return index.to(DType::I64, loc).reshape({index.numel(loc)}, loc);
}

/// `index` (1-D, n) viewed along `dim` of a tensor of `shape` and expanded
/// to it (stride 0 elsewhere): what gather/scatter_add read.
Tensor expandIndex(const Tensor &index, int64_t dim, const Shape &shape,
                   const SourceLoc &loc) {
  Shape along(shape.size(), 1);
  along[dim] = index.numel(loc);
  return index.view(along, loc).expand(shape, loc);
}

/// Checks of scatter/scatter_add (`op`), PyTorch's order and messages.
int64_t checkScatter(const Tensor &self, int64_t dim, const Tensor &index,
                     const Tensor *src, const char *op, const SourceLoc &loc) {
  if (index.dtype(loc) != DType::I64)
    throw Error(std::string(op) + "(): Expected dtype int64 for index",
                "convert the index with .to(kLong)", loc);
  if (src && src->dtype(loc) != self.dtype(loc))
    throw Error(std::string(op) +
                    "(): Expected self.dtype to be equal to src.dtype",
                "convert src to self's dtype first", loc);
  int64_t rank = self.dim(loc);
  int64_t d = composite::wrapDim(dim, rank, op, loc);
  if (index.dim(loc) != rank)
    throw Error("Index tensor must have the same number of dimensions as "
                "self tensor",
                "index has one dim per dim of self", loc);
  if (src && src->dim(loc) != rank)
    throw Error("Index tensor must have the same number of dimensions as "
                "src tensor",
                "src has one dim per dim of self", loc);
  for (int64_t k = 0; k < rank; ++k)
    if ((k != d && index.size(k, loc) > self.size(k, loc)) ||
        (src && index.size(k, loc) > src->size(k, loc)))
      throw Error("Expected index " + sizesText(index.sizes(loc)) +
                      " to be smaller than self " + sizesText(self.sizes(loc)) +
                      " apart from dimension " + std::to_string(d) +
                      (src ? " and to be smaller size than src " +
                                 sizesText(src->sizes(loc))
                           : std::string()),
                  "index.size(k) <= src.size(k) for every k, and <= "
                  "self.size(k) for k != dim",
                  loc);
  checkBounds(index, d, sizeAt(self, d, loc), loc);
  return d;
}

Tensor scatterLike(const Tensor &self, int64_t dim, const Tensor &index,
                   const Tensor &src, bool value, const char *op,
                   const SourceLoc &loc) {
  int64_t d = checkScatter(self, dim, index, value ? nullptr : &src, op, loc);
  return recordIndexOp(op, self.dtype(loc), self.sizes(loc),
                       {&self, &index, &src}, d, loc);
}

/// `result` written into `self` in place (op_ with PyTorch's checks).
Tensor &writeInto(Tensor &self, const Tensor &result, const char *op,
                  const SourceLoc &loc) {
  {
    TraceLock lock;
    checkInplace(*self.impl(), requiresGradOf(*self.impl()), op, loc);
  }
  recordWrite(*self.impl(), result, loc, op);
  return self;
}
} // namespace

Tensor Tensor::gather(int64_t dim, const Tensor &index, SourceLoc loc) const {
  implOf(*this, loc);
  implOf(index, loc);
  if (index.dtype(loc) != DType::I64)
    throw Error("gather(): Expected dtype int64 for index",
                "convert the index with .to(kLong)", loc);
  int64_t rank = this->dim(loc);
  int64_t d = composite::wrapDim(dim, rank, "gather", loc);
  if (std::max<int64_t>(index.dim(loc), 1) != std::max<int64_t>(rank, 1))
    throw Error("Index tensor must have the same number of dimensions as "
                "input tensor",
                "index has one dim per dim of self", loc);
  if (index.dim(loc) != rank) { // a 0-d tensor with a 1-d one: as 1-d
    Tensor r = reshape({numel(loc)}, loc)
                   .gather(0, index.reshape({index.numel(loc)}, loc), loc);
    return r.reshape(index.sizes(loc), loc);
  }
  for (int64_t k = 0; k < rank; ++k)
    if (k != d && index.size(k, loc) > size(k, loc))
      throw Error("Size does not match at dimension " + std::to_string(k) +
                      " expected index " + sizesText(index.sizes(loc)) +
                      " to be smaller than self " + sizesText(sizes(loc)) +
                      " apart from dimension " + std::to_string(d),
                  "index.size(k) <= self.size(k) for k != dim", loc);
  checkBounds(index, d, sizeAt(*this, d, loc), loc);
  return recordIndexOp("gather", this->dtype(loc), index.sizes(loc),
                       {this, &index}, d, loc);
}

Tensor Tensor::index_select(int64_t dim, const Tensor &index,
                            SourceLoc loc) const {
  implOf(*this, loc);
  implOf(index, loc);
  Tensor idx = vectorIndex(index, "index_select", loc);
  int64_t rank = this->dim(loc);
  int64_t d = composite::wrapDim(dim, rank, "index_select", loc);
  checkSelectBounds(idx, sizeAt(*this, d, loc), loc);
  if (rank == 0) // PyTorch returns the 0-d value itself (a copy)
    return detail::composite(clone(loc), "IndexSelectBackward0", {this});
  Shape shape = sizes(loc);
  shape[d] = idx.numel(loc);
  Tensor expanded = expandIndex(idx, d, shape, loc);
  return detail::composite(recordIndexOp("gather", this->dtype(loc), shape,
                                         {this, &expanded}, d, loc),
                           "IndexSelectBackward0", {this});
}

Tensor Tensor::scatter(int64_t dim, const Tensor &index, const Tensor &src,
                       SourceLoc loc) const {
  implOf(*this, loc);
  implOf(index, loc);
  implOf(src, loc);
  return scatterLike(*this, dim, index, src, false, "scatter", loc);
}

Tensor Tensor::scatter(int64_t dim, const Tensor &index, Scalar value,
                       SourceLoc loc) const {
  implOf(*this, loc);
  implOf(index, loc);
  checkScalarFits(value, this->dtype(loc), "scatter", loc);
  Tensor v = scalarTensor(value, this->dtype(loc), loc);
  return scatterLike(*this, dim, index, v, true, "scatter", loc);
}

Tensor Tensor::scatter_add(int64_t dim, const Tensor &index, const Tensor &src,
                           SourceLoc loc) const {
  implOf(*this, loc);
  implOf(index, loc);
  implOf(src, loc);
  return scatterLike(*this, dim, index, src, false, "scatter_add", loc);
}

namespace {
/// index_add of more than one dim with a float alpha other than 1 as
/// PyTorch 1.13 computes it: `self.select(dim, index[i]).add_(source.select(
/// dim, i), alpha)` for each i in order, one fused multiply-add per element
/// (scatter_add would round alpha * source first). The index is known
/// here (its bounds were checked), so the i-th occurrences of the targets
/// form layer i: each layer is an index_select of source's slices at their
/// targets and `where(targeted, fma(slices, alpha, r), r)`, the layers in
/// order. Undefined (the scatter_add path) past kMaxLayers repeats of one
/// target.
Tensor indexAddFused(const Tensor &self, int64_t d, const Tensor &idx,
                     const Tensor &source, const Scalar &alpha,
                     const SourceLoc &loc) {
  constexpr int64_t kMaxLayers = 4;
  std::vector<int64_t> targets = indexValues(idx, loc);
  int64_t size = self.size(d, loc);
  std::vector<std::vector<int64_t>> layers; // layers[k][t]: i, or -1
  std::vector<int64_t> seen(static_cast<size_t>(size), 0);
  for (size_t i = 0; i < targets.size(); ++i) {
    int64_t k = seen[targets[i]]++;
    if (k >= kMaxLayers)
      return Tensor();
    if (k == static_cast<int64_t>(layers.size()))
      layers.emplace_back(static_cast<size_t>(size), -1);
    layers[k][targets[i]] = static_cast<int64_t>(i);
  }
  Shape along(static_cast<size_t>(self.dim(loc)), 1);
  along[d] = size;
  TensorOptions ints =
      TensorOptions(DType::I64).device(self.device(loc)).requires_grad(false);
  Tensor r = self;
  for (const std::vector<int64_t> &from : layers) {
    std::vector<int64_t> at(from.size()), hit(from.size());
    for (size_t t = 0; t < from.size(); ++t) {
      at[t] = std::max<int64_t>(from[t], 0);
      hit[t] = from[t] >= 0;
    }
    Tensor slices = source.index_select(d, from_vector(at, {}, ints, loc), loc);
    Tensor targeted = from_vector(hit, along, ints, loc).to(DType::Bool, loc);
    r = where(targeted, addScaled(r, slices, alpha, loc), r, loc);
  }
  return r;
}
} // namespace

Tensor Tensor::index_add(int64_t dim, const Tensor &index, const Tensor &source,
                         Scalar alpha, SourceLoc loc) const {
  implOf(*this, loc);
  implOf(index, loc);
  implOf(source, loc);
  Tensor idx = vectorIndex(index, "index_add_", loc);
  if (source.dtype(loc) != this->dtype(loc))
    throw Error(std::string("index_add_(): self (") +
                    torchTypeName(this->dtype(loc)) + ") and source (" +
                    torchTypeName(source.dtype(loc)) +
                    ") must have the same scalar type",
                "convert source to self's dtype first", loc);
  int64_t rank = this->dim(loc);
  int64_t d = composite::wrapDim(dim, rank, "index_add_", loc);
  int64_t n = idx.numel(loc);
  if (n != sizeAt(source, d, loc))
    throw Error("index_add_(): Number of indices (" + std::to_string(n) +
                    ") should be equal to source.size(dim): (" +
                    std::to_string(sizeAt(source, d, loc)) +
                    "), for dim: " + std::to_string(d),
                "one index per slice of source along dim", loc);
  if (source.dim(loc) != rank && !(rank <= 1 && source.dim(loc) <= 1))
    throw Error("index_add_(): source and self must have the same number of "
                "dims, got " +
                    std::to_string(source.dim(loc)) + " and " +
                    std::to_string(rank),
                "source is self's shape with size(dim) = index.numel()", loc);
  for (int64_t k = 0; k < rank; ++k)
    if (k != d && source.size(k, loc) != size(k, loc))
      throw Error("index_add_(): source " + sizesText(source.sizes(loc)) +
                      " and self " + sizesText(sizes(loc)) +
                      " differ at dimension " + std::to_string(k),
                  "source is self's shape with size(dim) = index.numel()", loc);
  checkSelectBounds(idx, sizeAt(*this, d, loc), loc);
  checkScalarFits(alpha, this->dtype(loc), "index_add", loc);
  if (rank > 1 && source.dim(loc) == rank && isFloatingPoint(dtype(loc)) &&
      alpha.toDouble() != 1.0)
    if (Tensor r = indexAddFused(*this, d, idx, source, alpha, loc);
        r.defined())
      return detail::composite(r, "IndexAddBackward0", {this, &source});
  Tensor scaled = source;
  if (alpha.isIntegral() ? alpha.toLong() != 1 : alpha.toDouble() != 1.0)
    scaled = source.mul(scalarTensor(alpha, this->dtype(loc), loc), loc);
  if (rank == 0 || source.dim(loc) != rank) { // 0-d / 1-element cases
    Tensor s1 = scaled.reshape({n}, loc);
    Tensor r =
        reshape({sizeAt(*this, 0, loc)}, loc).index_add(0, idx, s1, 1, loc);
    return r.reshape(sizes(loc), loc);
  }
  Tensor expanded = expandIndex(idx, d, source.sizes(loc), loc);
  return detail::composite(recordIndexOp("scatter_add", this->dtype(loc),
                                         sizes(loc), {this, &expanded, &scaled},
                                         d, loc),
                           "IndexAddBackward0", {this, &source});
}

Tensor &Tensor::scatter_(int64_t dim, const Tensor &index, const Tensor &src,
                         SourceLoc loc) {
  return writeInto(*this, scatter(dim, index, src, loc), "scatter_", loc);
}
Tensor &Tensor::scatter_(int64_t dim, const Tensor &index, Scalar value,
                         SourceLoc loc) {
  return writeInto(*this, scatter(dim, index, value, loc), "scatter_", loc);
}
Tensor &Tensor::scatter_add_(int64_t dim, const Tensor &index,
                             const Tensor &src, SourceLoc loc) {
  return writeInto(*this, scatter_add(dim, index, src, loc), "scatter_add_",
                   loc);
}
Tensor &Tensor::index_add_(int64_t dim, const Tensor &index,
                           const Tensor &source, Scalar alpha, SourceLoc loc) {
  return writeInto(*this, index_add(dim, index, source, alpha, loc),
                   "index_add_", loc);
}

Tensor strata::index_select(const Tensor &t, int64_t dim, const Tensor &index,
                            SourceLoc loc) {
  return t.index_select(dim, index, loc);
}
Tensor strata::gather(const Tensor &t, int64_t dim, const Tensor &index,
                      SourceLoc loc) {
  return t.gather(dim, index, loc);
}
