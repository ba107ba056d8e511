//===- DLPack.h - zero-copy tensor exchange through DLPack ------*- C++ -*-===//
//
// DLPack (https://dmlc.github.io/dlpack/) is the C struct PyTorch, NumPy,
// JAX, CuPy and TVM exchange tensors with. Both directions share memory:
// no element is copied. Include <dlpack/dlpack.h> (Debian: libdlpack-dev)
// to look inside the struct; this header only forward-declares it.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DLPACK_H
#define STRATA_DLPACK_H

#include "strata/Tensor.h"

/// DLPack's managed tensor (defined in <dlpack/dlpack.h>).
struct DLManagedTensor;

namespace strata {

/// A tensor over the memory of `managed`, without a copy: sizes, strides
/// (null strides: row-major), byte_offset (as storage_offset when it is a
/// multiple of the element size) and dtype are kept. strata takes ownership:
/// `managed->deleter` runs exactly once, when the last tensor over that
/// storage dies. Supported dtypes: float32/64, int32/64, bool (kDLBool, or
/// uint8 with 8 bits). Devices: kDLCPU and kDLCUDAHost (pinned host memory)
/// give CPU tensors; kDLCUDA with device_id 0 gives a cuda:0 tensor over the
/// device address. Wrapping is metadata only (no driver call): what then
/// needs the device (values, compute, copies) throws "no CUDA device: ..."
/// without a driver and a GPU. On error nothing is taken: the caller still
/// owns `managed`.
Tensor from_dlpack(DLManagedTensor *managed,
                   SourceLoc loc = SourceLoc::current());

/// `t` as a DLManagedTensor over strata's own buffer (evaluates a pending
/// tensor first; no copy): data is the storage base, byte_offset the
/// storage offset in bytes, strides in elements, device {kDLCPU, 0} or
/// {kDLCUDA, 0}. For a CUDA tensor strata's stream is synchronized first
/// (when a driver is loaded), so a consumer on any stream sees the values.
/// The buffer stays alive until the consumer calls `deleter`, which it must
/// call exactly once.
DLManagedTensor *to_dlpack(const Tensor &t,
                           SourceLoc loc = SourceLoc::current());

} // namespace strata

#endif // STRATA_DLPACK_H
