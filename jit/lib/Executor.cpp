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
#include "Gemm.h"
#include "JitInternal.h"
#include "strata/IR/Parse.h"
#include "strata/IR/ProgramModule.h"
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/Jit.h"
#include "strata/Runtime/ThreadPool.h"
#include "strata/Target/LLVM/KernelToLLVM.h"
#include "strata/Transforms/KernelPasses.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>

using namespace strata::jit;
using namespace strata::ir;

namespace {

DType dtypeOf(mlir::Type t) {
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (t.isInteger(1))
    return DType::Bool;
  if (t.isInteger(32))
    return DType::I32;
  return DType::I64;
}

mlir::Type elementTypeOf(mlir::Type t) {
  if (auto s = t.dyn_cast<StorageType>())
    return s.getElementType();
  return t.cast<StridedTensorType>().getElementType();
}

/// An uninitialized buffer; false and `error` when allocation fails.
bool newBuffer(DType dtype, int64_t elements, JitValue &v, std::string &error) {
  v.dtype = dtype;
  v.buffer = strata::runtime::Storage::tryCreate(
      std::max<int64_t>(elements, 0) * elementSize(dtype), error);
  return v.buffer != nullptr;
}

template <typename T>
void fillTyped(void *data, int64_t n, std::string_view combiner) {
  T identity = combiner == "max"    ? std::numeric_limits<T>::lowest()
               : combiner == "min"  ? std::numeric_limits<T>::max()
               : combiner == "prod" ? T(1)
                                    : T(0);
  if constexpr (std::is_floating_point_v<T>)
    if (combiner == "max" || combiner == "min")
      identity = combiner == "max" ? -std::numeric_limits<T>::infinity()
                                   : std::numeric_limits<T>::infinity();
  std::fill_n(static_cast<T *>(data), n, identity);
}

void fillIdentity(JitValue &v, llvm::StringRef combiner) {
  strata::jit::detail::fillIdentity(v.buffer->data(), v.storageElements(),
                                    static_cast<int>(v.dtype), combiner);
}

} // namespace

void strata::jit::detail::fillIdentity(void *data, int64_t elements, int dtype,
                                       std::string_view combiner) {
  if (elements <= 0)
    return;
  switch (static_cast<DType>(dtype)) {
  case DType::F32:
    return fillTyped<float>(data, elements, combiner);
  case DType::F64:
    return fillTyped<double>(data, elements, combiner);
  case DType::I32:
    return fillTyped<int32_t>(data, elements, combiner);
  case DType::I64:
    return fillTyped<int64_t>(data, elements, combiner);
  case DType::Bool:
    return fillTyped<bool>(data, elements, combiner);
  }
}

namespace {

template <typename T>
void mergeTyped(unsigned char *into, const unsigned char *from, int64_t n,
                llvm::StringRef combiner) {
  T *a = reinterpret_cast<T *>(into);
  const T *b = reinterpret_cast<const T *>(from);
  bool isMax = combiner == "max";
  for (int64_t i = 0; i < n; ++i) {
    if (combiner == "sum") {
      a[i] += b[i];
    } else if (combiner == "prod") {
      if constexpr (std::is_same_v<T, bool>)
        a[i] = a[i] && b[i];
      else if constexpr (std::is_integral_v<T>) // wraps, as the kernels
        a[i] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(a[i]) *
                              static_cast<std::make_unsigned_t<T>>(b[i]));
      else
        a[i] *= b[i];
    } else if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a[i]) || std::isnan(b[i]))
        a[i] = a[i] + b[i];
      else
        a[i] = isMax ? std::max(a[i], b[i]) : std::min(a[i], b[i]);
    } else {
      a[i] = isMax ? std::max(a[i], b[i]) : std::min(a[i], b[i]);
    }
  }
}

/// into[i] = combine(into[i], from[i]) for the n elements of a result.
void merge(DType dtype, unsigned char *into, const unsigned char *from,
           int64_t n, llvm::StringRef combiner) {
  switch (dtype) {
  case DType::F32:
    return mergeTyped<float>(into, from, n, combiner);
  case DType::F64:
    return mergeTyped<double>(into, from, n, combiner);
  case DType::I32:
    return mergeTyped<int32_t>(into, from, n, combiner);
  case DType::I64:
    return mergeTyped<int64_t>(into, from, n, combiner);
  case DType::Bool:
    return mergeTyped<uint8_t>(into, from, n, combiner);
  }
}

/// One result buffer a kernel creates.
struct ResultSpec {
  unsigned slot;
  bool isStorage;
  DType dtype;
  int64_t elements; // tensors only
  std::vector<int64_t> sizes, strides;
  std::string combiner;
  /// Combines along the outermost loop: when that loop runs in parallel,
  /// each chunk accumulates in a private buffer, merged afterwards.
  bool outerReduced = false;
};

/// One step of a function: a kernel call or the return.
struct Step {
  // Kernel.
  KernelFn fn = nullptr; // null: the kernel has no points
  /// Keeps fn's code loaded while this plan lives (evicted or not).
  strata::jit::detail::KernelHandle kernel;
  strata::codegen::KernelLaunchInfo info;
  /// A matrix product run by BLAS instead of fn (Gemm.h).
  std::optional<strata::jit::detail::GemmCall> gemm;
  std::vector<unsigned> inputSlots;
  std::vector<ResultSpec> results;
  int destSlot = -1;
  /// The old version of dest is dead after this step and no input reads it
  /// through an overlapping, different layout: the write may go in place
  /// (for an argument slot: only when the caller donated it).
  bool inPlace = false;
  // Return.
  bool isReturn = false;
  struct Returned {
    unsigned slot;
    bool isStorage;
    std::vector<int64_t> sizes, strides;
    int64_t offset;
  };
  std::vector<Returned> returned;
};

struct ArgSpec {
  DType dtype;
  int64_t need;
};

/// A function flattened into steps over buffer slots (one per storage
/// root: arguments, then kernel results), with every kernel compiled.
struct Plan {
  std::vector<ArgSpec> args;
  std::vector<Step> steps;
  unsigned numSlots = 0;
  int numKernels = 0;
  int numBlasKernels = 0; // of them, run by BLAS
  std::string error;      // set when the function cannot run

  void build(mlir::func::FuncOp func);
  RunResult run(const std::vector<JitValue> &args,
                const RunOptions &options) const;

private:
  bool fail(mlir::Operation *op, const std::string &message) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << op->getLoc() << ": " << message;
    error = os.str();
    return false;
  }
  int slotOf(mlir::Value v) {
    auto it = slots.find(getStorageRoot(v));
    return it == slots.end() ? -1 : static_cast<int>(it->second);
  }
  bool addKernel(KernelOp kernel);
  void markDeadWrites();
  llvm::DenseMap<mlir::Value, unsigned> slots;

public:
  /// Frees what only build() needs (its map of the function's values).
  void dropBuildState() { slots.shrink_and_clear(); }
};

bool Plan::addKernel(KernelOp kernel) {
  Step step;
  for (mlir::Value in : kernel.getInputs()) {
    int slot = slotOf(in);
    if (slot < 0)
      return fail(kernel, "kernel input has no buffer");
    step.inputSlots.push_back(slot);
  }
  if (mlir::Value dest = kernel.getDest()) {
    // Reading the old buffer with the dest's own layout is elementwise safe
    // in place; another layout must address a disjoint index range.
    auto destType = dest.getType().cast<StridedTensorType>();
    step.inPlace = true;
    for (mlir::Value in : kernel.getInputs()) {
      if (slotOf(in) != slotOf(dest) || in.getType() == dest.getType())
        continue;
      auto inType = in.getType().cast<StridedTensorType>();
      if (inType.getNumElements() == 0 || destType.getNumElements() == 0)
        continue;
      auto a = strata::layout::indexRange(inType.getLayout());
      auto b = strata::layout::indexRange(destType.getLayout());
      if (!(a.second < b.first || b.second < a.first))
        step.inPlace = false;
    }
  }
  for (auto [r, result] : llvm::enumerate(kernel.getResults())) {
    ResultSpec spec;
    spec.slot = numSlots++;
    if (result.getType().isa<StorageType>()) {
      if (slotOf(kernel.getDest()) < 0)
        return fail(kernel, "destination has no buffer");
      spec.isStorage = true;
      spec.dtype = dtypeOf(elementTypeOf(result.getType()));
      spec.elements = 0;
    } else {
      auto t = result.getType().cast<StridedTensorType>();
      spec.isStorage = false;
      spec.dtype = dtypeOf(t.getElementType());
      spec.elements = t.getNumElements();
      spec.sizes.assign(t.getShape().begin(), t.getShape().end());
      spec.strides.assign(t.getStrides().begin(), t.getStrides().end());
      spec.combiner = kernel.getCombiner(r).str();
    }
    step.results.push_back(std::move(spec));
  }
  KernelOp::LoopNest nest = kernel.getLoopNest();
  unsigned numInputs = kernel.getInputs().size();
  for (size_t r = 0; r < step.results.size(); ++r)
    step.results[r].outerReduced = !step.results[r].combiner.empty() &&
                                   !nest.sizes.empty() &&
                                   nest.strides[numInputs + r][0] == 0;
  if (mlir::Value dest = kernel.getDest())
    step.destSlot = slotOf(dest);
  step.info = strata::codegen::getLaunchInfo(kernel);
  if (step.info.numPoints != 0 && strata::jit::detail::blasAvailable())
    step.gemm = strata::jit::detail::matchGemm(kernel);
  if (step.info.numPoints != 0 && !step.gemm) {
    std::string compileError;
    step.kernel = strata::jit::detail::getKernel(kernel, compileError);
    if (!step.kernel)
      return fail(kernel, compileError);
    step.fn = step.kernel->fn;
  }
  // Results become slots only now, so a kernel never reads its own results.
  for (auto [r, result] : llvm::enumerate(kernel.getResults()))
    slots[result] = step.results[r].slot;
  steps.push_back(std::move(step));
  ++numKernels;
  numBlasKernels += step.gemm.has_value();
  return true;
}

/// Keeps `inPlace` only on writes whose dest slot no later step uses.
void Plan::markDeadWrites() {
  std::vector<int> lastUse(numSlots, -1);
  for (auto [i, step] : llvm::enumerate(steps)) {
    for (unsigned slot : step.inputSlots)
      lastUse[slot] = i;
    if (step.destSlot >= 0)
      lastUse[step.destSlot] = i;
    for (const Step::Returned &r : step.returned)
      lastUse[r.slot] = i;
  }
  for (auto [i, step] : llvm::enumerate(steps))
    if (step.destSlot >= 0 && lastUse[step.destSlot] != static_cast<int>(i))
      step.inPlace = false;
}

void Plan::build(mlir::func::FuncOp func) {
  for (mlir::BlockArgument arg : func.getArguments()) {
    args.push_back(
        {dtypeOf(elementTypeOf(arg.getType())), getRootStorageSize(arg)});
    slots[arg] = numSlots++;
  }
  for (mlir::Operation &op : func.getBody().front()) {
    if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
      if (!addKernel(kernel))
        return;
      continue;
    }
    if (getViewSource(&op))
      continue;
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      Step step;
      step.isReturn = true;
      for (mlir::Value v : ret.getOperands()) {
        int slot = slotOf(v);
        if (slot < 0) {
          fail(&op, "returned value has no buffer");
          return;
        }
        Step::Returned out{static_cast<unsigned>(slot), true, {}, {}, 0};
        if (auto t = v.getType().dyn_cast<StridedTensorType>()) {
          out.isStorage = false;
          out.sizes.assign(t.getShape().begin(), t.getShape().end());
          out.strides.assign(t.getStrides().begin(), t.getStrides().end());
          out.offset = t.getOffset();
        }
        step.returned.push_back(std::move(out));
      }
      steps.push_back(std::move(step));
      markDeadWrites();
      return;
    }
    fail(&op, "'" + op.getName().getStringRef().str() +
                  "' cannot run on the JIT: run the strata pipeline and "
                  "--strata-fuse first");
    return;
  }
  error = "function has no return";
}

RunResult Plan::run(const std::vector<JitValue> &argValues,
                    const RunOptions &options) const {
  RunResult result;
  if (argValues.size() != args.size()) {
    result.error = "expected " + std::to_string(args.size()) +
                   " arguments, got " + std::to_string(argValues.size());
    return result;
  }
  std::vector<JitValue> values(numSlots);
  for (size_t i = 0; i < args.size(); ++i) {
    const JitValue &value = argValues[i];
    if (args[i].dtype != value.dtype || !value.buffer ||
        value.storageElements() < args[i].need) {
      result.error = "argument #" + std::to_string(i) + ": expected " +
                     std::to_string(args[i].need) + " elements of " +
                     dtypeName(args[i].dtype) + ", got " +
                     std::to_string(value.storageElements()) + " of " +
                     dtypeName(value.dtype);
      return result;
    }
    // The steps read an argument's dtype and buffer only (its layout is
    // compiled in): its size lists are not copied (two allocations each).
    values[i].dtype = value.dtype;
    values[i].buffer = value.buffer;
    values[i].isStorage = value.isStorage;
  }
  if (!error.empty()) {
    result.error = error;
    return result;
  }
  auto &pool = strata::runtime::ThreadPool::global();
  llvm::SmallVector<void *, 8> buffers;
  for (const Step &step : steps) {
    if (step.isReturn) {
      for (const Step::Returned &r : step.returned) {
        // (Its layout is set below: only the dtype and buffer are copied.)
        JitValue out;
        out.dtype = values[r.slot].dtype;
        out.buffer = values[r.slot].buffer;
        out.isStorage = r.isStorage;
        if (r.isStorage) {
          out.sizes = {out.storageElements()};
          out.strides = {1};
          out.offset = 0;
        } else {
          out.sizes = r.sizes;
          out.strides = r.strides;
          out.offset = r.offset;
        }
        result.values.push_back(std::move(out));
      }
      result.ok = true;
      return result;
    }
    buffers.clear();
    for (unsigned slot : step.inputSlots)
      buffers.push_back(values[slot].buffer->data());
    for (const ResultSpec &spec : step.results) {
      JitValue out;
      if (spec.isStorage) {
        // A new version of the destination's storage: the old buffer when
        // that version is dead, else a full copy of it.
        const JitValue &old = values[step.destSlot];
        bool donated =
            step.destSlot >= static_cast<int>(args.size()) ||
            (static_cast<size_t>(step.destSlot) < options.donated.size() &&
             options.donated[step.destSlot]);
        out.dtype = old.dtype;
        if (step.inPlace && donated) {
          out.buffer = old.buffer;
        } else {
          out.buffer = strata::runtime::Storage::tryCreate(old.buffer->nbytes(),
                                                           result.error);
          if (!out.buffer)
            return result;
          if (old.buffer->nbytes())
            memcpy(out.buffer->data(), old.buffer->data(),
                   old.buffer->nbytes());
        }
        out.isStorage = true;
        out.sizes = {out.storageElements()};
        out.strides = {1};
        out.offset = 0;
      } else {
        if (!newBuffer(spec.dtype, spec.elements, out, result.error))
          return result;
        out.sizes = spec.sizes;
        out.strides = spec.strides;
        if (!spec.combiner.empty() && !step.gemm) // (BLAS writes every one)
          fillIdentity(out, spec.combiner);
      }
      buffers.push_back(out.buffer->data());
      values[spec.slot] = std::move(out);
    }
    if (step.destSlot >= 0)
      buffers.push_back(values[step.destSlot].buffer->data());
    if (step.gemm) {
      auto start = std::chrono::steady_clock::now();
      strata::jit::detail::runGemm(*step.gemm, buffers[0], buffers[1],
                                   buffers[2], options.numThreads);
      if (options.kernelSeconds)
        *options.kernelSeconds += std::chrono::duration<double>(
                                      std::chrono::steady_clock::now() - start)
                                      .count();
      continue;
    }
    if (!step.fn)
      continue;
    const auto &info = step.info;
    void **bufs = buffers.data();
    bool parallel = !info.serial && options.numThreads != 1 &&
                    pool.size() > 1 && info.numPoints >= (1 << 15) &&
                    info.outerSize > 1;
    auto start = options.kernelSeconds
                     ? std::chrono::steady_clock::now()
                     : std::chrono::steady_clock::time_point();
    if (!parallel) {
      step.fn(bufs, 0, info.outerSize);
    } else if (info.outerParallel) {
      pool.parallelFor(info.outerSize, [&](int64_t begin, int64_t end) {
        step.fn(bufs, begin, end);
      });
    } else {
      // The outermost loop reduces: every chunk combines into private
      // copies of those results (identity-filled), merged in chunk order.
      size_t numInputs = step.inputSlots.size(), chunks = pool.size();
      std::vector<std::vector<void *>> chunkBuffers(
          chunks, std::vector<void *>(buffers.begin(), buffers.end()));
      std::vector<JitValue> privates;
      privates.reserve(chunks * step.results.size());
      for (size_t c = 0; c < chunks; ++c)
        for (size_t r = 0; r < step.results.size(); ++r) {
          const ResultSpec &spec = step.results[r];
          if (!spec.outerReduced)
            continue;
          privates.emplace_back();
          if (!newBuffer(spec.dtype, spec.elements, privates.back(),
                         result.error))
            return result;
          fillIdentity(privates.back(), spec.combiner);
          chunkBuffers[c][numInputs + r] = privates.back().buffer->data();
        }
      std::vector<int64_t> chunkBegin(chunks, -1);
      std::atomic<size_t> next{0};
      pool.parallelFor(info.outerSize, [&](int64_t begin, int64_t end) {
        size_t c = next++;
        chunkBegin[c] = begin;
        step.fn(chunkBuffers[c].data(), begin, end);
      });
      std::vector<size_t> order;
      for (size_t c = 0; c < chunks; ++c)
        if (chunkBegin[c] >= 0)
          order.push_back(c);
      llvm::sort(order, [&](size_t x, size_t y) {
        return chunkBegin[x] < chunkBegin[y];
      });
      for (size_t c : order)
        for (size_t r = 0; r < step.results.size(); ++r) {
          const ResultSpec &spec = step.results[r];
          if (spec.outerReduced)
            merge(spec.dtype, static_cast<unsigned char *>(bufs[numInputs + r]),
                  static_cast<unsigned char *>(chunkBuffers[c][numInputs + r]),
                  spec.elements, spec.combiner);
        }
    }
    if (options.kernelSeconds)
      *options.kernelSeconds += std::chrono::duration<double>(
                                    std::chrono::steady_clock::now() - start)
                                    .count();
  }
  result.error = "function has no return";
  return result;
}

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
  int level = strata::jit::detail::debug();
  if (level >= 1)
    pm.enableTiming();
  if (level >= 2)
    pm.enableIRPrinting(); // (the context is single-threaded)
  if (mlir::failed(pm.run(module))) {
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
  plan.build(f);
  return plan.run(args, options);
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

/// What a prepared function keeps: the plan, which is all run() needs,
/// and its source (text, or a built program). The MLIR context the function was
/// lowered in (its dialects, uniqued types and attributes: about 2.4 MB for a
/// one-kernel program) goes when fromSource returns; function() and loweredIR()
/// lower the source again into a context of their own on first use (a CUDA run,
/// a dump), which is then kept: the pipeline is deterministic, and printing
/// every lowered module when prepared cost a new batch size's step ~10%.
/// A cached CPU program costs its plan and its source (docs/design.md
/// "Memory").
struct strata::jit::PreparedFunction::Impl {
  Plan plan;
  std::string funcName;
  /// The program as given (lowered again by parse()): text, or built.
  std::string source;
  std::optional<strata::ir::Program> program;
  std::once_flag parsed;
  /// No thread pool: a program has one function, parsed on the calling
  /// thread (a pool per cached program would hold idle threads and their
  /// locks for as long as the program lives).
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Operation *func = nullptr;

  /// Lowers `source` once; `func` stays null if that fails.
  void parse() {
    std::call_once(parsed, [this] {
      context = std::make_unique<mlir::MLIRContext>(
          mlir::MLIRContext::Threading::DISABLED);
      std::string error;
      module = program ? lower(*context, *program, error)
                       : lower(*context, source, error);
      if (module)
        if (auto f = module->lookupSymbol<mlir::func::FuncOp>(funcName))
          func = f;
    });
  }
};

strata::jit::PreparedFunction::PreparedFunction(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
strata::jit::PreparedFunction::~PreparedFunction() = default;

namespace {

/// A prepared function of `module` (lowered; null and `error` when it is
/// not or does not plan).
std::unique_ptr<PreparedFunction::Impl>
planOf(mlir::OwningOpRef<mlir::ModuleOp> module, const std::string &funcName,
       std::string &error) {
  if (!module)
    return nullptr;
  auto func = module->lookupSymbol<mlir::func::FuncOp>(funcName);
  if (!func) {
    error = "no function @" + funcName;
    return nullptr;
  }
  auto impl = std::make_unique<PreparedFunction::Impl>();
  impl->funcName = funcName;
  impl->plan.build(func);
  if (!impl->plan.error.empty()) {
    error = impl->plan.error;
    return nullptr;
  }
  impl->plan.dropBuildState();
  return impl;
}

} // namespace

std::unique_ptr<PreparedFunction>
strata::jit::PreparedFunction::fromSource(const std::string &source,
                                          const std::string &funcName,
                                          std::string &error) {
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  auto impl = planOf(lower(context, source, error), funcName, error);
  if (!impl)
    return nullptr;
  impl->source = source;
  return std::unique_ptr<PreparedFunction>(
      new PreparedFunction(std::move(impl)));
}

std::unique_ptr<PreparedFunction>
strata::jit::PreparedFunction::fromProgram(strata::ir::Program program,
                                           std::string &error) {
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  auto impl = planOf(lower(context, program, error), "main", error);
  if (!impl)
    return nullptr;
  impl->program.emplace(std::move(program));
  return std::unique_ptr<PreparedFunction>(
      new PreparedFunction(std::move(impl)));
}

RunResult strata::jit::PreparedFunction::run(const std::vector<JitValue> &args,
                                             const RunOptions &options) const {
  return impl->plan.run(args, options);
}

int strata::jit::PreparedFunction::numKernels() const {
  return impl->plan.numKernels;
}

int strata::jit::PreparedFunction::numBlasKernels() const {
  return impl->plan.numBlasKernels;
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
