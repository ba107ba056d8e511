//===- IndexOracle.h - view ops applied to explicit index arrays -*- C++
//-*-===//
//
// The independent oracle of view semantics for tests: each view op applied
// to an explicit n-d array of storage indices, written as "which element is
// picked" from the op's definition, never from strides. Comparing a layout's
// storageIndices() with the oracle's array checks a layout element by
// element without trusting the layout algebra.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TESTS_SUPPORT_INDEXORACLE_H
#define STRATA_TESTS_SUPPORT_INDEXORACLE_H

#include "strata/Layout/LayoutAlgebra.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <utility>

namespace strata::testing {
using layout::Layout;
using layout::Shape;

inline Layout L(Shape sizes, Shape strides, int64_t offset = 0) {
  return Layout{std::move(sizes), std::move(strides), offset};
}

inline int64_t product(const Shape &s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

/// An explicit n-d array of storage indices, row-major.
struct Nd {
  Shape shape;
  std::vector<int64_t> data;
};

/// Row-major multi-index of element `e`, by division (no odometer).
inline Shape unflatten(int64_t e, const Shape &shape) {
  Shape idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = e % shape[d];
    e /= shape[d];
  }
  return idx;
}

inline int64_t flatIndex(const Shape &shape, const Shape &idx) {
  int64_t e = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    EXPECT_TRUE(idx[d] >= 0 && idx[d] < shape[d]) << "oracle index bug";
    e = e * shape[d] + idx[d];
  }
  return e;
}

/// The array of a strided layout, straight from the definition.
inline Nd materialize(const Layout &l) {
  Nd out{l.sizes, Shape{}};
  for (int64_t e = 0; e < product(l.sizes); ++e) {
    Shape idx = unflatten(e, l.sizes);
    int64_t at = l.offset;
    for (size_t d = 0; d < idx.size(); ++d)
      at += idx[d] * l.strides[d];
    out.data.push_back(at);
  }
  return out;
}

/// out[idx] = src[map(idx)] for every idx of `shape`.
template <typename F> inline Nd gather(const Nd &src, Shape shape, F &&map) {
  Nd out{shape, Shape{}};
  for (int64_t e = 0; e < product(shape); ++e)
    out.data.push_back(
        src.data[flatIndex(src.shape, map(unflatten(e, shape)))]);
  return out;
}

inline Nd oPermute(const Nd &a, const Shape &dims) {
  Shape shape;
  for (int64_t d : dims)
    shape.push_back(a.shape[d]);
  return gather(a, shape, [&](const Shape &i) {
    Shape src(i.size());
    for (size_t k = 0; k < dims.size(); ++k)
      src[dims[k]] = i[k];
    return src;
  });
}

inline Nd oTranspose(const Nd &a, int64_t d0, int64_t d1) {
  Shape dims(a.shape.size());
  std::iota(dims.begin(), dims.end(), 0);
  std::swap(dims[d0], dims[d1]);
  return oPermute(a, dims);
}

/// Python's slice semantics, written as "which indices are picked".
inline Nd oSlice(const Nd &a, int64_t dim, std::optional<int64_t> start,
                 std::optional<int64_t> end, int64_t step) {
  int64_t n = a.shape[dim];
  auto norm = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v)
      return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    return std::min(std::max<int64_t>(x, 0), n);
  };
  Shape picked;
  for (int64_t i = norm(start, 0); i < norm(end, n); i += step)
    picked.push_back(i);
  Shape shape = a.shape;
  shape[dim] = static_cast<int64_t>(picked.size());
  return gather(a, shape, [&](Shape i) {
    i[dim] = picked[i[dim]];
    return i;
  });
}

inline Nd oSelect(const Nd &a, int64_t dim, int64_t index) {
  Shape shape = a.shape;
  shape.erase(shape.begin() + dim);
  return gather(a, shape, [&](Shape i) {
    i.insert(i.begin() + dim, index);
    return i;
  });
}

inline Nd oReshape(const Nd &a, Shape shape) {
  return Nd{std::move(shape), a.data};
}

inline Nd oExpand(const Nd &a, const Shape &shape) {
  size_t lead = shape.size() - a.shape.size();
  return gather(a, shape, [&](const Shape &i) {
    Shape src;
    for (size_t d = lead; d < shape.size(); ++d)
      src.push_back(a.shape[d - lead] == 1 ? 0 : i[d]);
    return src;
  });
}

inline Nd oDiagonal(const Nd &a, int64_t offset, int64_t d1, int64_t d2) {
  int64_t r1 = std::max<int64_t>(0, -offset), c1 = std::max<int64_t>(0, offset);
  int64_t n = 0;
  while (r1 + n < a.shape[d1] && c1 + n < a.shape[d2])
    ++n;
  Shape shape, rest;
  for (int64_t d = 0; d < static_cast<int64_t>(a.shape.size()); ++d)
    if (d != d1 && d != d2) {
      shape.push_back(a.shape[d]);
      rest.push_back(d);
    }
  shape.push_back(n);
  return gather(a, shape, [&](const Shape &i) {
    Shape src(a.shape.size());
    for (size_t k = 0; k < rest.size(); ++k)
      src[rest[k]] = i[k];
    src[d1] = r1 + i.back();
    src[d2] = c1 + i.back();
    return src;
  });
}

inline Nd oUnfold(const Nd &a, int64_t dim, int64_t size, int64_t step) {
  Shape shape = a.shape;
  shape[dim] = (a.shape[dim] - size) / step + 1;
  shape.push_back(size);
  return gather(a, shape, [&](Shape i) {
    int64_t within = i.back();
    i.pop_back();
    i[dim] = i[dim] * step + within;
    return i;
  });
}

inline Nd oFlip(const Nd &a, const Shape &dims) {
  return gather(a, a.shape, [&](Shape i) {
    for (int64_t d : dims)
      i[d] = a.shape[d] - 1 - i[d];
    return i;
  });
}

/// Whether some (sizes, strides, offset) addresses exactly `a`.
inline bool expressible(const Nd &a) {
  if (a.data.empty())
    return true;
  Shape strides(a.shape.size(), 0);
  for (size_t d = 0; d < a.shape.size(); ++d)
    if (a.shape[d] > 1) {
      Shape unit(a.shape.size(), 0);
      unit[d] = 1;
      strides[d] = a.data[flatIndex(a.shape, unit)] - a.data[0];
    }
  return materialize(L(a.shape, strides, a.data[0])).data == a.data;
}

} // namespace strata::testing

#endif // STRATA_TESTS_SUPPORT_INDEXORACLE_H
