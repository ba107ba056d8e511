//===- DiskCache.h - the JIT's one disk cache (objects and PTX) -*- C++ -*-===//
//
// The CPU object cache (KernelCache.cpp) and the PTX cache
// (CudaCompile.cpp) keep their entries here: one directory, one format,
// one set of checks, one size bound (DiskCache.cpp says which).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_JIT_LIB_DISKCACHE_H
#define STRATA_JIT_LIB_DISKCACHE_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace strata::jit::detail {

/// What an entry holds; each kind has its own magic and file extension.
enum class DiskEntryKind {
  Object, ///< a CPU kernel's object file, `<hash>.sko`
  Ptx,    ///< a CUDA kernel's PTX, `<hash>.ptx`
};

/// What loadFromDisk found.
enum class DiskLoad {
  Miss,     ///< no entry, or no usable cache directory
  Hit,      ///< the entry passed every check; `payload` holds it
  Rejected, ///< an entry failed a check: compile, and the store replaces it
};

/// The payload stored under `key`. A hit marks the entry most recently
/// used. Never reads more than kMaxEntryBytes, never blocks on a special
/// file, never follows a symlink.
DiskLoad loadFromDisk(DiskEntryKind kind, const std::string &key,
                      std::string &payload);

/// Stores `payload` under `key` (a temp file renamed into place; nothing
/// when a write fails), then, if the directory has grown past its bound,
/// removes the least recently used entries.
void storeOnDisk(DiskEntryKind kind, const std::string &key,
                 llvm::StringRef payload);

} // namespace strata::jit::detail

#endif // STRATA_JIT_LIB_DISKCACHE_H
