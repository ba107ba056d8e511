//===- Storage.cpp - ref-counted tensor buffers
//----------------------------===//
#include "strata/Runtime/Storage.h"
#include "strata/Runtime/CudaAllocator.h"
#include "strata/Runtime/CudaDriver.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace strata::runtime;

struct Storage::Made : Storage {
  Made(unsigned char *data, size_t nbytes, DeviceKind device)
      : Storage(data, nbytes, device) {}
};

StoragePtr Storage::tryCreate(size_t nbytes, std::string &error,
                              DeviceKind device) {
  if (device == DeviceKind::CUDA) {
    // Device memory from the caching allocator; data() is the device
    // address (never dereference it on the host).
    cuda::DevicePtr ptr = 0;
    error = cuda::Allocator::get().allocate(nbytes, ptr);
    if (!error.empty())
      return nullptr;
    return wrapExternal(reinterpret_cast<void *>(ptr), nbytes, device,
                        [ptr] { cuda::Allocator::get().release(ptr); });
  }
  void *p = CpuAllocator::global().allocate(nbytes, error);
  if (!p && nbytes != 0)
    return nullptr;
  return std::make_shared<Made>(static_cast<unsigned char *>(p), nbytes,
                                device);
}

StoragePtr Storage::create(size_t nbytes, DeviceKind device) {
  std::string error;
  StoragePtr s = tryCreate(nbytes, error, device);
  if (!s) {
    fprintf(stderr, "strata: %s\n", error.c_str());
    std::abort();
  }
  return s;
}

StoragePtr Storage::wrapExternal(void *data, size_t nbytes, DeviceKind device,
                                 std::function<void()> release) {
  StoragePtr s = std::make_shared<Made>(static_cast<unsigned char *>(data),
                                        nbytes, device);
  // Never the allocator's deallocate for memory the allocator did not give.
  s->release_ = release ? std::move(release) : [] {};
  return s;
}

std::string Storage::copy(const Storage &dst, size_t dstOffset,
                          const Storage &src, size_t srcOffset, size_t bytes) {
  if (bytes == 0)
    return "";
  bool fromDev = src.device() == DeviceKind::CUDA;
  bool toDev = dst.device() == DeviceKind::CUDA;
  if (!fromDev && !toDev) {
    memcpy(dst.data() + dstOffset, src.data() + srcOffset, bytes);
    return "";
  }
  std::string error;
  cuda::Driver *driver = cuda::Driver::get(error);
  if (!driver)
    return error;
  auto dev = [](const Storage &s, size_t at) {
    return reinterpret_cast<cuda::DevicePtr>(s.data() + at);
  };
  if (fromDev && toDev)
    return driver->copyOnDevice(dev(dst, dstOffset), dev(src, srcOffset),
                                bytes);
  if (toDev)
    return driver->copyToDevice(dev(dst, dstOffset), src.data() + srcOffset,
                                bytes);
  return driver->copyToHost(dst.data() + dstOffset, dev(src, srcOffset), bytes);
}

std::string Storage::fill(const Storage &dst, size_t offset,
                          unsigned char value, size_t bytes) {
  if (bytes == 0)
    return "";
  if (dst.device() != DeviceKind::CUDA) {
    memset(dst.data() + offset, value, bytes);
    return "";
  }
  std::string error;
  cuda::Driver *driver = cuda::Driver::get(error);
  if (!driver)
    return error;
  return driver->fillBytes(
      reinterpret_cast<cuda::DevicePtr>(dst.data() + offset), value, bytes);
}

Storage::~Storage() {
  if (release_)
    release_();
  else
    CpuAllocator::global().deallocate(data_, nbytes_);
}
