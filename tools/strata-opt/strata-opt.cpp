//===- strata-opt.cpp - parse, verify, transform and print strata IR ------===//
//
// mlir-opt's driver with strata's dialects and passes. The command line is
// MLIR 16's `MlirOptMain(argc, argv, ...)` one, option for option; strata-opt
// parses it itself so that it can check the input for the forward references
// MLIR 16's parser cannot survive (strata/IR/Parse.h) before handing the
// buffer to MlirOptMain.
//
//===----------------------------------------------------------------------===//
#include "../ToolVersion.h"
#include "strata/IR/Parse.h"
#include "strata/IR/StrataDialect.h"
#include "strata/Transforms/KernelPasses.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/DebugCounter.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

namespace cl = llvm::cl;

int main(int argc, char **argv) {
  static cl::opt<std::string> inputFilename(
      cl::Positional, cl::desc("<input file>"), cl::init("-"));
  static cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                             cl::value_desc("filename"),
                                             cl::init("-"));
  static cl::opt<bool> splitInputFile(
      "split-input-file",
      cl::desc("Split the input file into pieces and process each "
               "chunk independently"),
      cl::init(false));
  static cl::opt<bool> verifyDiagnostics(
      "verify-diagnostics",
      cl::desc("Check that emitted diagnostics match "
               "expected-* lines on the corresponding line"),
      cl::init(false));
  static cl::opt<bool> verifyPasses(
      "verify-each",
      cl::desc("Run the verifier after each transformation pass"),
      cl::init(true));
  static cl::opt<bool> allowUnregisteredDialects(
      "allow-unregistered-dialect",
      cl::desc("Allow operation with no registered dialects"), cl::init(false));
  static cl::opt<bool> showDialects(
      "show-dialects", cl::desc("Print the list of registered dialects"),
      cl::init(false));
  static cl::opt<bool> emitBytecode(
      "emit-bytecode", cl::desc("Emit bytecode when generating output"),
      cl::init(false));
  static cl::opt<bool> noImplicitModule(
      "no-implicit-module",
      cl::desc(
          "Disable implicit addition of a top-level module op during parsing"),
      cl::init(false));
  static cl::opt<bool> dumpPassPipeline(
      "dump-pass-pipeline", cl::desc("Print the pipeline that will be run"),
      cl::init(false));

  llvm::InitLLVM init(argc, argv);
  strata::tools::setVersionPrinter("strata-opt");
  mlir::DialectRegistry registry;
  registry.insert<strata::ir::StrataDialect, mlir::func::FuncDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerViewOpGraph(); // --view-op-graph: the IR as Graphviz DOT
  strata::registerStrataPasses();
  strata::registerKernelPasses();

  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::DebugCounter::registerCLOptions();
  mlir::PassPipelineCLParser passPipeline("", "Compiler passes to run", "p");

  std::string helpHeader = "strata optimizer driver\nAvailable Dialects: ";
  {
    llvm::raw_string_ostream os(helpHeader);
    llvm::interleaveComma(registry.getDialectNames(), os,
                          [&](auto name) { os << name; });
  }
  cl::ParseCommandLineOptions(argc, argv, helpHeader);

  if (showDialects) {
    llvm::outs() << "Available Dialects:\n";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), "\n");
    return 0;
  }

  std::string errorMessage;
  auto file = mlir::openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  {
    // The forward-reference check, with located diagnostics.
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(file->getMemBufferRef(),
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    if (mlir::failed(strata::ir::checkForwardReferences(
            sourceMgr, sourceMgr.getMainFileID(), &context, splitInputFile)))
      return 1;
  }
  auto output = mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(
          output->os(), std::move(file), passPipeline, registry, splitInputFile,
          verifyDiagnostics, verifyPasses, allowUnregisteredDialects,
          /*preloadDialectsInContext=*/false, emitBytecode,
          /*implicitModule=*/!noImplicitModule, dumpPassPipeline)))
    return 1;
  output->keep();
  return 0;
}
