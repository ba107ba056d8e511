//===- KernelCache.cpp - compile kernels with ORC, cache them -------------===//
//
// Key: compiler version + target triple + CPU + features + options + the
// kernel printed in its local scope (its operand layouts, loops and body).
// In memory: key -> shared future of the entry point, so concurrent requests
// for one key compile once. On disk: <dir>/<xxhash64(key)>.sko holding a
// magic, the full key (checked, so hash collisions never alias), the object
// file and its checksum; written to a temp file then renamed; an entry that
// fails any check is recompiled and rewritten, never trusted.
//
//===----------------------------------------------------------------------===//
#include "JitInternal.h"
#include "strata/JIT/Jit.h"
#include "strata/Target/LLVM/KernelToLLVM.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>
#include <cstdlib>
#include <future>
#include <mutex>
#include <unordered_map>

using namespace strata::jit;

namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'K', '1'};
constexpr const char *kSymbol = "strata_kernel";

struct Jit {
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string triple, cpu, features;
  std::mutex mutex; // guards everything below and LLJIT dylib creation
  std::unordered_map<std::string, std::shared_future<KernelFn>> kernels;
  std::unordered_map<std::string, std::string> errors;
  CacheStats stats;
  std::string dir;
  int64_t dylibs = 0;
  std::string initError;

  Jit() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      initError = llvm::toString(jtmb.takeError());
      return;
    }
    jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
    triple = jtmb->getTargetTriple().str();
    cpu = jtmb->getCPU();
    features = jtmb->getFeatures().getString();
    auto machine = jtmb->createTargetMachine();
    if (!machine) {
      initError = llvm::toString(machine.takeError());
      return;
    }
    tm = std::move(*machine);
    auto built =
        llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
    if (!built) {
      initError = llvm::toString(built.takeError());
      return;
    }
    lljit = std::move(*built);
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        lljit->getDataLayout().getGlobalPrefix());
    if (gen)
      lljit->getMainJITDylib().addGenerator(std::move(*gen));
    if (const char *env = std::getenv("STRATA_CACHE_DIR")) {
      dir = env;
    } else if (const char *home = std::getenv("HOME")) {
      dir = std::string(home) + "/.cache/strata";
    }
  }
};

Jit &theJit() {
  static Jit jit;
  return jit;
}

int debugLevel() {
  static int level = [] {
    const char *env = std::getenv("STRATA_DEBUG");
    return env ? std::atoi(env) : 0;
  }();
  return level;
}

std::string kernelKey(Jit &jit, mlir::Operation *kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << compilerVersion() << " " << strata::codegen::emitterBuildId() << " "
     << __DATE__ " " __TIME__ << "\n"
     << jit.triple << "\n"
     << jit.cpu << "\n"
     << jit.features << "\nO3\n";
  kernel->print(os, mlir::OpPrintingFlags().useLocalScope());
  return os.str();
}

void optimize(Jit &jit, llvm::Module &module) {
  module.setDataLayout(jit.tm->createDataLayout());
  module.setTargetTriple(jit.triple);
  for (llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", jit.cpu);
    f.addFnAttr("target-features", jit.features);
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(jit.tm.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
}

bool emitObject(Jit &jit, llvm::Module &module,
                llvm::SmallVectorImpl<char> &object) {
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager pm;
  if (jit.tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile))
    return false;
  pm.run(module);
  return true;
}

std::string entryPath(Jit &jit, const std::string &key) {
  return jit.dir + "/" + llvm::utohexstr(llvm::xxHash64(key)) + ".sko";
}

/// The object of `key` from the disk cache; empty when absent or corrupt.
std::unique_ptr<llvm::MemoryBuffer> loadEntry(Jit &jit,
                                              const std::string &key) {
  auto file = llvm::MemoryBuffer::getFile(entryPath(jit, key));
  if (!file)
    return nullptr;
  llvm::StringRef data = (*file)->getBuffer();
  auto corrupt = [&] {
    std::lock_guard<std::mutex> lock(jit.mutex);
    ++jit.stats.diskCorrupt;
    return nullptr;
  };
  auto readU64 = [&](size_t at, uint64_t &v) {
    if (at + 8 > data.size())
      return false;
    memcpy(&v, data.data() + at, 8);
    return true;
  };
  uint64_t keyLen, objLen, sum;
  if (data.size() < 8 || memcmp(data.data(), kMagic, 8) != 0 ||
      !readU64(8, keyLen) || 16 + keyLen > data.size() ||
      data.substr(16, keyLen) != key || !readU64(16 + keyLen, objLen) ||
      !readU64(24 + keyLen, sum) || 32 + keyLen + objLen != data.size())
    return corrupt();
  llvm::StringRef object = data.substr(32 + keyLen, objLen);
  if (llvm::xxHash64(object) != sum)
    return corrupt();
  return llvm::MemoryBuffer::getMemBufferCopy(object, "strata-kernel.o");
}

void storeEntry(Jit &jit, const std::string &key, llvm::StringRef object) {
  if (jit.dir.empty() || llvm::sys::fs::create_directories(jit.dir))
    return;
  llvm::SmallString<128> tmp;
  int fd;
  if (llvm::sys::fs::createUniqueFile(jit.dir + "/tmp-%%%%%%%%.sko", fd, tmp))
    return;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    uint64_t keyLen = key.size(), objLen = object.size(),
             sum = llvm::xxHash64(object);
    os.write(kMagic, 8);
    os.write(reinterpret_cast<const char *>(&keyLen), 8);
    os << key;
    os.write(reinterpret_cast<const char *>(&objLen), 8);
    os.write(reinterpret_cast<const char *>(&sum), 8);
    os << object;
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return;
    }
  }
  if (llvm::sys::fs::rename(tmp, entryPath(jit, key)))
    llvm::sys::fs::remove(tmp);
}

/// Adds `object` in a fresh JITDylib and returns its entry point.
KernelFn link(Jit &jit, std::unique_ptr<llvm::MemoryBuffer> object,
              std::string &error) {
  llvm::orc::JITDylib *jd;
  {
    std::lock_guard<std::mutex> lock(jit.mutex);
    auto created =
        jit.lljit->createJITDylib("k" + std::to_string(jit.dylibs++));
    if (!created) {
      error = llvm::toString(created.takeError());
      return nullptr;
    }
    jd = &*created;
  }
  jd->addToLinkOrder(jit.lljit->getMainJITDylib());
  if (auto err = jit.lljit->addObjectFile(*jd, std::move(object))) {
    error = llvm::toString(std::move(err));
    return nullptr;
  }
  auto sym = jit.lljit->lookup(*jd, kSymbol);
  if (!sym) {
    error = llvm::toString(sym.takeError());
    return nullptr;
  }
  return sym->toPtr<KernelFn>();
}

KernelFn compileNew(Jit &jit, mlir::Operation *kernel, const std::string &key,
                    std::string &error) {
  if (auto object = loadEntry(jit, key)) {
    if (KernelFn fn = link(jit, std::move(object), error)) {
      std::lock_guard<std::mutex> lock(jit.mutex);
      ++jit.stats.diskHits;
      return fn;
    }
  }
  auto start = std::chrono::steady_clock::now();
  llvm::LLVMContext context;
  auto module =
      strata::codegen::emitKernelLLVM(kernel, context, kSymbol, error);
  if (!module)
    return nullptr;
  optimize(jit, *module);
  if (debugLevel() >= 4)
    module->print(llvm::errs(), nullptr);
  llvm::SmallVector<char, 0> object;
  if (!emitObject(jit, *module, object)) {
    error = "LLVM cannot emit an object file for " + jit.triple;
    return nullptr;
  }
  llvm::StringRef objectRef(object.data(), object.size());
  storeEntry(jit, key, objectRef);
  KernelFn fn =
      link(jit, llvm::MemoryBuffer::getMemBufferCopy(objectRef), error);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (debugLevel() >= 1)
    llvm::errs() << "strata-jit: compiled kernel in " << seconds * 1e3
                 << " ms\n";
  std::lock_guard<std::mutex> lock(jit.mutex);
  ++jit.stats.compiles;
  jit.stats.compileSeconds += seconds;
  return fn;
}

} // namespace

KernelFn strata::jit::detail::getKernel(mlir::Operation *kernel,
                                        std::string &error) {
  Jit &jit = theJit();
  if (!jit.lljit) {
    error = "cannot start the LLVM JIT: " + jit.initError;
    return nullptr;
  }
  std::string key = kernelKey(jit, kernel);
  std::promise<KernelFn> promise;
  std::shared_future<KernelFn> future;
  bool mine = false;
  {
    std::lock_guard<std::mutex> lock(jit.mutex);
    auto it = jit.kernels.find(key);
    if (it != jit.kernels.end()) {
      future = it->second;
      ++jit.stats.memoryHits;
    } else {
      future = promise.get_future().share();
      jit.kernels.emplace(key, future);
      mine = true;
    }
  }
  if (mine) {
    KernelFn fn = compileNew(jit, kernel, key, error);
    std::lock_guard<std::mutex> lock(jit.mutex);
    if (!fn) {
      jit.kernels.erase(key); // a later call retries
      jit.errors[key] = error;
    }
    promise.set_value(fn);
    return fn;
  }
  KernelFn fn = future.get();
  if (!fn) {
    std::lock_guard<std::mutex> lock(jit.mutex);
    error = jit.errors[key];
  }
  return fn;
}

std::string strata::jit::kernelLLVMIR(mlir::Operation *kernel, bool optimized,
                                      std::string &error) {
  llvm::LLVMContext context;
  auto module =
      strata::codegen::emitKernelLLVM(kernel, context, kSymbol, error);
  if (!module)
    return "";
  if (optimized) {
    Jit &jit = theJit();
    if (!jit.tm) {
      error = "no host target machine: " + jit.initError;
      return "";
    }
    optimize(jit, *module);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  return os.str();
}

bool strata::jit::compileKernel(mlir::Operation *kernel, std::string &error) {
  return detail::getKernel(kernel, error) != nullptr;
}

CacheStats strata::jit::cacheStats() {
  std::lock_guard<std::mutex> lock(theJit().mutex);
  return theJit().stats;
}

void strata::jit::resetCacheStats() {
  std::lock_guard<std::mutex> lock(theJit().mutex);
  theJit().stats = {};
}

void strata::jit::clearMemoryCache() {
  std::lock_guard<std::mutex> lock(theJit().mutex);
  theJit().kernels.clear();
}

void strata::jit::setCacheDir(const std::string &dir) {
  std::lock_guard<std::mutex> lock(theJit().mutex);
  theJit().dir = dir;
}

std::string strata::jit::cacheDir() {
  std::lock_guard<std::mutex> lock(theJit().mutex);
  return theJit().dir;
}

int strata::jit::detail::debug() { return debugLevel(); }
