//===- Storage.h - ref-counted, device-tagged tensor buffers ------*- C++
//-*-===//
//
// A Storage is one flat buffer: bytes, a device, and a version counter that
// in-place writes increment. It knows its size in bytes, not a shape or an
// element type. It is always held by std::shared_ptr (StoragePtr): all views
// and every JIT value over it share ownership, and the buffer goes back to
// the allocator when the last owner dies.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_RUNTIME_STORAGE_H
#define STRATA_RUNTIME_STORAGE_H

#include "strata/Runtime/Allocator.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace strata::runtime {

/// A buffer (below).
class Storage;
/// Shared ownership of a Storage.
using StoragePtr = std::shared_ptr<Storage>;

/// One buffer from the device's allocator (uninitialized, 64-byte aligned).
class Storage {
public:
  /// A storage of `nbytes` on `device`; null and `error` set on failure
  /// (out of memory, or "no CUDA device: ..." without a GPU). A CUDA
  /// storage comes from cuda::Allocator and its data() is a device address.
  static StoragePtr tryCreate(size_t nbytes, std::string &error,
                              DeviceKind device = DeviceKind::CPU);
  /// tryCreate for callers that cannot fail gracefully: aborts with the
  /// message on failure (tests, benchmarks).
  static StoragePtr create(size_t nbytes, DeviceKind device = DeviceKind::CPU);
  /// Wraps memory that strata does not own (DLPack, memory-mapped files):
  /// no allocator, no copy, no driver call (for CUDA, `data` is a device
  /// address and is never dereferenced here); `release` runs once, when the
  /// last owner dies.
  static StoragePtr wrapExternal(void *data, size_t nbytes, DeviceKind device,
                                 std::function<void()> release);
  /// Host storages of `bytes[i]` bytes each (at most 8), uninitialized,
  /// made in one allocation that they share: a program's scalar
  /// arguments, not an allocation per scalar.
  static std::vector<StoragePtr> createSmall(std::span<const size_t> bytes);

  /// Copies `bytes` bytes from `src` at byte `srcOffset` to `dst` at byte
  /// `dstOffset`, whatever device each lives on (host memcpy, or the CUDA
  /// driver's copies on the stream); "" or the error. The one place strata
  /// copies bytes between devices.
  static std::string copy(const Storage &dst, size_t dstOffset,
                          const Storage &src, size_t srcOffset, size_t bytes);
  /// Sets `bytes` bytes of `dst` from byte `offset` to `value`; "" or the
  /// error.
  static std::string fill(const Storage &dst, size_t offset,
                          unsigned char value, size_t bytes);

  /// Gives the buffer back (the allocator, or `release` when wrapped).
  ~Storage();
  /// Not copyable: share a StoragePtr.
  Storage(const Storage &) = delete;
  /// Not copyable: share a StoragePtr.
  Storage &operator=(const Storage &) = delete;

  /// The first byte (null when nbytes() is 0).
  unsigned char *data() const { return data_; }
  /// Size in bytes.
  size_t nbytes() const { return nbytes_; }
  /// Bytes (for code written against std::vector<unsigned char>).
  size_t size() const { return nbytes_; }
  /// Where the bytes live (CUDA: data() is a device address).
  DeviceKind device() const { return device_; }
  /// How many in-place writes this buffer has seen (PyTorch's _version).
  int64_t version() const { return version_.load(std::memory_order_relaxed); }
  /// Counts one in-place write.
  void bumpVersion() { version_.fetch_add(1, std::memory_order_relaxed); }

private:
  Storage(unsigned char *data, size_t nbytes, DeviceKind device)
      : data_(data), nbytes_(nbytes), device_(device) {}
  /// A Storage made by make_shared: one allocation with its count.
  struct Made;
  unsigned char *data_;
  size_t nbytes_;
  DeviceKind device_;
  std::atomic<int64_t> version_{0};
  /// Set for wrapped external memory: called instead of the allocator.
  std::function<void()> release_;
};

} // namespace strata::runtime

#endif // STRATA_RUNTIME_STORAGE_H
