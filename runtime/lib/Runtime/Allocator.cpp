//===- Allocator.cpp - host allocator with a large-block cache
//-------------===//
//
// Small blocks: aligned_alloc, freed at once. Large blocks (>= 1 MiB) are
// rounded up to 64 KiB (from 2 MiB on: aligned to 2 MiB and advised as
// transparent huge pages) and, when freed, kept in a size-ordered cache; an
// allocation takes the smallest cached block that fits without wasting more
// than an eighth of it. Stats count requested bytes as allocated (exact for
// tests) and block bytes as reserved.
//
//===----------------------------------------------------------------------===//
#include "strata/Runtime/Allocator.h"
#include "strata/Runtime/Settings.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <sys/mman.h>

using namespace strata::runtime;

namespace {

constexpr size_t kLargeRound = size_t(1) << 16;
/// A transparent huge page (x86-64, and AArch64 with 4 KiB pages).
constexpr size_t kHugePage = size_t(2) << 20;

struct State {
  std::mutex mutex;
  MemoryStats stats;
  int64_t limit = 0;
  /// Free large blocks by block size.
  std::multimap<size_t, void *> cache;
  /// Block size of each live large buffer (requested size -> block size is
  /// not a function once blocks are reused).
  std::map<void *, size_t> liveLarge;
};

State &state() {
  // Never destroyed: storages may outlive main.
  static State *s = [] {
    State *created = new State;
    // STRATA_MEMORY_LIMIT: so the out-of-memory path can be exercised on
    // any program (docs/reliability.md).
    created->limit = settings::memoryLimit();
    return created;
  }();
  return *s;
}

size_t blockSize(size_t nbytes) {
  if (nbytes >= CpuAllocator::kLargeBlock)
    return (nbytes + kLargeRound - 1) / kLargeRound * kLargeRound;
  return (nbytes + CpuAllocator::kAlignment - 1) / CpuAllocator::kAlignment *
         CpuAllocator::kAlignment;
}

/// STRATA_HUGEPAGES=0 turns the transparent huge page advice off.
bool hugePagesWanted() { return settings::hugePages(); }

/// A block from the system. Blocks of at least kHugePage start on a huge
/// page boundary and are advised as transparent huge pages (Linux's THP
/// "madvise" mode, the usual default, gives them only when asked): a
/// 4096x4096 f32 tensor is then 32 TLB entries instead of 16384, which is
/// what strided (transposed) kernels miss on, and under virtualization
/// every TLB miss is a two-level page walk. Measured in
/// docs/performance.md.
void *systemAlloc(size_t block) {
  if (block < kHugePage || !hugePagesWanted())
    return std::aligned_alloc(CpuAllocator::kAlignment, block);
  void *p = nullptr;
  if (posix_memalign(&p, kHugePage, block) != 0)
    return nullptr;
#ifdef MADV_HUGEPAGE
  if (p)
    madvise(p, block, MADV_HUGEPAGE); // advice only: failure is harmless
#endif
  return p;
}

void releaseCache(State &s) {
  for (auto &[size, p] : s.cache) {
    std::free(p);
    s.stats.reservedBytes -= static_cast<int64_t>(size);
  }
  s.cache.clear();
  s.stats.cachedBlocks = 0;
}

} // namespace

std::string strata::runtime::formatBytes(int64_t bytes) {
  char buf[64];
  double b = static_cast<double>(bytes);
  if (bytes >= (int64_t(1) << 30))
    snprintf(buf, sizeof buf, "%.2f GiB", b / (1 << 30));
  else if (bytes >= (int64_t(1) << 20))
    snprintf(buf, sizeof buf, "%.2f MiB", b / (1 << 20));
  else if (bytes >= (int64_t(1) << 10))
    snprintf(buf, sizeof buf, "%.2f KiB", b / (1 << 10));
  else
    snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  return buf;
}

CpuAllocator &CpuAllocator::global() {
  static CpuAllocator allocator;
  return allocator;
}

void *CpuAllocator::allocate(size_t nbytes, std::string &error) {
  if (nbytes == 0)
    return nullptr;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  size_t block = blockSize(nbytes);
  void *p = nullptr;
  bool large = nbytes >= kLargeBlock;
  if (large) {
    auto it = s.cache.lower_bound(block);
    if (it != s.cache.end() && it->first - block <= it->first / 8) {
      p = it->second;
      block = it->first;
      s.cache.erase(it);
      --s.stats.cachedBlocks;
      ++s.stats.cacheHits;
    }
  }
  if (!p) {
    bool overLimit =
        s.limit > 0 &&
        s.stats.reservedBytes + static_cast<int64_t>(block) > s.limit;
    if (overLimit || block < nbytes) {
      p = nullptr;
    } else {
      p = systemAlloc(block);
      if (!p && !s.cache.empty()) {
        releaseCache(s); // retry once with the cache returned
        p = systemAlloc(block);
      }
    }
    if (!p) {
      error = "CPU out of memory: tried to allocate " +
              formatBytes(static_cast<int64_t>(nbytes)) + " (" +
              formatBytes(s.stats.allocatedBytes) + " already allocated, " +
              formatBytes(s.stats.reservedBytes) + " reserved" +
              (s.limit > 0 ? ", limit " + formatBytes(s.limit) : "") +
              "). Free tensors you no longer need (every view keeps its "
              "whole storage alive), or call strata::empty_cache().";
      return nullptr;
    }
    s.stats.reservedBytes += static_cast<int64_t>(block);
  }
  if (large)
    s.liveLarge[p] = block;
  s.stats.allocatedBytes += static_cast<int64_t>(nbytes);
  if (s.stats.allocatedBytes > s.stats.peakAllocatedBytes)
    s.stats.peakAllocatedBytes = s.stats.allocatedBytes;
  ++s.stats.numAllocs;
  return p;
}

void CpuAllocator::deallocate(void *p, size_t nbytes) {
  if (!p)
    return;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.stats.allocatedBytes -= static_cast<int64_t>(nbytes);
  ++s.stats.numFrees;
  auto it = s.liveLarge.find(p);
  if (it != s.liveLarge.end()) {
    s.cache.emplace(it->second, p);
    ++s.stats.cachedBlocks;
    s.liveLarge.erase(it);
    return;
  }
  s.stats.reservedBytes -= static_cast<int64_t>(blockSize(nbytes));
  std::free(p);
}

MemoryStats CpuAllocator::stats() const {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.stats;
}

void CpuAllocator::resetPeakStats() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.stats.peakAllocatedBytes = s.stats.allocatedBytes;
}

void CpuAllocator::emptyCache() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  releaseCache(s);
}

void CpuAllocator::setMemoryLimit(int64_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.limit = bytes;
}
