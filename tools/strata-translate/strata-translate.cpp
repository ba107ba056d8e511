//===- strata-translate.cpp - print generated code of strata kernels ------===//
//
// `strata-translate --emit-llvm FILE.mlir` prints the LLVM IR of every
// strata.kernel in FILE (running the strata pipeline, fuse and coalesce
// first when the file holds no kernel yet); `--O3` prints it after the
// JIT's optimization pipeline for the host. `--emit-cuda` prints each
// kernel's CUDA C and its launch shape; `--emit-ptx [--arch=sm_90]` compiles
// that with NVRTC and prints the PTX (NVRTC failures print the NVRTC log
// and the source).
//
//===----------------------------------------------------------------------===//
#include "../ToolVersion.h"
#include "strata/IR/Parse.h"
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/CudaJit.h"
#include "strata/JIT/Jit.h"
#include "strata/Target/CUDA/KernelToCUDA.h"
#include "strata/Transforms/KernelPasses.h"
#include "strata/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

/// The text `--emit-cuda` or `--emit-ptx` prints for one kernel.
static std::string cudaText(strata::ir::KernelOp kernel, bool ptx,
                            const std::string &arch, std::string &error) {
  strata::codegen::CudaKernel info;
  if (!ptx) {
    if (!strata::codegen::emitKernelCUDA(kernel, "strata_kernel", info, error))
      return "";
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "// launch: " << strata::codegen::cudaKernelKindName(info.kind)
       << " grid " << info.gridX << " block " << info.blockX << "x"
       << info.blockY;
    if (info.splits > 1)
      os << " splits " << info.splits << ", then " << info.finishName
         << " grid " << info.finishGrid << " block " << info.finishBlock;
    os << "\n" << info.source;
    return os.str();
  }
  std::string text;
  if (!strata::jit::kernelPTX(kernel, arch, info, text, error))
    return "";
  return text;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  strata::tools::setVersionPrinter("strata-translate");
  cl::opt<std::string> input(cl::Positional, cl::desc("<input .mlir>"),
                             cl::init("-"));
  cl::opt<bool> emitLLVM("emit-llvm", cl::desc("Print each kernel's LLVM IR"));
  cl::opt<bool> emitCUDA("emit-cuda", cl::desc("Print each kernel's CUDA C"));
  cl::opt<bool> emitPTX("emit-ptx",
                        cl::desc("Compile each kernel's CUDA C with NVRTC "
                                 "and print the PTX"));
  cl::opt<std::string> arch("arch", cl::desc("CUDA arch of --emit-ptx"),
                            cl::init("sm_90"));
  cl::opt<bool> optimized("O3", cl::desc("Optimize for the host first"));
  cl::ParseCommandLineOptions(argc, argv, "strata code emitter\n");
  if (int(emitLLVM) + int(emitCUDA) + int(emitPTX) != 1) {
    llvm::errs() << "strata-translate: choose one output (--emit-llvm, "
                    "--emit-cuda or --emit-ptx)\n";
    return 1;
  }
  if (emitPTX && !strata::jit::hasNVRTC()) {
    llvm::errs() << "strata-translate: --emit-ptx needs NVRTC, but strata was "
                    "built without the CUDA toolkit\n";
    return 1;
  }
  mlir::MLIRContext context;
  strata::jit::loadDialects(context);
  std::string openError;
  auto file = mlir::openInputFile(input, &openError);
  if (!file) {
    llvm::errs() << "strata-translate: " << openError << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  auto module = strata::ir::parseSourceFile(sourceMgr, &context);
  if (!module)
    return 1;
  bool hasKernel = false;
  module->walk([&](strata::ir::KernelOp) { hasKernel = true; });
  if (!hasKernel) {
    mlir::PassManager pm(&context);
    strata::buildStrataPipeline(pm, {.formKernels = true});
    if (mlir::failed(pm.run(*module)))
      return 1;
  }
  int index = 0;
  bool ok = true;
  module->walk([&](strata::ir::KernelOp kernel) {
    std::string error, text;
    if (emitLLVM)
      text = strata::jit::kernelLLVMIR(kernel, optimized, error);
    else
      text = cudaText(kernel, emitPTX, arch, error);
    if (text.empty()) {
      kernel.emitError() << error;
      ok = false;
      return;
    }
    const char *comment = emitLLVM ? ";" : "//";
    llvm::outs() << comment << " kernel " << index++ << "\n" << text << "\n";
  });
  return ok ? 0 : 1;
}
