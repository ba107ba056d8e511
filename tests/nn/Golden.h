//===- Golden.h - reads tests/nn/nn_golden.txt (gen_nn_golden.py) ---------===//
//
// The same file format as tests/ops/ops_golden.txt: one reader,
// tests/ops/OpsGolden.h.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TESTS_NN_GOLDEN_H
#define STRATA_TESTS_NN_GOLDEN_H

#include "../ops/OpsGolden.h"

namespace golden {
using opsgolden::Case;
using opsgolden::load;
} // namespace golden

#endif // STRATA_TESTS_NN_GOLDEN_H
