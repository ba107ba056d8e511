//===- ResultLayout.cpp - the layouts of compute results ------------------===//
//
// PyTorch allocates the result of an elementwise op in TensorIterator
// (aten/src/ATen/TensorIterator.cpp: fast_set_up, compute_strides,
// reorder_dimensions, allocate_or_resize_outputs) and that of clone()/to()
// with preserve_format (empty_like, infer_dense_strides); torch.matmul
// folds a matrix @ batch into one mm (LinearAlgebra.cpp: should_fold,
// _matmul_impl). The rules below are those functions over element strides;
// tests/unit/runtime checks them against PyTorch 1.13
// (scripts/gen_result_layout_golden.py, ResultLayoutTest.cpp).
//
//===----------------------------------------------------------------------===//
#include "strata/Layout/LayoutAlgebra.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <span>

using namespace strata::layout;

namespace {
/// TensorIterator's reorder_dimensions sort: insertion, where
/// `shouldSwap(a, b)` > 0 swaps, < 0 stops, 0 looks further back.
template <typename F>
void insertionSortDims(std::vector<int64_t> &perm, F shouldSwap) {
  int64_t n = static_cast<int64_t>(perm.size());
  for (int64_t i = 1; i < n; ++i) {
    int64_t dim1 = i;
    for (int64_t dim0 = i - 1; dim0 >= 0; --dim0) {
      int c = shouldSwap(perm[dim0], perm[dim1]);
      if (c > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (c < 0) {
        break;
      }
    }
  }
}

/// The layout with every stride by its magnitude (see the header).
Layout magnitudes(const Layout &l) {
  Layout m = l;
  for (int64_t &s : m.strides)
    s = std::llabs(s);
  return m;
}

/// TensorImpl's is_non_overlapping_and_dense flag: contiguous (so every
/// empty tensor) or a permutation of contiguous.
bool isDense(const Layout &l) {
  return isContiguous(l) || isNonOverlappingAndDense(l);
}

/// c10's is_contiguous(ChannelsLast) of a 4-d layout.
bool isChannelsLast(const Layout &l) {
  if (l.dim() != 4)
    return false;
  int64_t expected = 1;
  for (int d : {1, 3, 2, 0}) {
    if (l.sizes[d] == 1)
      continue;
    if (l.strides[d] != expected)
      return false;
    expected *= l.sizes[d];
  }
  return true;
}

/// c10's get_channels_last_strides_2d.
Shape channelsLastStrides(IntList sizes) {
  Shape s(4);
  s[1] = 1;
  s[3] = sizes[1];
  s[2] = s[3] * sizes[3];
  s[0] = s[2] * sizes[2];
  return s;
}

/// The dims of `shape` innermost first, sorted as TensorIterator's
/// reorder_dimensions sorts them (an insertion sort that stops at the
/// first operand with an unambiguous answer).
std::vector<int64_t> iteratorOrder(const std::vector<Shape> &strides,
                                   IntList shape) {
  int64_t n = static_cast<int64_t>(shape.size());
  std::vector<int64_t> perm(n);
  std::iota(perm.rbegin(), perm.rend(), 0);
  // 1: dim0 goes after dim1, -1: before, 0: ambiguous.
  auto shouldSwap = [&](int64_t dim0, int64_t dim1) {
    for (const Shape &s : strides) {
      int64_t s0 = s[dim0], s1 = s[dim1];
      if (s0 == 0 || s1 == 0)
        continue;
      if (s0 < s1)
        return -1;
      if (s0 > s1)
        return 1;
      if (shape[dim0] > shape[dim1])
        return 1;
    }
    return 0;
  };
  insertionSortDims(perm, shouldSwap);
  return perm;
}
} // namespace

Layout strata::layout::elementwiseResult(std::span<const Layout> inputs,
                                         IntList shape) {
  int64_t n = static_cast<int64_t>(shape.size());
  // The rules read the strides' magnitudes; the layouts are copied only
  // when some stride is negative (recording an op allocates little).
  std::vector<Layout> copies;
  std::span<const Layout> in = inputs;
  if (std::any_of(inputs.begin(), inputs.end(), [](const Layout &l) {
        return std::any_of(l.strides.begin(), l.strides.end(),
                           [](int64_t s) { return s < 0; });
      })) {
    for (const Layout &l : inputs)
      copies.push_back(magnitudes(l));
    in = copies;
  }
  // fast_set_up: every operand has the result's shape.
  bool sameShape = !in.empty();
  for (const Layout &l : in)
    sameShape &=
        std::equal(l.sizes.begin(), l.sizes.end(), shape.begin(), shape.end());
  if (sameShape) {
    bool allContiguous = true, channelsLast = true, dense = true, equal = true;
    for (const Layout &l : in) {
      allContiguous &= isContiguous(l);
      channelsLast &= isChannelsLast(l);
      dense &= isDense(l);
      equal &= l.strides == in.back().strides;
    }
    if (allContiguous)
      return contiguous(shape);
    if (channelsLast)
      return {Shape(shape.begin(), shape.end()), channelsLastStrides(shape), 0};
    if (dense && equal)
      return {Shape(shape.begin(), shape.end()), in.back().strides, 0};
  }
  if (n <= 1)
    return contiguous(shape);
  // compute_strides: broadcast dims (new, or size 1 against a larger
  // size) have stride 0; a size-1 dim of a size-1 result keeps its stride.
  std::vector<Shape> strides;
  for (const Layout &l : in) {
    Shape s(n, 0);
    int64_t lead = n - l.dim();
    for (int64_t d = 0; d < l.dim(); ++d)
      if (!(l.sizes[d] == 1 && shape[lead + d] != 1))
        s[lead + d] = l.strides[d];
    strides.push_back(std::move(s));
  }
  std::vector<int64_t> perm = iteratorOrder(strides, shape);
  bool inverted = true;
  for (int64_t j = 0; j < n; ++j)
    inverted &= perm[j] == n - j - 1;
  if (inverted)
    return contiguous(shape);
  // compatible_stride, then invert_perm.
  Layout out{Shape(shape.begin(), shape.end()), Shape(n, 0), 0};
  int64_t next = 1;
  for (int64_t j = 0; j < n; ++j) {
    out.strides[perm[j]] = next;
    next *= shape[perm[j]];
  }
  return out;
}

Layout strata::layout::preserveFormat(const Layout &l) {
  Layout m = magnitudes(l);
  m.offset = 0;
  if (isDense(m))
    return m;
  // infer_dense_strides: like TensorIterator's order over one operand, but
  // a zero stride is ambiguous with anything and size-1 dims add nothing.
  int64_t n = m.dim();
  std::vector<int64_t> perm(n);
  std::iota(perm.rbegin(), perm.rend(), 0);
  auto shouldSwap = [&](int64_t dim0, int64_t dim1) {
    int64_t s0 = m.strides[dim0], s1 = m.strides[dim1];
    if (s0 == 0 || s1 == 0)
      return 0;
    if (s0 != s1)
      return s0 < s1 ? -1 : 1;
    return m.sizes[dim0] > m.sizes[dim1] ? 1 : 0;
  };
  insertionSortDims(perm, shouldSwap);
  int64_t running = 1;
  for (int64_t d : perm) {
    m.strides[d] = running;
    if (m.sizes[d] > 1)
      running *= m.sizes[d];
  }
  return m;
}

Layout strata::layout::gradientLayout(const Layout &leaf,
                                      const Layout &incoming) {
  Layout m = magnitudes(leaf), in = magnitudes(incoming);
  m.offset = in.offset = 0;
  if (!isDense(m))
    return isContiguous(in) ? in : contiguous(leaf.sizes);
  // obeys_layout_contract: the strides of the dims of size > 1 agree, and
  // then the incoming gradient is kept as it is (stolen).
  for (int64_t d = 0; d < m.dim(); ++d)
    if (m.sizes[d] > 1 && m.strides[d] != in.strides[d])
      return m;
  return in;
}

bool strata::layout::isTransposedBatch(const Layout &l) {
  // should_fold: "first dim is slowest moving, and then the following two
  // dims are transposed" (its test, sizes and all: t1_strides.back() != 1
  // && t1_strides.front() == t1_sizes[1] * t1_sizes[2]).
  return l.dim() == 3 && l.strides[2] != 1 &&
         l.strides[0] == l.sizes[1] * l.sizes[2];
}

Layout strata::layout::matmulResult(const Layout &a, const Layout &b,
                                    IntList shape) {
  Layout rowMajor = contiguous(shape);
  // A matrix @ batch is one mm of the transposed operands, b.mT() folded
  // @ a.mT(), whose result's mT() is made contiguous(): itself where it
  // counts as contiguous already (size-1 dims aside, or no element), a
  // row-major copy elsewhere.
  if (a.dim() != 2 || b.dim() < 3 || isTransposedBatch(b))
    return rowMajor;
  int64_t n = static_cast<int64_t>(shape.size());
  Shape swapped(shape.begin(), shape.end());
  std::swap(swapped[n - 2], swapped[n - 1]);
  Layout folded = contiguous(swapped);
  std::swap(folded.sizes[n - 2], folded.sizes[n - 1]);
  std::swap(folded.strides[n - 2], folded.strides[n - 1]);
  return isContiguous(folded) ? folded : rowMajor;
}
