//===- strata.h - the public strata API -------------------------*- C++ -*-===//
//
// The one header a user includes. It includes no MLIR or LLVM header.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_STRATA_H
#define STRATA_STRATA_H

#include "strata/Error.h"
#include "strata/Functions.h"
#include "strata/Tensor.h"
#include "strata/Types.h"

namespace strata {
/// The library version, "major.minor.patch".
const char *version();
} // namespace strata

#endif // STRATA_STRATA_H
