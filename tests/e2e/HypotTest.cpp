//===- HypotTest.cpp - hypot against std::hypot (CPU, CUDA, autograd) -----===//
//
// The op recipe's proof (docs/design.md "How to add a binary op"): values
// of both float dtypes, libm's special values, strided and broadcast
// operands, PyTorch's refusal of integers, the in-place form, gradients
// (derivatives.yaml's self / result) and the CUDA kernels (on the
// simulator: ctest cudasim-hypot), each against std::hypot.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include "strata/JIT/CudaJit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace strata;

namespace {

const std::vector<double> kA = {3,    -3,  0, 1e-20, 1e30, 5,
                                -0.0, 7.5, 2, 1,     0.5,  -8};
const std::vector<double> kB = {4, 4, 0, 1e-20, 1e30, -12, 0, 1, 2, 0, 0.25, 6};

void expectHypot(const Tensor &r, const std::vector<double> &a,
                 const std::vector<double> &b, bool f32) {
  std::vector<double> got = r.to_vector<double>();
  ASSERT_EQ(got.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    double want = f32 ? double(std::hypot(float(a[i]), float(b[i])))
                      : std::hypot(a[i], b[i]);
    if (got[i] == want)
      continue;
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
      continue;
    }
    EXPECT_NEAR(got[i], want, (f32 ? 1e-6 : 1e-15) * std::abs(want)) << i;
  }
}

TEST(Hypot, CpuF32AndF64) {
  for (bool f32 : {true, false}) {
    Tensor a = from_vector<double>(kA, {12}).to(f32 ? kFloat32 : kFloat64);
    Tensor b = from_vector<double>(kB, {12}).to(f32 ? kFloat32 : kFloat64);
    expectHypot(a.hypot(b), kA, kB, f32);
    expectHypot(strata::hypot(a, b), kA, kB, f32);
  }
}

TEST(Hypot, SpecialValues) {
  double inf = INFINITY, nan = NAN;
  std::vector<double> a = {inf, nan, -inf, nan, 1e300, 0},
                      b = {nan, inf, 1, nan, 1e300, -0.0};
  for (bool f32 : {true, false}) {
    Tensor ta = from_vector<double>(a, {6}).to(f32 ? kFloat32 : kFloat64);
    Tensor tb = from_vector<double>(b, {6}).to(f32 ? kFloat32 : kFloat64);
    std::vector<double> aa = a, bb = b;
    if (f32) // 1e300 is inf in f32
      aa[4] = bb[4] = inf;
    expectHypot(ta.hypot(tb), aa, bb, f32);
  }
}

TEST(Hypot, StridedBroadcast) {
  Tensor a = arange(12, dtype(kFloat32)).reshape({3, 4}).t(); // 4x3
  Tensor b = arange(3, dtype(kFloat32)) - 1.5;                // broadcast
  Tensor r = a.hypot(b);
  std::vector<double> av, bv;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      av.push_back(j * 4 + i), bv.push_back(j - 1.5);
  expectHypot(r.contiguous(), av, bv, true);
}

TEST(Hypot, IntegersRefused) {
  Tensor i = arange(3);
  EXPECT_THROW(i.hypot(i), Error);
}

TEST(Hypot, InPlace) {
  Tensor a = from_vector<double>(kA, {12}).to(kFloat64);
  Tensor b = from_vector<double>(kB, {12}).to(kFloat64);
  a.hypot_(b);
  expectHypot(a, kA, kB, false);
}

TEST(Hypot, Gradient) {
  std::vector<double> a = {3, -3, 1, 7.5, 2, -8}, b = {4, 4, -2, 1, 2, 6};
  Tensor A = from_vector<double>(a, {6}).to(kFloat64).requires_grad_();
  Tensor B = from_vector<double>(b, {6}).to(kFloat64).requires_grad_();
  std::vector<double> w = {1, 2, -1, 0.5, 3, -2};
  Tensor W = from_vector<double>(w, {6}).to(kFloat64);
  Tensor r = A.hypot(B);
  (r * W).sum().backward();
  std::vector<double> ga = A.grad().to_vector<double>(),
                      gb = B.grad().to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    double h = std::hypot(a[i], b[i]);
    EXPECT_NEAR(ga[i], w[i] * a[i] / h, 1e-14) << i;
    EXPECT_NEAR(gb[i], w[i] * b[i] / h, 1e-14) << i;
  }
}

TEST(Hypot, Cuda) {
  std::string why = jit::cudaUnavailableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
  for (bool f32 : {true, false}) {
    Tensor a = from_vector<double>(kA, {12}).to(f32 ? kFloat32 : kFloat64);
    Tensor b = from_vector<double>(kB, {12}).to(f32 ? kFloat32 : kFloat64);
    Tensor r = a.to(Device::cuda()).hypot(b.to(Device::cuda()));
    ASSERT_TRUE(r.device().is_cuda());
    expectHypot(r.to(kCPU), kA, kB, f32);
  }
  std::vector<double> a = {3, -3, 1}, b = {4, 4, -2};
  Tensor A = from_vector<double>(a, {3})
                 .to(kFloat64)
                 .to(Device::cuda())
                 .requires_grad_();
  Tensor B = from_vector<double>(b, {3})
                 .to(kFloat64)
                 .to(Device::cuda())
                 .requires_grad_();
  A.hypot(B).sum().backward();
  std::vector<double> ga = A.grad().to(kCPU).to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(ga[i], a[i] / std::hypot(a[i], b[i]), 1e-14) << i;
}

// PyTorch's node is HypotBackward0 and saves self, other and the result,
// so an in-place write to one of them before backward() raises (the name
// derived from the mnemonic, the saved tensors from the VJP's reads:
// strata-e2e-op-autograd checks every pattern against PyTorch).
TEST(Hypot, PyTorchsNodeAndSavedTensors) {
  Tensor A = from_vector<double>({3, -3}, {2}).to(kFloat64).requires_grad_();
  EXPECT_EQ(A.hypot(A * 2.0).grad_fn()->name(), "HypotBackward0");
  Tensor X = from_vector<double>({3, 4}, {2}).to(kFloat64).requires_grad_();
  Tensor a = X * 1.0;
  Tensor r = a.hypot(a);
  a.mul_(2.0);
  EXPECT_THROW(r.sum().backward(), Error);
}

} // namespace
