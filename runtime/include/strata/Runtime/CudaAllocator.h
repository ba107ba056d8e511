//===- CudaAllocator.h - caching device allocator with stats ----*- C++ -*-===//
//
// Freed blocks stay reserved and serve later requests of the same rounded
// size (as PyTorch's caching allocator does); emptyCache() returns them to
// the driver. Statistics follow torch.cuda.memory_stats: bytes allocated
// now, its peak, bytes reserved from the driver, number of allocations.
// STRATA_NO_CUDA_MEMORY_CACHING=1 (as PYTORCH_NO_CUDA_MEMORY_CACHING)
// turns the cache off: each block is exactly the bytes asked for, from the
// driver, and goes back to it when released, so a memory checker (the CUDA
// simulator of tests/cudasim) sees every access past a tensor's storage.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_RUNTIME_CUDAALLOCATOR_H
#define STRATA_RUNTIME_CUDAALLOCATOR_H

#include "strata/Runtime/CudaDriver.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace strata::runtime::cuda {

/// The device allocator's statistics (torch.cuda.memory_stats keys).
struct MemoryStats {
  int64_t allocated = 0;   ///< bytes in live blocks
  int64_t peak = 0;        ///< max of `allocated` since the last reset
  int64_t reserved = 0;    ///< bytes held from the driver (live + cached)
  int64_t allocations = 0; ///< allocate() calls that succeeded
};

/// The caching allocator of cuda:0 (thread safe).
class Allocator {
public:
  /// The process's device allocator.
  static Allocator &get();
  /// A block of at least `bytes` (256-byte aligned); "" or the error.
  std::string allocate(size_t bytes, DevicePtr &ptr);
  /// Returns a block to the cache.
  void release(DevicePtr ptr);
  /// The statistics now.
  MemoryStats stats();
  /// peak = allocated.
  void resetPeakStats();
  /// Frees every cached (unused) block; "" or the driver's error.
  std::string emptyCache();
  /// The size requests are rounded up to.
  static size_t roundSize(size_t bytes);
  /// False when STRATA_NO_CUDA_MEMORY_CACHING=1 turned the cache off.
  bool caching() const { return cache; }

private:
  Allocator();
  const bool cache;
  std::mutex mutex;
  std::multimap<size_t, DevicePtr> cached; // rounded size -> free block
  std::unordered_map<DevicePtr, size_t> live;
  MemoryStats s;
};

} // namespace strata::runtime::cuda

#endif // STRATA_RUNTIME_CUDAALLOCATOR_H
