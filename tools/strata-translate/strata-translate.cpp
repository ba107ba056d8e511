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
// As mlir-translate, `-o FILE` writes the output to FILE (default `-`,
// stdout). `--emit-ptx` writes one PTX module that ptxas accepts: a single
// kernel's PTX as the JIT loads it (entry strata_kernel), or, for several
// kernels, one NVRTC compilation of their CUDA C, each in its own namespace
// with entry strata_kernel_<i>. `-o DIR` (an existing directory) writes one
// file per kernel instead: DIR/kernel_<i>.{ll,cu,ptx}.
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
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
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
    if (info.outerArg)
      os << " n0 " << info.outerSize;
    if (!info.dimArgs.empty()) {
      os << " dims";
      for (int64_t d : info.dimArgs)
        os << " " << d;
    }
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
  cl::opt<std::string> output(
      "o",
      cl::desc("Output file, or an existing directory for one file per "
               "kernel (default: stdout)"),
      cl::value_desc("filename"), cl::init("-"));
  cl::ParseCommandLineOptions(argc, argv, "strata code emitter\n");
  if (int(emitLLVM) + int(emitCUDA) + int(emitPTX) != 1) {
    llvm::errs() << "strata-translate: choose one output (--emit-llvm, "
                    "--emit-cuda or --emit-ptx)\n";
    return 1;
  }
  if (emitPTX && !strata::jit::hasNVRTC()) {
    llvm::errs() << "strata-translate: --emit-ptx needs NVRTC: "
                 << strata::jit::nvrtcError() << "\n";
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
  std::vector<strata::ir::KernelOp> kernels;
  module->walk([&](strata::ir::KernelOp kernel) { kernels.push_back(kernel); });
  const char *comment = emitLLVM ? ";" : "//";
  const char *extension = emitLLVM ? ".ll" : emitCUDA ? ".cu" : ".ptx";
  // The text of each kernel (one module each).
  auto kernelText = [&](strata::ir::KernelOp kernel, std::string &text) {
    std::string error;
    if (emitLLVM)
      text = strata::jit::kernelLLVMIR(kernel, optimized, error);
    else
      text = cudaText(kernel, emitPTX, arch, error);
    if (text.empty())
      kernel.emitError() << error;
    return !text.empty();
  };
  auto write = [](const std::string &path, const std::string &text) {
    std::string error;
    auto out = mlir::openOutputFile(path, &error);
    if (!out) {
      llvm::errs() << "strata-translate: " << error << "\n";
      return false;
    }
    out->os() << text;
    out->keep();
    return true;
  };

  if (output != "-" && llvm::sys::fs::is_directory(output)) {
    for (size_t i = 0; i < kernels.size(); ++i) {
      std::string text;
      if (!kernelText(kernels[i], text))
        return 1;
      llvm::SmallString<128> path(output.getValue());
      llvm::sys::path::append(path, "kernel_" + std::to_string(i) + extension);
      if (!write(path.str().str(), text))
        return 1;
    }
    return 0;
  }

  std::string all;
  if (emitPTX && kernels.size() > 1) {
    // One module: the kernels' CUDA C in one translation unit, each in its
    // own namespace (their helpers share names), entries made unique.
    std::string source, listing;
    for (size_t i = 0; i < kernels.size(); ++i) {
      strata::codegen::CudaKernel info;
      std::string error, name = "strata_kernel_" + std::to_string(i);
      if (!strata::codegen::emitKernelCUDA(kernels[i], name, info, error)) {
        kernels[i].emitError() << error;
        return 1;
      }
      source += "namespace strata_k" + std::to_string(i) + " {\n" +
                info.source + "\n} // namespace strata_k" + std::to_string(i) +
                "\n";
      listing += "// kernel " + std::to_string(i) + ": " + name + ", " +
                 strata::codegen::cudaKernelKindName(info.kind) + " grid " +
                 std::to_string(info.gridX) + " block " +
                 std::to_string(info.blockX) + "x" +
                 std::to_string(info.blockY) + "\n";
    }
    std::string ptx, error;
    if (!strata::jit::compileCudaToPTX(source, "strata_kernels", arch, ptx,
                                       error)) {
      module->emitError() << error;
      return 1;
    }
    all = listing + ptx + "\n";
  } else {
    for (size_t i = 0; i < kernels.size(); ++i) {
      std::string text;
      if (!kernelText(kernels[i], text))
        return 1;
      all += std::string(comment) + " kernel " + std::to_string(i) + "\n" +
             text + "\n";
    }
  }
  return write(output, all) ? 0 : 1;
}
