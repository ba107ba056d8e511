//===- strata.h - the public strata API -------------------------*- C++ -*-===//
//
// The one header a user includes. It includes no MLIR or LLVM header.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_STRATA_H
#define STRATA_STRATA_H

#include "strata/Autograd.h"
#include "strata/DLPack.h"
#include "strata/Error.h"
#include "strata/Function.h"
#include "strata/Functions.h"
#include "strata/Graph.h"
#include "strata/IO.h"
#include "strata/Tensor.h"
#include "strata/Types.h"
#include "strata/Version.h"
#include "strata/nn.h"
#include "strata/optim.h"

namespace strata {
/// The library version, "major.minor.patch" (STRATA_VERSION_STRING of the
/// library that is linked; the header's is in strata/Version.h).
const char *version();
} // namespace strata

#endif // STRATA_STRATA_H
