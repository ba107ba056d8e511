//===- GeneratorFusionTest.cpp - fills and aranges fuse into their readers ===//
//
// --strata-fuse computes a fill's or an arange's elements in the kernels
// that read them (Fuse/Groups.cpp), and a returned f32 sum's rounding from
// f64 runs without a compile (jit/lib/HostKernels.cpp): the first
// evaluation of `(arange(n) * 2 + 1).relu().sum()` in a process is one
// compiled kernel (strata-bench-first-eval times it). Values against
// plain C++ loops; kernel compiles counted through jit::cacheStats.
//
//===----------------------------------------------------------------------===//
#include "strata/JIT/Jit.h"
#include "strata/strata.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace strata;

namespace {

/// Kernels the CPU backend asked the kernel cache for (compiled, or found
/// in memory or on disk): each is a kernel LLVM compiled at some point.
int64_t kernelsRequested() {
  jit::CacheStats s = jit::cacheStats();
  return s.compiles + s.memoryHits + s.diskHits;
}

std::vector<float> ramp(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 37) % 101) / 8.0f - 6.0f;
  return v;
}

TEST(GeneratorFusion, FirstEvalProgramIsOneCompiledKernel) {
  int64_t before = kernelsRequested();
  Tensor x = arange(4096, kFloat32);
  float got = (x * 2.0 + 1.0).relu().sum().item<float>();
  EXPECT_EQ(kernelsRequested() - before, 1);
  double want = 0;
  for (int64_t i = 0; i < 4096; ++i)
    want += std::max(2.0f * static_cast<float>(i) + 1.0f, 0.0f);
  EXPECT_EQ(got, static_cast<float>(want));
  // The same structure with new scalars: no kernel at all.
  before = kernelsRequested();
  float again = (x * 3.0 + -5.0).relu().sum().item<float>();
  EXPECT_EQ(kernelsRequested(), before);
  want = 0;
  for (int64_t i = 0; i < 4096; ++i)
    want += std::max(3.0f * static_cast<float>(i) - 5.0f, 0.0f);
  EXPECT_EQ(again, static_cast<float>(want));
}

TEST(GeneratorFusion, ViewsOfAnArangeReadTheirPositions) {
  // Transposed, reversed, strided and broadcast views of aranges, each
  // fused into the kernel that reads it, against plain loops.
  std::vector<float> xv = ramp(12);
  Tensor x = from_vector(xv, {4, 3});
  Tensor a = arange(12, kFloat32).view({3, 4}).t(); // a[i][j] = 4j + i
  Tensor r = arange(10, 2, -2, kInt64).flip({0});   // 4, 6, 8, 10
  Tensor s = arange(0.5, 20.0, 1.5, kFloat64).slice(0, 1, 10, 3); // 2, 6.5, 11
  std::vector<float> got =
      (x * a + r.to(kFloat32).unsqueeze(1).narrow(0, 0, 4) + s.to(kFloat32))
          .to_vector<float>();
  const double rv[] = {4, 6, 8, 10}, sv[] = {2, 6.5, 11};
  ASSERT_EQ(got.size(), 12u);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(got[i * 3 + j], xv[i * 3 + j] * static_cast<float>(4 * j + i) +
                                    static_cast<float>(rv[i]) +
                                    static_cast<float>(sv[j]))
          << i << " " << j;
}

TEST(GeneratorFusion, GeneratorsAlsoReadFromMemory) {
  // An arange that is returned and read, one that feeds a matmul and a
  // cumsum, and a filled tensor written into: every value as the loops.
  Tensor a = arange(5, kFloat32);
  Tensor twice = a * 2;
  std::vector<float> av = a.to_vector<float>(), tv = twice.to_vector<float>();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(av[i], i);
    EXPECT_EQ(tv[i], 2 * i);
  }
  std::vector<float> mv = ramp(10);
  Tensor m = from_vector(mv, {2, 5});
  std::vector<float> prod = m.matmul(arange(5, kFloat32)).to_vector<float>();
  for (int r = 0; r < 2; ++r) {
    double want = 0;
    for (int k = 0; k < 5; ++k)
      want += mv[r * 5 + k] * k;
    EXPECT_NEAR(prod[r], want, 1e-4) << r;
  }
  std::vector<float> cs =
      cumsum(arange(1, 6, 1, kFloat32), 0).to_vector<float>();
  EXPECT_EQ(cs, (std::vector<float>{1, 3, 6, 10, 15}));
  Tensor z = zeros({2, 3});
  z.narrow(0, 1, 1).copy_(full({1, 3}, 7.0) + arange(3, kFloat32));
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{0, 0, 0, 7, 8, 9}));
}

} // namespace
