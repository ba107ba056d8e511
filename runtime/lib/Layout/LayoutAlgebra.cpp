//===- LayoutAlgebra.cpp - sizes/strides/offset rules of every view op ----===//
//
// Each rule mirrors the PyTorch 1.13 function named in its comment, in the
// same order of checks, so that the first error a user sees is the one
// PyTorch would report. Messages are PyTorch's, prefixed with "<op>: ".
// Where PyTorch has no meaningful message (it overflows on a negative size
// instead), strata reports the mistake itself; those places say so.
//
//===----------------------------------------------------------------------===//

#include "strata/Layout/LayoutAlgebra.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <type_traits>

using namespace strata::layout;

namespace {

template <typename P> void appendPart(std::string &s, const P &part) {
  if constexpr (std::is_integral_v<P>)
    s += std::to_string(part);
  else
    s += part;
}

/// "<op>: " followed by the parts; integers are printed in decimal.
template <typename... Parts>
std::string message(const char *op, const Parts &...parts) {
  std::string s = op;
  s += ": ";
  (appendPart(s, parts), ...);
  return s;
}

/// An error on its way out; converts to a failed Result of any type, so that
/// a rule can return the error of a rule it called.
struct Failure {
  std::string error;
  template <typename T> operator Result<T>() const {
    return Result<T>::failure(error);
  }
};

template <typename... Parts>
Failure fail(const char *op, const Parts &...parts) {
  return Failure{message(op, parts...)};
}

// Sizes and strides come from users; arithmetic on them must not overflow
// (signed overflow is undefined and would corrupt a layout silently).
bool mulOverflows(int64_t a, int64_t b, int64_t &out) {
  return __builtin_mul_overflow(a, b, &out);
}
bool addOverflows(int64_t a, int64_t b, int64_t &out) {
  return __builtin_add_overflow(a, b, &out);
}
/// Two's-complement product, as PyTorch's int64 arithmetic behaves in
/// practice; for strides of size-1 dims, which no index ever multiplies.
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}

/// The element count of `sizes` (all >= 0), or nullopt when it does not fit
/// in int64. A zero anywhere makes the count 0 even if a partial product of
/// the other sizes would overflow.
std::optional<int64_t> checkedNumel(IntList sizes) {
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end())
    return 0;
  int64_t n = 1;
  for (int64_t s : sizes)
    if (mulOverflows(n, s, n))
      return std::nullopt;
  return n;
}

/// Smallest and largest index, or nullopt on overflow. numel must be > 0.
std::optional<std::pair<int64_t, int64_t>>
checkedIndexRange(IntList sizes, IntList strides, int64_t offset) {
  int64_t lo = offset, hi = offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    int64_t extent;
    if (mulOverflows(sizes[d] - 1, strides[d], extent))
      return std::nullopt;
    if (addOverflows(extent < 0 ? lo : hi, extent, extent < 0 ? lo : hi))
      return std::nullopt;
  }
  return std::make_pair(lo, hi);
}

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

/// Wraps each of `dims` in turn; the first bad one is the error.
Result<Shape> wrapDims(IntList dims, int64_t rank, const char *op) {
  Shape out;
  for (int64_t dim : dims) {
    Result<int64_t> d = wrapDim(dim, rank, op);
    if (!d)
      return Failure{d.error()};
    out.push_back(*d);
  }
  return out;
}

/// The dim argument of slice, select and narrow, which reject 0-dim tensors.
Result<int64_t> wrapSliceDim(const Layout &l, int64_t dim, const char *op) {
  if (l.dim() == 0)
    return fail(op, op, "() cannot be applied to a 0-dim tensor.");
  return wrapDim(dim, l.dim(), op);
}

/// Wraps every dim of `dims` and rejects repeats, as PyTorch's
/// dim_list_to_bitset. The result has one flag per dim (at least one, so a
/// 0-dim tensor's wrapped dim 0 has a slot). PyTorch's reductions wrap the
/// whole list before looking for repeats (`wrapFirst`); flip checks each dim
/// as it goes. The difference shows in which error a list like [0, 0, 5]
/// gets.
Result<std::vector<bool>> dimFlags(IntList dims, int64_t rank, const char *op,
                                   bool wrapFirst = false) {
  if (Result<Shape> all = wrapDims(dims, rank, op); wrapFirst && !all)
    return Failure{all.error()};
  std::vector<bool> seen(std::max<int64_t>(rank, 1), false);
  for (int64_t dim : dims) {
    Result<int64_t> d = wrapDim(dim, rank, op);
    if (!d)
      return Failure{d.error()};
    if (seen[*d])
      return fail(op, "dim ", *d,
                  " appears multiple times in the list of dims");
    seen[*d] = true;
  }
  return seen;
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

std::string describe(IntList sizes, IntList strides, int64_t offset) {
  return "sizes " + formatList(sizes) + ", strides " + formatList(strides) +
         ", storage offset " + std::to_string(offset);
}

} // namespace

//===--- Basic queries ----------------------------------------------------===//

int64_t Layout::numel() const {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

std::string strata::layout::formatList(IntList values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

Shape strata::layout::contiguousStrides(IntList sizes) {
  Shape strides(sizes.size());
  int64_t running = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = running;
    // Wrapping: with a size-0 dim the product of the others may overflow
    // (strides of an empty tensor address nothing); with numel > 0 every
    // partial product fits (found by tests/fuzz under UBSan).
    running = wrapMul(running, std::max<int64_t>(sizes[i], 1));
  }
  return strides;
}

Layout strata::layout::contiguous(IntList sizes, int64_t offset) {
  return Layout{Shape(sizes.begin(), sizes.end()), contiguousStrides(sizes),
                offset};
}

bool strata::layout::isContiguous(const Layout &l) {
  if (l.numel() == 0)
    return true;
  int64_t expected = 1;
  for (int64_t d = l.dim() - 1; d >= 0; --d) {
    if (l.sizes[d] == 1)
      continue;
    if (l.strides[d] != expected)
      return false;
    expected *= l.sizes[d];
  }
  return true;
}

bool strata::layout::isNonOverlappingAndDense(const Layout &l) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < l.sizes.size(); ++d)
    if (l.sizes[d] >= 2)
      dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(), [&](size_t a, size_t b) {
    return l.strides[a] < l.strides[b];
  });
  int64_t expected = 1;
  for (size_t d : dims) {
    if (l.strides[d] != expected)
      return false;
    expected *= l.sizes[d];
  }
  return true;
}

bool strata::layout::hasInternalOverlap(const Layout &l) {
  // PyTorch answers NO for non-overlapping-and-dense tensors, which include
  // every empty one, before looking for a broadcast (stride-0) dim.
  if (l.numel() == 0)
    return false;
  for (int64_t d = 0; d < l.dim(); ++d)
    if (l.strides[d] == 0 && l.sizes[d] > 1)
      return true;
  return false;
}

bool strata::layout::mayOverlap(const Layout &l) {
  if (l.numel() <= 1)
    return false;
  std::vector<std::pair<int64_t, int64_t>> dims; // (|stride|, size)
  for (int64_t d = 0; d < l.dim(); ++d)
    if (l.sizes[d] > 1)
      dims.push_back({std::abs(l.strides[d]), l.sizes[d]});
  std::sort(dims.begin(), dims.end());
  int64_t extent = 0;
  for (auto [stride, size] : dims) {
    if (stride <= extent)
      return true;
    extent += stride * (size - 1);
  }
  return false;
}

std::pair<int64_t, int64_t> strata::layout::indexRange(const Layout &l) {
  assert(l.numel() > 0 && "indexRange of an empty layout");
  auto range = checkedIndexRange(l.sizes, l.strides, l.offset);
  assert(range && "indexRange overflows int64");
  return *range;
}

int64_t strata::layout::requiredStorageSize(const Layout &l) {
  return l.numel() == 0 ? 0 : indexRange(l).second + 1;
}

std::vector<int64_t> strata::layout::storageIndices(const Layout &l) {
  std::vector<int64_t> out;
  int64_t n = l.numel();
  if (n == 0)
    return out;
  out.reserve(n);
  // Odometer over the n-d index, last dim fastest; `at` follows it.
  Shape index(l.sizes.size(), 0);
  int64_t at = l.offset;
  for (int64_t e = 0; e < n; ++e) {
    out.push_back(at);
    for (int64_t d = l.dim() - 1; d >= 0; --d) {
      if (++index[d] < l.sizes[d]) {
        at += l.strides[d];
        break;
      }
      at -= (l.sizes[d] - 1) * l.strides[d];
      index[d] = 0;
    }
  }
  return out;
}

Result<Layout> strata::layout::checkInStorage(const Layout &l,
                                              int64_t storageSize,
                                              const char *op) {
  // Like PyTorch's checkInBoundsForStorage, an empty tensor fits anywhere.
  if (l.numel() == 0)
    return l;
  std::optional<std::pair<int64_t, int64_t>> range =
      checkedIndexRange(l.sizes, l.strides, l.offset);
  if (!range)
    return fail(op, "Storage size calculation overflowed with sizes=",
                formatList(l.sizes), " and strides=", formatList(l.strides));
  auto [lo, hi] = *range;
  if (hi >= storageSize)
    return fail(op, describe(l.sizes, l.strides, l.offset),
                " requiring a storage size of ", hi + 1,
                " elements are out of bounds for storage of size ", storageSize,
                " elements");
  if (lo < 0)
    return fail(op, describe(l.sizes, l.strides, l.offset),
                " address storage index ", lo,
                ", which is out of bounds for storage of size ", storageSize,
                " elements");
  return l;
}

Result<int64_t> strata::layout::wrapDim(int64_t dim, int64_t rank,
                                        const char *op) {
  // A 0-dim tensor accepts dim 0 and -1, as if it had one dim.
  int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim > r - 1)
    return fail(op, "Dimension out of range (expected to be in range of [", -r,
                ", ", r - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + r : dim;
}

Result<Shape> strata::layout::inferSize(IntList shape, int64_t numel,
                                        const char *op) {
  // PyTorch's infer_size. The product skips the -1 and saturates on
  // overflow: an overflowing product can only mean a mismatch.
  std::optional<size_t> inferDim;
  int64_t newSize = 1;
  bool overflow = false, hasZero = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      if (inferDim)
        return fail(op, "only one dimension can be inferred");
      inferDim = d;
    } else if (shape[d] >= 0) {
      hasZero |= shape[d] == 0;
      overflow |= mulOverflows(newSize, shape[d], newSize);
    } else {
      return fail(op, "invalid shape dimension ", shape[d]);
    }
  }
  if (hasZero)
    newSize = 0;
  else if (overflow)
    newSize = -1; // matches no numel

  Shape result(shape.begin(), shape.end());
  if (numel == newSize || (inferDim && newSize > 0 && numel % newSize == 0)) {
    if (inferDim) {
      if (newSize == 0)
        return fail(op, "cannot reshape tensor of 0 elements into shape ",
                    formatList(shape),
                    " because the unspecified dimension size -1 can be any "
                    "value and is ambiguous");
      result[*inferDim] = numel / newSize;
    }
    return result;
  }
  return fail(op, "shape '", formatList(shape),
              "' is invalid for input of size ", numel);
}

Result<Shape> strata::layout::broadcastShapes(IntList a, IntList b,
                                              const char *op) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t k = 0; k < rank; ++k) {
    // k counts from the trailing dim.
    size_t i = rank - 1 - k;
    int64_t sizeA = k < a.size() ? a[a.size() - 1 - k] : 1;
    int64_t sizeB = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (sizeA != sizeB && sizeA != 1 && sizeB != 1)
      return fail(op, "The size of tensor a (", sizeA,
                  ") must match the size of tensor b (", sizeB,
                  ") at non-singleton dimension ", i);
    // A 1 takes the other size, even 0.
    out[i] = sizeA == 1 ? sizeB : sizeA;
  }
  return out;
}

Result<Shape> strata::layout::reduceShape(IntList sizes, IntList dims,
                                          bool keepdim, const char *op) {
  int64_t rank = static_cast<int64_t>(sizes.size());
  Result<std::vector<bool>> reduced =
      dimFlags(dims, rank, op, /*wrapFirst=*/true);
  if (!reduced)
    return Failure{reduced.error()};
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    if (dims.empty() || (*reduced)[d]) {
      if (keepdim)
        out.push_back(1);
    } else {
      out.push_back(sizes[d]);
    }
  }
  return out;
}

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
