//===- JitValue.cpp - host values of the JIT ------------------------------===//
#include "strata/JIT/Jit.h"
#include "strata/Layout/LayoutAlgebra.h"

#include <cmath>
#include <cstring>

using namespace strata::jit;

int64_t JitValue::numel() const {
  if (isStorage)
    return storageElements();
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

int64_t JitValue::storageElements() const {
  return buffer ? static_cast<int64_t>(buffer->size()) / elementSize(dtype) : 0;
}

double strata::jit::loadElement(const unsigned char *p, DType dtype) {
  switch (dtype) {
  case DType::F32: {
    float v;
    memcpy(&v, p, 4);
    return v;
  }
  case DType::F64: {
    double v;
    memcpy(&v, p, 8);
    return v;
  }
  case DType::I32: {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  case DType::Bool:
    return *p ? 1.0 : 0.0;
  }
  return 0;
}

void strata::jit::storeElement(unsigned char *p, DType dtype, double v) {
  switch (dtype) {
  case DType::F32: {
    float x = static_cast<float>(v);
    memcpy(p, &x, 4);
    break;
  }
  case DType::F64:
    memcpy(p, &v, 8);
    break;
  case DType::I32: {
    int32_t x =
        std::isnan(v) ? 0 : static_cast<int32_t>(static_cast<int64_t>(v));
    memcpy(p, &x, 4);
    break;
  }
  case DType::I64: {
    int64_t x = std::isnan(v) ? 0 : static_cast<int64_t>(v);
    memcpy(p, &x, 8);
    break;
  }
  case DType::Bool:
    *p = v != 0 ? 1 : 0;
    break;
  }
}

double JitValue::storageAt(int64_t i) const {
  return loadElement(buffer->data() + i * elementSize(dtype), dtype);
}

void JitValue::setStorageAt(int64_t i, double v) {
  storeElement(buffer->data() + i * elementSize(dtype), dtype, v);
}

std::vector<double> JitValue::elements() const {
  std::vector<double> out;
  if (isStorage) {
    for (int64_t i = 0, n = storageElements(); i < n; ++i)
      out.push_back(storageAt(i));
    return out;
  }
  int64_t n = numel();
  out.reserve(n);
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t at = offset;
    for (size_t d = 0; d < sizes.size(); ++d)
      at += index[d] * strides[d];
    out.push_back(storageAt(at));
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

JitValue JitValue::strided(DType dtype, std::vector<int64_t> sizes,
                           std::vector<int64_t> strides, int64_t offset,
                           const std::vector<double> &storageData) {
  JitValue v;
  v.dtype = dtype;
  v.buffer =
      strata::runtime::Storage::create(storageData.size() * elementSize(dtype));
  for (size_t i = 0; i < storageData.size(); ++i)
    v.setStorageAt(i, storageData[i]);
  v.sizes = std::move(sizes);
  v.strides = std::move(strides);
  v.offset = offset;
  return v;
}

JitValue JitValue::fresh(DType dtype, std::vector<int64_t> sizes,
                         const std::vector<double> &rowMajor) {
  std::vector<int64_t> strides = strata::layout::contiguousStrides(sizes);
  return strided(dtype, std::move(sizes), std::move(strides), 0, rowMajor);
}

JitValue JitValue::storage(DType dtype, const std::vector<double> &data) {
  JitValue v =
      strided(dtype, {static_cast<int64_t>(data.size())}, {1}, 0, data);
  v.isStorage = true;
  return v;
}
