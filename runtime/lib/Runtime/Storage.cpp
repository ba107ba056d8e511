//===- Storage.cpp - ref-counted tensor buffers
//----------------------------===//
#include "strata/Runtime/Storage.h"
#include "strata/Runtime/CudaAllocator.h"
#include "strata/Runtime/CudaDriver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

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

std::vector<StoragePtr> Storage::createSmall(std::span<const size_t> bytes) {
  // The slots and the storages over them in one block; each storage an
  // aliasing pointer into it, so the block goes with the last of them.
  struct Block {
    explicit Block(size_t n)
        : slots(n),
          made(static_cast<Made *>(::operator new(n * sizeof(Made)))) {}
    ~Block() {
      for (size_t i = 0; i < built; ++i)
        made[i].~Made();
      ::operator delete(made);
    }
    std::vector<int64_t> slots;
    Made *made;
    size_t built = 0;
  };
  auto block = std::make_shared<Block>(bytes.size());
  std::vector<StoragePtr> out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    Made *m = new (&block->made[i])
        Made(reinterpret_cast<unsigned char *>(&block->slots[i]),
             std::min<size_t>(bytes[i], sizeof(int64_t)), DeviceKind::CPU);
    m->release_ = [] {}; // (the block's memory: never the allocator's)
    ++block->built;
    out.push_back(StoragePtr(block, m));
  }
  return out;
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
