//===- ViewOps.cpp - the layout rules of the view ops ---------------------===//
//
// view, reshape, permute, ..., flip: each rule mirrors the PyTorch 1.13
// function named in its comment, in the same order of checks, so that the
// first error a user sees is the one PyTorch would report. Messages are
// PyTorch's, prefixed with "<op>: ". Where PyTorch has no meaningful
// message (it overflows on a negative size instead), strata reports the
// mistake itself; those places say so.
//
//===----------------------------------------------------------------------===//

#include "LayoutInternal.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>

using namespace strata::layout;
using namespace strata::layout::detail;

namespace {

/// PyTorch's computeStride (aten/src/ATen/TensorUtils.cpp): the strides that
/// let `newShape` address the same elements as (oldShape, oldStrides) in
/// the same row-major order, or nullopt when no such strides exist.
///
/// The old dims are grouped into "chunks" of dims that are contiguous with
/// one another (size-1 dims never break a chunk since their stride is never
/// used). A view is possible exactly when every new dim falls inside one
/// chunk, i.e. the new dims' running products hit each chunk boundary.
std::optional<Shape> computeStride(IntList oldShape, IntList oldStrides,
                                   IntList newShape) {
  if (oldShape.empty())
    return Shape(newShape.size(), 1);

  // With no elements any strides are valid; PyTorch keeps the old strides
  // when the shape is unchanged (as NumPy does) and otherwise uses the
  // strides a fresh (resized) tensor would get.
  int64_t numel = *checkedNumel(oldShape);
  if (numel == 0) {
    if (std::equal(oldShape.begin(), oldShape.end(), newShape.begin(),
                   newShape.end()))
      return Shape(oldStrides.begin(), oldStrides.end());
    return contiguousStrides(newShape);
  }

  Shape newStrides(newShape.size());
  int64_t viewD = static_cast<int64_t>(newShape.size()) - 1;
  int64_t chunkBaseStride = oldStrides.back();
  int64_t tensorNumel = 1;
  int64_t viewNumel = 1;
  for (int64_t tensorD = static_cast<int64_t>(oldShape.size()) - 1;
       tensorD >= 0; --tensorD) {
    tensorNumel *= oldShape[tensorD];
    bool chunkEnds =
        tensorD == 0 ||
        (oldShape[tensorD - 1] != 1 &&
         oldStrides[tensorD - 1] != wrapMul(tensorNumel, chunkBaseStride));
    if (!chunkEnds)
      continue;
    // Size-1 new dims are absorbed greedily into the current chunk, which is
    // why a leading size-1 dim gets stride numel * base (not 1).
    while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
      newStrides[viewD] = wrapMul(viewNumel, chunkBaseStride);
      viewNumel *= newShape[viewD];
      --viewD;
    }
    if (viewNumel != tensorNumel)
      return std::nullopt;
    if (tensorD > 0) {
      chunkBaseStride = oldStrides[tensorD - 1];
      tensorNumel = 1;
      viewNumel = 1;
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return newStrides;
}

Result<MaybeView> reshapeImpl(const Layout &l, IntList shape, const char *op) {
  Result<Shape> inferred = inferSize(shape, l.numel(), op);
  if (!inferred)
    return Failure{inferred.error()};
  if (std::optional<Shape> strides =
          computeStride(l.sizes, l.strides, *inferred))
    return MaybeView{Layout{*inferred, std::move(*strides), l.offset}, false};
  return MaybeView{contiguous(*inferred), true};
}

/// The dim argument of slice, select and narrow, which reject 0-dim tensors.
Result<int64_t> wrapSliceDim(const Layout &l, int64_t dim, const char *op) {
  if (l.dim() == 0)
    return fail(op, op, "() cannot be applied to a 0-dim tensor.");
  return wrapDim(dim, l.dim(), op);
}

/// An empty layout addresses nothing, but its offset may still have moved
/// one step past the end of a negative-stride dim (slice or narrow at the
/// end of a flipped dim, the size-0 windows of unfold, then select or flip):
/// a negative offset, which no tensor type allows. Such an offset becomes 0;
/// every layout PyTorch can produce is left as it is (found by tests/fuzz).
Layout clampEmptyOffset(Layout l) {
  if (l.offset < 0 && l.numel() == 0)
    l.offset = 0;
  return l;
}

} // namespace

//===--- View ops ---------------------------------------------------------===//

Result<Layout> strata::layout::view(const Layout &l, IntList shape) {
  Result<Shape> inferred = inferSize(shape, l.numel(), "view");
  if (!inferred)
    return Failure{inferred.error()};
  std::optional<Shape> strides = computeStride(l.sizes, l.strides, *inferred);
  if (!strides)
    return fail("view", "view size is not compatible with input tensor's size "
                        "and stride (at least one dimension spans across two "
                        "contiguous subspaces). Use .reshape(...) instead.");
  return Layout{std::move(*inferred), std::move(*strides), l.offset};
}

Result<MaybeView> strata::layout::reshape(const Layout &l, IntList shape) {
  return reshapeImpl(l, shape, "reshape");
}

Result<Layout> strata::layout::permute(const Layout &l, IntList dims) {
  int64_t rank = l.dim();
  if (static_cast<int64_t>(dims.size()) != rank)
    return fail(
        "permute",
        "number of dimensions in the tensor input does not match the length of "
        "the desired ordering of dimensions i.e. input.dim() = ",
        rank, " is not equal to len(dims) = ", dims.size());
  Layout out{Shape(rank), Shape(rank), l.offset};
  std::vector<bool> seen(rank, false);
  for (int64_t i = 0; i < rank; ++i) {
    Result<int64_t> d = wrapDim(dims[i], rank, "permute");
    if (!d)
      return Failure{d.error()};
    if (seen[*d])
      return fail("permute", "duplicate dims are not allowed. dims ",
                  formatList(dims), " name dim ", *d, " twice");
    seen[*d] = true;
    out.sizes[i] = l.sizes[*d];
    out.strides[i] = l.strides[*d];
  }
  return out;
}

Result<Layout> strata::layout::transpose(const Layout &l, int64_t dim0,
                                         int64_t dim1) {
  Result<Shape> d = wrapDims(Shape{dim0, dim1}, l.dim(), "transpose");
  if (!d)
    return Failure{d.error()};
  Layout out = l;
  if ((*d)[0] != (*d)[1]) {
    std::swap(out.sizes[(*d)[0]], out.sizes[(*d)[1]]);
    std::swap(out.strides[(*d)[0]], out.strides[(*d)[1]]);
  }
  return out;
}

Result<Layout> strata::layout::t(const Layout &l) {
  if (l.dim() > 2)
    return fail("t", "t() expects a tensor with <= 2 dimensions, but self is ",
                l.dim(), "D");
  return transpose(l, 0, l.dim() < 2 ? 0 : 1);
}

Result<Layout> strata::layout::slice(const Layout &l, int64_t dim,
                                     std::optional<int64_t> start,
                                     std::optional<int64_t> end, int64_t step) {
  Result<int64_t> d = wrapSliceDim(l, dim, "slice");
  if (!d)
    return Failure{d.error()};
  if (step <= 0)
    return fail("slice", "slice step must be positive, but got step ", step);
  int64_t size = l.sizes[*d];
  int64_t lo = start.value_or(0);
  int64_t hi = end.value_or(std::numeric_limits<int64_t>::max());
  if (lo < 0)
    lo += size;
  if (hi < 0)
    hi += size;
  lo = std::clamp<int64_t>(lo, 0, size);
  hi = std::clamp<int64_t>(hi, lo, size);

  Layout out = l;
  int64_t length = hi - lo;
  out.sizes[*d] = length == 0 ? 0 : (length - 1) / step + 1;
  if (mulOverflows(out.strides[*d], step, out.strides[*d]))
    return fail("slice", "stride ", l.strides[*d], " times step ", step,
                " overflows");
  out.offset += lo * l.strides[*d];
  return clampEmptyOffset(out);
}

Result<Layout> strata::layout::select(const Layout &l, int64_t dim,
                                      int64_t index) {
  Result<int64_t> d = wrapSliceDim(l, dim, "select");
  if (!d)
    return Failure{d.error()};
  int64_t size = l.sizes[*d];
  if (index < -size || index >= size)
    return fail("select", "select(): index ", index,
                " out of range for tensor of size ", formatList(l.sizes),
                " at dimension ", *d);
  if (index < 0)
    index += size;
  Layout out = l;
  out.offset += index * l.strides[*d];
  out.sizes.erase(out.sizes.begin() + *d);
  out.strides.erase(out.strides.begin() + *d);
  return clampEmptyOffset(out);
}

Result<Layout> strata::layout::narrow(const Layout &l, int64_t dim,
                                      int64_t start, int64_t length) {
  Result<int64_t> d = wrapSliceDim(l, dim, "narrow");
  if (!d)
    return Failure{d.error()};
  int64_t size = l.sizes[*d];
  // PyTorch wraps `start` like a dim index (hence its "Dimension out of
  // range" message for a bad start); start == size is a valid empty narrow.
  if (start != size) {
    Result<int64_t> s = wrapDim(start, size, "narrow");
    if (!s)
      return Failure{s.error()};
    start = *s;
  }
  if (length < 0 || start > size - length)
    return fail("narrow", "start (", start, ") + length (", length,
                ") exceeds dimension size (", size, ").");
  return slice(l, *d, start, start + length, 1);
}

Result<Layout> strata::layout::expand(const Layout &l, IntList shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t tensorRank = l.dim();
  if (rank < tensorRank)
    return fail("expand", "the number of sizes provided (", rank,
                ") must be greater or equal to the number of dimensions in the "
                "tensor (",
                tensorRank, ")");
  Layout out{Shape(rank), Shape(rank, 0), l.offset};
  // PyTorch's inferExpandGeometry, walking from the trailing dim.
  for (int64_t i = rank - 1; i >= 0; --i) {
    int64_t d = tensorRank - rank + i; // the input dim aligned with i
    int64_t size = d >= 0 ? l.sizes[d] : 1;
    // A new leading dim of size 1 gets the stride a contiguous tensor would
    // have there. PyTorch gives every dim of an expanded 0-dim tensor
    // stride 0 instead.
    int64_t stride = d >= 0            ? l.strides[d]
                     : tensorRank == 0 ? 0
                                       : out.sizes[i + 1] * out.strides[i + 1];
    int64_t target = shape[i];
    if (target == -1) {
      // PyTorch's check, except that for a 0-dim tensor PyTorch 1.13 skips
      // it and overflows instead.
      if (d < 0)
        return fail("expand",
                    "The expanded size of the tensor (-1) isn't allowed in a "
                    "leading, non-existing dimension ",
                    i);
      target = size;
    }
    if (size != target) {
      if (size != 1)
        return fail("expand", "The expanded size of the tensor (", target,
                    ") must match the existing size (", size,
                    ") at non-singleton dimension ", i,
                    ".  Target sizes: ", formatList(shape),
                    ".  Tensor sizes: ", formatList(l.sizes));
      size = target;
      stride = 0;
    }
    // strata's check: PyTorch 1.13 reports an overflow for these.
    if (size < 0)
      return fail("expand", "The expanded size of the tensor (", size,
                  ") at dimension ", i,
                  " must be non-negative (or -1 to keep the size)");
    out.sizes[i] = size;
    out.strides[i] = stride;
  }
  if (!checkedNumel(out.sizes))
    return fail("expand", "the expanded sizes ", formatList(out.sizes),
                " have more elements than fit in int64");
  return out;
}

Result<Layout> strata::layout::squeeze(const Layout &l, IntList dims) {
  Result<std::vector<bool>> chosen = dimFlags(dims, l.dim(), "squeeze");
  if (!chosen)
    return Failure{chosen.error()};
  Layout out{{}, {}, l.offset};
  for (int64_t d = 0; d < l.dim(); ++d) {
    bool drop = l.sizes[d] == 1 && (dims.empty() || (*chosen)[d]);
    if (!drop) {
      out.sizes.push_back(l.sizes[d]);
      out.strides.push_back(l.strides[d]);
    }
  }
  return out;
}

Result<Layout> strata::layout::unsqueeze(const Layout &l, int64_t dim) {
  Result<int64_t> d = wrapDim(dim, l.dim() + 1, "unsqueeze");
  if (!d)
    return Failure{d.error()};
  // The stride that makes the new dim contiguous with the one it precedes.
  int64_t stride = *d >= l.dim() ? 1 : wrapMul(l.sizes[*d], l.strides[*d]);
  Layout out = l;
  out.sizes.insert(out.sizes.begin() + *d, 1);
  out.strides.insert(out.strides.begin() + *d, stride);
  return out;
}

Result<MaybeView> strata::layout::flatten(const Layout &l, int64_t startDim,
                                          int64_t endDim) {
  Result<Shape> w = wrapDims(Shape{startDim, endDim}, l.dim(), "flatten");
  if (!w)
    return Failure{w.error()};
  int64_t s = (*w)[0], e = (*w)[1];
  if (s > e)
    return fail(
        "flatten",
        "flatten() has invalid args: start_dim cannot come after end_dim");
  if (l.dim() == 0)
    return reshapeImpl(l, Shape{1}, "flatten");
  if (s == e)
    return MaybeView{l, false};
  // The merged size is computed, not inferred with -1: with zero-size dims
  // a -1 would be ambiguous.
  Shape shape(l.sizes.begin(), l.sizes.begin() + s);
  shape.push_back(*checkedNumel(
      IntList(l.sizes).subspan(s, static_cast<size_t>(e - s + 1))));
  shape.insert(shape.end(), l.sizes.begin() + e + 1, l.sizes.end());
  return reshapeImpl(l, shape, "flatten");
}

Result<Layout> strata::layout::asStrided(IntList sizes, IntList strides,
                                         int64_t offset, int64_t storageSize) {
  // PyTorch's order of checks (as_strided_tensorimpl / setStrided).
  if (sizes.size() != strides.size())
    return fail("as_strided", "mismatch in length of strides and shape: sizes ",
                formatList(sizes), ", strides ", formatList(strides));
  if (std::any_of(strides.begin(), strides.end(),
                  [](int64_t s) { return s < 0; }))
    return fail(
        "as_strided",
        "Negative strides are not supported at the moment, got strides: ",
        formatList(strides));
  // strata's check: PyTorch 1.13 reports an overflow for these.
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] < 0)
      return fail("as_strided",
                  "Trying to create tensor with negative dimension ", sizes[d],
                  ": ", formatList(sizes));
  Layout out{Shape(sizes.begin(), sizes.end()),
             Shape(strides.begin(), strides.end()), offset};
  if (!checkedNumel(sizes))
    return fail("as_strided", "Storage size calculation overflowed with sizes=",
                formatList(sizes), " and strides=", formatList(strides));
  // Offset last: a negative offset is reported as such unless the end of
  // the view is already past the storage.
  if (out.numel() > 0) {
    std::optional<std::pair<int64_t, int64_t>> range =
        checkedIndexRange(sizes, strides, offset);
    if (!range || range->second >= storageSize)
      return checkInStorage(out, storageSize, "as_strided");
  }
  if (offset < 0)
    return fail("as_strided", "invalid storage offset ", offset);
  return out;
}

Result<Layout> strata::layout::diagonal(const Layout &l, int64_t offset,
                                        int64_t dim1, int64_t dim2) {
  Result<Shape> w = wrapDims(Shape{dim1, dim2}, l.dim(), "diagonal");
  if (!w)
    return Failure{w.error()};
  int64_t d1 = (*w)[0], d2 = (*w)[1];
  if (d1 == d2)
    return fail("diagonal", "diagonal dimensions cannot be identical ", dim1,
                ", ", dim2);
  int64_t size1 = l.sizes[d1], size2 = l.sizes[d2];
  // A positive offset drops the first columns (dim2), a negative one the
  // first rows (dim1); an offset past the end gives an empty diagonal whose
  // storage offset PyTorch leaves unchanged.
  int64_t diagSize = offset >= 0 ? std::min(size1, size2 - offset)
                                 : std::min(size1 + offset, size2);
  diagSize = std::max<int64_t>(diagSize, 0);
  Layout out{{}, {}, l.offset};
  if (diagSize > 0)
    out.offset +=
        offset >= 0 ? offset * l.strides[d2] : -offset * l.strides[d1];
  for (int64_t d = 0; d < l.dim(); ++d) {
    if (d != d1 && d != d2) {
      out.sizes.push_back(l.sizes[d]);
      out.strides.push_back(l.strides[d]);
    }
  }
  out.sizes.push_back(diagSize);
  out.strides.push_back(l.strides[d1] + l.strides[d2]);
  return clampEmptyOffset(out);
}

Result<Layout> strata::layout::unfold(const Layout &l, int64_t dim,
                                      int64_t size, int64_t step) {
  Result<int64_t> d = wrapDim(dim, l.dim(), "unfold");
  if (!d)
    return Failure{d.error()};
  bool scalar = l.dim() == 0;
  int64_t maxSize = scalar ? 1 : l.sizes[*d];
  if (size > maxSize)
    return fail("unfold", "maximum size for tensor at dimension ", *d, " is ",
                maxSize, " but size is ", size);
  if (step <= 0)
    return fail("unfold", "step is ", step, " but must be > 0");
  // strata's check: PyTorch 1.13 reports an overflow for this.
  if (size < 0)
    return fail("unfold", "size is ", size, " but must be >= 0");
  Layout out = l;
  // Windows go into a new last dim that walks the unfolded dim's stride.
  out.sizes.push_back(size);
  out.strides.push_back(scalar ? 1 : l.strides[*d]);
  if (!scalar) {
    out.sizes[*d] = (l.sizes[*d] - size) / step + 1;
    if (mulOverflows(l.strides[*d], step, out.strides[*d]))
      return fail("unfold", "stride ", l.strides[*d], " times step ", step,
                  " overflows");
  }
  return out;
}

Result<Layout> strata::layout::flip(const Layout &l, IntList dims) {
  Result<std::vector<bool>> flipped = dimFlags(dims, l.dim(), "flip");
  if (!flipped)
    return Failure{flipped.error()};
  Layout out = l;
  for (int64_t d = 0; d < l.dim(); ++d) {
    // Start at the last element of the dim and walk backwards. An empty dim
    // addresses nothing, so moving the offset there would be meaningless.
    if (!(*flipped)[d] || l.sizes[d] == 0)
      continue;
    out.offset += (l.sizes[d] - 1) * l.strides[d];
    out.strides[d] = -l.strides[d];
  }
  return clampEmptyOffset(out);
}
