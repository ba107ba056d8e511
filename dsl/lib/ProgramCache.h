//===- ProgramCache.h - bounded cache of prepared programs ------*- C++ -*-===//
//
// Private to dsl/lib. The evaluator (Eval.cpp) and the autograd engine
// (AutogradEngine.cpp) each keep the programs they prepared, keyed by the
// program's structure, in one of these: a map with a least-recently-used
// bound (`STRATA_PROGRAM_CACHE_SIZE`, default 256; `set_program_cache_
// capacity`). A prepared program holds its plan (buffer slots, kernel entry
// points, launch shapes) and its lowered IR as text (parsed back only for
// a CUDA run or a dump), not an MLIR context: a few KB each
// (docs/design.md "Memory"). A key is held as its BLAKE3 digest (32 bytes),
// not its text, whose size grows with the program (a gradient program's key
// is its source). Evicting a program never frees it under a caller: values are
// shared_ptrs, and a thread that is preparing or running an evicted program
// keeps it alive until it is done. Threads asking for the same key at once
// prepare it once (they wait on the key's own mutex, not the map's).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_PROGRAMCACHE_H
#define STRATA_DSL_LIB_PROGRAMCACHE_H

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "llvm/Support/BLAKE3.h"

namespace strata::detail {

/// What a ProgramCache keeps of a key: its 256-bit BLAKE3 digest (two
/// distinct programs collide with probability 2^-128).
inline std::string programKeyDigest(const std::string &key) {
  auto d = llvm::BLAKE3::hash<32>(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(key.data()), key.size()));
  return std::string(d.begin(), d.end());
}

/// The capacity every ProgramCache uses (shared; read on each insert).
inline std::atomic<int64_t> &programCacheCapacity() {
  static std::atomic<int64_t> capacity = [] {
    const char *env = std::getenv("STRATA_PROGRAM_CACHE_SIZE");
    int64_t n = env ? std::atoll(env) : 0;
    return n > 0 ? n : int64_t(256);
  }();
  return capacity;
}

/// Programs of type T by key, least recently used evicted first.
template <typename T> class ProgramCache {
public:
  /// The program for `key`: found (`hit`), or made by `make` (which may
  /// throw: nothing is cached then). Holds no lock while another key is
  /// prepared.
  std::shared_ptr<T> get(const std::string &text,
                         const std::function<std::unique_ptr<T>()> &make,
                         bool &hit) {
    const std::string key = programKeyDigest(text);
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = entries.find(key);
      if (it == entries.end()) {
        order.push_front(key);
        it =
            entries.emplace(key, Entry{std::make_shared<Slot>(), order.begin()})
                .first;
        evictOverCapacity();
      } else {
        order.splice(order.begin(), order, it->second.position);
      }
      slot = it->second.slot;
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
      auto it = entries.find(key);
      if (it == entries.end())
        return nullptr;
      order.splice(order.begin(), order, it->second.position);
      slot = it->second.slot;
    }
    std::unique_lock<std::mutex> lock(slot->mutex, std::try_to_lock);
    return lock.owns_lock() ? slot->program : nullptr;
  }
  /// Drops the least recently used programs beyond the capacity.
  void trim() {
    std::lock_guard<std::mutex> lock(mutex);
    evictOverCapacity();
  }

  /// Programs held.
  int64_t size() {
    std::lock_guard<std::mutex> lock(mutex);
    return static_cast<int64_t>(entries.size());
  }

  /// Programs evicted since the process started.
  int64_t evictions() { return evicted.load(); }

private:
  struct Slot {
    std::mutex mutex;
    std::shared_ptr<T> program; // null until prepared
  };
  struct Entry {
    std::shared_ptr<Slot> slot;
    std::list<std::string>::iterator position;
  };
  void evictOverCapacity() {
    int64_t capacity = programCacheCapacity().load();
    while (static_cast<int64_t>(entries.size()) > capacity) {
      entries.erase(order.back());
      order.pop_back();
      ++evicted;
    }
  }

  std::mutex mutex; // guards entries and order
  std::unordered_map<std::string, Entry> entries;
  std::list<std::string> order; // most recently used first
  std::atomic<int64_t> evicted{0};
};

/// The autograd engine's cache of gradient programs (AutogradEngine.cpp):
/// trims it to the capacity and returns the programs it holds.
int64_t trimGradientPrograms();

} // namespace strata::detail

#endif // STRATA_DSL_LIB_PROGRAMCACHE_H
