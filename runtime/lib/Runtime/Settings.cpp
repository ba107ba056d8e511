//===- Settings.cpp - the one reader of strata's environment --------------===//
#include "strata/Runtime/Settings.h"

#include "strata/Runtime/ByteSize.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <strings.h>
#include <thread>

using namespace strata::runtime;

namespace {

/// The environment variable `name`, or null when unset: the one getenv of
/// strata's settings (docs/environment.md lists the few other places that
/// read another program's variables).
const char *variable(const char *name) { return std::getenv(name); }

/// Prints `message` once per process (a value re-read on each call warns
/// once, not on every read).
void warnOnce(const std::string &message) {
  static std::mutex mutex;
  static std::set<std::string> printed;
  std::lock_guard<std::mutex> lock(mutex);
  if (printed.insert(message).second)
    fprintf(stderr, "%s\n", message.c_str());
}

/// The flag `name` (parse::flag).
bool flagOf(const char *name, bool fallback) {
  return settings::parse::flag(name, variable(name), fallback);
}

/// The integer `name` (parse::integer).
int64_t integerOf(const char *name, int64_t min, int64_t fallback) {
  return settings::parse::integer(name, variable(name), min, fallback);
}

/// The byte count `name` (parse::byteSize).
int64_t byteSizeOf(const char *name, int64_t fallback) {
  return settings::parse::byteSize(name, variable(name), fallback);
}

/// The value of `name` as a string, `fallback` when unset or empty.
std::string text(const char *name, const char *fallback) {
  const char *v = variable(name);
  return v && *v ? v : fallback;
}

} // namespace

std::string settings::parse::warning(const char *name, const char *text,
                                     const char *expected,
                                     const std::string &fallback) {
  return std::string("strata: warning: ") + name + "='" + text + "' is not " +
         expected + "; using " + fallback + " (docs/environment.md)";
}

int64_t settings::parse::integer(const char *name, const char *text,
                                 int64_t min, int64_t fallback) {
  if (!text || !*text)
    return fallback;
  char *end = nullptr;
  errno = 0;
  long long n = std::strtoll(text, &end, 10);
  if (*end == '\0' && errno == 0 && n >= min)
    return n;
  warnOnce(warning(name, text,
                   min == 0   ? "a non-negative integer"
                   : min == 1 ? "a positive integer"
                              : "an integer in range",
                   std::to_string(fallback)));
  return fallback;
}

int64_t settings::parse::byteSize(const char *name, const char *text,
                                  int64_t fallback) {
  if (!text || !*text)
    return fallback;
  int64_t n = parseByteSize(text);
  char *end = nullptr;
  std::strtoll(text, &end, 10);
  bool whole = *end == '\0' ||
               ((*end == 'K' || *end == 'M' || *end == 'G') && end[1] == '\0');
  if (n > 0 && whole)
    return n;
  warnOnce(warning(name, text, "a byte count such as 512M, 2G or 1048576",
                   fallback ? std::to_string(fallback) + " bytes"
                            : std::string("no limit")));
  return fallback;
}

bool settings::parse::flag(const char *name, const char *text, bool fallback) {
  if (!text || !*text)
    return fallback;
  for (const char *off : {"0", "false", "off", "no"})
    if (strcasecmp(text, off) == 0)
      return false;
  for (const char *on : {"1", "true", "on", "yes"})
    if (strcasecmp(text, on) == 0)
      return true;
  warnOnce(warning(name, text, "1 or 0 (true/false, on/off, yes/no)",
                   fallback ? "1" : "0"));
  return fallback;
}

int settings::debugLevel() {
  static const int level = static_cast<int>(integerOf("STRATA_DEBUG", 0, 0));
  return level;
}

unsigned settings::numThreads() {
  static const unsigned threads = [] {
    unsigned hw = std::thread::hardware_concurrency();
    return static_cast<unsigned>(
        integerOf("STRATA_NUM_THREADS", 1, hw ? hw : 1));
  }();
  return threads;
}

int64_t settings::memoryLimit() {
  static const int64_t limit = byteSizeOf("STRATA_MEMORY_LIMIT", 0);
  return limit;
}

bool settings::hugePages() {
  static const bool on = flagOf("STRATA_HUGEPAGES", true);
  return on;
}

const std::string &settings::cudaDriverLibrary() {
  static const std::string path = text("STRATA_CUDA_DRIVER", "libcuda.so.1");
  return path;
}

bool settings::cudaMemoryCaching() {
  static const bool on = !flagOf("STRATA_NO_CUDA_MEMORY_CACHING", false);
  return on;
}

bool settings::fuseSiblings() {
  static const bool on = flagOf("STRATA_FUSE_SIBLINGS", true);
  return on;
}

bool settings::logaddexpNaive() {
  static const bool on = flagOf("STRATA_LOGADDEXP_NAIVE", false);
  return on;
}

const std::string &settings::cacheDir() {
  static const std::string dir = [] {
    if (const char *env = variable("STRATA_CACHE_DIR"))
      return std::string(env);
    if (const char *home = variable("HOME"))
      return std::string(home) + "/.cache/strata";
    return std::string();
  }();
  return dir;
}

int64_t settings::cacheMaxBytes() {
  return byteSizeOf("STRATA_CACHE_MAX_BYTES", int64_t(1) << 30);
}

int64_t settings::kernelCacheSize() {
  return integerOf("STRATA_KERNEL_CACHE_SIZE", 1, 4096);
}

int64_t settings::programCacheSize() {
  static const int64_t n = integerOf("STRATA_PROGRAM_CACHE_SIZE", 1, 256);
  return n;
}

int64_t settings::segmentOps() {
  static const int64_t n = integerOf("STRATA_SEGMENT_OPS", 1, 128);
  return n;
}

bool settings::splitViews() {
  static const bool on = flagOf("STRATA_SPLIT_VIEWS", false);
  return on;
}

bool settings::checkTemplates() {
  static const bool on = flagOf("STRATA_CHECK_TEMPLATES", false);
  return on;
}

const std::string &settings::llvmPasses() {
  static const std::string passes = text("STRATA_LLVM_PASSES", "");
  return passes;
}

bool settings::injectCompileFailure() {
  return flagOf("STRATA_INJECT_COMPILE_FAILURE", false);
}

bool settings::dynamicShapes() { return flagOf("STRATA_DYNAMIC_SHAPES", true); }

bool settings::injectNvrtcFailure() {
  return flagOf("STRATA_INJECT_NVRTC_FAILURE", false);
}

const std::string &settings::nvrtcLibrary() {
  static const std::string name = text("STRATA_NVRTC_LIBRARY", "");
  return name;
}

const std::string &settings::blasLibrary() {
  static const std::string name = [] {
    std::string v = text("STRATA_BLAS", "libopenblas.so.0");
    return v == "0" ? std::string() : v;
  }();
  return name;
}

bool settings::distributedCheck() {
  return flagOf("STRATA_DISTRIBUTED_CHECK", true);
}

std::string settings::ncclLibrary() {
  return text("STRATA_NCCL_LIBRARY", "libnccl.so.2");
}

std::optional<std::string> settings::glooHostname() {
  if (const char *h = variable("STRATA_GLOO_HOSTNAME"))
    return std::string(h);
  return std::nullopt;
}
