//===- NonzeroOps.cpp - nonzero, argwhere, masked_select: sized by values ===//
//
// PyTorch 1.13's ops whose result size depends on values. strata records
// ops lazily, but a recorded op needs its result's sizes, so these read
// the values that decide the size at the call (docs/ops.md "Index",
// value-dependent sizes), as the index ops read their indices: a pending input
// is evaluated there, in one program with whatever pending ops produce it
// (PyTorch's CUDA kernels sync at the same point).
//
// What is read is a row-major bool buffer: `x != 0` for nonzero (one
// fused kernel; a contiguous bool tensor is read as it is), the mask
// expanded to the broadcast shape for masked_select (a copy only when the
// mask is not already dense in that shape). The host counts its set bytes,
// then writes the result straight into a new int64 tensor: nonzero's
// result (a leaf, no gradient: integers) or masked_select's positions.
// masked_select reads only the mask: its result is self flattened, then an
// index_select of the selected positions (broadcast dims of self map to
// stride 0, so a broadcast self is never copied to the broadcast shape), so
// self may stay pending and its gradient is index_select's scatter_add
// (PyTorch's masked_select backward adds over broadcast dims the same way).
//
//===----------------------------------------------------------------------===//
#include "CompositeNode.h"
#include "Impl.h"

#include <algorithm>
#include <cstdint>

using namespace strata;
using namespace strata::detail;

namespace {

/// The elements of a bool tensor, row-major, in host memory: evaluates it
/// (the sync), copies it when it is not dense or not on the CPU. `keep`
/// owns the bytes while they are read.
const uint8_t *hostFlags(const Tensor &flags, Tensor &keep,
                         const SourceLoc &loc) {
  keep = flags.contiguous(loc);
  if (!keep.device(loc).is_cpu())
    keep = keep.to(Device::cpu(), loc);
  keep.eval(loc);
  const TensorImpl &t = *keep.impl();
  if (t.layout.numel() == 0)
    return nullptr;
  return t.root->home->data() + t.layout.offset;
}

/// The number of set bytes among `n`.
int64_t countSet(const uint8_t *flags, int64_t n) {
  return flags ? std::count_if(flags, flags + n, [](uint8_t b) { return b; })
               : 0;
}

/// Calls `f(coords)` for each set byte of `flags`, row-major over `shape`:
/// a loop over the last dim inside an odometer over the others.
template <typename F>
void forEachSet(const uint8_t *flags, const Shape &shape, F f) {
  int64_t n = layout::contiguous(shape).numel();
  if (n == 0)
    return;
  Shape coords(shape.size(), 0);
  if (shape.empty()) {
    if (flags[0])
      f(coords);
    return;
  }
  int64_t inner = shape.back();
  for (int64_t base = 0; base < n; base += inner) {
    for (int64_t j = 0; j < inner; ++j)
      if (flags[base + j]) {
        coords.back() = j;
        f(coords);
      }
    for (size_t d = shape.size() - 1; d-- > 0;) {
      if (++coords[d] < shape[d])
        break;
      coords[d] = 0;
    }
  }
}

/// A new int64 CPU tensor of `sizes` whose elements `fill(p)` writes.
template <typename F>
Tensor int64Result(const Shape &sizes, F fill, const SourceLoc &loc) {
  Tensor r = empty(sizes, TensorOptions(DType::I64), loc);
  if (r.numel(loc) > 0)
    fill(r.data_ptr<int64_t>(loc));
  return r;
}

/// The same tensor on `device` (the CPU's own tensor when it is the CPU).
Tensor onDevice(const Tensor &t, const Device &device, const SourceLoc &loc) {
  return device.is_cpu() ? t : t.to(device, loc);
}

} // namespace

Tensor Tensor::nonzero(SourceLoc loc) const {
  const TensorImpl &self = implOf(*this, loc);
  Tensor flags =
      self.dtype == DType::Bool
          ? *this
          : ne(scalarTensor(Scalar(int64_t{0}), self.dtype, loc), loc);
  const Shape &shape = self.layout.sizes;
  int64_t rank = static_cast<int64_t>(shape.size());
  TraceLock lock; // no write lands while the flags are read
  Tensor keep;
  const uint8_t *p = hostFlags(flags, keep, loc);
  int64_t n = countSet(p, self.layout.numel());
  Tensor r = int64Result(
      {n, rank},
      [&](int64_t *out) {
        forEachSet(p, shape, [&](const Shape &coords) {
          out = std::copy(coords.begin(), coords.end(), out);
        });
      },
      loc);
  return onDevice(r, device(loc), loc);
}

Tensor Tensor::argwhere(SourceLoc loc) const { return nonzero(loc); }

Tensor Tensor::masked_select(const Tensor &mask, SourceLoc loc) const {
  const TensorImpl &self = implOf(*this, loc);
  const TensorImpl &m = implOf(mask, loc);
  if (m.dtype != DType::Bool)
    fail("masked_select: expected BoolTensor or ByteTensor for mask",
         "pass a bool mask (a comparison such as x > 0, or mask.to(kBool)); "
         "strata has no uint8",
         loc);
  Shape shape =
      check(layout::broadcastShapes(self.layout.sizes, m.layout.sizes,
                                    "masked_select"),
            loc,
            "self and mask broadcast when, aligned at the last dim, each pair "
            "of sizes is equal or one of them is 1");
  // Position of each broadcast element in self flattened: self's row-major
  // strides, 0 along the dims that broadcast.
  layout::Layout inSelf =
      check(layout::expand(layout::contiguous(self.layout.sizes), shape), loc);
  TraceLock lock;
  Tensor keep;
  const uint8_t *p = hostFlags(mask.expand(shape, loc), keep, loc);
  Tensor positions = int64Result(
      {countSet(p, inSelf.numel())},
      [&](int64_t *out) {
        forEachSet(p, shape, [&](const Shape &coords) {
          int64_t at = 0;
          for (size_t d = 0; d < coords.size(); ++d)
            at += coords[d] * inSelf.strides[d];
          *out++ = at;
        });
      },
      loc);
  Tensor index = onDevice(positions, device(loc), loc);
  Tensor flat = reshape({self.layout.numel()}, loc);
  return composite(flat.index_select(0, index, loc), "MaskedSelectBackward0",
                   {this});
}

Tensor strata::nonzero(const Tensor &t, SourceLoc loc) {
  return t.nonzero(loc);
}
Tensor strata::argwhere(const Tensor &t, SourceLoc loc) {
  return t.argwhere(loc);
}
Tensor strata::masked_select(const Tensor &t, const Tensor &mask,
                             SourceLoc loc) {
  return t.masked_select(mask, loc);
}
