//===- CudaExecutor.cpp - the CUDA backend of a plan ---------------------===//
//
// Runs a Plan (Plan.h; the CPU backend is Executor.cpp): one buffer slot
// per storage root (arguments, then kernel results); a kernel gets fresh
// device results from the caching allocator; a kernel `into` a storage
// writes in place when the plan says the old version is dead and the
// caller donated it, else into a device copy. Kernels are compiled (NVRTC)
// and their modules loaded once, when the plan is built: a launch walks no
// IR and prints nothing. A module is shared by every kernel with its PTX
// (kernels that differ only in their outermost size: CudaCompile.cpp);
// each plan keeps its own launch shape and outermost size. Kernels and
// copies run on the driver's stream; downloading the results synchronizes.
// A kernel with no points is neither compiled nor launched: a reduction's
// results are left at the combiner's identity (runnerFillsIdentity, the
// policy the CPU runner follows too: CUDA kernels start at the identity).
//
//===----------------------------------------------------------------------===//
#include "Combiners.h"
#include "JitInternal.h"
#include "Plan.h"
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/CudaJit.h"
#include "strata/Runtime/CudaAllocator.h"
#include "strata/Runtime/CudaDriver.h"
#include "strata/Runtime/LruCache.h"
#include "strata/Target/CUDA/KernelToCUDA.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

using namespace strata::jit;
using namespace strata::jit::detail;
using namespace strata::ir;
namespace rt = strata::runtime::cuda;
using strata::codegen::CudaKernel;

namespace {

/// A device block, back to the caching allocator when the last user goes.
struct DeviceBuffer {
  rt::DevicePtr ptr = 0;
  int64_t elements = 0;
  DType dtype = DType::F32;
  /// Set for an argument that already lives on the device: not ours.
  strata::runtime::StoragePtr borrowed;
  ~DeviceBuffer() {
    if (ptr && !borrowed)
      rt::Allocator::get().release(ptr);
  }
};
using Buffer = std::shared_ptr<DeviceBuffer>;

std::string newBuffer(DType dtype, int64_t elements, Buffer &out) {
  out = std::make_shared<DeviceBuffer>();
  out->elements = std::max<int64_t>(elements, 0);
  out->dtype = dtype;
  return rt::Allocator::get().allocate(out->elements * elementSize(dtype),
                                       out->ptr);
}

/// A loaded module and its kernel's entry points. Unloaded when the last
/// holder lets go: the module cache, or a plan that launches it.
struct Loaded {
  rt::Driver *driver = nullptr;
  void *module = nullptr;
  void *fn = nullptr, *finish = nullptr;
  ~Loaded() {
    if (module)
      (void)driver->unloadModule(module); // nobody to tell of a failure
  }
};
using LoadedPtr = std::shared_ptr<const Loaded>;

/// The most modules kept loaded (the PTX cache's bound).
constexpr int64_t kMaxLoadedModules = 4096;

/// Modules loaded in this process, by the BLAKE3 digest of their PTX (the
/// text itself is tens of KB), least recently used evicted: an evicted
/// module is unloaded once no plan holds it (docs/design.md "Memory").
/// `info` receives the kernel's launch shape at its sizes.
std::string loadKernel(rt::Driver &driver, KernelOp kernel, CudaKernel &info,
                       LoadedPtr &out) {
  static std::mutex mutex;
  // Never destroyed: unloading at exit could outlive the driver's context.
  static auto *modules =
      new strata::runtime::LruCache<std::string, LoadedPtr>(kMaxLoadedModules);
  std::string arch = "sm_" + std::to_string(driver.computeCapability());
  auto loaded = std::make_shared<Loaded>();
  std::string ptx, error;
  if (!kernelPTX(kernel, arch, info, ptx, error))
    return error;
  auto hash = llvm::BLAKE3::hash<32>(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(ptx.data()), ptx.size()));
  std::string digest(hash.begin(), hash.end());
  std::vector<LoadedPtr> evicted; // unloaded after the lock
  std::lock_guard<std::mutex> lock(mutex);
  if (LoadedPtr *found = modules->find(digest)) {
    out = *found;
    return "";
  }
  loaded->driver = &driver;
  if (!(error = driver.loadModule(ptx, loaded->module)).empty() ||
      !(error = driver.getFunction(loaded->module, info.name, loaded->fn))
           .empty())
    return error;
  if (info.splits > 1 && !(error = driver.getFunction(
                               loaded->module, info.finishName, loaded->finish))
                              .empty())
    return error;
  out = loaded;
  modules->insert(digest, std::move(loaded), &evicted);
  return "";
}

/// What the CUDA backend compiled for a kernel: its loaded module (kept
/// loaded while the plan lives; none when the kernel has no points), entry
/// points, and its launch shape at this plan's sizes (no source).
struct CudaCompiled : BackendKernel {
  LoadedPtr loaded;
  CudaKernel info;
};

/// Runs a plan's steps on the device (Plan.h).
class Runner {
public:
  Runner(rt::Driver &driver, const Plan &plan) : driver(driver), plan(plan) {}
  std::string run(const std::vector<JitValue> &args,
                  const CudaRunOptions &options, RunResult &result);

private:
  std::string runStep(const Step &step, bool donated, double *seconds);

  rt::Driver &driver;
  const Plan &plan;
  std::vector<Buffer> slots;
  void *events[2] = {nullptr, nullptr};
};

std::string Runner::runStep(const Step &step, bool donated, double *seconds) {
  const auto &compiled = static_cast<const CudaCompiled &>(*step.kernel);
  const CudaKernel &info = compiled.info;
  std::string e;
  std::vector<rt::DevicePtr> ptrs;
  for (unsigned in : step.inputSlots) {
    if (!slots[in])
      return "kernel input has no buffer";
    ptrs.push_back(slots[in]->ptr);
  }
  if (step.destSlot >= 0 && !slots[step.destSlot])
    return "destination has no buffer";
  std::vector<Buffer> results, partials;
  for (const ResultSpec &spec : step.results) {
    Buffer out;
    if (spec.isStorage) {
      // A new version of the destination's storage: the old buffer when
      // that version is dead (as on the CPU), else a copy of it.
      const Buffer &old = slots[step.destSlot];
      if (step.inPlace && donated) {
        out = old;
      } else if (!(e = newBuffer(spec.dtype, old->elements, out)).empty() ||
                 !(e = driver.copyOnDevice(out->ptr, old->ptr,
                                           old->elements *
                                               elementSize(spec.dtype)))
                      .empty()) {
        return e;
      }
    } else {
      if (!(e = newBuffer(spec.dtype, spec.elements, out)).empty())
        return e;
      if (runnerFillsIdentity(spec.combiner, info.numPoints > 0,
                              ResultStart::InKernel) &&
          out->elements) {
        std::vector<unsigned char> host(out->elements *
                                        elementSize(spec.dtype));
        fillIdentity(host.data(), out->elements, spec.dtype, spec.combiner);
        if (!(e = driver.copyToDevice(out->ptr, host.data(), host.size()))
                 .empty() ||
            !(e = driver.synchronize()).empty())
          return e;
      }
    }
    ptrs.push_back(out->ptr);
    results.push_back(out);
    if (info.splits > 1 && info.numPoints > 0) {
      Buffer part;
      if (!(e = newBuffer(spec.dtype, info.outputs * info.splits, part))
               .empty())
        return e;
      partials.push_back(part);
    }
  }
  if (step.destSlot >= 0)
    ptrs.push_back(slots[step.destSlot]->ptr);
  for (const Buffer &p : partials)
    ptrs.push_back(p->ptr);
  if (info.numPoints > 0) {
    const Loaded &loaded = *compiled.loaded;
    long long outerSize = info.outerSize; // (the entries' `n0`)
    // A dynamic kernel's inner sizes, strides and offsets (after n0).
    std::vector<long long> dims(info.dimArgs.begin(), info.dimArgs.end());
    std::vector<void *> params;
    for (rt::DevicePtr &p : ptrs)
      params.push_back(&p);
    if (info.outerArg)
      params.push_back(&outerSize);
    for (long long &d : dims)
      params.push_back(&d);
    if (seconds && !(e = driver.recordEvent(events[0])).empty())
      return e;
    if (!(e = driver.launch(loaded.fn, info.gridX, info.blockX, info.blockY,
                            params.data()))
             .empty())
      return e;
    if (info.splits > 1) {
      std::vector<rt::DevicePtr> finishPtrs;
      for (const Buffer &p : partials)
        finishPtrs.push_back(p->ptr);
      for (const Buffer &r : results)
        finishPtrs.push_back(r->ptr);
      std::vector<void *> finishParams;
      for (rt::DevicePtr &p : finishPtrs)
        finishParams.push_back(&p);
      if (info.outerArg)
        finishParams.push_back(&outerSize);
      for (long long &d : dims) // (the finish takes the entry's tail)
        finishParams.push_back(&d);
      if (!(e = driver.launch(loaded.finish, info.finishGrid, info.finishBlock,
                              1, finishParams.data()))
               .empty())
        return e;
    }
    if (seconds) {
      float ms = 0;
      if (!(e = driver.recordEvent(events[1])).empty() ||
          !(e = driver.elapsedMs(events[0], events[1], ms)).empty())
        return e;
      *seconds += ms * 1e-3;
    }
  }
  for (size_t r = 0; r < step.results.size(); ++r)
    slots[step.results[r].slot] = results[r];
  return "";
}

std::string Runner::run(const std::vector<JitValue> &args,
                        const CudaRunOptions &options, RunResult &result) {
  std::string e;
  // Two timing events for the whole process (created on first use).
  static void *shared[2] = {nullptr, nullptr};
  static std::string eventError = [&] {
    std::string err = driver.createEvent(shared[0]);
    return err.empty() ? driver.createEvent(shared[1]) : err;
  }();
  if (options.kernelSeconds && !eventError.empty())
    return eventError;
  events[0] = shared[0];
  events[1] = shared[1];
  if (!plan.error.empty())
    return plan.error;
  if (!(e = plan.checkArguments(args)).empty())
    return e;
  std::vector<Buffer> argSlots(plan.numSlots);
  for (size_t i = 0; i < args.size(); ++i) {
    const JitValue &value = args[i];
    Buffer b;
    if (value.buffer->device() == strata::runtime::DeviceKind::CUDA) {
      b = std::make_shared<DeviceBuffer>();
      b->ptr = reinterpret_cast<rt::DevicePtr>(value.buffer->data());
      b->elements = value.storageElements();
      b->dtype = value.dtype;
      b->borrowed = value.buffer;
      argSlots[i] = b;
      continue;
    }
    if (!(e = newBuffer(value.dtype, value.storageElements(), b)).empty() ||
        !(e = driver.copyToDevice(b->ptr, value.buffer->data(),
                                  value.buffer->size()))
             .empty())
      return e;
    argSlots[i] = b;
  }
  const Step *ret = nullptr;
  int reps = std::max(1, options.repetitions);
  for (int rep = 0; rep < reps; ++rep) {
    slots = argSlots;
    double seconds = 0;
    for (const Step &step : plan.steps) {
      if (step.isReturn) {
        ret = &step;
        break;
      }
      // A donated argument may be written in place (its buffer lies on
      // the device, and only on the last repetition: the others must
      // leave the inputs as they were); the kernels' own results may be.
      bool own = step.destSlot >= static_cast<int>(plan.args.size());
      bool donated = own || (rep == reps - 1 &&
                             plan.destinationDonated(step, options.donated) &&
                             argSlots[step.destSlot]->borrowed);
      if (!(e = runStep(step, donated,
                        options.kernelSeconds ? &seconds : nullptr))
               .empty())
        return e;
    }
    if (options.kernelSeconds)
      options.kernelSeconds->push_back(seconds);
  }
  if (!ret)
    return "function has no return";
  // Download every returned storage once; views share it.
  llvm::DenseMap<DeviceBuffer *, decltype(JitValue::buffer)> host;
  for (const Step::Returned &r : ret->returned) {
    Buffer &b = slots[r.slot];
    if (!b)
      return "returned value has no buffer";
    auto &h = host[b.get()];
    if (!h && options.deviceResults) {
      // Keep the block on the device: the storage owns the buffer.
      h = b->borrowed ? b->borrowed
                      : strata::runtime::Storage::wrapExternal(
                            reinterpret_cast<void *>(b->ptr),
                            b->elements * elementSize(b->dtype),
                            strata::runtime::DeviceKind::CUDA, [b] {});
    } else if (!h) {
      h = strata::runtime::Storage::create(b->elements * elementSize(b->dtype));
      if (!(e = driver.copyToHost(h->data(), b->ptr, h->size())).empty())
        return e;
    }
    JitValue out;
    out.dtype = b->dtype;
    out.buffer = h;
    if (!r.isStorage) {
      out.sizes = r.sizes;
      out.strides = r.strides;
      out.offset = r.offset;
    } else {
      out.isStorage = true;
      out.sizes = {b->elements};
      out.strides = {1};
    }
    result.values.push_back(std::move(out));
  }
  return options.deviceResults ? "" : driver.synchronize();
}

} // namespace

std::string strata::jit::cudaUnavailableReason() {
  std::string error;
  rt::Driver::get(error);
  return error;
}

bool strata::jit::detail::compileCuda(KernelOp kernel, Step &step, Plan &,
                                      std::string &error) {
  rt::Driver *driver = rt::Driver::get(error);
  if (!driver)
    return false;
  auto compiled = std::make_shared<CudaCompiled>();
  compiled->info.numPoints = 1;
  for (int64_t size : kernel.getLoopNest().sizes)
    compiled->info.numPoints *= size;
  if (compiled->info.numPoints > 0) {
    if (!(error = loadKernel(*driver, kernel, compiled->info, compiled->loaded))
             .empty())
      return false;
    compiled->info.source.clear(); // (the plan keeps only the launch)
  }
  step.kernel = std::move(compiled);
  return true;
}

RunResult strata::jit::detail::runCuda(const Plan &plan,
                                       const std::vector<JitValue> &args,
                                       const CudaRunOptions &options) {
  RunResult result;
  rt::Driver *driver = rt::Driver::get(result.error);
  if (!driver)
    return result;
  Runner runner(*driver, plan);
  result.error = runner.run(args, options, result);
  result.ok = result.error.empty();
  if (!result.ok)
    result.values.clear();
  return result;
}

RunResult strata::jit::runFunctionCuda(mlir::Operation *func,
                                       const std::vector<JitValue> &args,
                                       const CudaRunOptions &options) {
  RunResult result;
  if (!rt::Driver::get(result.error))
    return result;
  auto f = llvm::dyn_cast<mlir::func::FuncOp>(func);
  if (!f || f.isExternal()) {
    result.error = "runFunctionCuda needs a func.func with a body";
    return result;
  }
  Plan plan;
  plan.build(f, compileCuda);
  return runCuda(plan, args, options);
}
