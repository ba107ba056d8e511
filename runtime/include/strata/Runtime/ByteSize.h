//===- ByteSize.h - byte counts from environment variables ------*- C++ -*-===//
//
// One parser for every byte-count variable (STRATA_MEMORY_LIMIT,
// STRATA_CACHE_MAX_BYTES): an integer, optionally followed by K, M or G
// (binary: 2^10, 2^20, 2^30).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_RUNTIME_BYTESIZE_H
#define STRATA_RUNTIME_BYTESIZE_H

#include <cstdint>
#include <cstdlib>

namespace strata::runtime {

/// "512M", "2G", "64K", "1048576" -> bytes; 0 when `text` is null, empty,
/// not positive or too large for int64_t (callers then use their default).
inline int64_t parseByteSize(const char *text) {
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
  if (value <= 0 || value > (INT64_MAX >> shift))
    return 0;
  return static_cast<int64_t>(value) << shift;
}

} // namespace strata::runtime

#endif // STRATA_RUNTIME_BYTESIZE_H
