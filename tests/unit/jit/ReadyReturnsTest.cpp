//===- ReadyReturnsTest.cpp - RunOptions::onReturnReady -------------------===//
//
// The runner reports a returned value as soon as the kernel making it has
// run, before the kernels after it (what autograd's post-accumulate-grad
// hooks and DistributedDataParallel's overlap rest on): the kernel time
// the runner has counted when the first value is reported is less than
// the run's total, and the value reported holds the run's final elements.
//
//===----------------------------------------------------------------------===//
#include "ProgramBuilder.h"
#include "strata/JIT/Jit.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace strata;
using namespace strata::test;

namespace {

/// t = a.sum(1) (a reduction), then v = ((a - t) * (a - t)).sum(): the
/// second kernel reads the first's result, so it runs after it.
std::unique_ptr<jit::PreparedFunction> twoKernels() {
  Program p;
  V a = p.arg({256, 256});
  V t = p.reduce("sum", a, {1}, true);
  V d = p.binary("sub", a, p.expand(t, {256, 256}));
  V v = p.reduce("sum", p.binary("mul", d, d), {});
  std::string error;
  auto fn = jit::PreparedFunction::fromSource(p.text({t, v}), "main", error);
  EXPECT_TRUE(fn) << error;
  return fn;
}

std::vector<jit::JitValue> argument() {
  std::vector<double> a(256 * 256);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = std::sin(0.37 * static_cast<double>(i));
  return {jit::JitValue::fresh(jit::DType::F32, {256, 256}, a)};
}

TEST(ReadyReturns, ReportsEachValueBeforeTheKernelsAfterIt) {
  auto fn = twoKernels();
  ASSERT_TRUE(fn);
  ASSERT_GE(fn->numKernels(), 2);
  double seconds = 0;
  std::vector<size_t> order;
  std::vector<double> secondsAt;
  std::vector<std::vector<double>> reported(2);
  jit::RunOptions options;
  options.numThreads = 1;
  options.kernelSeconds = &seconds;
  options.onReturnReady = [&](size_t k, const jit::JitValue &v) {
    order.push_back(k);
    secondsAt.push_back(seconds);
    reported[k] = v.elements();
    return true;
  };
  jit::RunResult r = fn->run(argument(), options);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(order, (std::vector<size_t>{0, 1}));
  EXPECT_GT(secondsAt[0], 0.0);
  EXPECT_LT(secondsAt[0], seconds) << "no kernel ran after value 0";
  for (size_t k = 0; k < 2; ++k)
    EXPECT_EQ(reported[k], r.values[k].elements()) << "value " << k;
}

TEST(ReadyReturns, FalseStopsTheRun) {
  auto fn = twoKernels();
  ASSERT_TRUE(fn);
  int calls = 0;
  jit::RunOptions options;
  options.onReturnReady = [&](size_t, const jit::JitValue &) {
    ++calls;
    return false;
  };
  jit::RunResult r = fn->run(argument(), options);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "stopped by onReturnReady");
  EXPECT_EQ(calls, 1);
}

} // namespace
