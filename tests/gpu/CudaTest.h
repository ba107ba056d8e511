//===- CudaTest.h - what the fluent-API GPU tests share -------------------===//
//
// DslCudaSmoke.cpp, DslCudaOuterSize.cpp, DslCudaInnerSize.cpp and
// DslCudaReduceSize.cpp (one binary, run by tests/gpu/run.sh): the skip
// without a GPU, the device, the PTX cache's misses, and the size tests'
// input (tests/unit/dsl/Ramp.h).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TESTS_GPU_CUDATEST_H
#define STRATA_TESTS_GPU_CUDATEST_H

#include "strata/JIT/CudaJit.h"
#include "strata/strata.h"

#include "../unit/dsl/Ramp.h"

#include <gtest/gtest.h>

#include <string>

/// Skips the test, with the runtime's reason, where no GPU can run it.
#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    std::string why = strata::jit::cudaUnavailableReason();                    \
    if (!why.empty())                                                          \
      GTEST_SKIP() << why;                                                     \
  } while (0)

inline const strata::Device kCuda = strata::Device::cuda();

/// Kernels whose PTX was not in memory: compiled or read from the disk.
inline int64_t ptxMisses() {
  strata::jit::CacheStats s = strata::jit::cudaCacheStats();
  return s.compiles + s.diskHits;
}

#endif // STRATA_TESTS_GPU_CUDATEST_H
