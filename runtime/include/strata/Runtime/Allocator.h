//===- Allocator.h - host allocator with PyTorch-like memory stats -*- C++
//-*-===//
//
// Every tensor buffer of strata (DSL storages, JIT results) comes from here.
// Buffers are 64-byte aligned and UNINITIALIZED. Blocks of at least
// kLargeBlock bytes are kept in a cache when freed and reused (no page
// faults, no zero fill); small blocks go back to malloc at once. Blocks of
// 2 MiB or more are 2 MiB-aligned and advised as transparent huge pages
// (STRATA_HUGEPAGES=0: not advised). Nothing here throws: a failed
// allocation returns null and says why.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_RUNTIME_ALLOCATOR_H
#define STRATA_RUNTIME_ALLOCATOR_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace strata::runtime {

/// Where a buffer lives.
enum class DeviceKind {
  CPU,  ///< host memory
  CUDA, ///< device memory of cuda:0 (data() is a device address)
};

/// PyTorch's memory_stats keys, for one device.
struct MemoryStats {
  int64_t allocatedBytes = 0;     ///< bytes of live buffers (as requested)
  int64_t peakAllocatedBytes = 0; ///< max of allocatedBytes since reset
  int64_t reservedBytes = 0;      ///< held from the system: live + cached
  int64_t numAllocs = 0;          ///< allocations since process start
  int64_t numFrees = 0;           ///< frees since process start
  int64_t cachedBlocks = 0;       ///< free large blocks kept for reuse
  int64_t cacheHits = 0;          ///< allocations served from the cache
};

/// The host allocator (one per process; thread safe).
class CpuAllocator {
public:
  /// Blocks this large or larger are cached when freed.
  static constexpr size_t kLargeBlock = size_t(1) << 20;
  /// Alignment of every buffer.
  static constexpr size_t kAlignment = 64;

  /// The process's host allocator.
  static CpuAllocator &global();

  /// An uninitialized buffer of `nbytes` (null for 0 bytes, which is not a
  /// failure). On failure returns null and sets `error` to a message naming
  /// the size asked and what is in use.
  void *allocate(size_t nbytes, std::string &error);
  /// Frees a buffer from allocate(nbytes).
  void deallocate(void *p, size_t nbytes);

  /// The statistics now.
  MemoryStats stats() const;
  /// peakAllocatedBytes = allocatedBytes.
  void resetPeakStats();
  /// Returns every cached block to the system.
  void emptyCache();
  /// Caps reservedBytes (0: no cap). Allocations beyond it fail like an
  /// out-of-memory; for tests of the failure path.
  void setMemoryLimit(int64_t bytes);

private:
  CpuAllocator() = default;
};

/// "4.00 MiB", "12 bytes".
std::string formatBytes(int64_t bytes);

} // namespace strata::runtime

#endif // STRATA_RUNTIME_ALLOCATOR_H
