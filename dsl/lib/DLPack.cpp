//===- DLPack.cpp - from_dlpack / to_dlpack without copies ----------------===//
//
// Import: the foreign buffer becomes a runtime::Storage that wraps it (no
// allocator, the DLPack deleter as its release), a leaf over the range of
// elements the layout addresses, then an as_strided view with the foreign
// sizes/strides/offset (and a flip for negative strides), so the one layout
// algebra checks them. kDLCUDA memory takes the same path with a storage
// of kind CUDA: only addresses are computed, so no driver is called.
// Export: a DLManagedTensor whose manager context owns a reference to the
// home buffer and the shape/stride arrays (CUDA: after a stream sync).
//
//===----------------------------------------------------------------------===//
#include "strata/DLPack.h"

#include "Impl.h"

#include <dlpack/dlpack.h>

using namespace strata;
using namespace strata::detail;

namespace {
/// kDLBool (DLPack >= 0.8); the installed header may be older.
constexpr uint8_t kCodeBool = 6;

DType dtypeOf(DLDataType t, const SourceLoc &loc) {
  std::string given = "code " + std::to_string(t.code) + ", bits " +
                      std::to_string(t.bits) + ", lanes " +
                      std::to_string(t.lanes);
  if (t.lanes == 1) {
    if (t.code == kDLFloat && t.bits == 32)
      return DType::F32;
    if (t.code == kDLFloat && t.bits == 64)
      return DType::F64;
    if (t.code == kDLInt && t.bits == 32)
      return DType::I32;
    if (t.code == kDLInt && t.bits == 64)
      return DType::I64;
    if ((t.code == kCodeBool || t.code == kDLUInt) && t.bits == 8)
      return DType::Bool;
  }
  fail("from_dlpack: unsupported DLPack dtype (" + given + ")",
       "strata supports float32, float64, int32, int64 and bool (one lane); "
       "convert in the producing library first",
       loc);
}

DLDataType dlDtype(DType t) {
  switch (t) {
  case DType::F32:
    return {kDLFloat, 32, 1};
  case DType::F64:
    return {kDLFloat, 64, 1};
  case DType::I32:
    return {kDLInt, 32, 1};
  case DType::I64:
    return {kDLInt, 64, 1};
  case DType::Bool:
    return {kCodeBool, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

/// What a DLManagedTensor made by to_dlpack owns.
struct ExportContext {
  runtime::StoragePtr keep;
  Shape shape, strides;
  DLManagedTensor managed{};
};
} // namespace

Tensor strata::from_dlpack(DLManagedTensor *managed, SourceLoc loc) {
  if (!managed)
    fail("from_dlpack: got a null DLManagedTensor", "", loc);
  const DLTensor &dl = managed->dl_tensor;
  // kDLCUDAHost is pinned host memory: the CPU reads it directly (NumPy's
  // from_dlpack takes it too; PyTorch 1.13 refuses it).
  const int deviceType = dl.device.device_type;
  const bool onCuda = deviceType == kDLCUDA;
  if (onCuda && dl.device.device_id != 0)
    fail("from_dlpack: cannot wrap a tensor on cuda:" +
             std::to_string(dl.device.device_id) +
             ": strata drives cuda:0 only",
         "move it to cuda:0 (or the CPU) in the producing library first", loc);
  if (!onCuda && deviceType != kDLCPU && deviceType != kDLCUDAHost)
    fail("from_dlpack: unsupported DLPack device type " +
             std::to_string(deviceType) +
             (deviceType == kDLCUDAManaged ? " (kDLCUDAManaged)" : ""),
         "strata wraps kDLCPU, kDLCUDAHost and kDLCUDA (device 0) memory; "
         "copy it to one of those in the producing library first",
         loc);
  DType dtype = dtypeOf(dl.dtype, loc);
  int64_t esize = elementSize(dtype);
  if (dl.ndim < 0 || (dl.ndim > 0 && !dl.shape))
    fail("from_dlpack: malformed DLTensor (ndim " + std::to_string(dl.ndim) +
             ", shape " + (dl.shape ? "set" : "null") + ")",
         "", loc);
  Shape sizes(dl.shape, dl.shape + dl.ndim);
  Shape strides = dl.strides ? Shape(dl.strides, dl.strides + dl.ndim)
                             : layout::contiguousStrides(sizes);
  for (int64_t s : sizes)
    if (s < 0)
      fail("from_dlpack: negative size in the DLTensor's shape", "", loc);

  // Element offset of element 0 from `base`; base is `data` unless the byte
  // offset is not a multiple of the element size or a negative stride
  // reaches below `data`. Only addresses are computed, never dereferenced:
  // on CUDA they are device addresses, wrapped without a driver call.
  unsigned char *data = static_cast<unsigned char *>(dl.data);
  int64_t offset = 0, storageNumel = 0;
  unsigned char *base = data;
  layout::Layout l{sizes, strides, 0};
  if (l.numel() > 0) {
    auto [lo, hi] = layout::indexRange(l);
    if (dl.byte_offset % esize == 0 &&
        lo + static_cast<int64_t>(dl.byte_offset) / esize >= 0) {
      offset = static_cast<int64_t>(dl.byte_offset) / esize;
    } else {
      base = data + dl.byte_offset + lo * esize;
      offset = -lo;
    }
    storageNumel = offset + hi + 1;
  }
  runtime::StoragePtr buffer = runtime::Storage::wrapExternal(
      base, static_cast<size_t>(storageNumel * esize),
      onCuda ? runtime::DeviceKind::CUDA : runtime::DeviceKind::CPU, [managed] {
        if (managed->deleter)
          managed->deleter(managed);
      });
  // From here strata owns `managed`: an exception below releases it with
  // `buffer`, which is why every check on the input happens above.
  // A CUDA buffer becomes a cuda:0 leaf as it is (makeLeaf uploads only
  // host buffers); views below are metadata.
  Tensor flat = makeLeaf(
      std::move(buffer), dtype, {storageNumel},
      TensorOptions(dtype).device(onCuda ? Device::cuda(0) : Device::cpu()),
      "from_dlpack", loc);
  // as_strided takes non-negative strides (PyTorch's rule): a negative one
  // is a flip of the positive view that starts at that dim's last element.
  Shape positive = strides, flipped;
  int64_t start = offset;
  for (size_t d = 0; d < strides.size(); ++d)
    if (strides[d] < 0 && sizes[d] > 1) {
      positive[d] = -strides[d];
      start += (sizes[d] - 1) * strides[d];
      flipped.push_back(static_cast<int64_t>(d));
    } else if (strides[d] < 0) {
      positive[d] = -strides[d]; // size 0 or 1: never used to address
    }
  Tensor t = flat.as_strided(sizes, positive, start, loc);
  return flipped.empty() ? t : t.flip(flipped, loc);
}

DLManagedTensor *strata::to_dlpack(const Tensor &t, SourceLoc loc) {
  const TensorImpl &impl = implOf(t, loc);
  TraceLock lock;
  // The consumer may read and write the memory at once (the legacy DLPack
  // protocol has no stream): every pending reader and writer of the
  // storage runs first and a CUDA stream is done (settleStorage).
  settleStorage(*impl.root, loc);
  const bool onCuda =
      impl.root->home && impl.root->home->device() == runtime::DeviceKind::CUDA;
  auto *ctx = new ExportContext;
  ctx->keep = impl.root->home;
  ctx->shape = impl.layout.sizes;
  ctx->strides = impl.layout.strides;
  DLTensor &dl = ctx->managed.dl_tensor;
  dl.data = ctx->keep ? ctx->keep->data() : nullptr;
  dl.device = {onCuda ? kDLCUDA : kDLCPU, 0};
  dl.ndim = static_cast<int32_t>(ctx->shape.size());
  dl.dtype = dlDtype(impl.dtype);
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset =
      static_cast<uint64_t>(impl.layout.offset * elementSize(impl.dtype));
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](DLManagedTensor *self) {
    delete static_cast<ExportContext *>(self->manager_ctx);
  };
  return &ctx->managed;
}
