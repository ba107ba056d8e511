//===- Executor.cpp - run a function of views and kernels -----------------===//
//
// Walks the function once: view ops only name a layout over their root's
// buffer (types are absolute), kernels get fresh result buffers (reducing
// results filled with the combiner's identity) and run on the thread pool
// when their outermost loop is not a reduction. Result buffers come from the
// runtime allocator uninitialized. A kernel `into` a storage writes in place
// when the old version is dead (no later step reads it, it is not returned,
// it is not a non-donated argument, and no input of the kernel reads the
// old buffer through another layout that overlaps the written one);
// otherwise it writes into a copy of the old version.
// The walk is flattened once into a Plan (slots, launch info, compiled entry
// points); PreparedFunction keeps the plan so repeated runs skip parsing,
// passes, cache-key printing and hashing.
//
//===----------------------------------------------------------------------===//
#include "Combiners.h"
#include "Gemm.h"
#include "HostKernels.h"
#include "JitInternal.h"
#include "Plan.h"
#include "ReadyReturns.h"
#include "strata/IR/Parse.h"
#include "strata/IR/ProgramModule.h"
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/Jit.h"
#include "strata/Runtime/Settings.h"
#include "strata/Runtime/ThreadPool.h"
#include "strata/Target/LLVM/KernelToLLVM.h"
#include "strata/Transforms/KernelPasses.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>

using namespace strata::jit;
using namespace strata::jit::detail;
using namespace strata::ir;

namespace {

/// An uninitialized buffer; false and `error` when allocation fails.
bool newBuffer(DType dtype, int64_t elements, JitValue &v, std::string &error) {
  v.dtype = dtype;
  v.buffer = strata::runtime::Storage::tryCreate(
      std::max<int64_t>(elements, 0) * elementSize(dtype), error);
  return v.buffer != nullptr;
}

void fillResultIdentity(JitValue &v, llvm::StringRef combiner) {
  fillIdentity(v.buffer->data(), v.storageElements(), v.dtype, combiner);
}

/// Lays `v` out as its whole storage.
void asStorage(JitValue &v) {
  v.isStorage = true;
  v.sizes = {v.storageElements()};
  v.strides = {1};
  v.offset = 0;
}

/// What the CPU backend compiled for a kernel: its entry point (kept
/// loaded by its handle while the plan lives, evicted from the kernel
/// cache or not) or a BLAS call (Gemm.h).
struct CpuKernel : BackendKernel {
  KernelFn fn = nullptr;
  KernelHandle handle;
  strata::codegen::KernelLaunchInfo info;
  std::optional<GemmCall> gemm;
};

} // namespace

bool strata::jit::detail::compileCpu(KernelOp kernel, Step &step, Plan &plan,
                                     std::string &error) {
  auto k = std::make_shared<CpuKernel>();
  k->info = strata::codegen::getLaunchInfo(kernel);
  if (k->info.numPoints == 0)
    return true; // (nothing to run: its results are only filled)
  // OpenBLAS is loaded for the first matrix product only: its dlopen and
  // start-up took ~6 ms of a fresh process's first evaluation.
  k->gemm = matchGemm(kernel);
  if (k->gemm && !blasAvailable())
    k->gemm.reset();
  if (!k->gemm)
    k->fn = hostKernel(kernel); // (HostKernels.cpp: no compile)
  if (!k->gemm && !k->fn) {
    k->handle = getKernel(kernel, error);
    if (!k->handle)
      return false;
    k->fn = k->handle->fn;
  }
  plan.numBlasKernels += k->gemm.has_value();
  step.kernel = std::move(k);
  return true;
}

namespace {

/// The slots, the arguments' bound. The steps read an argument's dtype and
/// buffer only (its layout is compiled in): its size lists are not copied
/// (two allocations each).
std::vector<JitValue> bindArguments(const Plan &plan,
                                    const std::vector<JitValue> &args) {
  std::vector<JitValue> values(plan.numSlots);
  for (size_t i = 0; i < plan.args.size(); ++i) {
    values[i].dtype = args[i].dtype;
    values[i].buffer = args[i].buffer;
    values[i].isStorage = args[i].isStorage;
  }
  return values;
}

/// The return step's values: each slot's dtype and buffer, laid out as
/// the plan says.
void returnValues(const Step &step, const std::vector<JitValue> &values,
                  RunResult &result) {
  for (const Step::Returned &r : step.returned)
    result.values.push_back(returnedValue(r, values));
  result.ok = true;
}

/// A write's new version of its destination's storage: the old buffer
/// when that version is dead and the caller donated it (or it is no
/// argument), else a full copy of it. False and `error` when the copy
/// cannot be allocated.
bool newVersion(const Plan &plan, const Step &step, const RunOptions &options,
                const std::vector<JitValue> &values, JitValue &out,
                std::string &error) {
  const JitValue &old = values[step.destSlot];
  out.dtype = old.dtype;
  if (step.inPlace && plan.destinationDonated(step, options.donated)) {
    out.buffer = old.buffer;
  } else {
    out.buffer =
        strata::runtime::Storage::tryCreate(old.buffer->nbytes(), error);
    if (!out.buffer)
      return false;
    if (old.buffer->nbytes())
      memcpy(out.buffer->data(), old.buffer->data(), old.buffer->nbytes());
  }
  asStorage(out);
  return true;
}

/// Makes the step's results (uninitialized, reducing ones filled with the
/// identity as runnerFillsIdentity says) into their slots and lists the
/// call's buffers: inputs, results, dest. False and `error` when an
/// allocation fails.
bool makeResults(const Plan &plan, const Step &step, const CpuKernel *k,
                 const RunOptions &options, std::vector<JitValue> &values,
                 llvm::SmallVectorImpl<void *> &buffers, std::string &error) {
  for (unsigned slot : step.inputSlots)
    buffers.push_back(values[slot].buffer->data());
  for (const ResultSpec &spec : step.results) {
    JitValue out;
    if (spec.isStorage) {
      if (!newVersion(plan, step, options, values, out, error))
        return false;
    } else {
      if (!newBuffer(spec.dtype, spec.elements, out, error))
        return false;
      out.sizes = spec.sizes;
      out.strides = spec.strides;
      if (runnerFillsIdentity(spec.combiner, k != nullptr,
                              k && k->gemm ? ResultStart::InKernel
                                           : ResultStart::FromMemory))
        fillResultIdentity(out, spec.combiner);
    }
    buffers.push_back(out.buffer->data());
    values[spec.slot] = std::move(out);
  }
  if (step.destSlot >= 0)
    buffers.push_back(values[step.destSlot].buffer->data());
  return true;
}

/// Runs a kernel whose outermost loop reduces on the pool: every chunk
/// combines into private copies of those results (identity-filled),
/// merged into the results in chunk order, so the sum is the same for a
/// given pool size. False and `error` when a copy cannot be allocated.
bool runReducingChunks(const CpuKernel &k, const Step &step,
                       llvm::ArrayRef<void *> buffers,
                       strata::runtime::ThreadPool &pool, std::string &error) {
  const auto &info = k.info;
  size_t numInputs = step.inputSlots.size(), chunks = pool.size();
  std::vector<std::vector<void *>> chunkBuffers(
      chunks, std::vector<void *>(buffers.begin(), buffers.end()));
  std::vector<JitValue> privates;
  privates.reserve(chunks * step.results.size());
  for (size_t c = 0; c < chunks; ++c)
    for (size_t r = 0; r < step.results.size(); ++r) {
      const ResultSpec &spec = step.results[r];
      if (!info.outerReduced[r])
        continue;
      privates.emplace_back();
      if (!newBuffer(spec.dtype, spec.elements, privates.back(), error))
        return false;
      fillResultIdentity(privates.back(), spec.combiner); // (FromMemory)
      chunkBuffers[c][numInputs + r] = privates.back().buffer->data();
    }
  std::vector<int64_t> chunkBegin(chunks, -1);
  std::atomic<size_t> next{0};
  pool.parallelFor(info.outerSize, [&](int64_t begin, int64_t end) {
    size_t c = next++;
    chunkBegin[c] = begin;
    k.fn(chunkBuffers[c].data(), begin, end, info.dims.data());
  });
  std::vector<size_t> order;
  for (size_t c = 0; c < chunks; ++c)
    if (chunkBegin[c] >= 0)
      order.push_back(c);
  llvm::sort(order,
             [&](size_t x, size_t y) { return chunkBegin[x] < chunkBegin[y]; });
  for (size_t c : order)
    for (size_t r = 0; r < step.results.size(); ++r) {
      const ResultSpec &spec = step.results[r];
      if (info.outerReduced[r])
        mergePartial(
            spec.dtype, static_cast<unsigned char *>(buffers[numInputs + r]),
            static_cast<unsigned char *>(chunkBuffers[c][numInputs + r]),
            spec.elements, spec.combiner);
    }
  return true;
}

/// Calls the kernel (or BLAS) on `buffers`: as one call, in parallel
/// chunks of its outermost loop, or in reducing chunks; the time it takes
/// goes to options.kernelSeconds. False and `error` when a chunk's private
/// results cannot be allocated.
bool callKernel(const CpuKernel &k, const Step &step,
                llvm::MutableArrayRef<void *> buffers,
                const RunOptions &options, strata::runtime::ThreadPool &pool,
                std::string &error) {
  auto start = options.kernelSeconds ? std::chrono::steady_clock::now()
                                     : std::chrono::steady_clock::time_point();
  const auto &info = k.info;
  void **bufs = buffers.data();
  bool parallel = !info.serial && options.numThreads != 1 && pool.size() > 1 &&
                  info.numPoints >= (1 << 15) && info.outerSize > 1;
  if (k.gemm) {
    runGemm(*k.gemm, bufs[0], bufs[1], bufs[2], options.numThreads);
  } else if (!parallel) {
    k.fn(bufs, 0, info.outerSize, info.dims.data());
  } else if (info.outerParallel) {
    pool.parallelFor(info.outerSize, [&](int64_t begin, int64_t end) {
      k.fn(bufs, begin, end, info.dims.data());
    });
  } else if (!runReducingChunks(k, step, buffers, pool, error)) {
    return false;
  }
  if (options.kernelSeconds)
    *options.kernelSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  return true;
}

} // namespace

RunResult strata::jit::detail::runCpu(const Plan &plan,
                                      const std::vector<JitValue> &argValues,
                                      const RunOptions &options) {
  RunResult result;
  if (!plan.error.empty()) {
    result.error = plan.error;
    return result;
  }
  if (std::string e = plan.checkArguments(argValues); !e.empty()) {
    result.error = e;
    return result;
  }
  std::vector<JitValue> values = bindArguments(plan, argValues);
  auto &pool = strata::runtime::ThreadPool::global();
  llvm::SmallVector<void *, 8> buffers;
  ReadyReturns ready(plan, options.onReturnReady);
  if (!ready.report(0, values, result.error))
    return result;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &step = plan.steps[i];
    if (step.isReturn) {
      returnValues(step, values, result);
      return result;
    }
    const auto *k = static_cast<const CpuKernel *>(step.kernel.get());
    buffers.clear();
    if (!makeResults(plan, step, k, options, values, buffers, result.error) ||
        (k && !callKernel(*k, step, buffers, options, pool, result.error)) ||
        !ready.report(i + 1, values, result.error))
      return result;
  }
  result.error = "function has no return";
  return result;
}

namespace {

/// Runs the strata pipeline on `module` (made in `context`); false and
/// `error` (with the pipeline's diagnostics) on failure.
bool lowerModule(mlir::MLIRContext &context, mlir::ModuleOp module,
                 std::string &error) {
  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagOS);
  mlir::PassManager pm(&context);
  strata::buildStrataPipeline(pm, {.formKernels = true});
  int level = strata::runtime::settings::debugLevel(); // STRATA_DEBUG
  if (level >= 1)
    pm.enableTiming();
  if (level >= 2)
    pm.enableIRPrinting(); // (the context is single-threaded)
    // The program was verified when built (ProgramBuilder); the pipeline's
    // result is verified once, not after each of its passes (a sixth of
    // preparing a program, mostly the verifier walking the same ops again).
    // Builds with assertions, and STRATA_DEBUG >= 1, verify after every
    // pass, which names the pass that broke the IR.
#ifdef NDEBUG
  pm.enableVerifier(level >= 1);
#endif
  if (mlir::failed(pm.run(module)) || mlir::failed(mlir::verify(module))) {
    error = "the strata pipeline failed: " + diagOS.str();
    return false;
  }
  return true;
}

/// Parses and lowers `source`; null module and `error` on failure.
mlir::OwningOpRef<mlir::ModuleOp> lower(mlir::MLIRContext &context,
                                        const std::string &source,
                                        std::string &error) {
  loadDialects(context);
  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  llvm::SourceMgr sourceMgr;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagOS);
    module = strata::ir::parseSourceString(source, &context);
  }
  if (!module) {
    error = "cannot parse the program: " + diagOS.str();
    return {};
  }
  if (!lowerModule(context, *module, error))
    return {};
  return module;
}

/// Builds and lowers `program`; null module and `error` on failure.
mlir::OwningOpRef<mlir::ModuleOp> lower(mlir::MLIRContext &context,
                                        const strata::ir::Program &program,
                                        std::string &error) {
  loadDialects(context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      strata::ir::buildModule(program, context, error);
  if (!module || !lowerModule(context, *module, error))
    return {};
  return module;
}

} // namespace

RunResult strata::jit::runFunction(mlir::Operation *func,
                                   const std::vector<JitValue> &args,
                                   const RunOptions &options) {
  auto f = llvm::dyn_cast<mlir::func::FuncOp>(func);
  if (!f) {
    RunResult r;
    r.error = "runFunction expects a func.func";
    return r;
  }
  Plan plan;
  plan.build(f, compileCpu);
  return runCpu(plan, args, options);
}

void strata::jit::loadDialects(mlir::MLIRContext &context) {
  context.loadDialect<StrataDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect, mlir::math::MathDialect>();
}

RunResult strata::jit::runSource(const std::string &source,
                                 const std::string &funcName,
                                 const std::vector<JitValue> &args,
                                 const RunOptions &options) {
  RunResult result;
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  auto module = lower(context, source, result.error);
  if (!module)
    return result;
  auto func = module->lookupSymbol<mlir::func::FuncOp>(funcName);
  if (!func) {
    result.error = "no function @" + funcName;
    return result;
  }
  return runFunction(func, args, options);
}

/// What a prepared function keeps: a plan per backend it ran on (Plan.h;
/// all run() needs) and its source (text, or a built program). The MLIR
/// context the function was lowered in (its dialects, uniqued types and
/// attributes: about 2.4 MB for a one-kernel program) goes when the plan is
/// built; the other backend's plan, function() and loweredIR() lower the
/// source again into a context of their own on first use (the pipeline is
/// deterministic). function()'s context is then kept (a dump); a plan's is
/// not. A cached program costs its plans and its source (docs/design.md
/// "Memory").
struct strata::jit::PreparedFunction::Impl {
  std::string funcName;
  /// The program as given (lowered again on demand): text, or built.
  std::string source;
  std::optional<strata::ir::Program> program;
  int numKernels = 0;
  /// Of them, run by BLAS in the CPU plan it was prepared with (0 when
  /// prepared for CUDA).
  int numBlasKernels = 0;
  /// The plans, by backend (Backend::CPU, Backend::CUDA); the one the
  /// program was prepared for is built by fromProgram/fromSource.
  struct Lazy {
    std::once_flag built;
    std::unique_ptr<Plan> plan;
  } plans[2];
  std::once_flag parsed;
  /// No thread pool: a program has one function, parsed on the calling
  /// thread (a pool per cached program would hold idle threads and their
  /// locks for as long as the program lives).
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Operation *func = nullptr;

  /// The source lowered into `context`; null and `error` on failure.
  mlir::OwningOpRef<mlir::ModuleOp> lowered(mlir::MLIRContext &context,
                                            std::string &error) const {
    return program ? lower(context, *program, error)
                   : lower(context, source, error);
  }
  /// Lowers the source once; `func` stays null if that fails.
  void parse() {
    std::call_once(parsed, [this] {
      context = std::make_unique<mlir::MLIRContext>(
          mlir::MLIRContext::Threading::DISABLED);
      std::string error;
      module = lowered(*context, error);
      if (module)
        if (auto f = module->lookupSymbol<mlir::func::FuncOp>(funcName))
          func = f;
    });
  }
  /// Builds `backend`'s plan from `func` (its error in the plan).
  void build(Backend backend, mlir::func::FuncOp func) {
    auto plan = std::make_unique<Plan>();
    plan->build(func, backend == Backend::CPU ? compileCpu : compileCuda);
    plans[static_cast<int>(backend)].plan = std::move(plan);
  }
  /// `backend`'s plan, built from a fresh lowering on first use.
  const Plan &planFor(Backend backend) {
    Lazy &lazy = plans[static_cast<int>(backend)];
    std::call_once(lazy.built, [&] {
      if (lazy.plan)
        return; // (built when prepared)
      mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
      std::string error;
      auto module = lowered(context, error);
      auto f = module ? module->lookupSymbol<mlir::func::FuncOp>(funcName)
                      : mlir::func::FuncOp();
      if (f) {
        build(backend, f);
        return;
      }
      lazy.plan = std::make_unique<Plan>();
      lazy.plan->error = module ? "no function @" + funcName : error;
    });
    return *lazy.plan;
  }
};

strata::jit::PreparedFunction::PreparedFunction(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
strata::jit::PreparedFunction::~PreparedFunction() = default;

namespace {

/// A prepared function of `module` (lowered), its plan for `backend` built;
/// null and `error` when it does not lower or plan.
std::unique_ptr<PreparedFunction::Impl>
planOf(mlir::OwningOpRef<mlir::ModuleOp> module, const std::string &funcName,
       Backend backend, std::string &error) {
  if (!module)
    return nullptr;
  auto func = module->lookupSymbol<mlir::func::FuncOp>(funcName);
  if (!func) {
    error = "no function @" + funcName;
    return nullptr;
  }
  auto impl = std::make_unique<PreparedFunction::Impl>();
  impl->funcName = funcName;
  func.walk([&](KernelOp) { ++impl->numKernels; });
  impl->build(backend, func);
  const Plan &plan = *impl->plans[static_cast<int>(backend)].plan;
  if (!plan.error.empty()) {
    error = plan.error;
    return nullptr;
  }
  impl->numBlasKernels = plan.numBlasKernels;
  return impl;
}

} // namespace

std::unique_ptr<PreparedFunction>
strata::jit::PreparedFunction::fromSource(const std::string &source,
                                          const std::string &funcName,
                                          std::string &error) {
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  auto impl =
      planOf(lower(context, source, error), funcName, Backend::CPU, error);
  if (!impl)
    return nullptr;
  impl->source = source;
  return std::unique_ptr<PreparedFunction>(
      new PreparedFunction(std::move(impl)));
}

std::unique_ptr<PreparedFunction> strata::jit::PreparedFunction::fromProgram(
    strata::ir::Program program, std::string &error, Backend backend) {
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  auto impl = planOf(lower(context, program, error), "main", backend, error);
  if (!impl)
    return nullptr;
  impl->program.emplace(std::move(program));
  return std::unique_ptr<PreparedFunction>(
      new PreparedFunction(std::move(impl)));
}

RunResult strata::jit::PreparedFunction::run(const std::vector<JitValue> &args,
                                             const RunOptions &options) const {
  if (!options.cuda)
    return runCpu(impl->planFor(Backend::CPU), args, options);
  CudaRunOptions cuda;
  cuda.deviceResults = true;
  cuda.donated = options.donated;
  return runCuda(impl->planFor(Backend::CUDA), args, cuda);
}

int strata::jit::PreparedFunction::numKernels() const {
  return impl->numKernels;
}

int strata::jit::PreparedFunction::numBlasKernels() const {
  return impl->numBlasKernels;
}

mlir::Operation *strata::jit::PreparedFunction::function() const {
  impl->parse();
  if (!impl->func)
    llvm::report_fatal_error("strata: a prepared function's source does not "
                             "lower again (the pipeline is not deterministic)");
  return impl->func;
}

std::string strata::jit::PreparedFunction::loweredIR() const {
  function();
  std::string text;
  llvm::raw_string_ostream os(text);
  impl->module->print(os);
  return os.str();
}
