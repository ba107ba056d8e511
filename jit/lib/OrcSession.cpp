//===- OrcSession.cpp - the process's ORC JIT: link, unload kernels -------===//
//
// Assumes: object files of LlvmPipeline's host, each defining kKernelSymbol.
// Guarantees: a linked kernel's entry point stays valid while a handle to
//   it lives; its code and data sections are freed when the last goes. A
//   link failure reports the session's own message (ORC reports
//   materialization failures, e.g. no memory for a section, to the session
//   as well as failing the lookup), never prints it.
// The main JITDylib resolves the process's symbols (libm); each kernel's
// JITDylib links against it.
//
//===----------------------------------------------------------------------===//
#include "OrcSession.h"
#include "LlvmPipeline.h"
#include "strata/JIT/Jit.h"

#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <mutex>

using namespace strata::jit;
using namespace strata::jit::detail;

namespace {

struct Session {
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::string initError;
  std::mutex mutex; // guards `dylibs` and JITDylib creation
  int64_t dylibs = 0;
  std::atomic<int64_t> loaded{0}, loadedBytes{0};
  std::mutex reportMutex;
  std::string reported; // the session's last reported error

  Session() {
    const HostTarget &host = hostTarget();
    if (!host.error.empty()) {
      initError = host.error;
      return;
    }
    // Only object files are linked: no IR compiler (the default made a
    // TargetMachine, and another for the data layout, ~1 ms each of a
    // fresh process's first evaluation; this one makes one per IR compile,
    // never) and no platform (its IR runtime: kernels have no static
    // initializers).
    auto built =
        llvm::orc::LLJITBuilder()
            .setJITTargetMachineBuilder(*host.builder)
            .setDataLayout(llvm::DataLayout(host.dataLayout))
            .setCompileFunctionCreator(
                [](llvm::orc::JITTargetMachineBuilder jtmb)
                    -> llvm::Expected<std::unique_ptr<
                        llvm::orc::IRCompileLayer::IRCompiler>> {
                  return std::make_unique<llvm::orc::ConcurrentIRCompiler>(
                      std::move(jtmb));
                })
            .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
            .create();
    if (!built) {
      initError = llvm::toString(built.takeError());
      return;
    }
    lljit = std::move(*built);
    // Kept for the error the lookup's caller gets, instead of printed.
    lljit->getExecutionSession().setErrorReporter([this](llvm::Error err) {
      std::string text = llvm::toString(std::move(err));
      std::lock_guard<std::mutex> lock(reportMutex);
      reported = text;
    });
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        lljit->getDataLayout().getGlobalPrefix());
    if (gen)
      lljit->getMainJITDylib().addGenerator(std::move(*gen));
  }
};

/// Never destroyed (OrcSession.h).
Session &session() {
  static Session *started = new Session;
  return *started;
}

/// An error of the ORC session as a strata error text, with the session's
/// reported cause when it has one.
std::string sessionFailure(Session &s, llvm::Error err) {
  std::string text =
      "cannot link the kernel's object file: " + llvm::toString(std::move(err));
  std::lock_guard<std::mutex> lock(s.reportMutex);
  if (!s.reported.empty()) {
    text += "\nJIT session log: " + s.reported;
    s.reported.clear();
  }
  return text;
}

} // namespace

bool strata::jit::detail::orcSessionStarted(std::string &error) {
  Session &s = session();
  if (!s.lljit)
    error = s.initError;
  return s.lljit != nullptr;
}

KernelHandle
strata::jit::detail::linkKernel(std::unique_ptr<llvm::MemoryBuffer> object,
                                std::string &error) {
  Session &s = session();
  auto kernel = std::make_shared<CompiledKernel>();
  size_t bytes = object->getBufferSize();
  llvm::orc::JITDylib *jd;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto created = s.lljit->createJITDylib("k" + std::to_string(s.dylibs++));
    if (!created) {
      error = sessionFailure(s, created.takeError());
      return nullptr;
    }
    jd = &*created;
    kernel->dylib = jd;
    kernel->bytes = bytes;
    ++s.loaded;
    s.loadedBytes += bytes;
  }
  jd->addToLinkOrder(s.lljit->getMainJITDylib());
  if (auto err = s.lljit->addObjectFile(*jd, std::move(object))) {
    error = sessionFailure(s, std::move(err));
    return nullptr;
  }
  auto sym = s.lljit->lookup(*jd, kKernelSymbol);
  if (!sym) {
    error = sessionFailure(s, sym.takeError());
    return nullptr;
  }
  kernel->fn = sym->toPtr<KernelFn>();
  return kernel;
}

strata::jit::detail::CompiledKernel::~CompiledKernel() {
  if (!dylib)
    return;
  Session &s = session();
  auto *jd = static_cast<llvm::orc::JITDylib *>(dylib);
  // Frees the kernel's code and data sections (RTDyld's memory manager).
  if (auto err = s.lljit->getExecutionSession().removeJITDylib(*jd))
    llvm::errs() << "strata-jit: cannot unload a kernel: "
                 << llvm::toString(std::move(err)) << "\n";
  --s.loaded;
  s.loadedBytes -= bytes;
}

int64_t strata::jit::loadedKernels() { return session().loaded.load(); }

int64_t strata::jit::loadedKernelBytes() {
  return session().loadedBytes.load();
}
