//===- DslCudaSmoke.cpp - fluent programs on cuda:0 against the CPU -------===//
//
// Built as strata-gpu-dsl-smoke (tests/unit/CMakeLists.txt) and run by
// tests/gpu/run.sh; includes DLPack exchange of real device memory. Without a
// driver or a GPU every test is SKIPPED, and says why;
// tests/unit/dsl/CudaDeviceTest.cpp covers that path.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include "strata/JIT/CudaJit.h"
#include "strata/Runtime/CudaAllocator.h"
#include "strata/Runtime/CudaDriver.h"

#include <dlpack/dlpack.h>

#include "CudaTest.h"

#include <gtest/gtest.h>

using namespace strata;

namespace {

void expectSame(const Tensor &gpu, const Tensor &cpu) {
  ASSERT_TRUE(gpu.device().is_cuda());
  ASSERT_TRUE(cpu.device().is_cpu());
  EXPECT_EQ(gpu.sizes(), cpu.sizes());
  std::vector<double> g = gpu.to_vector<double>(), c = cpu.to_vector<double>();
  ASSERT_EQ(g.size(), c.size());
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], c[i], 1e-5 * (1 + std::abs(c[i]))) << "element " << i;
}

TEST(DslCuda, ElementwiseAndRoundTrip) {
  REQUIRE_GPU();
  Tensor a = arange(1000, dtype(kFloat32)).reshape({10, 100});
  Tensor ga = a.to(kCuda);
  EXPECT_EQ(ga.device().str(), "cuda:0");
  expectSame((ga * 0.01 + 1).exp().tanh(), (a * 0.01 + 1).exp().tanh());
  Tensor back = ga.to(kCPU);
  EXPECT_TRUE(back.device().is_cpu());
  EXPECT_EQ(back.to_vector<float>(), a.to_vector<float>());
}

// add/sub with alpha (strata.fma: CUDA's fma()) and a float arange (fmas
// in double) give the CPU's bits (docs/design.md, strata.fma).
TEST(DslCuda, FusedMultiplyAddsRoundAsTheCpu) {
  REQUIRE_GPU();
  Tensor a = randn({1000}), b = randn({1000});
  Tensor ga = a.to(kCuda), gb = b.to(kCuda);
  EXPECT_EQ(ga.add(gb, 0.37).to(kCPU).to_vector<float>(),
            a.add(b, 0.37).to_vector<float>());
  Tensor a64 = a.to(kFloat64) / 3, b64 = b.to(kFloat64) / 7;
  EXPECT_EQ(
      a64.to(kCuda).sub(b64.to(kCuda), 1.0 / 3).to(kCPU).to_vector<double>(),
      a64.sub(b64, 1.0 / 3).to_vector<double>());
  for (DType t : {kFloat32, kFloat64})
    EXPECT_EQ(arange(-3.7, 100.2, 0.37, TensorOptions(t).device(kCuda))
                  .to(kCPU)
                  .to_vector<double>(),
              arange(-3.7, 100.2, 0.37, TensorOptions(t)).to_vector<double>());
}

// Scalars are arguments on CUDA too: a new scalar every step compiles no
// new program (docs/design.md, "Scalars are arguments").
TEST(DslCuda, ScalarScheduleCompilesOnce) {
  REQUIRE_GPU();
  Tensor a = randn({256});
  Tensor ga = a.to(kCuda);
  int64_t before = eval_stats().compiles;
  for (int step = 0; step < 20; ++step) {
    double lr = 0.1 / (1 + step), bias = step - 10.0;
    expectSame(ga * lr + bias, a * lr + bias);
  }
  // One prepared program serves both devices (its key is its structure).
  EXPECT_EQ(eval_stats().compiles - before, 1);
}

// The gradient program takes its scalars as arguments on CUDA as on the
// CPU: a new scalar every step (a schedule of loss weights, a temperature)
// compiles no new gradient program after the first step.
TEST(DslCuda, ScalarScheduleThroughBackwardCompilesOnce) {
  REQUIRE_GPU();
  Tensor w = randn({64, 16});
  int64_t before = backward_compiles();
  for (int step = 0; step < 8; ++step) {
    double scale = 0.5 + 0.1 * step, shift = step - 3.0,
           weight = 1.0 / (1 + step);
    Tensor gw = w.to(kCuda).requires_grad_(), cw = w.clone().requires_grad_();
    (((gw * scale + shift).tanh() * weight).sum()).backward();
    (((cw * scale + shift).tanh() * weight).sum()).backward();
    expectSame(gw.grad(), cw.grad());
    if (step == 0)
      before = backward_compiles();
  }
  EXPECT_EQ(backward_compiles() - before, 0);
}

// Storage offsets are arguments on CUDA too: a narrow at any row is one
// program (docs/design.md, "Offsets are arguments"). The window keeps its
// start 4-element aligned there (vectorized kernels load 4 at once), so a
// 1-D slice at any element is at most 4 programs, each checked against
// the CPU.
TEST(DslCuda, RandomOffsetsCompileOnce) {
  REQUIRE_GPU();
  Tensor x = randn({300, 32});
  Tensor gx = x.to(kCuda);
  Tensor y = randn({1000});
  Tensor gy = y.to(kCuda);
  int64_t before = eval_stats().compiles;
  for (int64_t step = 0; step < 20; ++step) {
    int64_t k = (step * 97) % 280;
    expectSame((gx.narrow(0, k, 16) * 2).sum({0}),
               (x.narrow(0, k, 16) * 2).sum({0}));
  }
  // The CUDA and CPU reads of a row window are the same program.
  EXPECT_EQ(eval_stats().compiles - before, 1);
  before = eval_stats().compiles;
  for (int64_t step = 0; step < 20; ++step) {
    int64_t s = (step * 131) % 900;
    expectSame(gy.slice(0, s, s + 64) + 1, y.slice(0, s, s + 64) + 1);
  }
  EXPECT_LE(eval_stats().compiles - before, 5);
  // A mini-batch training step: the backward reads its window of x too.
  Tensor w = randn({32, 8});
  before = eval_stats().compiles;
  for (int64_t step = 0; step < 10; ++step) {
    int64_t k = (step * 61) % 280 + 1; // odd rows too
    Tensor gw = w.to(kCuda).requires_grad_(), cw = w.clone().requires_grad_();
    Tensor gl = gx.narrow(0, k, 16).matmul(gw).relu().sum();
    Tensor cl = x.narrow(0, k, 16).matmul(cw).relu().sum();
    gl.backward();
    cl.backward();
    expectSame(gw.grad(), cw.grad());
    EXPECT_NEAR(gl.item<float>(), cl.item<float>(),
                1e-4 * (1 + std::abs(cl.item<float>())));
    if (step == 0)
      before = eval_stats().compiles;
  }
  EXPECT_EQ(eval_stats().compiles - before, 0);
}

TEST(DslCuda, Broadcast) {
  REQUIRE_GPU();
  Tensor x = randn({64, 1, 32}), y = randn({1, 48, 32});
  expectSame(x.to(kCuda) * y.to(kCuda) - 0.5, x * y - 0.5);
}

TEST(DslCuda, TransposedCopyAndViewUpload) {
  REQUIRE_GPU();
  Tensor a = arange(64 * 96, dtype(kFloat64)).reshape({64, 96});
  expectSame(a.to(kCuda).t().contiguous(), a.t().contiguous());
  // to() of a view copies the view (contiguous), not its whole storage.
  Tensor v = a.t().narrow(0, 3, 5);
  Tensor gv = v.to(kCuda);
  EXPECT_TRUE(gv.is_contiguous());
  expectSame(gv, v);
}

TEST(DslCuda, Reductions) {
  REQUIRE_GPU();
  Tensor a = randn({128, 257});
  Tensor g = a.to(kCuda);
  expectSame(g.sum(), a.sum());
  expectSame(g.sum({1}), a.sum({1}));
  expectSame(g.amax({0}, true), a.amax({0}, true));
  EXPECT_NEAR(g.sum().item<float>(), a.sum().item<float>(), 1e-2);
}

// The training step of ((x.t() * w).relu()).sum() on cuda:0: sibling
// fusion makes it one kernel (loss and both gradients), a tiled-reduce one
// on CUDA (x and its gradient go through shared-memory tiles). Checked
// element by element against the closed form.
// cumsum/cumprod run as scan kernels on the device (one thread per line)
// with the CPU's values, and cumprod's gradient with zeros stays there.
TEST(DslCuda, Scans) {
  REQUIRE_GPU();
  Tensor a = randn({64, 300});
  Tensor g = a.to(kCuda);
  expectSame(g.cumsum(1), a.cumsum(1));
  expectSame(g.t().cumsum(1), a.t().cumsum(1));
  expectSame((g * 0.1).exp().cumprod(0), (a * 0.1).exp().cumprod(0));
  expectSame(g.to(kInt64).cumsum(0), a.to(kInt64).cumsum(0));
  Tensor z =
      from_vector<double>({1.5, 0, 2, 3, 0, -2, 0.5, 0, 0, 1, 2, 3}, {3, 4});
  Tensor w =
      from_vector<double>({1, -2, 3, 0.5, 2, 1, -1, 4, 0.25, 3, 2, 1}, {3, 4});
  Tensor zc = z.to(kCuda).requires_grad_(), zh = z.clone().requires_grad_();
  (zc.cumprod(1) * w.to(kCuda)).sum().backward();
  (zh.cumprod(1) * w).sum().backward();
  ASSERT_TRUE(zc.grad().device().is_cuda());
  expectSame(zc.grad(), zh.grad());
}

// nonzero and masked_select read their bools on the host (the sync) and
// give results on the device; masked_select's gradient stays there; a
// device storage lists through the host.
TEST(DslCuda, ValueSizedOpsAndStorageList) {
  REQUIRE_GPU();
  Tensor a = randn({40, 30});
  Tensor g = a.to(kCuda);
  Tensor nz = (g > 0.5).nonzero();
  ASSERT_TRUE(nz.device().is_cuda());
  EXPECT_EQ(nz.to_vector<int64_t>(), (a > 0.5).nonzero().to_vector<int64_t>());
  EXPECT_EQ((g.t() * (g.t() > 0)).nonzero().to_vector<int64_t>(),
            (a.t() * (a.t() > 0)).nonzero().to_vector<int64_t>());
  Tensor m = a.sum(0) > 0; // (30), broadcast over the rows
  Tensor gc = g.clone().requires_grad_(), ac = a.clone().requires_grad_();
  Tensor sc = gc.masked_select(m.to(kCuda)), sa = ac.masked_select(m);
  expectSame(sc, sa);
  (sc * sc).sum().backward();
  (sa * sa).sum().backward();
  ASSERT_TRUE(gc.grad().device().is_cuda());
  expectSame(gc.grad(), ac.grad());
  EXPECT_EQ(g.storage().tolist(), a.storage().tolist());
}

TEST(DslCuda, TransposedProductTrainingStep) {
  REQUIRE_GPU();
  manual_seed(3);
  const int64_t n = 37, m = 53; // not multiples of the 32x32 tiles
  Tensor xc = randn({m, n}), wc = randn({n, m});
  std::vector<float> xv = xc.to_vector<float>(), wv = wc.to_vector<float>();
  Tensor x = xc.to(kCuda).requires_grad_();
  Tensor w = wc.to(kCuda).requires_grad_();
  Tensor loss = ((x.t() * w).relu()).sum();
  loss.backward();
  ASSERT_TRUE(x.grad().device().is_cuda());
  float l = loss.item<float>();
  std::vector<float> gx = x.grad().to_vector<float>();
  std::vector<float> gw = w.grad().to_vector<float>();
  double expectLoss = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      float xe = xv[j * n + i], we = wv[i * m + j], p = xe * we;
      expectLoss += p > 0 ? p : 0;
      EXPECT_FLOAT_EQ(gx[j * n + i], p > 0 ? we : 0) << i << "," << j;
      EXPECT_FLOAT_EQ(gw[i * m + j], p > 0 ? xe : 0) << i << "," << j;
    }
  EXPECT_NEAR(l, expectLoss, 1e-4 * (1 + std::abs(expectLoss)));
}

TEST(DslCuda, InPlaceThroughView) {
  REQUIRE_GPU();
  Tensor a = zeros({8, 8}, dtype(kFloat32));
  Tensor g = zeros({8, 8}, dtype(kFloat32).device(kCuda));
  EXPECT_TRUE(g.device().is_cuda());
  void *before = g.data_ptr();
  a.narrow(1, 2, 3).add_(arange(3, dtype(kFloat32)) + 1);
  g.narrow(1, 2, 3).add_(arange(3, dtype(kFloat32).device(kCuda)) + 1);
  g.diagonal().fill_(7);
  a.diagonal().fill_(7);
  expectSame(g, a);
  EXPECT_EQ(g.data_ptr(), before); // the storage is updated, not replaced
  EXPECT_EQ(g._version(), 2);
}

// runtime::Storage::copy/fill across devices: host to device at an offset,
// device to device, a device fill, and back to the host.
TEST(DslCuda, StorageCopiesAcrossDevices) {
  REQUIRE_GPU();
  using runtime::DeviceKind;
  using runtime::Storage;
  auto host = Storage::create(32), back = Storage::create(32);
  for (int i = 0; i < 32; ++i)
    host->data()[i] = static_cast<unsigned char>(i + 1);
  auto d1 = Storage::create(32, DeviceKind::CUDA);
  auto d2 = Storage::create(32, DeviceKind::CUDA);
  ASSERT_EQ(Storage::fill(*d1, 0, 0, 32), "");
  ASSERT_EQ(Storage::copy(*d1, 8, *host, 0, 16), ""); // host -> device
  ASSERT_EQ(Storage::copy(*d2, 0, *d1, 0, 32), "");   // device -> device
  ASSERT_EQ(Storage::fill(*d2, 30, 0xAB, 2), "");     // device fill
  ASSERT_EQ(Storage::copy(*back, 0, *d2, 0, 32), ""); // device -> host
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(back->data()[i], i >= 30            ? 0xAB
                               : i >= 8 && i < 24 ? i - 8 + 1
                                                  : 0)
        << i;
}

// The plan (jit/lib/Plan.h) writes a donated device buffer in place as the
// CPU backend does: a pending chain of in-place ops on a CUDA tensor needs
// no copy back into its storage, unless the old version is still read.
TEST(DslCuda, InPlaceWritesGoInPlaceOnTheDevice) {
  REQUIRE_GPU();
  Tensor g = arange(16, dtype(kFloat32).device(kCuda));
  Tensor c = arange(16, dtype(kFloat32));
  void *before = g.data_ptr();
  reset_eval_stats();
  for (int i = 0; i < 3; ++i) {
    g.mul_(2).add_(1);
    c.mul_(2).add_(1);
    g.data_ptr(); // one program per step, its write donated
  }
  EXPECT_EQ(eval_stats().copyBacks, 0);
  EXPECT_EQ(g.data_ptr(), before);
  expectSame(g, c);
  // The old version read after the write: not in place, copied back.
  Tensor old = g * 1;
  g.add_(1);
  Tensor sum = old + g;
  Tensor cOld = c * 1;
  c.add_(1);
  expectSame(sum, cOld + c);
  expectSame(g, c);
  EXPECT_EQ(g.data_ptr(), before);
}

// A saved CUDA tensor modified in place: PyTorch's message, with the
// tensor's CUDA type name.
TEST(DslCuda, ModifiedSavedTensorNamesItsCudaType) {
  REQUIRE_GPU();
  Tensor w = (arange(6, dtype(kFloat32)) * 0.1).to(kCuda).requires_grad_();
  Tensor y = w.exp();
  y.add_(1);
  try {
    y.sum().backward();
    FAIL() << "backward through a modified saved tensor ran";
  } catch (const Error &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("[torch.cuda.FloatTensor [6]], which is output 0 of "
                        "ExpBackward0, is at version 1"),
              std::string::npos)
        << what;
  }
}

// A prepared program's CUDA kernels are compiled once, when its plan is
// built: later runs launch them without compiling or hashing PTX again.
TEST(DslCuda, RepeatedRunsCompileNothing) {
  REQUIRE_GPU();
  Tensor x = arange(64, dtype(kFloat32).device(kCuda));
  auto step = [&](float s) { return ((x * s).relu() + 1).sum().item<float>(); };
  float first = step(0.5f);
  jit::CacheStats before = jit::cudaCacheStats();
  for (int i = 1; i <= 5; ++i) {
    float expect = 0;
    for (int k = 0; k < 64; ++k)
      expect += std::max(0.0f, k * (0.5f + i)) + 1;
    EXPECT_FLOAT_EQ(step(0.5f + i), expect);
  }
  jit::CacheStats after = jit::cudaCacheStats();
  EXPECT_EQ(after.compiles, before.compiles);
  EXPECT_EQ(after.memoryHits, before.memoryHits);
  EXPECT_EQ(after.diskHits, before.diskHits);
  EXPECT_GT(first, 0);
}

TEST(DslCuda, PrintingAndMemoryStats) {
  REQUIRE_GPU();
  empty_cache(kCuda);
  reset_peak_memory_stats(kCuda);
  int64_t before = memory_stats(kCuda).allocated_bytes;
  {
    Tensor g = ones({2, 2}, kCuda);
    EXPECT_EQ(g.toString(), "tensor([[1., 1.],\n        [1., 1.]], "
                            "device='cuda:0')");
    EXPECT_GT(memory_stats(kCuda).allocated_bytes, before);
  }
  EXPECT_EQ(memory_stats(kCuda).allocated_bytes, before);
  EXPECT_GE(memory_stats(kCuda).peak_allocated_bytes, before + 16);
  if (runtime::cuda::Allocator::get().caching())
    EXPECT_GT(memory_stats(kCuda).reserved_bytes, before); // g's block, cached
  else // STRATA_NO_CUDA_MEMORY_CACHING=1: given back at once
    EXPECT_EQ(memory_stats(kCuda).reserved_bytes, before);
  empty_cache(kCuda);
  EXPECT_EQ(memory_stats(kCuda).reserved_bytes, before);
}

TEST(DslCuda, MixedDevicesThrow) {
  REQUIRE_GPU();
  Tensor c = ones({3}), g = ones({3}, kCuda);
  try {
    (void)(g + c);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(e.message(), "Expected all tensors to be on the same device, "
                           "but found at least two devices, cuda:0 and cpu!");
  }
  EXPECT_THROW((void)c.add_(g), Error);
  // Scalars join either device, and so do 0-d CPU tensors (PyTorch:
  // `torch.ones(3, device='cuda') * torch.tensor(2.5)` is allowed).
  expectSame(g * 3 + 1, c * 3 + 1);
  Tensor s = full({}, 2.5);
  expectSame(g * s + s, c * s + s);
  // Its gradient stays on the CPU, where the leaf is.
  Tensor leaf = full({}, 2.5).requires_grad_();
  Tensor gw = (arange(3, dtype(kFloat32)) + 1).to(kCuda).requires_grad_();
  ((gw * leaf).sum()).backward();
  ASSERT_TRUE(leaf.grad().device().is_cpu());
  EXPECT_FLOAT_EQ(leaf.grad().item<float>(), 6); // 1 + 2 + 3
  ASSERT_TRUE(gw.grad().device().is_cuda());
  EXPECT_EQ(gw.grad().to_vector<float>(), std::vector<float>(3, 2.5f));
}

/// "Another library's" device buffer: allocated and freed through the
/// driver, handed over as a kDLCUDA DLManagedTensor.
struct ForeignDeviceBuffer {
  runtime::cuda::Driver *driver = nullptr;
  runtime::cuda::DevicePtr ptr = 0;
  int frees = 0;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
};

TEST(DslCuda, DLPackWrapsForeignDeviceMemory) {
  REQUIRE_GPU();
  std::string error;
  ForeignDeviceBuffer f;
  f.driver = runtime::cuda::Driver::get(error);
  ASSERT_NE(f.driver, nullptr) << error;
  std::vector<float> host(14);
  for (int i = 0; i < 14; ++i)
    host[i] = static_cast<float>(i);
  ASSERT_EQ(f.driver->alloc(f.ptr, 14 * sizeof(float)), "");
  ASSERT_EQ(f.driver->copyToDevice(f.ptr, host.data(), 14 * sizeof(float)), "");
  // A transposed 4x3 view starting at element 2.
  f.shape = {4, 3};
  f.strides = {1, 4};
  DLTensor &dl = f.managed.dl_tensor;
  dl.data = reinterpret_cast<void *>(f.ptr);
  dl.device = {kDLCUDA, 0};
  dl.ndim = 2;
  dl.dtype = {kDLFloat, 32, 1};
  dl.shape = f.shape.data();
  dl.strides = f.strides.data();
  dl.byte_offset = 2 * sizeof(float);
  f.managed.manager_ctx = &f;
  f.managed.deleter = [](DLManagedTensor *self) {
    auto *owner = static_cast<ForeignDeviceBuffer *>(self->manager_ctx);
    ++owner->frees;
    EXPECT_EQ(owner->driver->free(owner->ptr), "");
  };
  Tensor cpu = from_vector<float>(host, {14}).as_strided({4, 3}, {1, 4}, 2);
  {
    Tensor t = from_dlpack(&f.managed);
    EXPECT_EQ(t.device(), kCuda);
    EXPECT_EQ(t.data_ptr(), reinterpret_cast<char *>(f.ptr) + 8);
    expectSame(t, cpu);
    expectSame((t * 2 + 1).sum({1}), (cpu * 2 + 1).sum({1}));
    expectSame(t.t().contiguous(), cpu.t().contiguous());
    // A write through a view lands in the foreign buffer.
    t.select(1, 0).fill_(-1).eval();
    std::vector<float> after(14);
    ASSERT_EQ(f.driver->copyToHost(after.data(), f.ptr, 14 * sizeof(float)),
              "");
    for (int i = 0; i < 14; ++i)
      EXPECT_EQ(after[i], i >= 2 && i <= 5 ? -1.0f : static_cast<float>(i))
          << "element " << i;
    // Exported again: the same device memory, strata's stream synchronized.
    DLManagedTensor *out = to_dlpack(t);
    EXPECT_EQ(out->dl_tensor.device.device_type, kDLCUDA);
    EXPECT_EQ(out->dl_tensor.data, reinterpret_cast<void *>(f.ptr));
    EXPECT_EQ(out->dl_tensor.byte_offset, 2 * sizeof(float));
    t = Tensor();
    EXPECT_EQ(f.frees, 0) << "the export still holds the buffer";
    out->deleter(out);
  }
  EXPECT_EQ(f.frees, 1);
}

TEST(DslCuda, DLPackExportsComputedDeviceTensors) {
  REQUIRE_GPU();
  // A result computed on the GPU, exported as a transposed, offset view.
  Tensor g = (arange(12, dtype(kFloat32)).reshape({3, 4}).to(kCuda) * 2 + 1)
                 .narrow(1, 1, 3)
                 .t();
  DLManagedTensor *m = to_dlpack(g);
  const DLTensor &dl = m->dl_tensor;
  EXPECT_EQ(dl.device.device_type, kDLCUDA);
  EXPECT_EQ(dl.device.device_id, 0);
  ASSERT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.shape[0], 3);
  EXPECT_EQ(dl.shape[1], 3);
  EXPECT_EQ(dl.strides[0], 1);
  EXPECT_EQ(dl.strides[1], 4);
  EXPECT_EQ(dl.byte_offset, sizeof(float));
  // Read it as a consumer would: straight from the device, no strata call.
  std::string error;
  runtime::cuda::Driver *driver = runtime::cuda::Driver::get(error);
  ASSERT_NE(driver, nullptr) << error;
  std::vector<float> storage(12);
  ASSERT_EQ(
      driver->copyToHost(storage.data(),
                         reinterpret_cast<runtime::cuda::DevicePtr>(dl.data),
                         12 * sizeof(float)),
      "");
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      // g[i][j] = 2 * (4 * j + 1 + i) + 1
      float want = 2.0f * static_cast<float>(4 * j + 1 + i) + 1.0f;
      EXPECT_EQ(storage[1 + i * dl.strides[0] + j * dl.strides[1]], want)
          << i << "," << j;
    }
  g = Tensor();
  Tensor back = from_dlpack(m); // the consumer hands it back
  EXPECT_EQ(back.device(), kCuda);
  expectSame(back, (arange(12, dtype(kFloat32)).reshape({3, 4}) * 2 + 1)
                       .narrow(1, 1, 3)
                       .t());
}

// Raw device memory is handed out only after every pending reader and
// writer of the storage has run (issue 17): a write through data_ptr()
// is seen by what is recorded after it and not by what was recorded
// before, as eagerly in PyTorch (expected values by plain arithmetic).
TEST(DslCuda, DataPointerRunsPendingReadersFirst) {
  REQUIRE_GPU();
  std::vector<float> av = {1, 2, 3, 4};
  Tensor g = from_vector(av, {4}).to(kCuda);
  g.eval();
  Tensor before = g + 1; // pending
  Tensor written = g.narrow(0, 1, 2);
  written.mul_(10); // pending write through a view
  av[1] *= 10;
  av[2] *= 10;
  Tensor reader = g * 2; // reads the written version
  void *p = g.data_ptr();
  EXPECT_EQ(written.data_ptr(), static_cast<char *>(p) + sizeof(float));
  std::string error;
  runtime::cuda::Driver *driver = runtime::cuda::Driver::get(error);
  ASSERT_NE(driver, nullptr) << error;
  std::vector<float> seen(4);
  ASSERT_EQ(driver->copyToHost(seen.data(),
                               reinterpret_cast<runtime::cuda::DevicePtr>(p),
                               4 * sizeof(float)),
            "");
  EXPECT_EQ(seen, av); // the pending write has run
  float hundred = 100;
  ASSERT_EQ(driver->copyToDevice(reinterpret_cast<runtime::cuda::DevicePtr>(p),
                                 &hundred, sizeof(float)),
            "");
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(reader.to_vector<float>(), (std::vector<float>{2, 40, 60, 8}));
  EXPECT_EQ((g + 0).to_vector<float>(), (std::vector<float>{100, 20, 30, 4}));
}

// Writes at random offsets are one program on CUDA too: the written
// storage is passed as the window the writes reach (its start 4-aligned:
// rows of 32 floats keep every row one program). Values against plain C++.
TEST(DslCuda, RandomOffsetWritesCompileOnce) {
  REQUIRE_GPU();
  std::vector<float> xv(300 * 32);
  for (size_t i = 0; i < xv.size(); ++i)
    xv[i] = static_cast<float>(i % 13);
  Tensor gx = from_vector(xv, {300, 32}).to(kCuda);
  gx.eval();
  int64_t before = eval_stats().compiles;
  for (int64_t step = 0; step < 20; ++step) {
    int64_t k = (step * 97) % 280;
    gx.narrow(0, k, 16).add_(1);
    gx.eval();
    for (int64_t i = k * 32; i < (k + 16) * 32; ++i)
      xv[i] += 1;
  }
  EXPECT_EQ(eval_stats().compiles - before, 1);
  EXPECT_EQ(gx.to_vector<float>(), xv);
  // Rows of a CUDA leaf requiring grad: the gradient is written at the
  // offset (the gradient program's window, widened on the device).
  std::vector<float> cv(8 * 32);
  for (size_t i = 0; i < cv.size(); ++i)
    cv[i] = static_cast<float>(i % 5) - 2;
  Tensor gc = from_vector(cv, {8, 32}).to(kCuda);
  int64_t bwBefore = 0;
  for (int64_t step = 0; step < 10; ++step) {
    int64_t k = (step * 61) % 290;
    Tensor w = from_vector(xv, {300, 32}).to(kCuda).requires_grad_();
    (w.narrow(0, k, 8) * gc).sum().backward();
    std::vector<float> grad = w.grad().to_vector<float>();
    ASSERT_TRUE(w.grad().device().is_cuda());
    for (int64_t i = 0; i < 300 * 32; ++i) {
      int64_t row = i / 32;
      float want = row >= k && row < k + 8 ? cv[(row - k) * 32 + i % 32] : 0;
      ASSERT_EQ(grad[i], want) << "step " << step << " element " << i;
    }
    if (step == 0)
      bwBefore = backward_compiles();
  }
  EXPECT_EQ(backward_compiles() - bwBefore, 0);
}

} // namespace
