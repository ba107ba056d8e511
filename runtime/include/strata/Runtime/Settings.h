//===- Settings.h - the one reader of strata's environment ----*- C++ -*-===//
//
// Every `STRATA_*` variable (docs/environment.md) is read here and nowhere
// else, each through its typed accessor below; the reader itself is private
// to Settings.cpp. (Other programs' variables stay with the code that checks
// them: torchrun's RANK, WORLD_SIZE, ... in dsl/lib/distributed, listed in
// docs/environment.md; scripts/check_environment_doc.py holds the code and
// that page to each other.) Each accessor parses its variable on first use
// and keeps the value for the process (a function-local static:
// thread-safe); the few marked "read on each call" are re-read, because
// tests or a reset to the default change them at run time. A value that
// does not parse is not an error: the accessor prints one warning naming
// the variable, the value and what it uses instead, and falls back to the
// documented default.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_RUNTIME_SETTINGS_H
#define STRATA_RUNTIME_SETTINGS_H

#include <cstdint>
#include <optional>
#include <string>

namespace strata::runtime::settings {

/// STRATA_DEBUG: 0 (quiet) to 4 (also each kernel's LLVM IR); 0 when unset
/// or not a non-negative integer.
int debugLevel();
/// STRATA_NUM_THREADS: the CPU thread pool's threads (the caller included);
/// the hardware threads when unset or not a positive integer.
unsigned numThreads();
/// STRATA_MEMORY_LIMIT ("512M", "2G", "1048576"): the CPU allocator's
/// initial limit in bytes; 0 (none) when unset or unparsable.
int64_t memoryLimit();
/// STRATA_HUGEPAGES: false when "0" (large blocks not advised as huge pages).
bool hugePages();
/// STRATA_CUDA_DRIVER: the CUDA driver library to dlopen ("libcuda.so.1").
const std::string &cudaDriverLibrary();
/// STRATA_NO_CUDA_MEMORY_CACHING: false (exact device blocks) when set to
/// 1 (true/on/yes; 0/false/off/no or unset: on; anything else warns).
bool cudaMemoryCaching();
/// STRATA_FUSE_SIBLINGS: false when "0" (--strata-fuse keeps siblings apart).
bool fuseSiblings();
/// STRATA_LOGADDEXP_NAIVE: true when "1" (kernels compute logaddexp as
/// log(exp(x) + exp(y)), which overflows; for comparisons).
bool logaddexpNaive();
/// STRATA_CACHE_DIR, else $HOME/.cache/strata; "" (no disk cache) without
/// either.
const std::string &cacheDir();
/// STRATA_CACHE_MAX_BYTES: the disk cache's bound, 1 GiB when unset or
/// unparsable. Read on each call (jit::setDiskCacheMaxBytes(0) re-reads).
int64_t cacheMaxBytes();
/// STRATA_KERNEL_CACHE_SIZE: compiled CPU kernels kept in memory (4096).
/// Read on each call (jit::setKernelCacheCapacity(0) re-reads).
int64_t kernelCacheSize();
/// STRATA_PROGRAM_CACHE_SIZE: prepared programs each DSL cache keeps (256).
int64_t programCacheSize();
/// STRATA_SEGMENT_OPS: ops requiring grad per segment of a long backward
/// (128).
int64_t segmentOps();
/// STRATA_SPLIT_VIEWS: set to 1, the evaluator takes every program's
/// structure as one whose views' offsets vary (Slice::offsetsVary) on its
/// first run, so the fuzzers test the split evaluation on every program.
bool splitViews();
/// STRATA_CHECK_TEMPLATES: set to 1, every backward that finds a gradient
/// template also builds its program the long way and fails if the two
/// differ (program key or arguments): the tests' check of the templates.
bool checkTemplates();
/// STRATA_LLVM_PASSES: the JIT's LLVM pipeline; empty when unset (the JIT's
/// own pipeline).
const std::string &llvmPasses();
/// STRATA_INJECT_COMPILE_FAILURE: set to 1 (true/on/yes; 0, false, off, no
/// or unset: off; anything else warns and is off). Read on each call.
bool injectCompileFailure();
/// STRATA_DYNAMIC_SHAPES: false for "0" (every CPU kernel compiled with its
/// sizes, strides and offsets as constants, as before issue 17); on by
/// default. Read on each call (tests flip it).
bool dynamicShapes();
/// STRATA_INJECT_NVRTC_FAILURE: set to 1 (true/on/yes; 0, false, off, no
/// or unset: off; anything else warns and is off). Read on each call.
bool injectNvrtcFailure();
/// STRATA_NVRTC_LIBRARY: the NVRTC library to dlopen; empty when unset (the
/// JIT's candidates).
const std::string &nvrtcLibrary();
/// STRATA_BLAS: the BLAS library to dlopen ("libopenblas.so.0"); empty for
/// "0" (no BLAS).
const std::string &blasLibrary();
/// STRATA_DISTRIBUTED_CHECK: false when "0". Read on each call.
bool distributedCheck();
/// STRATA_NCCL_LIBRARY: the NCCL library to dlopen ("libnccl.so.2"). Read
/// on each call.
std::string ncclLibrary();
/// STRATA_GLOO_HOSTNAME: the address gloo listens on, when set. Read on
/// each call.
std::optional<std::string> glooHostname();

/// The parsers behind the accessors, for tests: each returns the value of
/// `text` (the value of variable `name`, null when unset), or `fallback`
/// after one warning on stderr when it is set but does not parse.
namespace parse {
/// A decimal integer >= `min` (the whole text).
int64_t integer(const char *name, const char *text, int64_t min,
                int64_t fallback);
/// A byte count ("512M", "2G", "1048576": runtime::parseByteSize).
int64_t byteSize(const char *name, const char *text, int64_t fallback);
/// Unset or empty: `fallback`; 0/false/off/no: false; 1/true/on/yes: true
/// (any case); anything else warns once and gives `fallback`
/// (`STRATA_FUSE_SIBLINGS=false` used to mean true).
bool flag(const char *name, const char *text, bool fallback);
/// The warning `integer` or `byteSize` prints (without the newline).
std::string warning(const char *name, const char *text, const char *expected,
                    const std::string &fallback);
} // namespace parse

} // namespace strata::runtime::settings

#endif // STRATA_RUNTIME_SETTINGS_H
