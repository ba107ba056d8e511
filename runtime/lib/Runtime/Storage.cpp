//===- Storage.cpp - ref-counted tensor buffers
//----------------------------===//
#include "strata/Runtime/Storage.h"
#include "strata/Runtime/CudaAllocator.h"

#include <cstdio>
#include <cstdlib>

using namespace strata::runtime;

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
  return StoragePtr(
      new Storage(static_cast<unsigned char *>(p), nbytes, device));
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
  StoragePtr s(new Storage(static_cast<unsigned char *>(data), nbytes, device));
  // Never the allocator's deallocate for memory the allocator did not give.
  s->release_ = release ? std::move(release) : [] {};
  return s;
}

Storage::~Storage() {
  if (release_)
    release_();
  else
    CpuAllocator::global().deallocate(data_, nbytes_);
}
