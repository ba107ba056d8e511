//===- strata-translate.cpp - print generated code of strata kernels ------===//
//
// `strata-translate --emit-llvm FILE.mlir` prints the LLVM IR of every
// strata.kernel in FILE (running the strata pipeline, fuse and coalesce
// first when the file holds no kernel yet); `--O3` prints it after the
// JIT's optimization pipeline for the host.
//
//===----------------------------------------------------------------------===//
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/Jit.h"
#include "strata/Transforms/KernelPasses.h"
#include "strata/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::opt<std::string> input(cl::Positional, cl::desc("<input .mlir>"),
                             cl::init("-"));
  cl::opt<bool> emitLLVM("emit-llvm", cl::desc("Print each kernel's LLVM IR"));
  cl::opt<bool> optimized("O3", cl::desc("Optimize for the host first"));
  cl::ParseCommandLineOptions(argc, argv, "strata code emitter\n");
  if (!emitLLVM) {
    llvm::errs() << "strata-translate: choose an output (--emit-llvm)\n";
    return 1;
  }
  mlir::MLIRContext context;
  strata::jit::loadDialects(context);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  auto module =
      mlir::parseSourceFile<mlir::ModuleOp>(input, sourceMgr, &context);
  if (!module)
    return 1;
  bool hasKernel = false;
  module->walk([&](strata::ir::KernelOp) { hasKernel = true; });
  if (!hasKernel) {
    mlir::PassManager pm(&context);
    strata::buildStrataPipeline(pm);
    strata::buildKernelPipeline(pm);
    if (mlir::failed(pm.run(*module)))
      return 1;
  }
  int index = 0;
  bool ok = true;
  module->walk([&](strata::ir::KernelOp kernel) {
    std::string error;
    std::string ir = strata::jit::kernelLLVMIR(kernel, optimized, error);
    if (ir.empty()) {
      kernel.emitError() << error;
      ok = false;
      return;
    }
    llvm::outs() << "; kernel " << index++ << "\n" << ir << "\n";
  });
  return ok ? 0 : 1;
}
