//===- Jit.h - CPU JIT: compile kernels, run functions ----------*- C++ -*-===//
//
// Runs a func.func of strata views and strata.kernel ops (after
// buildStrataPipeline with formKernels) on host buffers. Kernels are
// compiled to native code through LLVM (ORC LLJIT) and cached in memory and
// on disk ($STRATA_CACHE_DIR, default ~/.cache/strata). No MLIR or LLVM in
// this header.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_JIT_JIT_H
#define STRATA_JIT_JIT_H

#include "strata/IR/ProgramBuilder.h"
#include "strata/Runtime/DType.h"
#include "strata/Runtime/Storage.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class Operation;
class MLIRContext;
} // namespace mlir

namespace strata::jit {

/// The compiler version that is part of every kernel-cache key.
const char *compilerVersion();

/// The element types (strata/Runtime/DType.h).
using strata::DType;
/// Bytes per element (Bool: 1).
using strata::elementSize;
/// The element at `p` (one element of type `t`) as a double.
double loadElement(const unsigned char *p, DType t);
/// Stores `v` at `p` converted as strata.cast does: float to integer
/// truncates toward zero (NaN gives 0), anything to bool is `v != 0`.
void storeElement(unsigned char *p, DType t, double v);
/// "f32", "f64", "i32", "i64", "bool".
inline const char *dtypeName(DType t) { return runtime::dtypeInfo(t).name; }

/// A host value: a storage (flat buffer) or a tensor (a layout over a
/// buffer it may share). Same shape as reference::RefValue, with native
/// element bytes instead of doubles. The buffer is a runtime::Storage shared
/// with its owner (e.g. a strata::Tensor), so values pass in and out of the
/// JIT without copies.
struct JitValue {
  DType dtype = DType::F32;
  /// Raw elements of the storage root (bool: one byte 0/1 each); its
  /// element count is buffer->nbytes() / elementSize(dtype).
  runtime::StoragePtr buffer;
  layout::Shape sizes, strides;
  int64_t offset = 0;
  bool isStorage = false;

  int64_t numel() const;
  int64_t storageElements() const;
  /// Storage element `i` as a double.
  double storageAt(int64_t i) const;
  void setStorageAt(int64_t i, double v);
  /// Every element, row-major over `sizes` (a storage: all its elements).
  std::vector<double> elements() const;

  /// A fresh contiguous tensor holding `rowMajor` (converted to `dtype`).
  static JitValue fresh(DType dtype, std::vector<int64_t> sizes,
                        const std::vector<double> &rowMajor);
  /// A storage of `data.size()` elements.
  static JitValue storage(DType dtype, const std::vector<double> &data);
  /// A tensor with the given layout over a buffer of `storageSize` elements
  /// holding `storageData` (storage order).
  static JitValue strided(DType dtype, std::vector<int64_t> sizes,
                          std::vector<int64_t> strides, int64_t offset,
                          const std::vector<double> &storageData);
};

/// What happened in the kernel cache since the last resetCacheStats().
struct CacheStats {
  int64_t compiles = 0;      ///< kernels compiled by LLVM
  int64_t memoryHits = 0;    ///< found compiled in this process
  int64_t diskHits = 0;      ///< loaded from the disk cache
  int64_t diskCorrupt = 0;   ///< disk entries rejected (then recompiled)
  int64_t evictions = 0;     ///< kernels dropped from the memory cache
  double compileSeconds = 0; ///< total LLVM time of the compiles
};
CacheStats cacheStats();
void resetCacheStats();
/// Forgets every compiled kernel of this process (as a new process would).
/// A kernel's code is unloaded once no prepared or running function uses it.
void clearMemoryCache();
/// The most kernels the memory cache keeps (least recently used evicted;
/// an evicted kernel is unloaded once no prepared or running function uses
/// it, and recompiled or loaded from disk when asked for again). Default:
/// $STRATA_KERNEL_CACHE_SIZE, else 4096. n <= 0 restores the default.
void setKernelCacheCapacity(int64_t n);
int64_t kernelCacheCapacity();
/// Kernels whose code is loaded in this process now (cached, or evicted but
/// still used), and the total size of their object files.
int64_t loadedKernels();
int64_t loadedKernelBytes();
/// Overrides $STRATA_CACHE_DIR; "" disables the disk cache. The directory
/// (CPU objects and PTX) is made mode 0700; one owned by another user or
/// writable by group or others is not used (one warning on stderr).
void setCacheDir(const std::string &dir);
/// The disk cache directory in use ("" when disabled).
std::string cacheDir();
/// The most bytes the disk cache directory keeps (least recently used
/// entries removed beyond it). Default: $STRATA_CACHE_MAX_BYTES ("512M",
/// "2G"), else 1 GiB. n <= 0 restores the default.
void setDiskCacheMaxBytes(int64_t n);
int64_t diskCacheMaxBytes();

struct RunOptions {
  /// 0: the global pool (STRATA_NUM_THREADS, default all cores); 1: serial.
  int numThreads = 0;
  /// When set, the wall time spent inside kernel calls (not allocating or
  /// filling result buffers) is added to it, in seconds.
  double *kernelSeconds = nullptr;
  /// Arguments whose buffers the caller donates: argument i may be updated
  /// in place when true (missing entries: false).
  ///
  /// The write contract. A `strata.write` (a kernel `into` a storage) makes
  /// a new version of its storage root. The executor writes it IN PLACE in
  /// the old version's buffer when that version is dead: no later step of
  /// the function reads it or returns it, and it is not an argument the
  /// caller keeps (a non-donated argument is never modified). Otherwise the
  /// new version is a copy of the old buffer with the write applied. So a
  /// caller that wants an in-place op on its own buffer (the DSL's `add_`)
  /// donates the argument and returns the final version: the returned
  /// buffer is then the argument's own buffer unless the function still
  /// read the old version after the write, in which case the caller copies
  /// the returned buffer back into its storage.
  std::vector<bool> donated;
  /// PreparedFunction::run only: run on the CUDA backend (the same plan's
  /// steps, its kernels compiled by NVRTC on first use), results left on
  /// the device (CUDA storages). numThreads and kernelSeconds do not apply.
  bool cuda = false;
  /// CPU only: called on the running thread with returned value `index`
  /// as soon as it is final (after the last kernel that makes it, before
  /// the kernels after that one run; an argument returned: before the
  /// first), once per returned value. The buffer is never written again by
  /// the run. Returning false stops the run (RunResult::error says so).
  /// Autograd reports a leaf's gradient ready with it (docs/design.md,
  /// "Hooks after accumulation").
  std::function<bool(size_t index, const JitValue &value)> onReturnReady;
};

/// The device a program is prepared for first (the other's plan is built
/// when first run there).
enum class Backend { CPU, CUDA };

struct RunResult {
  bool ok = false;
  std::string error;
  std::vector<JitValue> values;
};

/// Runs `func` (a func.func after the pipeline, fuse and coalesce) on
/// `args`: a storage for a storage argument; for a tensor argument a value
/// whose buffer holds at least the argument type's required storage (its
/// layout is the type's, absolute in that buffer). Result buffers come from
/// the runtime allocator uninitialized (every element is written by its
/// kernel). An allocation failure is an error result, never a crash.
RunResult runFunction(mlir::Operation *func, const std::vector<JitValue> &args,
                      const RunOptions &options = {});

/// Compiles (or finds in the caches) one strata.kernel; false and `error`
/// on failure. For tests and benchmarks: warms the cache.
bool compileKernel(mlir::Operation *kernel, std::string &error);

/// The LLVM IR text of one kernel; `optimized` runs the JIT's O3 pipeline
/// for the host first.
std::string kernelLLVMIR(mlir::Operation *kernel, bool optimized,
                         std::string &error);

/// Registers the dialects the JIT's input IR uses (strata, func, arith,
/// math) in `context`.
void loadDialects(mlir::MLIRContext &context);

/// Parses `source`, runs buildStrataPipeline with formKernels, and runs
/// function `funcName` on `args`.
RunResult runSource(const std::string &source, const std::string &funcName,
                    const std::vector<JitValue> &args,
                    const RunOptions &options = {});

/// A function prepared once to run many times: the source parsed and lowered
/// (buildStrataPipeline with formKernels), every kernel compiled (or
/// found in the caches) and bound, and the walk over the function's ops
/// flattened into a list of steps. run() then costs a few allocations per
/// kernel and no hashing, printing, parsing or pass running (runSource does
/// all of these on every call). It keeps the plan and the lowered IR as
/// text, not an MLIR context (a few KB instead of ~2.4 MB); function()
/// parses the text back on first use. run() and function() may be called
/// from several threads.
class PreparedFunction {
public:
  ~PreparedFunction();
  /// Null with `error` set when the source does not parse, the pipeline
  /// fails, the function is missing, or a kernel does not compile.
  static std::unique_ptr<PreparedFunction>
  fromSource(const std::string &source, const std::string &funcName,
             std::string &error);
  /// The prepared @main of a built program (kept, to lower again for
  /// function() and loweredIR()); null with `error` set as fromSource.
  static std::unique_ptr<PreparedFunction>
  fromProgram(ir::Program program, std::string &error,
              Backend backend = Backend::CPU);
  /// Same result as runSource(source, funcName, args, options).
  RunResult run(const std::vector<JitValue> &args,
                const RunOptions &options = {}) const;
  /// Number of strata.kernel ops the function runs.
  int numKernels() const;
  /// Of those, the matrix products a tuned BLAS runs (OpenBLAS loaded at
  /// run time; STRATA_BLAS in docs/environment.md) instead of compiled code.
  int numBlasKernels() const;
  /// The lowered func.func (for runFunctionCuda; owned by this object,
  /// parsed from the kept text on the first call, then kept).
  mlir::Operation *function() const;
  /// The function's IR after the pipeline (what run() executes).
  std::string loweredIR() const;

  struct Impl;

private:
  explicit PreparedFunction(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace strata::jit

#endif // STRATA_JIT_JIT_H
