//===- LayoutAlgebra.cpp - queries and shape rules of layouts -------------===//
//
// The basic queries of a layout (contiguity, overlap, the storage it
// addresses) and the rules on shapes (dims, inferred and broadcast sizes,
// reductions); the view ops are ViewOps.cpp, the layouts of compute results
// ResultLayout.cpp. Each rule mirrors the PyTorch 1.13 function named in
// its comment, in the same order of checks, so that the first error a user
// sees is the one PyTorch would report. Messages are PyTorch's, prefixed
// with "<op>: ". Where PyTorch has no meaningful message (it overflows on a
// negative size instead), strata reports the mistake itself; those places
// say so.
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

std::string describe(IntList sizes, IntList strides, int64_t offset) {
  return "sizes " + formatList(sizes) + ", strides " + formatList(strides) +
         ", storage offset " + std::to_string(offset);
}

} // namespace

//===--- Shared rules (LayoutInternal.h) ----------------------------------===//

std::optional<int64_t> detail::checkedNumel(IntList sizes) {
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end())
    return 0;
  int64_t n = 1;
  for (int64_t s : sizes)
    if (mulOverflows(n, s, n))
      return std::nullopt;
  return n;
}

std::optional<std::pair<int64_t, int64_t>>
detail::checkedIndexRange(IntList sizes, IntList strides, int64_t offset) {
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

Result<Shape> detail::wrapDims(IntList dims, int64_t rank, const char *op) {
  Shape out;
  for (int64_t dim : dims) {
    Result<int64_t> d = wrapDim(dim, rank, op);
    if (!d)
      return Failure{d.error()};
    out.push_back(*d);
  }
  return out;
}

Result<std::vector<bool>> detail::dimFlags(IntList dims, int64_t rank,
                                           const char *op, bool wrapFirst) {
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
  // (Row-major, the common case, without the sort's allocation.)
  if (l.numel() <= 1 || isContiguous(l))
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

bool strata::layout::overlaps(const Layout &l) {
  if (hasInternalOverlap(l))
    return true;
  if (!mayOverlap(l))
    return false;
  std::vector<int64_t> at = storageIndices(l);
  std::sort(at.begin(), at.end());
  return std::adjacent_find(at.begin(), at.end()) != at.end();
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
