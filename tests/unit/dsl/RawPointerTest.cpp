//===- RawPointerTest.cpp - raw memory is handed out only when settled ----===//
//
// data_ptr(), storage().data_ptr() and to_dlpack hand out a storage's
// memory only after every pending reader and writer of it has run (issue
// 17, "Raw pointers are safe"). Each test records a program, takes the
// pointer, writes through it and reads the results: the expected values
// are the eager ones (PyTorch runs each op when it is called, so a write
// through `a.data_ptr()` or `a.numpy()` is seen by what is computed after
// it and by nothing computed before), worked out by plain C++ arithmetic
// beside each program.
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <dlpack/dlpack.h>

#include <gtest/gtest.h>

using namespace strata;
using V = std::vector<float>;

namespace {

Tensor leaf(const V &v) {
  return from_vector(v, {static_cast<int64_t>(v.size())});
}

V plus(V v, float s) {
  for (float &x : v)
    x += s;
  return v;
}
V times(V v, float s) {
  for (float &x : v)
    x *= s;
  return v;
}

} // namespace

// PyTorch: a = tensor([1,2,3,4]); b = a + 1; a.numpy()[0] = 100;
// c = a * 2 -> b = [2,3,4,5], c = [200,4,6,8].
TEST(RawPointer, PendingReaderOfTheStorageRunsFirst) {
  V av = {1, 2, 3, 4};
  Tensor a = leaf(av);
  Tensor b = a + 1;
  float *p = a.data_ptr<float>();
  V bEager = plus(av, 1);
  p[0] = 100;
  av[0] = 100;
  Tensor c = a * 2;
  EXPECT_EQ(b.to_vector<float>(), bEager);
  EXPECT_EQ(c.to_vector<float>(), times(av, 2));
  EXPECT_EQ(a.to_vector<float>(), av);
}

// A reader of the version a pending in-place write makes: data_ptr runs
// the write and the reader before handing the memory out.
TEST(RawPointer, ReadersOfAPendingWriteRunFirst) {
  V av = {1, 2, 3, 4};
  Tensor a = leaf(av);
  Tensor before = a + 1; // reads the old version
  a.mul_(3);
  Tensor after = a - 1; // reads the written version
  V beforeEager = plus(av, 1);
  av = times(av, 3);
  V afterEager = plus(av, -1);
  float *p = a.data_ptr<float>();
  EXPECT_EQ(V(p, p + 4), av); // the pending write has run
  p[3] = -7;
  av[3] = -7;
  EXPECT_EQ(before.to_vector<float>(), beforeEager);
  EXPECT_EQ(after.to_vector<float>(), afterEager);
  EXPECT_EQ((a + 0).to_vector<float>(), av);
}

// Readers through views, and the pointer of a view: base + offset.
TEST(RawPointer, ViewsShareTheRule) {
  V av = {0, 1, 2, 3, 4, 5, 6, 7};
  Tensor a = leaf(av);
  Tensor rowSum = a.view({2, 4}).narrow(1, 1, 2).sum({1}); // 1+2, 5+6
  Tensor tail = a.slice(0, 4, 8) * 10;
  Tensor v = a.narrow(0, 2, 3);
  float *q = v.data_ptr<float>();
  EXPECT_EQ(q, a.data_ptr<float>() + 2);
  q[0] = 50;  // a[2]
  q[2] = -40; // a[4]
  av[2] = 50;
  av[4] = -40;
  EXPECT_EQ(rowSum.to_vector<float>(), (V{3, 11}));
  EXPECT_EQ(tail.to_vector<float>(), (V{40, 50, 60, 70}));
  EXPECT_EQ(v.to_vector<float>(), (V{50, 3, -40}));
  EXPECT_EQ((a.view({2, 4}).narrow(1, 1, 2).sum({1})).to_vector<float>(),
            (V{1 + 50, 5 + 6}));
}

// A pending write through a view of the storage is in the memory handed
// out; a pending write of another storage that reads this one runs first.
TEST(RawPointer, PendingWritesRunFirst) {
  V av = {1, 2, 3, 4, 5, 6};
  Tensor a = leaf(av);
  a.narrow(0, 1, 3).add_(10);
  for (int i = 1; i < 4; ++i)
    av[i] += 10;
  Tensor c = zeros({6});
  c.copy_(a); // pending, reads a
  V cEager = av;
  float *p = a.data_ptr<float>();
  EXPECT_EQ(V(p, p + 6), av);
  p[5] = 0;
  av[5] = 0;
  EXPECT_EQ(c.to_vector<float>(), cEager);
  EXPECT_EQ(a.to_vector<float>(), av);
}

// A temporary left pending by an evaluation (recomputed from its inputs
// when read later) is a reader too.
TEST(RawPointer, DeferredTemporariesRunFirst) {
  V av = {1, 2, 3};
  Tensor a = leaf(av);
  Tensor t = a * 2;
  Tensor u = (t + 1).relu();
  u.eval(); // t stays pending: only a handle refers to it
  V tEager = times(av, 2);
  float *p = a.data_ptr<float>();
  p[0] = -100;
  EXPECT_EQ(t.to_vector<float>(), tEager);
  EXPECT_EQ(u.to_vector<float>(), (V{3, 5, 7}));
}

// A Storage handle settles when its pointer is taken, not when the handle
// was made: `b` is recorded between the two, so it runs before the write.
TEST(RawPointer, StorageHandleSettlesWhenThePointerIsTaken) {
  V av = {1, 2, 3};
  Tensor a = leaf(av);
  Storage s = a.storage();
  Tensor b = a.flip({0}) + 1;
  static_cast<float *>(s.data_ptr())[2] = 9;
  EXPECT_EQ(b.to_vector<float>(), (V{4, 3, 2}));
  EXPECT_EQ((a + 1).to_vector<float>(), (V{2, 3, 10}));
}

// to_dlpack hands its consumer memory it may write at once (NumPy's
// from_dlpack, then a write).
TEST(RawPointer, DlpackExportSettlesTheStorage) {
  V av = {1, 2, 3, 4};
  Tensor a = leaf(av);
  Tensor b = a.sum();
  DLManagedTensor *m = to_dlpack(a.narrow(0, 1, 2));
  float *p = reinterpret_cast<float *>(static_cast<char *>(m->dl_tensor.data) +
                                       m->dl_tensor.byte_offset);
  p[0] = 20; // a[1]
  m->deleter(m);
  EXPECT_EQ(b.item<float>(), 10);
  EXPECT_EQ(a.sum().item<float>(), 1 + 20 + 3 + 4);
}

// The loop a user writes: fill a buffer through its pointer every step,
// record a step that reads it, keep the step's result. Every step sees
// its own data and no other.
TEST(RawPointer, PointerEveryStep) {
  Tensor a = zeros({4});
  std::vector<Tensor> steps;
  for (int step = 0; step < 20; ++step) {
    float *p = a.data_ptr<float>();
    for (int i = 0; i < 4; ++i)
      p[i] = static_cast<float>(step * 4 + i);
    steps.push_back((a * 2).sum());
  }
  for (int step = 0; step < 20; ++step)
    EXPECT_EQ(steps[step].item<float>(),
              2.0f * (16 * step + 6)) // 2 * sum(4*step + i)
        << "step " << step;
}
