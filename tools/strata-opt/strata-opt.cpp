//===- strata-opt.cpp - parse, verify, transform and print strata IR ------===//
#include "../ToolVersion.h"
#include "strata/IR/StrataDialect.h"
#include "strata/Transforms/KernelPasses.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  strata::tools::setVersionPrinter("strata-opt");
  mlir::DialectRegistry registry;
  registry.insert<strata::ir::StrataDialect, mlir::func::FuncDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerViewOpGraph(); // --view-op-graph: the IR as Graphviz DOT
  strata::registerStrataPasses();
  strata::registerKernelPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "strata optimizer driver\n", registry));
}
