//===- KernelPipeline.cpp - registration of fuse and coalesce -------------===//
// Their place in the pipeline is in Pipeline.cpp (buildStrataPipeline).
#include "strata/Transforms/KernelPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/PassManager.h"
#include "strata/IR/StrataDialect.h"

namespace strata {
namespace detail {
#define GEN_PASS_REGISTRATION
#include "strata/Transforms/KernelPasses.h.inc"
} // namespace detail
} // namespace strata

void strata::registerKernelPasses() { detail::registerStrataKernelPasses(); }
