//===- CudaDriver.cpp - the CUDA driver API through dlopen ----------------===//
//
// The few driver entry points strata uses, resolved with dlsym (newest
// versioned name first). No CUDA header: the types are the ABI's.
//
//===----------------------------------------------------------------------===//
#include "strata/Runtime/CudaDriver.h"
#include "strata/Runtime/Settings.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <vector>

using namespace strata::runtime::cuda;

namespace {
using CUresult = int;
using Ptr = void *;
constexpr CUresult kStubLibrary = 34; // CUDA_ERROR_STUB_LIBRARY
constexpr CUresult kNoDevice = 100;   // CUDA_ERROR_NO_DEVICE
constexpr CUresult kInsufficientDriver = 35;
constexpr CUresult kNotReady = 600; // CUDA_ERROR_NOT_READY
constexpr int kAttrMultiprocessors = 16;
constexpr int kAttrMajor = 75, kAttrMinor = 76;
// cuModuleLoadDataEx options: error log buffer and its size.
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferSize = 6;
} // namespace

struct Driver::Api {
  void *library = nullptr;
  CUresult (*init)(unsigned);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(int *, int);
  CUresult (*deviceGetName)(char *, int, int);
  CUresult (*deviceGetAttribute)(int *, int, int);
  CUresult (*primaryCtxRetain)(Ptr *, int);
  CUresult (*ctxSetCurrent)(Ptr);
  CUresult (*memAlloc)(DevicePtr *, size_t);
  CUresult (*memFree)(DevicePtr);
  CUresult (*memcpyHtoDAsync)(DevicePtr, const void *, size_t, Ptr);
  CUresult (*memcpyDtoHAsync)(void *, DevicePtr, size_t, Ptr);
  CUresult (*memcpyDtoDAsync)(DevicePtr, DevicePtr, size_t, Ptr);
  CUresult (*memsetD8Async)(DevicePtr, unsigned char, size_t, Ptr);
  CUresult (*streamCreate)(Ptr *, unsigned);
  CUresult (*streamSynchronize)(Ptr);
  CUresult (*streamQuery)(Ptr) = nullptr; // optional (not in the simulator)
  CUresult (*moduleLoadDataEx)(Ptr *, const void *, unsigned, int *, void **);
  CUresult (*moduleGetFunction)(Ptr *, Ptr, const char *);
  CUresult (*moduleUnload)(Ptr);
  CUresult (*launchKernel)(Ptr, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, Ptr, void **, void **);
  CUresult (*getErrorString)(CUresult, const char **);
  CUresult (*eventCreate)(Ptr *, unsigned);
  CUresult (*eventRecord)(Ptr, Ptr);
  CUresult (*eventSynchronize)(Ptr);
  CUresult (*eventElapsedTime)(float *, Ptr, Ptr);
  int device = 0, sms = 0, major = 0, minor = 0;
  std::string name;
  Ptr context = nullptr, stream = nullptr;

  template <typename F>
  bool resolve(F &f, std::initializer_list<const char *> names,
               std::string &missing) {
    for (const char *n : names)
      if (void *p = dlsym(library, n)) {
        f = reinterpret_cast<F>(p);
        return true;
      }
    missing = *names.begin();
    return false;
  }

  /// "" or the "no CUDA device: ..." reason; leaves the library loaded.
  std::string load(const std::string &path) {
    library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *why = dlerror();
      return "no CUDA device: the NVIDIA driver library '" + path +
             "' could not be loaded (" + (why ? why : "unknown error") +
             "); install the driver or run on a machine with a GPU";
    }
    std::string missing;
    bool ok =
        resolve(init, {"cuInit"}, missing) &&
        resolve(deviceGetCount, {"cuDeviceGetCount"}, missing) &&
        resolve(deviceGet, {"cuDeviceGet"}, missing) &&
        resolve(deviceGetName, {"cuDeviceGetName"}, missing) &&
        resolve(deviceGetAttribute, {"cuDeviceGetAttribute"}, missing) &&
        resolve(primaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing) &&
        resolve(ctxSetCurrent, {"cuCtxSetCurrent"}, missing) &&
        resolve(memAlloc, {"cuMemAlloc_v2"}, missing) &&
        resolve(memFree, {"cuMemFree_v2"}, missing) &&
        resolve(memcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2"}, missing) &&
        resolve(memcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2"}, missing) &&
        resolve(memcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"}, missing) &&
        resolve(memsetD8Async, {"cuMemsetD8Async"}, missing) &&
        resolve(streamCreate, {"cuStreamCreate"}, missing) &&
        resolve(streamSynchronize, {"cuStreamSynchronize"}, missing) &&
        resolve(moduleLoadDataEx, {"cuModuleLoadDataEx"}, missing) &&
        resolve(moduleGetFunction, {"cuModuleGetFunction"}, missing) &&
        resolve(moduleUnload, {"cuModuleUnload"}, missing) &&
        resolve(launchKernel, {"cuLaunchKernel"}, missing) &&
        resolve(getErrorString, {"cuGetErrorString"}, missing) &&
        resolve(eventCreate, {"cuEventCreate"}, missing) &&
        resolve(eventRecord, {"cuEventRecord"}, missing) &&
        resolve(eventSynchronize, {"cuEventSynchronize"}, missing) &&
        resolve(eventElapsedTime,
                {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing);
    streamQuery =
        reinterpret_cast<CUresult (*)(Ptr)>(dlsym(library, "cuStreamQuery"));
    if (!ok)
      return "no CUDA device: '" + path + "' lacks the driver entry point " +
             missing + " (driver too old or not the NVIDIA driver)";
    CUresult rc = init(0);
    if (rc == kStubLibrary)
      return "no CUDA device: no driver; '" + path +
             "' is the CUDA toolkit's stub library (keep lib64/stubs off "
             "LD_LIBRARY_PATH and rpath)";
    if (rc == kNoDevice)
      return "no CUDA device: the NVIDIA driver reports no GPU";
    if (rc == kInsufficientDriver)
      return "no CUDA device: the NVIDIA driver is older than this CUDA";
    if (rc != 0)
      return "no CUDA device: cuInit failed with error " + std::to_string(rc);
    int count = 0;
    if (deviceGetCount(&count) != 0 || count == 0)
      return "no CUDA device: the NVIDIA driver reports no GPU";
    if ((rc = deviceGet(&device, 0)) != 0 ||
        (rc = primaryCtxRetain(&context, device)) != 0 ||
        (rc = ctxSetCurrent(context)) != 0 ||
        (rc = streamCreate(&stream, 0)) != 0)
      return "no CUDA device: GPU 0 could not be initialized (error " +
             std::to_string(rc) + ")";
    char buf[256] = {0};
    deviceGetName(buf, sizeof(buf) - 1, device);
    name = buf;
    deviceGetAttribute(&sms, kAttrMultiprocessors, device);
    deviceGetAttribute(&major, kAttrMajor, device);
    deviceGetAttribute(&minor, kAttrMinor, device);
    return "";
  }
};

Driver::~Driver() = default;

Driver *Driver::get(std::string &error) {
  static std::once_flag once;
  static Driver *driver = nullptr;
  static std::string reason;
  std::call_once(once, [] {
    auto d = std::unique_ptr<Driver>(new Driver());
    d->api = std::make_unique<Api>();
    reason = d->api->load(strata::runtime::settings::cudaDriverLibrary());
    if (reason.empty())
      driver = d.release(); // lives as long as the process
    else if (d->api->library)
      dlclose(d->api->library);
  });
  error = reason;
  return driver;
}

std::string Driver::probe(const std::string &path) {
  Api api;
  std::string reason = api.load(path);
  if (api.library)
    dlclose(api.library);
  return reason;
}

std::string Driver::deviceName() const {
  return api->name + ", " + std::to_string(api->sms) + " SMs";
}

int Driver::multiprocessors() const { return api->sms; }

int Driver::computeCapability() const { return api->major * 10 + api->minor; }

std::string Driver::check(int result, const char *what) const {
  if (result == 0)
    return "";
  const char *text = nullptr;
  api->getErrorString(result, &text);
  return std::string("CUDA error in ") + what + ": " +
         (text ? text : "unknown") + " (" + std::to_string(result) + ")";
}

std::string Driver::alloc(DevicePtr &ptr, size_t bytes) {
  api->ctxSetCurrent(api->context);
  return check(api->memAlloc(&ptr, bytes ? bytes : 1), "cuMemAlloc");
}

std::string Driver::free(DevicePtr ptr) {
  return check(api->memFree(ptr), "cuMemFree");
}

std::string Driver::copyToDevice(DevicePtr dst, const void *src, size_t bytes) {
  if (!bytes)
    return "";
  return check(api->memcpyHtoDAsync(dst, src, bytes, api->stream),
               "cuMemcpyHtoDAsync");
}

std::string Driver::copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes) {
  if (!bytes)
    return "";
  return check(api->memcpyDtoDAsync(dst, src, bytes, api->stream),
               "cuMemcpyDtoDAsync");
}

std::string Driver::fillBytes(DevicePtr dst, unsigned char value,
                              size_t bytes) {
  if (!bytes)
    return "";
  return check(api->memsetD8Async(dst, value, bytes, api->stream),
               "cuMemsetD8Async");
}

std::string Driver::copyToHost(void *dst, DevicePtr src, size_t bytes) {
  if (bytes) {
    std::string e = check(api->memcpyDtoHAsync(dst, src, bytes, api->stream),
                          "cuMemcpyDtoHAsync");
    if (!e.empty())
      return e;
  }
  return synchronize();
}

std::string Driver::synchronize() {
  return check(api->streamSynchronize(api->stream), "cuStreamSynchronize");
}

void *Driver::stream() {
  api->ctxSetCurrent(api->context);
  return api->stream;
}

std::string Driver::queryStream(bool &done) {
  done = true;
  if (!api->streamQuery)
    return "";
  CUresult rc = api->streamQuery(api->stream);
  done = rc != kNotReady;
  return rc == kNotReady ? "" : check(rc, "cuStreamQuery");
}

std::string Driver::loadModule(const std::string &ptx, void *&module) {
  std::vector<char> log(8192, '\0');
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
  void *values[] = {log.data(),
                    reinterpret_cast<void *>(uintptr_t(log.size() - 1))};
  std::string e =
      check(api->moduleLoadDataEx(&module, ptx.c_str(), 2, options, values),
            "cuModuleLoadDataEx");
  if (!e.empty() && log[0])
    e += "\n" + std::string(log.data());
  return e;
}

std::string Driver::unloadModule(void *module) {
  // A launch still queued may run the module's code: wait for it first.
  std::string e = synchronize();
  if (!e.empty())
    return e;
  return check(api->moduleUnload(module), "cuModuleUnload");
}

std::string Driver::getFunction(void *module, const std::string &name,
                                void *&function) {
  return check(api->moduleGetFunction(&function, module, name.c_str()),
               "cuModuleGetFunction");
}

std::string Driver::launch(void *function, int64_t gridX, unsigned blockX,
                           unsigned blockY, void **params) {
  return check(api->launchKernel(function, static_cast<unsigned>(gridX), 1, 1,
                                 blockX, blockY, 1, 0, api->stream, params,
                                 nullptr),
               "cuLaunchKernel");
}

std::string Driver::createEvent(void *&event) {
  return check(api->eventCreate(&event, 0), "cuEventCreate");
}

std::string Driver::recordEvent(void *event) {
  return check(api->eventRecord(event, api->stream), "cuEventRecord");
}

std::string Driver::elapsedMs(void *begin, void *end, float &ms) {
  std::string e = check(api->eventSynchronize(end), "cuEventSynchronize");
  if (!e.empty())
    return e;
  return check(api->eventElapsedTime(&ms, begin, end), "cuEventElapsedTime");
}
