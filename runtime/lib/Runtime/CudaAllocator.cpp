//===- CudaAllocator.cpp - caching device allocator with stats ------------===//
#include "strata/Runtime/CudaAllocator.h"
#include "strata/Runtime/Settings.h"

#include <cstdlib>
#include <cstring>

using namespace strata::runtime::cuda;

Allocator::Allocator()
    : cache(strata::runtime::settings::cudaMemoryCaching()) {}

Allocator &Allocator::get() {
  static Allocator allocator;
  return allocator;
}

size_t Allocator::roundSize(size_t bytes) {
  // 512 B granules below 1 MiB, 2 MiB above (few distinct large sizes).
  size_t granule = bytes < (size_t(1) << 20) ? 512 : (size_t(2) << 20);
  return bytes == 0 ? granule : (bytes + granule - 1) / granule * granule;
}

std::string Allocator::allocate(size_t bytes, DevicePtr &ptr) {
  size_t size = cache ? roundSize(bytes) : bytes;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cached.find(size);
  if (it != cached.end()) {
    ptr = it->second;
    cached.erase(it);
  } else {
    std::string error;
    Driver *driver = Driver::get(error);
    if (!driver)
      return error;
    error = driver->alloc(ptr, size);
    if (!error.empty()) {
      // Out of memory with blocks cached: give them back and retry once.
      for (auto &[cachedSize, block] : cached) {
        driver->free(block);
        s.reserved -= static_cast<int64_t>(cachedSize);
      }
      cached.clear();
      error = driver->alloc(ptr, size);
      if (!error.empty())
        return error;
    }
    s.reserved += static_cast<int64_t>(size);
  }
  live[ptr] = size;
  s.allocated += static_cast<int64_t>(size);
  s.peak = std::max(s.peak, s.allocated);
  ++s.allocations;
  return "";
}

void Allocator::release(DevicePtr ptr) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = live.find(ptr);
  if (it == live.end())
    return;
  s.allocated -= static_cast<int64_t>(it->second);
  if (cache) {
    cached.emplace(it->second, ptr);
  } else {
    std::string error;
    if (Driver *driver = Driver::get(error))
      driver->free(ptr);
    s.reserved -= static_cast<int64_t>(it->second);
  }
  live.erase(it);
}

MemoryStats Allocator::stats() {
  std::lock_guard<std::mutex> lock(mutex);
  return s;
}

void Allocator::resetPeakStats() {
  std::lock_guard<std::mutex> lock(mutex);
  s.peak = s.allocated;
}

std::string Allocator::emptyCache() {
  std::lock_guard<std::mutex> lock(mutex);
  if (cached.empty())
    return "";
  std::string error;
  Driver *driver = Driver::get(error);
  if (!driver)
    return error;
  for (auto &[size, block] : cached) {
    std::string e = driver->free(block);
    if (error.empty())
      error = e;
    s.reserved -= static_cast<int64_t>(size);
  }
  cached.clear();
  return error;
}
