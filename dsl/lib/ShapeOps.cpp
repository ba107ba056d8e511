//===- ShapeOps.cpp - cat, stack, split, chunk, unbind, repeat, roll, tril ===//
//
// Shape ops as compositions (Composite.h). split/chunk/unbind return views
// (narrow/select), as PyTorch's. cat writes each input into a narrow view
// of one fresh contiguous tensor: every write is a recorded copy the
// compiler fuses with its producer, and the write's gradient (PyTorch's
// CopySlices) hands each input its slice of the result's gradient.
// repeat expands a view with interleaved size-1 dims and copies it once;
// roll is a cat of two narrows; tril/triu select with a mask that compares
// two aranges. None of them reads values, so none of them evaluates.
//
//===----------------------------------------------------------------------===//
#include "AutogradGraph.h"
#include "Composite.h"
#include "CompositeNode.h"

#include <vector>

using namespace strata;
using namespace strata::composite;

namespace {

/// PyTorch's legacy rule: 1-D tensors with no elements take no part in cat
/// (but in its type promotion).
bool skippedByCat(const Tensor &t, const SourceLoc &loc) {
  return t.dim(loc) == 1 && t.size(0, loc) == 0;
}

/// Shift `shift` along the wrapped `dim` (size > 0): the last `shift`
/// elements move to the front.
Tensor rollOne(const Tensor &x, int64_t shift, int64_t dim,
               const SourceLoc &loc) {
  int64_t size = x.size(dim, loc);
  int64_t start = (size - shift % size) % size;
  return cat(
      {x.narrow(dim, start, size - start, loc), x.narrow(dim, 0, start, loc)},
      dim, loc);
}

/// Keeps the elements of the last two dims where col - row compares with
/// `diagonal` as `lower` says (<= for tril, >= for triu); zero elsewhere.
Tensor triangle(const Tensor &x, int64_t diagonal, bool lower, const char *op,
                const SourceLoc &loc) {
  int64_t rank = x.dim(loc);
  wrapRealDim(-2, rank, op, loc); // PyTorch's error for fewer than 2 dims
  int64_t rows = x.size(-2, loc), cols = x.size(-1, loc);
  Tensor r = positionsAlong(x, rows, 0, 2, loc);
  Tensor c = positionsAlong(x, cols, 1, 2, loc);
  Tensor d = c.sub(r, loc);
  Tensor keep = lower ? d <= Scalar(diagonal, loc) : d >= Scalar(diagonal, loc);
  DType t = x.dtype(loc);
  return detail::rowMajorResult( // PyTorch's result is contiguous
      where(keep, x,
            scalarOf(x, t == DType::Bool ? Scalar(false) : Scalar(0), t, loc),
            loc),
      loc);
}

} // namespace

Tensor strata::cat(const std::vector<Tensor> &tensors, int64_t dim,
                   SourceLoc loc) {
  if (tensors.empty())
    throw Error("torch.cat(): expected a non-empty list of Tensors",
                "pass at least one tensor", loc);
  DType dtype = tensors[0].dtype(loc);
  const Tensor *first = nullptr; // the first tensor that takes part
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor &t = tensors[i];
    dtype = promote(dtype, t.dtype(loc));
    if (t.dim(loc) == 0)
      throw Error("zero-dimensional tensor (at position " + std::to_string(i) +
                      ") cannot be concatenated",
                  "unsqueeze(0) it first, or use stack", loc);
    if (!first && !skippedByCat(t, loc))
      first = &t;
  }
  if (!first) // only 1-D empty tensors: PyTorch checks no dim
    return empty({0}, TensorOptions(dtype).device(tensors[0].device(loc)), loc);
  int64_t rank = first->dim(loc);
  int64_t d = wrapDim(dim, rank, "cat", loc);
  Shape sizes = first->sizes(loc);
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor &t = tensors[i];
    if (skippedByCat(t, loc))
      continue;
    if (t.dim(loc) != rank)
      throw Error("Tensors must have same number of dimensions: got " +
                      std::to_string(rank) + " and " +
                      std::to_string(t.dim(loc)),
                  "give every tensor the same number of dims", loc);
    for (int64_t k = 0; k < rank; ++k)
      if (k != d && t.size(k, loc) != sizes[static_cast<size_t>(k)])
        throw Error("Sizes of tensors must match except in dimension " +
                        std::to_string(d) + ". Expected size " +
                        std::to_string(sizes[static_cast<size_t>(k)]) +
                        " but got size " + std::to_string(t.size(k, loc)) +
                        " for tensor number " + std::to_string(i) +
                        " in the list.",
                    "only the sizes along the cat dim may differ", loc);
    total += t.size(d, loc);
  }
  sizes[static_cast<size_t>(d)] = total;
  Tensor out =
      empty(sizes, TensorOptions(dtype).device(first->device(loc)), loc);
  int64_t offset = 0;
  for (const Tensor &t : tensors) {
    if (skippedByCat(t, loc)) {
      // Nothing to copy, but a skipped input requiring grad makes the
      // result require grad (and get its empty gradient), as in PyTorch.
      if (t.requires_grad(loc))
        out.view({-1}, loc).narrow(0, 0, 0, loc).copy_(t, loc);
      continue;
    }
    int64_t n = t.size(d, loc);
    out.narrow(d, offset, n, loc).copy_(t, loc);
    offset += n;
  }
  return out;
}

Tensor strata::stack(const std::vector<Tensor> &tensors, int64_t dim,
                     SourceLoc loc) {
  if (tensors.empty())
    throw Error("stack expects a non-empty TensorList",
                "pass at least one tensor", loc);
  const Shape &sizes = tensors[0].sizes(loc);
  int64_t d =
      wrapDim(dim, static_cast<int64_t>(sizes.size()) + 1, "stack", loc);
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].sizes(loc) != sizes)
      throw Error("stack expects each tensor to be equal size, but got " +
                      shapeString(sizes) + " at entry 0 and " +
                      shapeString(tensors[i].sizes(loc)) + " at entry " +
                      std::to_string(i),
                  "give every tensor the same sizes", loc);
    parts.push_back(tensors[i].unsqueeze(d, loc));
  }
  return cat(parts, d, loc);
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim,
                                  SourceLoc loc) const {
  if (this->dim(loc) == 0)
    throw Error("split expects at least a 1-dimensional tensor",
                "unsqueeze(0) first", loc);
  if (split_size < 0)
    throw Error("split expects split_size be non-negative, but got "
                "split_size=" +
                    std::to_string(split_size),
                "a size >= 1 (0 only for an empty dim)", loc);
  int64_t d = wrapDim(dim, this->dim(loc), "split", loc);
  int64_t size = this->size(d, loc);
  if (split_size == 0 && size != 0)
    throw Error("split_size can only be 0 if dimension size is 0, but got "
                "dimension size of " +
                    std::to_string(size),
                "a size >= 1", loc);
  int64_t n = split_size == 0
                  ? 1
                  : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < n; ++i) {
    int64_t start = i * split_size;
    out.push_back(narrow(d, start, std::min(split_size, size - start), loc));
  }
  detail::markMultiOutput(out, detail::kMultiOutputSplit);
  return out;
}

std::vector<Tensor> Tensor::split_with_sizes(const Shape &split_sizes,
                                             int64_t dim, SourceLoc loc) const {
  if (this->dim(loc) == 0)
    throw Error("split expects at least a 1-dimensional tensor",
                "unsqueeze(0) first", loc);
  int64_t d = wrapDim(dim, this->dim(loc), "split_with_sizes", loc);
  int64_t size = this->size(d, loc), sum = 0;
  for (int64_t s : split_sizes) {
    if (s < 0)
      throw Error("split_with_sizes expects split_sizes have only "
                  "non-negative entries, but got split_sizes=" +
                      shapeString(split_sizes),
                  "sizes are >= 0", loc);
    sum += s;
  }
  if (sum != size)
    throw Error("split_with_sizes expects split_sizes to sum exactly to " +
                    std::to_string(size) +
                    " (input tensor's size at dimension " + std::to_string(d) +
                    "), but got split_sizes=" + shapeString(split_sizes),
                "give sizes that add up to the dim's size", loc);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(narrow(d, start, s, loc));
    start += s;
  }
  detail::markMultiOutput(out, detail::kMultiOutputSplitWithSizes);
  return out;
}

std::vector<Tensor> Tensor::split(const Shape &split_sizes, int64_t dim,
                                  SourceLoc loc) const {
  return split_with_sizes(split_sizes, dim, loc);
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim,
                                  SourceLoc loc) const {
  if (this->dim(loc) == 0)
    throw Error("chunk expects at least a 1-dimensional tensor",
                "unsqueeze(0) first", loc);
  if (chunks <= 0)
    throw Error("chunk expects `chunks` to be greater than 0, got: " +
                    std::to_string(chunks),
                "ask for at least one chunk", loc);
  int64_t d = wrapDim(dim, this->dim(loc), "chunk", loc);
  int64_t size = this->size(d, loc);
  int64_t splitSize = (size + chunks - 1) / chunks;
  if (splitSize == 0 && size == 0) // `chunks` empty views, as PyTorch
    return split_with_sizes(Shape(static_cast<size_t>(chunks), 0), d, loc);
  return split(splitSize, d, loc);
}

std::vector<Tensor> Tensor::unbind(int64_t dim, SourceLoc loc) const {
  int64_t d = wrapRealDim(dim, this->dim(loc), "unbind", loc);
  std::vector<Tensor> out;
  for (int64_t i = 0, n = size(d, loc); i < n; ++i)
    out.push_back(select(d, i, loc));
  detail::markMultiOutput(out, detail::kMultiOutputUnbind);
  return out;
}

Tensor Tensor::repeat(const Shape &repeats, SourceLoc loc) const {
  int64_t rank = dim(loc), k = static_cast<int64_t>(repeats.size());
  if (k < rank)
    throw Error("Number of dimensions of repeat dims can not be smaller than "
                "number of dimensions of tensor",
                "give a repeat count for every dim (extra ones add leading "
                "dims)",
                loc);
  Shape padded(static_cast<size_t>(k - rank), 1), target;
  for (int64_t s : sizes(loc))
    padded.push_back(s);
  for (int64_t i = 0; i < k; ++i)
    target.push_back(padded[static_cast<size_t>(i)] *
                     repeats[static_cast<size_t>(i)]);
  for (int64_t r : repeats)
    if (r < 0)
      throw Error(
          "repeat: Trying to create tensor with negative dimension " +
              std::to_string(*std::min_element(target.begin(), target.end())) +
              ": " + shapeString(target),
          "repeat counts are >= 0", loc);
  // (s0, s1, ...) -> (1, s0, 1, s1, ...) -> expand (r0, s0, r1, s1, ...):
  // one copy makes it contiguous, and its view is (r0 * s0, r1 * s1, ...).
  Tensor x = *this;
  for (int64_t i = rank; i < k; ++i)
    x = x.unsqueeze(0, loc);
  Shape wide;
  for (int64_t i = 0; i < k; ++i) {
    x = x.unsqueeze(2 * i, loc);
    wide.push_back(repeats[static_cast<size_t>(i)]);
    wide.push_back(padded[static_cast<size_t>(i)]);
  }
  // clone() keeps a dense layout's strides (a permuted one stays
  // permuted), contiguous() returns a contiguous input itself: either way
  // one copy into a fresh contiguous tensor.
  Tensor e = x.expand(wide, loc);
  Tensor c = e.is_contiguous(loc) ? e.clone(loc) : e.contiguous(loc);
  return c.view(target, loc);
}

Tensor Tensor::tile(const Shape &dims, SourceLoc loc) const {
  Shape r = dims;
  int64_t rank = dim(loc);
  if (static_cast<int64_t>(r.size()) < rank)
    r.insert(r.begin(), static_cast<size_t>(rank) - r.size(), 1);
  return repeat(r, loc);
}

Tensor Tensor::roll(const Shape &shifts, const Shape &dims,
                    SourceLoc loc) const {
  if (shifts.empty())
    throw Error("`shifts` required", "give a shift per dim", loc);
  if (dims.empty() && shifts.size() == 1) {
    // Of the flattened tensor, viewed back.
    Tensor flat = reshape({numel(loc)}, loc);
    if (flat.numel(loc) == 0)
      return clone(loc);
    return rollOne(flat, shifts[0], 0, loc).view(sizes(loc), loc);
  }
  if (shifts.size() != dims.size())
    throw Error("shifts and dimensions must align. shifts: " +
                    std::to_string(shifts.size()) +
                    ", dims:" + std::to_string(dims.size()),
                "give one shift per dim", loc);
  if (numel(loc) == 0)
    return clone(loc); // PyTorch checks no dim then
  Tensor x = *this;
  for (size_t i = 0; i < dims.size(); ++i)
    x = rollOne(x, shifts[i], wrapRealDim(dims[i], dim(loc), "roll", loc), loc);
  return x;
}

Tensor Tensor::roll(int64_t shift, std::optional<int64_t> dim,
                    SourceLoc loc) const {
  return dim ? roll(Shape{shift}, Shape{*dim}, loc)
             : roll(Shape{shift}, {}, loc);
}

Tensor Tensor::tril(int64_t diagonal, SourceLoc loc) const {
  return triangle(*this, diagonal, true, "tril", loc);
}

Tensor Tensor::triu(int64_t diagonal, SourceLoc loc) const {
  return triangle(*this, diagonal, false, "triu", loc);
}

Tensor strata::one_hot(const Tensor &tensor, int64_t num_classes,
                       SourceLoc loc) {
  if (tensor.dtype(loc) != DType::I64)
    throw Error("one_hot is only applicable to index tensor.",
                "class indices are int64: t.to(kInt64)", loc);
  Shape sizes = tensor.sizes(loc);
  if (tensor.numel(loc) == 0) {
    if (num_classes <= 0)
      throw Error("Can not infer total number of classes from empty tensor.",
                  "give num_classes", loc);
    sizes.push_back(num_classes);
    return zeros(sizes, TensorOptions(DType::I64).device(tensor.device(loc)),
                 loc);
  }
  // PyTorch reads the values to check them (and to count the classes when
  // num_classes is -1); strata reads only values that exist already.
  bool known = tensor.is_materialized(loc);
  if (num_classes == -1 || known) {
    std::vector<int64_t> v = tensor.to_vector<int64_t>(loc);
    int64_t lo = *std::min_element(v.begin(), v.end());
    int64_t hi = *std::max_element(v.begin(), v.end());
    if (lo < 0)
      throw Error("Class values must be non-negative.",
                  "class indices are in [0, num_classes)", loc);
    if (num_classes == -1)
      num_classes = hi + 1;
    else if (num_classes <= hi)
      throw Error("Class values must be smaller than num_classes.",
                  "num_classes = the largest index + 1 at least (or -1)", loc);
  } else if (num_classes < 1) {
    throw Error("Class values must be smaller than num_classes.",
                "num_classes >= 1 (or -1 to count the classes)", loc);
  }
  Tensor classes = arange(
      num_classes, TensorOptions(DType::I64).device(tensor.device(loc)), loc);
  return detail::rowMajorResult( // PyTorch's zeros(...).scatter_
      tensor.unsqueeze(-1, loc).eq(classes, loc).to(DType::I64, loc), loc);
}

Tensor strata::nn::functional::one_hot(const Tensor &tensor,
                                       int64_t num_classes, SourceLoc loc) {
  return strata::one_hot(tensor, num_classes, loc);
}
