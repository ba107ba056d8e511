//===- LlvmPipeline.cpp - a kernel to an object file for this host --------===//
//
// Assumes: a verified strata.kernel (what KernelToLLVM takes).
// Guarantees: the same object for the same kernel, pipeline and host: the
//   host is detected once (triple, CPU, features at CodeGenOpt::Default),
//   the module gets its data layout and target attributes, runs the short
//   pass pipeline below (or STRATA_LLVM_PASSES), and each thread's own
//   TargetMachine emits the object. A failure carries the compiler's log
//   and saves the kernel's sources to the temp directory.
//
//===----------------------------------------------------------------------===//
#include "LlvmPipeline.h"
#include "strata/JIT/Jit.h"
#include "strata/Runtime/Settings.h"
#include "strata/Target/LLVM/KernelToLLVM.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"

#include <mutex>
#include <optional>

using namespace strata::jit;
using namespace strata::jit::detail;

namespace {

/// The IR optimization pipeline. KernelToLLVM already emits what O2/O3
/// would have to discover (constant strides, rotated loops, register
/// accumulators, vector transpose micro-kernels), so the kernels only need
/// cleanup, hoisting and the loop vectorizer: ~1 ms instead of ~10 ms at
/// O2/O3, and a smaller loop body makes instruction selection 3-4x faster
/// (no unrolling), at the same bandwidth (docs/performance.md).
/// STRATA_LLVM_PASSES replaces it (PassBuilder syntax, or "O2"/"O3").
constexpr const char *kPipeline =
    "function(early-cse,instcombine,simplifycfg,loop-mssa(licm),"
    "loop-vectorize,instcombine,simplifycfg)";

/// HostTarget and what only this file uses: the builder of each thread's
/// target machine (targetMachine()) and the one detection made, which the
/// first thread to compile takes (creating a TargetMachine costs ~1 ms of
/// a fresh process's first evaluation).
struct Host : HostTarget {
  std::optional<llvm::DataLayout> layout;
  std::optional<llvm::orc::JITTargetMachineBuilder> jtmb;
  std::mutex spareMutex;
  std::unique_ptr<llvm::TargetMachine> spare;

  std::unique_ptr<llvm::TargetMachine> takeSpare() {
    std::lock_guard<std::mutex> lock(spareMutex);
    return std::move(spare);
  }

  Host() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto detected = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!detected) {
      error = llvm::toString(detected.takeError());
      return;
    }
    // Default, not Aggressive: the same code for these loops here, and
    // CodeGenOpt::Less measured no faster.
    detected->setCodeGenOptLevel(llvm::CodeGenOpt::Default);
    triple = detected->getTargetTriple().str();
    cpu = detected->getCPU();
    features = detected->getFeatures().getString();
    auto made = detected->createTargetMachine();
    if (!made) {
      error = llvm::toString(made.takeError());
      return;
    }
    layout = (*made)->createDataLayout();
    dataLayout = layout->getStringRepresentation();
    spare = std::move(*made);
    jtmb = *detected;
    builder = &*jtmb;
  }
};

/// Never destroyed (HostTarget).
Host &host() {
  static Host *detected = new Host;
  return *detected;
}

/// This thread's target machine, made on first use from the host's
/// builder (compiles run on user threads and the pool at once; a shared
/// TargetMachine crashed in code generation, found by
/// tests/unit/dsl/ThreadTest.cpp). Null only if the host's failed, which
/// callers check through the host's layout first.
llvm::TargetMachine *targetMachine() {
  thread_local std::unique_ptr<llvm::TargetMachine> mine;
  if (!mine && host().jtmb)
    mine = host().takeSpare();
  if (!mine && host().jtmb) {
    auto machine = host().jtmb->createTargetMachine();
    if (machine)
      mine = std::move(*machine);
    else
      llvm::consumeError(machine.takeError());
  }
  return mine.get();
}

/// False and `error` when STRATA_LLVM_PASSES does not parse.
bool optimize(llvm::Module &module, std::string &error) {
  Host &h = host();
  module.setDataLayout(*h.layout);
  module.setTargetTriple(h.triple);
  for (llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", h.cpu);
    f.addFnAttr("target-features", h.features);
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(targetMachine());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  const std::string &text = passPipeline();
  if (text == "O2" || text == "O3") {
    pb.buildPerModuleDefaultPipeline(text == "O2" ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3)
        .run(module, mam);
    return true;
  }
  llvm::ModulePassManager mpm;
  if (auto err = pb.parsePassPipeline(mpm, text)) {
    error = "STRATA_LLVM_PASSES='" + text + "' is not an LLVM pass pipeline: " +
            llvm::toString(std::move(err)) +
            " (give PassBuilder syntax such as 'function(instcombine)', or "
            "O2 or O3, or unset it)";
    return false;
  }
  mpm.run(module, mam);
  return true;
}

bool emitObject(llvm::Module &module, llvm::SmallVectorImpl<char> &object) {
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager pm;
  llvm::TargetMachine *tm = targetMachine();
  if (!tm || tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile))
    return false;
  pm.run(module);
  return true;
}

/// Saves the sources of a kernel LLVM failed to compile to the temp
/// directory (`strata-llvm-<hash>.mlir`: the strata.kernel op, which
/// `strata-translate --emit-llvm` takes; `.ll`: its LLVM IR, which `llc`
/// takes; named by a hash of the key, so a repeated failure does not pile
/// up files) and says where, for the error message.
std::string dumpSources(const std::string &key, mlir::Operation *kernel,
                        llvm::Module &module) {
  llvm::SmallString<128> base;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, base);
  llvm::sys::path::append(base, "strata-llvm-" +
                                    llvm::utohexstr(llvm::xxHash64(key)));
  std::string saved;
  auto save = [&](const std::string &path, auto print) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (!ec) {
      print(os);
      os.close();
      ec = os.error();
    }
    saved += ec ? "\n(could not save " + path + ": " + ec.message() + ")"
                : "\nsource saved to " + path;
  };
  save(base.str().str() + ".mlir", [&](llvm::raw_ostream &os) {
    kernel->print(os, mlir::OpPrintingFlags().useLocalScope());
    os << "\n";
  });
  save(base.str().str() + ".ll",
       [&](llvm::raw_ostream &os) { module.print(os, nullptr); });
  return saved;
}

} // namespace

const HostTarget &strata::jit::detail::hostTarget() { return host(); }

const std::string &strata::jit::detail::passPipeline() {
  static const std::string text = [] {
    const std::string &passes = strata::runtime::settings::llvmPasses();
    return passes.empty() ? std::string(kPipeline) : passes;
  }();
  return text;
}

bool strata::jit::detail::compileObject(mlir::Operation *kernel,
                                        const std::string &key,
                                        llvm::SmallVectorImpl<char> &object,
                                        ObjectTimes &times,
                                        std::string &error) {
  llvm::LLVMContext context;
  auto module =
      strata::codegen::emitKernelLLVM(kernel, context, kKernelSymbol, error);
  if (!module)
    return false;
  times.emitted = std::chrono::steady_clock::now();
  // Fault injection (docs/reliability.md): STRATA_INJECT_COMPILE_FAILURE=1
  // fails every compile here, as an LLVM back-end error would; the error
  // carries the kernel's LLVM IR as the compiler log.
  if (strata::runtime::settings::injectCompileFailure()) {
    std::string log;
    llvm::raw_string_ostream logStream(log);
    module->print(logStream, nullptr);
    error = "LLVM cannot emit an object file for " + host().triple +
            " (failure injected by STRATA_INJECT_COMPILE_FAILURE)\n"
            "compiler log (the kernel's LLVM IR):\n" +
            logStream.str() + dumpSources(key, kernel, *module);
    return false;
  }
  if (!optimize(*module, error))
    return false;
  times.optimized = std::chrono::steady_clock::now();
  if (strata::runtime::settings::debugLevel() >= 4) {
    llvm::errs() << "strata-jit: kernel key:\n" << key << "\n";
    module->print(llvm::errs(), nullptr);
  }
  if (!emitObject(*module, object)) {
    error = "LLVM cannot emit an object file for " + host().triple +
            dumpSources(key, kernel, *module);
    return false;
  }
  times.generated = std::chrono::steady_clock::now();
  return true;
}

std::string strata::jit::kernelLLVMIR(mlir::Operation *kernel, bool optimized,
                                      std::string &error) {
  llvm::LLVMContext context;
  auto module =
      strata::codegen::emitKernelLLVM(kernel, context, kKernelSymbol, error);
  if (!module)
    return "";
  if (optimized) {
    if (!host().layout) {
      error = "no host target machine: " + host().error;
      return "";
    }
    if (!optimize(*module, error))
      return "";
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  return os.str();
}
