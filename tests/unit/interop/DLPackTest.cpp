//===- DLPackTest.cpp - from_dlpack / to_dlpack share memory --------------===//
#include "strata/strata.h"

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <vector>

using namespace strata;

namespace {
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
  f.managed.dl_tensor.device = {kDLCUDA, 0};
  try {
    from_dlpack(&f.managed);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos);
  }
  EXPECT_EQ(f.deletes, 0);
  EXPECT_THROW(from_dlpack(nullptr), Error);
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
