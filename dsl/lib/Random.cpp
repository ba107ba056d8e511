//===- Random.cpp - randint, randperm, bernoulli and the random in-place ops =//
//
// Values come from the global generator of rand/randn (manual_seed), drawn
// on the calling thread into a fresh leaf; the in-place forms copy_ that
// leaf into the tensor, so they write through views, bump the version and
// obey PyTorch's in-place checks (a leaf requiring grad needs no-grad
// mode). PyTorch's generator is another one: values differ from its, the
// distributions and every argument and dtype rule agree.
//
//===----------------------------------------------------------------------===//
#include "Impl.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

using namespace strata;
using namespace strata::detail;

namespace {

/// A double as PyTorch's messages print it ("2", "0.5", "inf").
std::string formatNumber(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// A fresh leaf of `sizes` and `dtype` whose element i is value(i).
template <typename F>
Tensor drawn(const Shape &sizes, DType dtype, const TensorOptions &options,
             const char *op, const SourceLoc &loc, F value) {
  checkFactorySizes(sizes, op, dtype, loc);
  checkDevice(options.device(), loc);
  int64_t n = layout::contiguous(sizes).numel();
  auto buffer = allocate(n * elementSize(dtype), loc);
  for (int64_t i = 0; i < n; ++i)
    jit::storeElement(buffer->data() + i * elementSize(dtype),
                      toJitDType(dtype), value(i));
  return makeLeaf(std::move(buffer), dtype, sizes,
                  TensorOptions(options).dtype(dtype), op, loc);
}

/// A uniform integer in [low, high) (high > low), without modulo bias.
int64_t uniformInt(int64_t low, int64_t high) {
  uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  uint64_t limit = std::numeric_limits<uint64_t>::max() -
                   std::numeric_limits<uint64_t>::max() % range;
  uint64_t r;
  do
    r = randomBits();
  while (r >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(low) + r % range);
}

/// PyTorch's name of an integral dtype in random_'s bounds messages.
const char *boundsName(DType t) {
  switch (t) {
  case DType::Bool:
    return "bool";
  case DType::I32:
    return "int";
  default:
    return "long";
  }
}

/// The largest integer every value of `t` up to it holds exactly.
int64_t exactLimit(DType t) {
  switch (t) {
  case DType::F32:
    return int64_t{1} << 24;
  case DType::F64:
    return int64_t{1} << 53;
  case DType::Bool:
    return 1;
  case DType::I32:
    return std::numeric_limits<int32_t>::max();
  case DType::I64:
    return std::numeric_limits<int64_t>::max();
  }
  return 0;
}

Tensor &writeDrawn(Tensor &self, const char *op, const SourceLoc &loc,
                   const std::function<double()> &value) {
  const TensorImpl &t = implOf(self, loc);
  Tensor values = drawn(t.layout.sizes, t.dtype, TensorOptions(t.dtype), op,
                        loc, [&](int64_t) { return value(); });
  return self.copy_(values, loc);
}

} // namespace

Tensor strata::randint(int64_t high, const Shape &sizes, TensorOptions options,
                       SourceLoc loc) {
  return randint(0, high, sizes, options, loc);
}

Tensor strata::randint(int64_t low, int64_t high, const Shape &sizes,
                       TensorOptions options, SourceLoc loc) {
  DType dtype = options.has_dtype() ? options.dtype() : DType::I64;
  if (low >= high)
    fail("random_ expects 'from' to be less than 'to', but got from=" +
             std::to_string(low) + " >= to=" + std::to_string(high),
         "pass low < high: randint(low, high, sizes) draws from [low, high)",
         loc);
  if (!isFloatingPoint(dtype)) {
    int64_t lo = dtype == DType::Bool  ? 0
                 : dtype == DType::I32 ? std::numeric_limits<int32_t>::min()
                                       : std::numeric_limits<int64_t>::min();
    if (low < lo || low > exactLimit(dtype))
      fail(std::string("from is out of bounds for ") + boundsName(dtype),
           "draw into a wider dtype", loc);
    if (high - 1 < lo || high - 1 > exactLimit(dtype))
      fail(std::string("to - 1 is out of bounds for ") + boundsName(dtype),
           "draw into a wider dtype", loc);
  }
  checkRequiresGrad(options, dtype, loc);
  return drawn(sizes, dtype, options, "randint", loc, [&](int64_t) {
    return static_cast<double>(uniformInt(low, high));
  });
}

Tensor strata::randperm(int64_t n, TensorOptions options, SourceLoc loc) {
  DType dtype = options.has_dtype() ? options.dtype() : DType::I64;
  if (n < 0)
    fail("Trying to create tensor with negative dimension " +
             std::to_string(n) + ": [" + std::to_string(n) + "]",
         "n must be >= 0", loc);
  if (n > 0 && n - 1 > exactLimit(dtype))
    fail("n is too large for result tensor type: '" +
             std::string(torchTypeName(dtype)) + "'",
         "use an integer dtype (int64 by default)", loc);
  checkRequiresGrad(options, dtype, loc);
  checkFactorySizes({n}, "randperm", dtype, loc);
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = n - 1; i > 0; --i) // Fisher-Yates
    std::swap(perm[i], perm[uniformInt(0, i + 1)]);
  return drawn({n}, dtype, options, "randperm", loc,
               [&](int64_t i) { return static_cast<double>(perm[i]); });
}

Tensor strata::bernoulli(const Tensor &p, SourceLoc loc) {
  const TensorImpl &t = implOf(p, loc);
  if (!isFloatingPoint(t.dtype))
    notImplementedFor("bernoulli_tensor_cpu_p_", t.dtype,
                      "pass probabilities as a floating-point tensor", loc);
  std::vector<double> probs;
  {
    NoGradGuard noGrad;
    probs = p.detach(loc).to_vector<double>(loc);
  }
  for (double q : probs)
    if (!(q >= 0 && q <= 1))
      fail("Expected p_in >= 0 && p_in <= 1 to be true, but got false.",
           "every probability must lie in [0, 1]", loc);
  return drawn(t.layout.sizes, t.dtype, TensorOptions(t.dtype), "bernoulli",
               loc, [&](int64_t i) { return randomUniform() < probs[i]; });
}

Tensor Tensor::bernoulli(SourceLoc loc) const {
  return strata::bernoulli(*this, loc);
}

Tensor &Tensor::uniform_(double from, double to, SourceLoc loc) {
  DType t = implOf(*this, loc).dtype;
  if (!isFloatingPoint(t))
    notImplementedFor("check_uniform_bounds", t,
                      "fill a floating-point tensor (or use randint)", loc);
  if (!(from <= to))
    fail("uniform_ expects to return a [from, to) range, but found from=" +
             formatNumber(from) + " > to=" + formatNumber(to),
         "pass from <= to", loc);
  return writeDrawn(*this, "uniform_", loc,
                    [&] { return from + (to - from) * randomUniform(); });
}

Tensor &Tensor::normal_(double mean, double std, SourceLoc loc) {
  DType t = implOf(*this, loc).dtype;
  if (!isFloatingPoint(t))
    notImplementedFor("normal_kernel_cpu", t, "fill a floating-point tensor",
                      loc);
  if (!(std >= 0))
    fail("normal expects std >= 0.0, but found std " + formatNumber(std),
         "pass a non-negative standard deviation", loc);
  return writeDrawn(*this, "normal_", loc, [&] {
    double u1 = randomUniform(), u2 = randomUniform(); // Box-Muller
    return mean +
           std * std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * M_PI * u2);
  });
}

Tensor &Tensor::bernoulli_(double p, SourceLoc loc) {
  implOf(*this, loc);
  if (!(p >= 0 && p <= 1))
    fail("bernoulli_ expects p to be in [0, 1], but got p=" + formatNumber(p),
         "pass a probability in [0, 1]", loc);
  return writeDrawn(*this, "bernoulli_", loc,
                    [&] { return randomUniform() < p ? 1.0 : 0.0; });
}
