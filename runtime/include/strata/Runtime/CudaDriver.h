//===- CudaDriver.h - the CUDA driver API, loaded with dlopen ---*- C++ -*-===//
//
// strata never links libcuda: the driver (libcuda.so.1, or the library
// named by $STRATA_CUDA_DRIVER) is loaded on first use. Without a driver or
// a GPU every entry point returns a message starting with "no CUDA
// device: " instead of crashing; the CUDA toolkit's stub library (whose
// cuInit returns CUDA_ERROR_STUB_LIBRARY, 34) is reported as "no driver".
// Every call returns "" on success or an error message naming the call and
// the driver's error. One device (ordinal 0), its primary context and one
// stream; copies to the host synchronize that stream.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_RUNTIME_CUDADRIVER_H
#define STRATA_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace strata::runtime::cuda {

/// A device address (CUdeviceptr).
using DevicePtr = uint64_t;

/// The CUDA driver API of cuda:0: its primary context and one stream.
class Driver {
public:
  /// The process's driver, loaded and initialized on first use; null with
  /// `error` ("no CUDA device: ...") when no GPU can be used.
  static Driver *get(std::string &error);
  /// Loads the driver library `path`, initializes it and unloads it again:
  /// "" when a GPU could be used, else the "no CUDA device: ..." reason.
  static std::string probe(const std::string &path);

  /// "NVIDIA H200, 132 SMs" and the like.
  std::string deviceName() const;
  /// Number of streaming multiprocessors.
  int multiprocessors() const;
  /// Compute capability as major * 10 + minor (90 for an H100/H200).
  int computeCapability() const;

  /// cuMemAlloc of `bytes` into `ptr`.
  std::string alloc(DevicePtr &ptr, size_t bytes);
  /// cuMemFree of a block from alloc().
  std::string free(DevicePtr ptr);
  /// Host to device, on the stream.
  std::string copyToDevice(DevicePtr dst, const void *src, size_t bytes);
  /// Device to device, on the stream.
  std::string copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes);
  /// Sets `bytes` bytes at `dst` to `value`, on the stream.
  std::string fillBytes(DevicePtr dst, unsigned char value, size_t bytes);
  /// Waits for the stream, then copies (so the host sees every result).
  std::string copyToHost(void *dst, DevicePtr src, size_t bytes);
  /// Waits until everything queued on the stream has run.
  std::string synchronize();
  /// The stream (a CUstream), the context made current on the calling
  /// thread: for a library that queues its own work on it (NCCL).
  void *stream();
  /// Sets `done` to whether everything queued on the stream has run
  /// (cuStreamQuery; a driver without it runs each call synchronously, as
  /// the simulator does: true).
  std::string queryStream(bool &done);

  /// A module from PTX (JIT-compiled by the driver for this GPU); the
  /// driver's JIT log is part of the error.
  std::string loadModule(const std::string &ptx, void *&module);
  /// Unloads a module from loadModule() once the work queued on the stream
  /// has run (it synchronizes); its functions are invalid afterwards.
  std::string unloadModule(void *module);
  /// The kernel `name` of a module from loadModule().
  std::string getFunction(void *module, const std::string &name,
                          void *&function);
  /// Launches on the stream; `params[i]` points at argument i.
  std::string launch(void *function, int64_t gridX, unsigned blockX,
                     unsigned blockY, void **params);

  /// Device timing: events recorded on the stream.
  std::string createEvent(void *&event);
  /// Records `event` on the stream.
  std::string recordEvent(void *event);
  /// Milliseconds between two recorded events (waits for `end`).
  std::string elapsedMs(void *begin, void *end, float &ms);

  /// The driver entry points, resolved with dlsym (CudaDriver.cpp).
  struct Api;
  /// Frees the entry-point table (the process's driver lives until exit).
  ~Driver();

private:
  Driver() = default;
  std::unique_ptr<Api> api;
  std::string check(int result, const char *what) const;
};

} // namespace strata::runtime::cuda

#endif // STRATA_RUNTIME_CUDADRIVER_H
