//===- IO.h - NumPy .npy files ----------------------------------*- C++ -*-===//
//
// save/load in NumPy's .npy format (versions 1.0, 2.0 and 3.0), so tensors
// move between strata and numpy.save/numpy.load unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IO_H
#define STRATA_IO_H

#include "strata/Tensor.h"

#include <string>

namespace strata {

/// Writes `t` (evaluated first) to `path` as .npy: little-endian '<f4',
/// '<f8', '<i4', '<i8' or '|b1'. A C-contiguous tensor is written as is, a
/// Fortran-contiguous one (strides increasing) with fortran_order True, any
/// other layout in C order. Throws strata::Error when the file cannot be
/// written.
void save(const Tensor &t, const std::string &path,
          SourceLoc loc = SourceLoc::current());

/// Reads a .npy file: C order gives a contiguous tensor, Fortran order a
/// strided view with strides (1, d0, d0*d1, ...) over the data as stored
/// (no copy). Throws strata::Error naming the problem for malformed files
/// (bad magic, truncated header or data, unparsable header, shape/size
/// mismatch) and unsupported ones (big-endian, dtypes other than the five
/// above, object arrays).
Tensor load(const std::string &path, SourceLoc loc = SourceLoc::current());

} // namespace strata

#endif // STRATA_IO_H
