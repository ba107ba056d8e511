//===- Pipeline.cpp - the one ordered list of strata passes --------------===//
#include "strata/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

void strata::buildStrataPipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
}

void strata::registerStrataPasses() {
  mlir::PassPipelineRegistration<>(
      "strata-pipeline", "The full strata pipeline, as the JIT runs it",
      [](mlir::OpPassManager &pm) { buildStrataPipeline(pm); });
}
