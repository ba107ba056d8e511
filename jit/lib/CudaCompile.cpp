//===- CudaCompile.cpp - NVRTC to PTX, PTX caches (memory and disk) -------===//
//
// Key: compiler version + CUDA emitter build + NVRTC version + arch + the
// kernel printed in its local scope (as the CPU kernel cache keys). On
// disk: <cache dir>/<xxhash64(key)>.ptx holding a magic, the full key
// (checked, so hash collisions never alias), the PTX and its checksum;
// written to a temp file then renamed; a corrupt entry is recompiled.
// Without the toolkit every compile fails with a clear message.
//
//===----------------------------------------------------------------------===//
#include "strata/JIT/CudaJit.h"
#include "strata/Target/CUDA/KernelToCUDA.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#ifdef STRATA_HAVE_NVRTC
#include <nvrtc.h>
#endif

#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

using namespace strata::jit;
using strata::codegen::CudaKernel;

namespace {

constexpr char kMagic[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'P', '1'};

struct Entry {
  CudaKernel info;
  std::string ptx;
};

struct PtxCache {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries;
  CacheStats stats;
};

PtxCache &cache() {
  static PtxCache c;
  return c;
}

std::string nvrtcVersionText() {
#ifdef STRATA_HAVE_NVRTC
  int major = 0, minor = 0;
  ::nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
#else
  return "none";
#endif
}

std::string numbered(const std::string &source) {
  std::string out;
  int line = 1;
  size_t start = 0;
  while (start < source.size()) {
    size_t end = source.find('\n', start);
    if (end == std::string::npos)
      end = source.size();
    out += llvm::formatv("{0,4}| ", line++).str() +
           source.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

std::string entryPath(const std::string &key) {
  return cacheDir() + "/" + llvm::utohexstr(llvm::xxHash64(key)) + ".ptx";
}

bool loadEntry(const std::string &key, std::string &ptx) {
  if (cacheDir().empty())
    return false;
  auto file = llvm::MemoryBuffer::getFile(entryPath(key));
  if (!file)
    return false;
  llvm::StringRef data = (*file)->getBuffer();
  uint64_t keyLen = 0, ptxLen = 0, sum = 0;
  auto readU64 = [&](size_t at, uint64_t &v) {
    if (at + 8 > data.size())
      return false;
    memcpy(&v, data.data() + at, 8);
    return true;
  };
  if (data.size() < 8 || memcmp(data.data(), kMagic, 8) != 0 ||
      !readU64(8, keyLen) || 16 + keyLen > data.size() ||
      data.substr(16, keyLen) != key || !readU64(16 + keyLen, ptxLen) ||
      !readU64(24 + keyLen, sum) || 32 + keyLen + ptxLen != data.size() ||
      llvm::xxHash64(data.substr(32 + keyLen)) != sum) {
    std::lock_guard<std::mutex> lock(cache().mutex);
    ++cache().stats.diskCorrupt;
    return false;
  }
  ptx = data.substr(32 + keyLen).str();
  return true;
}

void storeEntry(const std::string &key, const std::string &ptx) {
  std::string dir = cacheDir();
  if (dir.empty() || llvm::sys::fs::create_directories(dir))
    return;
  llvm::SmallString<128> tmp;
  int fd;
  if (llvm::sys::fs::createUniqueFile(dir + "/tmp-%%%%%%%%.ptx", fd, tmp))
    return;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    uint64_t keyLen = key.size(), ptxLen = ptx.size(),
             sum = llvm::xxHash64(ptx);
    os.write(kMagic, 8);
    os.write(reinterpret_cast<const char *>(&keyLen), 8);
    os << key;
    os.write(reinterpret_cast<const char *>(&ptxLen), 8);
    os.write(reinterpret_cast<const char *>(&sum), 8);
    os << ptx;
  }
  if (llvm::sys::fs::rename(tmp, entryPath(key)))
    llvm::sys::fs::remove(tmp);
}

} // namespace

bool strata::jit::hasNVRTC() {
#ifdef STRATA_HAVE_NVRTC
  return true;
#else
  return false;
#endif
}

bool strata::jit::compileCudaToPTX(const std::string &source,
                                   const std::string &name,
                                   const std::string &arch, std::string &ptx,
                                   std::string &error) {
#ifndef STRATA_HAVE_NVRTC
  (void)source, (void)name, (void)arch, (void)ptx;
  error = "CUDA code generation is off: strata was built without the CUDA "
          "toolkit (NVRTC); install it and reconfigure";
  return false;
#else
  if (arch.rfind("sm_", 0) != 0) {
    error = "CUDA arch must look like sm_90, got '" + arch + "'";
    return false;
  }
  std::string archOption = "--gpu-architecture=compute_" + arch.substr(3);
  // No FMA contraction: the same rounding as the CPU kernels.
  const char *options[] = {archOption.c_str(), "-std=c++17", "--fmad=false"};
  nvrtcProgram prog;
  nvrtcResult rc = nvrtcCreateProgram(
      &prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
  if (rc != NVRTC_SUCCESS) {
    error = std::string("NVRTC could not create a program: ") +
            nvrtcGetErrorString(rc);
    return false;
  }
  rc = nvrtcCompileProgram(prog, 3, options);
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize)
    nvrtcGetProgramLog(prog, log.data());
  if (rc != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    error = "NVRTC failed to compile kernel '" + name + "' for " + arch + " (" +
            nvrtcGetErrorString(rc) + "):\n" + log.c_str() +
            "\n--- CUDA source ---\n" + numbered(source);
    return false;
  }
  size_t size = 0;
  nvrtcGetPTXSize(prog, &size);
  ptx.assign(size, '\0');
  nvrtcGetPTX(prog, ptx.data());
  nvrtcDestroyProgram(&prog);
  while (!ptx.empty() && ptx.back() == '\0')
    ptx.pop_back();
  return true;
#endif
}

std::string strata::jit::kernelCUDASource(mlir::Operation *kernel,
                                          std::string &error) {
  CudaKernel info;
  if (!codegen::emitKernelCUDA(kernel, "strata_kernel", info, error))
    return "";
  return info.source;
}

bool strata::jit::kernelPTX(mlir::Operation *kernel, const std::string &arch,
                            CudaKernel &info, std::string &ptx,
                            std::string &error) {
  std::string key;
  {
    llvm::raw_string_ostream os(key);
    os << compilerVersion() << " " << codegen::cudaEmitterBuildId()
       << "\nnvrtc " << nvrtcVersionText() << "\n"
       << arch << "\n";
    kernel->print(os, mlir::OpPrintingFlags().useLocalScope());
  }
  PtxCache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.entries.find(key);
    if (it != c.entries.end()) {
      ++c.stats.memoryHits;
      info = it->second->info;
      ptx = it->second->ptx;
      return true;
    }
  }
  // The launch shape is cheap to recompute; only the PTX is cached.
  if (!codegen::emitKernelCUDA(kernel, "strata_kernel", info, error))
    return false;
  auto entry = std::make_shared<Entry>();
  entry->info = info;
  if (loadEntry(key, entry->ptx)) {
    std::lock_guard<std::mutex> lock(c.mutex);
    ++c.stats.diskHits;
  } else {
    auto start = std::chrono::steady_clock::now();
    if (!compileCudaToPTX(info.source, info.name, arch, entry->ptx, error))
      return false;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    storeEntry(key, entry->ptx);
    std::lock_guard<std::mutex> lock(c.mutex);
    ++c.stats.compiles;
    c.stats.compileSeconds += seconds;
  }
  ptx = entry->ptx;
  std::lock_guard<std::mutex> lock(c.mutex);
  c.entries.emplace(key, std::move(entry));
  return true;
}

CacheStats strata::jit::cudaCacheStats() {
  std::lock_guard<std::mutex> lock(cache().mutex);
  return cache().stats;
}

void strata::jit::resetCudaCacheStats() {
  std::lock_guard<std::mutex> lock(cache().mutex);
  cache().stats = CacheStats();
}
