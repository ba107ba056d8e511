//===- IndexOps.h - Tensor's selection by mask or index ---------*- C++ -*-===//
//
// masked_fill (dsl/lib/OpsWhere.cpp), masked_select and nonzero
// (NonzeroOps.cpp), index_select, gather, scatter and index_add
// (IndexOps.cpp), and their in-place forms.
// Part of class strata::Tensor: strata/Tensor.h includes this file inside
// the class, so these are Tensor's members (not a header of its own).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TENSOR_CLASS_BODY
#error "part of class strata::Tensor: include strata/Tensor.h"
#endif

/// `value` (converted to this dtype) where `mask` (bool, broadcast) is
/// true, this elsewhere; the gradient passes where the mask is false.
Tensor masked_fill(const Tensor &mask, Scalar value,
                   SourceLoc loc = SourceLoc::current()) const;
/// The elements of this tensor where `mask` (bool; the two broadcast) is
/// true, as a 1-D tensor of this dtype. Reads the mask at the call (a
/// pending mask is evaluated: docs/ops.md "Value-dependent sizes"); this
/// tensor may stay pending, and its gradient is scattered back.
Tensor masked_select(const Tensor &mask,
                     SourceLoc loc = SourceLoc::current()) const;
/// The indices of the nonzero elements (NaN counts), int64 (n, dim()) in
/// row-major order. Evaluates this tensor at the call (the result's size
/// depends on its values); no gradient.
Tensor nonzero(SourceLoc loc = SourceLoc::current()) const;
/// nonzero() (torch.argwhere).
Tensor argwhere(SourceLoc loc = SourceLoc::current()) const;
/// PyTorch's index ops (docs/ops.md "Index"): the index's values are
/// checked at the call, which evaluates a pending index (a sync).
/// The slices along `dim` at `index` (int32 or int64, at most 1-D).
Tensor index_select(int64_t dim, const Tensor &index,
                    SourceLoc loc = SourceLoc::current()) const;
/// result[p] = self[p with p[dim] = index[p]] (int64 index, self's rank).
Tensor gather(int64_t dim, const Tensor &index,
              SourceLoc loc = SourceLoc::current()) const;
/// A copy with self[p with p[dim] = index[p]] = src[p] (or the value).
Tensor scatter(int64_t dim, const Tensor &index, const Tensor &src,
               SourceLoc loc = SourceLoc::current()) const;
/// scatter() of one value at every index.
Tensor scatter(int64_t dim, const Tensor &index, Scalar value,
               SourceLoc loc = SourceLoc::current()) const;
/// scatter() that adds src at the indices (duplicates add up).
Tensor scatter_add(int64_t dim, const Tensor &index, const Tensor &src,
                   SourceLoc loc = SourceLoc::current()) const;
/// A copy with alpha * source[i] added to the slice index[i] along dim.
Tensor index_add(int64_t dim, const Tensor &index, const Tensor &source,
                 Scalar alpha = 1, SourceLoc loc = SourceLoc::current()) const;

//===--- In place (a write through this view; bumps the version) ----------===//
/// scatter() in place.
Tensor &scatter_(int64_t dim, const Tensor &index, const Tensor &src,
                 SourceLoc loc = SourceLoc::current());
/// scatter() of one value in place.
Tensor &scatter_(int64_t dim, const Tensor &index, Scalar value,
                 SourceLoc loc = SourceLoc::current());
/// scatter_add() in place.
Tensor &scatter_add_(int64_t dim, const Tensor &index, const Tensor &src,
                     SourceLoc loc = SourceLoc::current());
/// index_add() in place.
Tensor &index_add_(int64_t dim, const Tensor &index, const Tensor &source,
                   Scalar alpha = 1, SourceLoc loc = SourceLoc::current());
/// masked_fill() in place (the mask broadcasts to this tensor).
Tensor &masked_fill_(const Tensor &mask, Scalar value,
                     SourceLoc loc = SourceLoc::current());
