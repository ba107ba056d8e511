//===- LruCache.h - a bounded map, least recently used out ------*- C++ -*-===//
//
// The one eviction policy of strata's in-memory caches: the DSL's prepared
// programs (dsl/lib/ProgramCache.h), the JIT's compiled kernels
// (jit/lib/KernelCache.cpp), the PTX of CUDA kernels (jit/lib/CudaCompile.cpp)
// and the loaded CUDA modules (jit/lib/CudaExecutor.cpp). A map with a
// capacity: a lookup or an insert makes its key the most recently used, and
// an insert beyond the capacity evicts the least recently used. Not
// synchronized: each cache guards its own with a mutex. Evicted values can
// be handed back to the caller, so that one whose destructor takes a lock
// (unloading code, freeing device memory) is destroyed after the caller
// releases its own.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_RUNTIME_LRUCACHE_H
#define STRATA_RUNTIME_LRUCACHE_H

#include <cstdint>
#include <functional>
#include <list>
#include <unordered_map>
#include <utility>
#include <vector>

namespace strata::runtime {

/// Values by key, at most capacity() of them, least recently used evicted.
template <typename Key, typename Value, typename Hash = std::hash<Key>>
class LruCache {
public:
  /// A cache of at most `capacity` values (at least 1).
  explicit LruCache(int64_t capacity) : capacity_(clamp(capacity)) {}

  /// The value of `key`, now the most recently used; null when absent.
  Value *find(const Key &key) {
    auto it = index.find(key);
    if (it == index.end())
      return nullptr;
    order.splice(order.begin(), order, it->second);
    return &it->second->second;
  }

  /// The value of `key` without making it the most recently used; null
  /// when absent.
  const Value *peek(const Key &key) const {
    auto it = index.find(key);
    return it == index.end() ? nullptr : &it->second->second;
  }

  /// Sets `key` to `value`, as the most recently used, and evicts beyond
  /// the capacity. Evicted values, and the older value of `key`, are
  /// appended to `evicted` when given, else destroyed here.
  Value &insert(const Key &key, Value value,
                std::vector<Value> *evicted = nullptr) {
    if (Value *found = find(key)) {
      std::swap(*found, value);
      if (evicted)
        evicted->push_back(std::move(value));
      return *found;
    }
    order.emplace_front(key, std::move(value));
    index.emplace(key, order.begin());
    evictOverCapacity(evicted);
    return order.front().second;
  }

  /// Removes `key`; false when it was absent.
  bool erase(const Key &key) {
    auto it = index.find(key);
    if (it == index.end())
      return false;
    order.erase(it->second);
    index.erase(it);
    return true;
  }

  /// Changes the bound (at least 1), evicting beyond it as insert does.
  void setCapacity(int64_t capacity, std::vector<Value> *evicted = nullptr) {
    capacity_ = clamp(capacity);
    evictOverCapacity(evicted);
  }

  /// Removes every value (appended to `dropped` when given).
  void clear(std::vector<Value> *dropped = nullptr) {
    if (dropped)
      for (auto &entry : order)
        dropped->push_back(std::move(entry.second));
    index.clear();
    order.clear();
  }

  /// The bound.
  int64_t capacity() const { return capacity_; }
  /// Values held.
  int64_t size() const { return static_cast<int64_t>(order.size()); }
  /// Values evicted for the bound since the cache was made.
  int64_t evictions() const { return evictions_; }
  /// The keys, most recently used first.
  std::vector<Key> keys() const {
    std::vector<Key> out;
    for (const auto &entry : order)
      out.push_back(entry.first);
    return out;
  }

private:
  static int64_t clamp(int64_t capacity) { return capacity > 0 ? capacity : 1; }

  void evictOverCapacity(std::vector<Value> *evicted) {
    while (size() > capacity_) {
      if (evicted)
        evicted->push_back(std::move(order.back().second));
      index.erase(order.back().first);
      order.pop_back();
      ++evictions_;
    }
  }

  using Order = std::list<std::pair<Key, Value>>;
  Order order; // most recently used first
  std::unordered_map<Key, typename Order::iterator, Hash> index;
  int64_t capacity_;
  int64_t evictions_ = 0;
};

} // namespace strata::runtime

#endif // STRATA_RUNTIME_LRUCACHE_H
