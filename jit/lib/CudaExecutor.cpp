//===- CudaExecutor.cpp - run a function of views and kernels on a GPU ----===//
//
// Mirrors Executor.cpp: one buffer slot per storage root (arguments, then
// kernel results); view ops only name layouts; a kernel gets fresh device
// results from the caching allocator; a kernel `into` a storage first copies
// the old version on the device. Kernels and copies run on the driver's
// stream; downloading the results synchronizes. A reduction with no points
// leaves its results at the combiner's identity (filled as the CPU does).
//
//===----------------------------------------------------------------------===//
#include "JitInternal.h"
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/CudaJit.h"
#include "strata/Runtime/CudaAllocator.h"
#include "strata/Runtime/CudaDriver.h"
#include "strata/Target/CUDA/KernelToCUDA.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <mutex>
#include <unordered_map>

using namespace strata::jit;
using namespace strata::ir;
namespace rt = strata::runtime::cuda;
using strata::codegen::CudaKernel;

namespace {

DType dtypeOf(mlir::Type t) {
  if (auto s = t.dyn_cast<StorageType>())
    t = s.getElementType();
  else
    t = t.cast<StridedTensorType>().getElementType();
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (t.isInteger(1))
    return DType::Bool;
  return t.isInteger(32) ? DType::I32 : DType::I64;
}

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

struct Loaded {
  CudaKernel info;
  void *fn = nullptr, *finish = nullptr;
};

/// Modules loaded in this process, by the BLAKE3 digest of their PTX (the
/// text itself is tens of KB). A loaded module stays loaded: the map grows
/// with the distinct kernels the process runs on the GPU (docs/design.md
/// "Memory").
std::string loadKernel(rt::Driver &driver, KernelOp kernel, Loaded &out) {
  static std::mutex mutex;
  static std::unordered_map<std::string, Loaded> modules;
  std::string arch = "sm_" + std::to_string(driver.computeCapability());
  std::string ptx, error;
  if (!kernelPTX(kernel, arch, out.info, ptx, error))
    return error;
  auto hash = llvm::BLAKE3::hash<32>(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(ptx.data()), ptx.size()));
  std::string digest(hash.begin(), hash.end());
  std::lock_guard<std::mutex> lock(mutex);
  auto it = modules.find(digest);
  if (it != modules.end()) {
    out = it->second;
    return "";
  }
  void *module = nullptr;
  if (!(error = driver.loadModule(ptx, module)).empty() ||
      !(error = driver.getFunction(module, out.info.name, out.fn)).empty())
    return error;
  if (out.info.splits > 1 &&
      !(error = driver.getFunction(module, out.info.finishName, out.finish))
           .empty())
    return error;
  modules.emplace(std::move(digest), out);
  return "";
}

class Runner {
public:
  Runner(rt::Driver &driver, mlir::func::FuncOp func)
      : driver(driver), func(func) {}
  std::string run(const std::vector<JitValue> &args,
                  const CudaRunOptions &options, RunResult &result);

private:
  std::string runKernel(KernelOp kernel, double *seconds);
  Buffer &slot(mlir::Value v) { return slots[getStorageRoot(v)]; }

  rt::Driver &driver;
  mlir::func::FuncOp func;
  llvm::DenseMap<mlir::Value, Buffer> slots;
  void *events[2] = {nullptr, nullptr};
};

std::string Runner::runKernel(KernelOp kernel, double *seconds) {
  Loaded loaded;
  std::string e = loadKernel(driver, kernel, loaded);
  if (!e.empty())
    return e;
  const CudaKernel &info = loaded.info;
  std::vector<rt::DevicePtr> ptrs;
  for (mlir::Value in : kernel.getInputs()) {
    if (!slot(in))
      return "kernel input has no buffer";
    ptrs.push_back(slot(in)->ptr);
  }
  if (kernel.getDest() && !slot(kernel.getDest()))
    return "destination has no buffer";
  std::vector<Buffer> results, partials;
  for (auto [r, value] : llvm::enumerate(kernel.getResults())) {
    Buffer out;
    DType dtype = dtypeOf(value.getType());
    if (value.getType().isa<StorageType>()) {
      const Buffer &old = slot(kernel.getDest());
      if (!(e = newBuffer(dtype, old->elements, out)).empty() ||
          !(e = driver.copyOnDevice(out->ptr, old->ptr,
                                    old->elements * elementSize(dtype)))
               .empty())
        return e;
    } else {
      auto t = value.getType().cast<StridedTensorType>();
      if (!(e = newBuffer(dtype, t.getNumElements(), out)).empty())
        return e;
      llvm::StringRef combiner = kernel.getCombiner(r);
      if (!combiner.empty() && info.numPoints == 0 && out->elements) {
        std::vector<unsigned char> host(out->elements * elementSize(dtype));
        strata::jit::detail::fillIdentity(host.data(), out->elements,
                                          static_cast<int>(dtype), combiner);
        if (!(e = driver.copyToDevice(out->ptr, host.data(), host.size()))
                 .empty() ||
            !(e = driver.synchronize()).empty())
          return e;
      }
    }
    ptrs.push_back(out->ptr);
    results.push_back(out);
    if (info.splits > 1) {
      Buffer part;
      if (!(e = newBuffer(dtype, info.outputs * info.splits, part)).empty())
        return e;
      partials.push_back(part);
    }
  }
  if (mlir::Value dest = kernel.getDest())
    ptrs.push_back(slot(dest)->ptr);
  for (const Buffer &p : partials)
    ptrs.push_back(p->ptr);
  if (info.numPoints > 0) {
    std::vector<void *> params;
    for (rt::DevicePtr &p : ptrs)
      params.push_back(&p);
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
  for (auto [r, value] : llvm::enumerate(kernel.getResults()))
    slots[value] = results[r];
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
  if (args.size() != func.getNumArguments())
    return "expected " + std::to_string(func.getNumArguments()) +
           " arguments, got " + std::to_string(args.size());
  llvm::DenseMap<mlir::Value, Buffer> argSlots;
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    const JitValue &value = args[i];
    DType dtype = dtypeOf(arg.getType());
    int64_t need = getRootStorageSize(arg);
    if (dtype != value.dtype || !value.buffer || value.storageElements() < need)
      return "argument #" + std::to_string(i) + ": expected " +
             std::to_string(need) + " elements of " + dtypeName(dtype) +
             ", got " + std::to_string(value.storageElements()) + " of " +
             dtypeName(value.dtype);
    Buffer b;
    if (value.buffer->device() == strata::runtime::DeviceKind::CUDA) {
      b = std::make_shared<DeviceBuffer>();
      b->ptr = reinterpret_cast<rt::DevicePtr>(value.buffer->data());
      b->elements = value.storageElements();
      b->dtype = dtype;
      b->borrowed = value.buffer;
      argSlots[arg] = b;
      continue;
    }
    if (!(e = newBuffer(dtype, value.storageElements(), b)).empty() ||
        !(e = driver.copyToDevice(b->ptr, value.buffer->data(),
                                  value.buffer->size()))
             .empty())
      return e;
    argSlots[arg] = b;
  }
  for (int rep = 0; rep < std::max(1, options.repetitions); ++rep) {
    slots = argSlots;
    double seconds = 0;
    for (mlir::Operation &op : func.getBody().front()) {
      if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
        if (!(e = runKernel(kernel, options.kernelSeconds ? &seconds : nullptr))
                 .empty()) {
          std::string where;
          llvm::raw_string_ostream os(where);
          os << kernel.getLoc() << ": ";
          return os.str() + e;
        }
        continue;
      }
      if (getViewSource(&op) || llvm::isa<mlir::func::ReturnOp>(op))
        continue;
      return "'" + op.getName().getStringRef().str() +
             "' cannot run on CUDA: run the strata pipeline and "
             "--strata-fuse first";
    }
    if (options.kernelSeconds)
      options.kernelSeconds->push_back(seconds);
  }
  // Download every returned storage once; views share it.
  auto ret =
      llvm::cast<mlir::func::ReturnOp>(func.getBody().front().getTerminator());
  llvm::DenseMap<DeviceBuffer *, decltype(JitValue::buffer)> host;
  for (mlir::Value v : ret.getOperands()) {
    Buffer &b = slot(v);
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
    if (auto t = v.getType().dyn_cast<StridedTensorType>()) {
      out.sizes.assign(t.getShape().begin(), t.getShape().end());
      out.strides.assign(t.getStrides().begin(), t.getStrides().end());
      out.offset = t.getOffset();
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

RunResult strata::jit::runFunctionCuda(mlir::Operation *func,
                                       const std::vector<JitValue> &args,
                                       const CudaRunOptions &options) {
  RunResult result;
  rt::Driver *driver = rt::Driver::get(result.error);
  if (!driver)
    return result;
  auto f = llvm::dyn_cast<mlir::func::FuncOp>(func);
  if (!f || f.isExternal()) {
    result.error = "runFunctionCuda needs a func.func with a body";
    return result;
  }
  Runner runner(*driver, f);
  result.error = runner.run(args, options, result);
  result.ok = result.error.empty();
  if (!result.ok)
    result.values.clear();
  return result;
}
