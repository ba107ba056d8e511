//===- ProgramCache.h - bounded cache of prepared programs ------*- C++ -*-===//
//
// Private to dsl/lib. The evaluator (Eval.cpp) and the autograd engine
// (AutogradEngine.cpp) each keep the programs they prepared, keyed by the
// program's structure, in one of these: a runtime::LruCache bounded by
// `STRATA_PROGRAM_CACHE_SIZE` (default 256; `set_program_cache_capacity`). A
// prepared program holds its plan (buffer slots, kernel entry points, launch
// shapes) and its lowered IR as text (parsed back only for a CUDA run or a
// dump), not an MLIR context: a few KB each (docs/design.md "Memory"). A key is
// held as its BLAKE3 digest (32 bytes), not its text, whose size grows with the
// program (a gradient program's key is its source). Evicting a program never
// frees it under a caller: values are shared_ptrs, and a thread that is
// preparing or running an evicted program keeps it alive until it is done.
// Threads asking for the same key at once prepare it once (they wait on the
// key's own mutex, not the map's).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_PROGRAMCACHE_H
#define STRATA_DSL_LIB_PROGRAMCACHE_H

#include "strata/Runtime/LruCache.h"
#include "strata/Runtime/Settings.h"

#include "llvm/Support/BLAKE3.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace strata::detail {

/// What a ProgramCache keeps of a key: its 256-bit BLAKE3 digest (two
/// distinct programs collide with probability 2^-128). The thread's last
/// key and digest are kept (up to 1 MB of key): a long program evaluated
/// in pieces of one structure asks for the same key piece after piece, and
/// comparing it costs a tenth of hashing it.
inline std::string programKeyDigest(const std::string &key) {
  struct Last {
    std::string key, digest;
  };
  thread_local Last last;
  if (!last.digest.empty() && key == last.key)
    return last.digest;
  auto d = llvm::BLAKE3::hash<32>(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(key.data()), key.size()));
  std::string digest(d.begin(), d.end());
  constexpr size_t kMaxKept = size_t(1) << 20;
  if (key.size() <= kMaxKept) {
    last.key = key;
    last.digest = digest;
  }
  return digest;
}

/// The capacity every ProgramCache uses (shared; read on each insert):
/// STRATA_PROGRAM_CACHE_SIZE, or set_program_cache_capacity.
inline std::atomic<int64_t> &programCacheCapacity() {
  static std::atomic<int64_t> capacity{runtime::settings::programCacheSize()};
  return capacity;
}

/// Programs of type T by key, least recently used evicted first
/// (runtime::LruCache).
template <typename T> class ProgramCache {
public:
  /// The program for `key`: found (`hit`), or made by `make` (which may
  /// throw: nothing is cached then). Holds no lock while another key is
  /// prepared.
  std::shared_ptr<T> get(const std::string &text,
                         const std::function<std::unique_ptr<T>()> &make,
                         bool &hit) {
    const std::string key = programKeyDigest(text);
    std::vector<std::shared_ptr<Slot>> evicted; // freed after the lock
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (std::shared_ptr<Slot> *found = slots.find(key)) {
        slot = *found;
      } else {
        slot = std::make_shared<Slot>();
        slots.setCapacity(programCacheCapacity().load(), &evicted);
        slots.insert(key, slot, &evicted);
      }
    }
    std::lock_guard<std::mutex> lock(slot->mutex);
    hit = slot->program != nullptr;
    if (!hit)
      slot->program = std::shared_ptr<T>(make());
    return slot->program;
  }

  /// The program for `key` if it is prepared and nobody is preparing it
  /// now (never waits); null otherwise.
  std::shared_ptr<T> find(const std::string &text) {
    const std::string key = programKeyDigest(text);
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard<std::mutex> lock(mutex);
      std::shared_ptr<Slot> *found = slots.find(key);
      if (!found)
        return nullptr;
      slot = *found;
    }
    std::unique_lock<std::mutex> lock(slot->mutex, std::try_to_lock);
    return lock.owns_lock() ? slot->program : nullptr;
  }
  /// Drops the least recently used programs beyond the capacity.
  void trim() {
    std::vector<std::shared_ptr<Slot>> evicted; // freed after the lock
    std::lock_guard<std::mutex> lock(mutex);
    slots.setCapacity(programCacheCapacity().load(), &evicted);
  }

  /// Programs held.
  int64_t size() {
    std::lock_guard<std::mutex> lock(mutex);
    return slots.size();
  }

  /// Programs evicted since the process started.
  int64_t evictions() {
    std::lock_guard<std::mutex> lock(mutex);
    return slots.evictions();
  }

private:
  struct Slot {
    std::mutex mutex;
    std::shared_ptr<T> program; // null until prepared
  };

  std::mutex mutex; // guards slots
  runtime::LruCache<std::string, std::shared_ptr<Slot>> slots{
      programCacheCapacity().load()};
};

/// The autograd engine's cache of gradient programs (AutogradEngine.cpp):
/// trims it to the capacity and returns the programs it holds.
int64_t trimGradientPrograms();

} // namespace strata::detail

#endif // STRATA_DSL_LIB_PROGRAMCACHE_H
