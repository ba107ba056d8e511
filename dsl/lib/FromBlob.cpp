//===- FromBlob.cpp - a tensor over memory strata does not own -----------===//
//
// LibTorch's from_blob: the memory becomes a runtime::Storage that wraps it
// (no allocator, no copy; the deleter, if any, as its release), the root of
// a leaf with the given sizes and strides. Not a view: PyTorch's from_blob
// tensor has no base.
//
//===----------------------------------------------------------------------===//
#include "Impl.h"

#include <string>

using namespace strata;
using namespace strata::detail;

namespace {

Tensor wrapBlob(void *data, const Shape &sizes, const Shape *strides,
                std::function<void(void *)> deleter, TensorOptions options,
                const SourceLoc &loc) {
  DType dtype = options.has_dtype() ? options.dtype() : DType::F32;
  checkFactorySizes(sizes, "from_blob", dtype, loc);
  Shape st = strides ? *strides : layout::contiguousStrides(sizes);
  if (st.size() != sizes.size())
    fail("from_blob: " + std::to_string(st.size()) + " strides for " +
             std::to_string(sizes.size()) + " sizes",
         "pass one stride per dimension", loc);
  for (int64_t s : st)
    if (s < 0)
      fail("from_blob: negative stride " + std::to_string(s) + " in " +
               layout::formatList(st),
           "pass non-negative strides (flip() the tensor afterwards)", loc);
  layout::Layout l{sizes, st, 0};
  int64_t numel = layout::requiredStorageSize(l);
  if (!data && numel > 0)
    fail("from_blob: a null pointer for " + std::to_string(l.numel()) +
             " elements",
         "pass the address of the memory to wrap", loc);
  checkDevice(options.device(), loc);
  bool onCuda = options.device().is_cuda();
  runtime::StoragePtr buffer = runtime::Storage::wrapExternal(
      data, static_cast<size_t>(numel * elementSize(dtype)),
      onCuda ? runtime::DeviceKind::CUDA : runtime::DeviceKind::CPU,
      [data, deleter = std::move(deleter)] {
        if (deleter)
          deleter(data);
      });
  // From here the deleter runs with `buffer`, also if makeLeaf throws.
  Tensor t = makeLeaf(std::move(buffer), dtype, {numel},
                      TensorOptions(options).dtype(dtype), "from_blob", loc);
  t.impl()->layout = l; // a leaf over the whole blob, not a view of it
  return t;
}

} // namespace

Tensor strata::from_blob(void *data, const Shape &sizes, TensorOptions options,
                         SourceLoc loc) {
  return wrapBlob(data, sizes, nullptr, nullptr, options, loc);
}

Tensor strata::from_blob(void *data, const Shape &sizes, const Shape &strides,
                         TensorOptions options, SourceLoc loc) {
  return wrapBlob(data, sizes, &strides, nullptr, options, loc);
}

Tensor strata::from_blob(void *data, const Shape &sizes,
                         const std::function<void(void *)> &deleter,
                         TensorOptions options, SourceLoc loc) {
  return wrapBlob(data, sizes, nullptr, deleter, options, loc);
}

Tensor strata::from_blob(void *data, const Shape &sizes, const Shape &strides,
                         const std::function<void(void *)> &deleter,
                         TensorOptions options, SourceLoc loc) {
  return wrapBlob(data, sizes, &strides, deleter, options, loc);
}
