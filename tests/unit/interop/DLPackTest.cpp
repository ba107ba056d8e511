//===- DLPackTest.cpp - from_dlpack / to_dlpack share memory --------------===//
#include "strata/strata.h"

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

using namespace strata;

namespace {
/// The CUDA tests below wrap fake device addresses: no driver may ever see
/// them, so this binary runs without one even on a GPU machine (the driver
/// is loaded on first use, after this).
const bool kNoDriver = [] {
  return setenv("STRATA_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1) == 0;
}();

/// A foreign f32 buffer with DLPack metadata; counts deleter calls.
struct Foreign {
  std::vector<float> data;
  std::vector<int64_t> shape, strides;
  int deletes = 0;
  DLManagedTensor managed{};

  Foreign(std::vector<float> values, Shape sizes, Shape strideList,
          uint64_t byteOffset)
      : data(std::move(values)), shape(std::move(sizes)),
        strides(std::move(strideList)) {
    DLTensor &t = managed.dl_tensor;
    t.data = data.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = byteOffset;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor *self) {
      ++static_cast<Foreign *>(self->manager_ctx)->deletes;
    };
  }
};

std::vector<float> iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = static_cast<float>(i);
  return v;
}
} // namespace

TEST(DLPack, ImportSharesMemoryAndKeepsLayout) {
  // A transposed 3x4 view starting at element 2 of a 14-element buffer.
  Foreign f(iota(14), {4, 3}, {1, 4}, 2 * sizeof(float));
  {
    Tensor t = from_dlpack(&f.managed);
    EXPECT_EQ(t.sizes(), (Shape{4, 3}));
    EXPECT_EQ(t.strides(), (Shape{1, 4}));
    EXPECT_EQ(t.storage_offset(), 2);
    EXPECT_EQ(t.dtype(), kFloat32);
    EXPECT_EQ(t.data_ptr(), static_cast<void *>(f.data.data() + 2));
    EXPECT_EQ(t.to_vector<float>(),
              (std::vector<float>{2, 6, 10, 3, 7, 11, 4, 8, 12, 5, 9, 13}));
    // Compute reads the foreign memory through the strides.
    EXPECT_FLOAT_EQ((t * 2).sum().item<float>(), 2 * 90);
    Tensor row = t.select(1, 0); // a second view of the same storage
    t = Tensor();
    EXPECT_EQ(f.deletes, 0) << "a view is still alive";
    // Writes go to the foreign buffer.
    row.fill_(-1).eval();
    EXPECT_EQ(f.data[2], -1);
    EXPECT_EQ(f.data[5], -1);
    EXPECT_EQ(f.data[6], 6);
  }
  EXPECT_EQ(f.deletes, 1);
}

TEST(DLPack, NullStridesAreRowMajor) {
  Foreign f(iota(6), {2, 3}, {}, 0);
  {
    Tensor t = from_dlpack(&f.managed);
    EXPECT_EQ(t.strides(), (Shape{3, 1}));
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_EQ(t[1].to_vector<float>(), (std::vector<float>{3, 4, 5}));
  }
  EXPECT_EQ(f.deletes, 1);
}

TEST(DLPack, NegativeStrides) {
  // Reversed: element 0 is the last of the buffer.
  Foreign f(iota(5), {5}, {-1}, 4 * sizeof(float));
  {
    Tensor t = from_dlpack(&f.managed);
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{4, 3, 2, 1, 0}));
    EXPECT_EQ(t.strides(), (Shape{-1}));
    EXPECT_EQ(t.data_ptr(), static_cast<void *>(f.data.data() + 4));
  }
  EXPECT_EQ(f.deletes, 1);
  // 2-D, one dim reversed, element 0 in the middle of the buffer.
  Foreign g(iota(6), {2, 3}, {3, -1}, 2 * sizeof(float));
  {
    Tensor t = from_dlpack(&g.managed);
    EXPECT_EQ(t.strides(), (Shape{3, -1}));
    EXPECT_EQ(t.storage_offset(), 2);
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{2, 1, 0, 5, 4, 3}));
  }
  EXPECT_EQ(g.deletes, 1);
}

TEST(DLPack, UnsupportedInputThrowsAndTakesNothing) {
  Foreign f(iota(4), {4}, {}, 0);
  f.managed.dl_tensor.dtype = {kDLFloat, 16, 1};
  EXPECT_THROW(from_dlpack(&f.managed), Error);
  f.managed.dl_tensor.dtype = {kDLFloat, 32, 1};
  f.managed.dl_tensor.device = {kDLOpenCL, 0};
  try {
    from_dlpack(&f.managed);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("device type 4"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(f.deletes, 0);
  EXPECT_THROW(from_dlpack(nullptr), Error);
}

TEST(DLPack, PinnedHostMemoryIsCpuMemory) {
  // kDLCUDAHost (cudaMallocHost) is host memory the CPU reads directly, as
  // NumPy's from_dlpack takes it (PyTorch 1.13 refuses it).
  Foreign f(iota(6), {3, 2}, {}, 0);
  f.managed.dl_tensor.device = {kDLCUDAHost, 0};
  {
    Tensor t = from_dlpack(&f.managed);
    EXPECT_TRUE(t.device().is_cpu());
    EXPECT_EQ(t.data_ptr(), static_cast<void *>(f.data.data()));
    EXPECT_EQ(t.t()[1].to_vector<float>(), (std::vector<float>{1, 3, 5}));
    DLManagedTensor *m = to_dlpack(t);
    EXPECT_EQ(m->dl_tensor.device.device_type, kDLCPU);
    m->deleter(m);
  }
  EXPECT_EQ(f.deletes, 1);
}

TEST(DLPack, ExportKeepsStorageAliveUntilDeleter) {
  Tensor base = arange(24, kFloat64).reshape({4, 6});
  Tensor v = base.slice(1, 1, 5, 2).t(); // non-contiguous, offset 1
  DLManagedTensor *m = to_dlpack(v);
  const DLTensor &dl = m->dl_tensor;
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(dl.dtype.code, kDLFloat);
  EXPECT_EQ(dl.dtype.bits, 64);
  ASSERT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.shape[0], 2);
  EXPECT_EQ(dl.shape[1], 4);
  EXPECT_EQ(dl.strides[0], 2);
  EXPECT_EQ(dl.strides[1], 6);
  EXPECT_EQ(dl.byte_offset, sizeof(double));
  EXPECT_EQ(static_cast<char *>(dl.data) + dl.byte_offset, v.data_ptr());
  long before = v.storage().use_count();
  base = Tensor();
  v = Tensor();
  // The storage lives on in the DLPack tensor: read it from there.
  const double *p = reinterpret_cast<const double *>(
      static_cast<char *>(dl.data) + dl.byte_offset);
  EXPECT_EQ(p[1 * dl.strides[0] + 3 * dl.strides[1]], 21);
  EXPECT_GT(before, 1);
  m->deleter(m);
}

TEST(DLPack, RoundTripIsZeroCopy) {
  Tensor a = arange(12, kInt32).reshape({3, 4}).narrow(1, 1, 2);
  DLManagedTensor *m = to_dlpack(a);
  Tensor b = from_dlpack(m); // b owns m now; its deleter runs with b
  EXPECT_EQ(b.data_ptr(), a.data_ptr());
  EXPECT_EQ(b.sizes(), a.sizes());
  EXPECT_EQ(b.strides(), a.strides());
  EXPECT_EQ(b.storage_offset(), a.storage_offset());
  EXPECT_EQ(b.dtype(), kInt32);
  EXPECT_EQ(b.to_vector<int32_t>(), a.to_vector<int32_t>());
  // Through DLPack and back, a stays alive after b dies, and vice versa.
  Tensor c = from_dlpack(to_dlpack(b));
  a = Tensor();
  b = Tensor();
  EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 5, 6, 9, 10}));
}

TEST(DLPack, BoolRoundTrip) {
  Tensor a = arange(6, kInt64) > 2;
  Tensor b = from_dlpack(to_dlpack(a));
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(b.to_vector<bool>(),
            (std::vector<bool>{false, false, false, true, true, true}));
}

//===--- CUDA memory: pure metadata, no driver
//-----------------------------===//

namespace {
/// A DLManagedTensor over a fake, never dereferenced device address.
struct ForeignCuda {
  std::vector<int64_t> shape, strides;
  int deletes = 0;
  DLManagedTensor managed{};

  ForeignCuda(uintptr_t address, Shape sizes, Shape strideList,
              uint64_t byteOffset, DLDataType dtype = {kDLFloat, 32, 1},
              int deviceId = 0)
      : shape(std::move(sizes)), strides(std::move(strideList)) {
    DLTensor &t = managed.dl_tensor;
    t.data = reinterpret_cast<void *>(address);
    t.device = {kDLCUDA, deviceId};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = byteOffset;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor *self) {
      ++static_cast<ForeignCuda *>(self->manager_ctx)->deletes;
    };
  }
};

/// 256-byte aligned, like cudaMalloc's; far from anything mapped here.
constexpr uintptr_t kFakeDevice = 0x7e5a00000000;

char *fake(uintptr_t byteOffset = 0) {
  return reinterpret_cast<char *>(kFakeDevice + byteOffset);
}

/// Expects `f` to throw strata::Error whose message names the missing
/// CUDA device and whose location is this file.
template <typename F> void expectNoCudaDevice(const char *what, F &&f) {
  try {
    f();
    ADD_FAILURE() << what << ": expected strata::Error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device: "), std::string::npos)
        << what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("DLPackTest.cpp"), std::string::npos)
        << what << ": " << e.what();
  }
}
} // namespace

TEST(DLPackCuda, ImportWrapsDeviceMemoryWithoutADriver) {
  ASSERT_TRUE(kNoDriver);
  // A transposed 3x4 view starting at element 2 of a 14-element buffer.
  ForeignCuda f(kFakeDevice, {4, 3}, {1, 4}, 2 * sizeof(float));
  {
    Tensor t = from_dlpack(&f.managed);
    EXPECT_EQ(t.sizes(), (Shape{4, 3}));
    EXPECT_EQ(t.strides(), (Shape{1, 4}));
    EXPECT_EQ(t.storage_offset(), 2);
    EXPECT_EQ(t.dtype(), kFloat32);
    EXPECT_EQ(t.device(), Device::cuda(0));
    EXPECT_TRUE(t.is_materialized());
    Storage s = t.storage();
    EXPECT_TRUE(s.device().is_cuda());
    EXPECT_EQ(s.data_ptr(), fake());
    EXPECT_EQ(s.nbytes(), 14 * 4); // elements 0 .. 2 + 3*1 + 2*4
    EXPECT_EQ(t.data_ptr(), fake(2 * sizeof(float)));
    EXPECT_EQ(t.data_ptr<float>(), reinterpret_cast<float *>(fake(8)));
    // Views are metadata: on the device, same storage, no driver needed.
    Tensor row = t.select(1, 2);
    EXPECT_EQ(row.device(), Device::cuda(0));
    EXPECT_EQ(row.data_ptr(), fake((2 + 8) * sizeof(float)));
    EXPECT_TRUE(row.storage().is_alias_of(s));
    Tensor v = t.t().narrow(1, 1, 2).unsqueeze(0);
    EXPECT_EQ(v.sizes(), (Shape{1, 3, 2}));
    EXPECT_EQ(v.data_ptr(), fake(3 * sizeof(float)));
    t = Tensor();
    s = Storage();
    v = Tensor();
    EXPECT_EQ(f.deletes, 0) << "a view is still alive";
    row = Tensor();
    EXPECT_EQ(f.deletes, 1) << "the last view died";
  }
  EXPECT_EQ(f.deletes, 1);
}

TEST(DLPackCuda, NullStridesNegativeStridesAndDtypes) {
  ForeignCuda rowMajor(kFakeDevice, {2, 3}, {}, 0, {kDLInt, 64, 1});
  {
    Tensor t = from_dlpack(&rowMajor.managed);
    EXPECT_EQ(t.dtype(), kInt64);
    EXPECT_EQ(t.strides(), (Shape{3, 1}));
    EXPECT_EQ(t.storage().nbytes(), 6 * 8);
    EXPECT_EQ(t[1].data_ptr(), fake(3 * 8));
  }
  EXPECT_EQ(rowMajor.deletes, 1);
  // Reversed: element 0 is the buffer's element 4 (the storage starts at
  // the lowest address, the foreign data pointer).
  ForeignCuda reversed(kFakeDevice, {5}, {-1}, 4 * sizeof(double),
                       {kDLFloat, 64, 1});
  {
    Tensor t = from_dlpack(&reversed.managed);
    EXPECT_EQ(t.strides(), (Shape{-1}));
    EXPECT_EQ(t.storage_offset(), 4);
    EXPECT_EQ(t.storage().data_ptr(), fake());
    EXPECT_EQ(t.data_ptr(), fake(4 * sizeof(double)));
  }
  EXPECT_EQ(reversed.deletes, 1);
  // A byte offset that is no multiple of the element size: the storage
  // starts at the first element.
  ForeignCuda odd(kFakeDevice, {3}, {1}, 2, {kDLInt, 32, 1});
  {
    Tensor t = from_dlpack(&odd.managed);
    EXPECT_EQ(t.storage_offset(), 0);
    EXPECT_EQ(t.data_ptr(), fake(2));
  }
  EXPECT_EQ(odd.deletes, 1);
  ForeignCuda flags(kFakeDevice, {4}, {}, 0, {kDLUInt, 8, 1});
  EXPECT_EQ(from_dlpack(&flags.managed).dtype(), kBool);
  EXPECT_EQ(flags.deletes, 1);
}

TEST(DLPackCuda, ExportGivesTheSameDeviceMemoryBack) {
  ForeignCuda f(kFakeDevice, {4, 3}, {1, 4}, 2 * sizeof(float));
  const DLTensor &in = f.managed.dl_tensor;
  Tensor t = from_dlpack(&f.managed);
  DLManagedTensor *m = to_dlpack(t);
  const DLTensor &out = m->dl_tensor;
  EXPECT_EQ(out.device.device_type, kDLCUDA);
  EXPECT_EQ(out.device.device_id, 0);
  EXPECT_EQ(out.data, in.data);
  EXPECT_EQ(out.byte_offset, in.byte_offset);
  EXPECT_EQ(out.dtype.code, in.dtype.code);
  EXPECT_EQ(out.dtype.bits, in.dtype.bits);
  EXPECT_EQ(out.dtype.lanes, in.dtype.lanes);
  ASSERT_EQ(out.ndim, in.ndim);
  for (int d = 0; d < in.ndim; ++d) {
    EXPECT_EQ(out.shape[d], in.shape[d]);
    EXPECT_EQ(out.strides[d], in.strides[d]);
  }
  // A view exports with its own layout over the same buffer.
  DLManagedTensor *col = to_dlpack(t.select(1, 1));
  EXPECT_EQ(col->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(col->dl_tensor.data, in.data);
  EXPECT_EQ(col->dl_tensor.byte_offset, (2 + 4) * sizeof(float));
  ASSERT_EQ(col->dl_tensor.ndim, 1);
  EXPECT_EQ(col->dl_tensor.shape[0], 4);
  EXPECT_EQ(col->dl_tensor.strides[0], 1);
  // The exports keep the foreign buffer alive after every tensor died.
  t = Tensor();
  EXPECT_EQ(f.deletes, 0);
  col->deleter(col);
  EXPECT_EQ(f.deletes, 0);
  // Re-imported: still the same memory; the last owner releases it once.
  Tensor back = from_dlpack(m);
  EXPECT_EQ(back.device(), Device::cuda(0));
  EXPECT_EQ(back.data_ptr(), fake(2 * sizeof(float)));
  EXPECT_EQ(back.strides(), (Shape{1, 4}));
  EXPECT_EQ(f.deletes, 0);
  back = Tensor();
  EXPECT_EQ(f.deletes, 1);
}

TEST(DLPackCuda, WhatNeedsTheDeviceSaysNoCudaDevice) {
  ForeignCuda f(kFakeDevice, {2, 3}, {}, 0);
  {
    Tensor t = from_dlpack(&f.managed);
    expectNoCudaDevice("to_vector", [&] { (void)t.to_vector<float>(); });
    expectNoCudaDevice("item", [&] { (void)t[0][0].item<float>(); });
    expectNoCudaDevice("toString", [&] { (void)t.toString(); });
    expectNoCudaDevice("to(kCPU)", [&] { (void)t.to(kCPU); });
    expectNoCudaDevice("t.t().to(kCPU)", [&] { (void)t.t().to(kCPU); });
    expectNoCudaDevice("compute", [&] { (t * 2 + 1).eval(); });
    expectNoCudaDevice("reduction", [&] { (void)t.sum().item<float>(); });
    expectNoCudaDevice("clone", [&] { t.clone().eval(); });
    expectNoCudaDevice("host upload", [&] { (void)arange(3).to(t.device()); });
    // Mixing devices is PyTorch's error, before any driver call.
    try {
      (void)(t + ones({2, 3}));
      ADD_FAILURE() << "expected strata::Error";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("same device"), std::string::npos)
          << e.what();
    }
    // Metadata still works after the errors.
    EXPECT_EQ(t.data_ptr(), fake());
    EXPECT_EQ(t.device(), Device::cuda(0));
    // An in-place write is recorded, then cannot run.
    expectNoCudaDevice("in place", [&] { t.fill_(1).eval(); });
    EXPECT_EQ(t.sizes(), (Shape{2, 3}));
  }
  EXPECT_EQ(f.deletes, 1);
  // CPU tensors are unaffected.
  EXPECT_EQ(arange(3).sum().item<int64_t>(), 3);
}

TEST(DLPackCuda, RefusedWithoutTakingOwnership) {
  ForeignCuda second(kFakeDevice, {4}, {}, 0, {kDLFloat, 32, 1}, 1);
  try {
    from_dlpack(&second.managed);
    ADD_FAILURE() << "expected strata::Error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("cuda:1"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("cuda:0 only"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(second.deletes, 0);
  ForeignCuda managedMemory(kFakeDevice, {4}, {}, 0);
  managedMemory.managed.dl_tensor.device = {kDLCUDAManaged, 0};
  try {
    from_dlpack(&managedMemory.managed);
    ADD_FAILURE() << "expected strata::Error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("kDLCUDAManaged"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(managedMemory.deletes, 0);
  ForeignCuda half(kFakeDevice, {4}, {}, 0, {kDLFloat, 16, 1});
  EXPECT_THROW(from_dlpack(&half.managed), Error);
  EXPECT_EQ(half.deletes, 0);
}
