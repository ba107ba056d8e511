//===- Factories.cpp - arange, empty, zeros, full, rand, from_vector, *_like
//===//
//
// empty/rand/randn/from_vector allocate at once (a leaf with a buffer);
// arange/zeros/ones/full are recorded (a fill or arange node), so they fuse
// into the program that first reads them and allocate nothing on their own.
//
//===----------------------------------------------------------------------===//
#include "Impl.h"
#include "OpBuilders.h"

#include "strata/Runtime/CudaAllocator.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

using namespace strata;
using namespace strata::detail;

void strata::detail::checkRequiresGrad(const TensorOptions &options,
                                       DType dtype, const SourceLoc &loc) {
  if (options.requires_grad() && !isFloatingPoint(dtype))
    fail("Only Tensors of floating point and complex dtype can require "
         "gradients",
         "make the tensor with a float dtype (strata::kFloat32), or drop "
         "requires_grad(true)",
         loc);
}

Tensor strata::detail::makeLeaf(runtime::StoragePtr buffer, DType dtype,
                                const Shape &sizes,
                                const TensorOptions &options,
                                const char *origin, const SourceLoc &loc) {
  bool onDevice = buffer && buffer->device() == runtime::DeviceKind::CUDA;
  if (options.device().is_cuda() && !onDevice) {
    // Made on the host (from_vector, empty, ...), then uploaded.
    checkDevice(options.device(), loc);
    return makeLeaf(copyBuffer(buffer, runtime::DeviceKind::CUDA, loc), dtype,
                    sizes, options, origin, loc);
  }
  auto root = std::make_shared<StorageRoot>();
  root->dtype = dtype;
  root->numel = layout::contiguous(sizes).numel();
  auto node = std::make_shared<Node>();
  node->op = Op::Leaf;
  node->dtype = dtype;
  node->rootNumel = root->numel;
  node->buffer = buffer;
  node->device = onDevice ? kDevCUDA : kDevCPU;
  node->root = root;
  node->loc = loc;
  root->current = node;
  root->homeSeq = node->seq;
  root->home = std::move(buffer);
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = dtype;
  impl->layout = layout::contiguous(sizes);
  impl->root = std::move(root);
  checkRequiresGrad(options, dtype, loc);
  impl->requiresGrad = options.requires_grad();
  impl->origin = origin;
  impl->loc = loc;
  return Tensor(std::move(impl));
}

namespace {

void checkSizes(const Shape &sizes, const char *op, const SourceLoc &loc,
                DType dtype = DType::F64) {
  for (int64_t s : sizes)
    if (s < 0)
      fail(std::string(op) +
               ": Trying to create tensor with negative "
               "dimension " +
               std::to_string(s) + ": " + layout::formatList(sizes),
           "sizes must be >= 0", loc);
  checkStorageSize(sizes, elementSize(dtype), op, loc);
}

/// PyTorch's spelling of a scalar in messages ("0", "inf", "2.5").
std::string formatScalar(const Scalar &s) {
  if (s.isIntegral())
    return std::to_string(s.toLong());
  double v = s.toDouble();
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[32];
  snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Tensor generated(const char *op, Op kind, const Shape &sizes, DType dtype,
                 double a, double b, const TensorOptions &options,
                 const SourceLoc &loc) {
  checkSizes(sizes, op, loc, dtype);
  checkDevice(options.device(), loc);
  auto node = std::make_shared<Node>();
  node->device = options.device().is_cuda() ? kDevCUDA : kDevCPU;
  node->op = kind;
  node->name = op;
  node->dtype = dtype;
  node->sizes = sizes;
  node->a = a;
  node->b = b;
  checkRequiresGrad(options, dtype, loc);
  Tensor t = makeResult(std::move(node), loc, false);
  t.impl()->requiresGrad = options.requires_grad();
  t.impl()->isLeaf = true;
  return t;
}

void store(unsigned char *p, DType dtype, double v) {
  jit::storeElement(p, toJitDType(dtype), v);
}

/// SplitMix64: the generator of rand/randn (manual_seed sets the state).
/// A counter, so threads drawing at once each get distinct values.
std::atomic<uint64_t> gState{0x853c49e6748fea9bULL};
uint64_t next64() {
  constexpr uint64_t kStep = 0x9E3779B97F4A7C15ULL;
  uint64_t z = gState.fetch_add(kStep) + kStep;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
double uniform() { return (next64() >> 11) * 0x1.0p-53; }

Tensor random(const Shape &sizes, TensorOptions options, bool normal,
              const char *op, const SourceLoc &loc) {
  checkSizes(sizes, op, loc);
  DType dtype = options.dtype();
  if (!isFloatingPoint(dtype))
    fail(std::string(op) + ": \"" + (normal ? "normal" : "uniform") +
             "\" not implemented for '" + toString(dtype) + "'",
         "random values need a floating-point dtype", loc);
  int64_t n = layout::contiguous(sizes).numel();
  auto buffer = allocate(n * elementSize(dtype), loc);
  for (int64_t i = 0; i < n; ++i) {
    double v;
    if (normal) { // Box-Muller
      double u1 = uniform(), u2 = uniform();
      v = std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * M_PI * u2);
    } else {
      v = uniform();
    }
    store(buffer->data() + i * elementSize(dtype), dtype, v);
  }
  return makeLeaf(std::move(buffer), dtype, sizes, options, op, loc);
}

template <typename T> constexpr DType dtypeOfT() {
  if constexpr (std::is_same_v<T, float>)
    return DType::F32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::F64;
  else if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int>)
    return DType::I32;
  else if constexpr (std::is_same_v<T, bool>)
    return DType::Bool;
  else
    return DType::I64;
}

/// PyTorch 1.13's CPU arange of a float dtype (RangeFactoriesKernel.cpp,
/// run on one thread; AVX2 kernels, as Debian's build picks): a vectorized
/// loop over blocks of two vectors of `lanes` elements (8 f32, 4 f64), each
/// vector from its first index `idx` as Vectorized::arange(start + step *
/// idx, step) - that base rounded to the dtype, element idx + k then
/// base + k * step - and the n % (2 * lanes) last elements as start +
/// step * i; every product and sum in double, contracted to one fused
/// multiply-add. Composed of an exact f64 arange, fmas and a where, so
/// start, step and where the blocks end are scalar arguments (one program
/// for every range). Ranges of integers a float holds exactly are the
/// plain arange (every formula gives the same values).
Tensor floatRange(int64_t n, DType dtype, double start, double step,
                  const TensorOptions &options, const SourceLoc &loc) {
  double exactUpTo = dtype == DType::F32 ? 0x1p24 : 0x1p53;
  double last = start + static_cast<double>(n - 1) * step;
  if (n <= 1 || (std::floor(start) == start && std::floor(step) == step &&
                 std::fabs(start) <= exactUpTo && std::fabs(last) <= exactUpTo))
    return generated("arange", Op::Arange, {n}, dtype, start, step, options,
                     loc);
  checkRequiresGrad(options, dtype, loc);
  int64_t lanes = dtype == DType::F32 ? 8 : 4;
  Tensor v;
  {
    NoGradGuard noGrad;
    Tensor i = generated("arange", Op::Arange, {n}, DType::F64, 0, 1,
                         options.dtype(DType::F64).requires_grad(false), loc);
    Tensor idx = i.floor_divide(static_cast<double>(lanes), loc) *
                 static_cast<double>(lanes);
    Tensor first = scalarTensor(start, DType::F64, loc),
           by = scalarTensor(step, DType::F64, loc);
    Tensor base = fusedMultiplyAdd(idx, by, first, loc);
    if (dtype != DType::F64)
      base = castTo(castTo(base, dtype, loc), DType::F64, loc);
    Tensor blocked = fusedMultiplyAdd(i - idx, by, base, loc);
    Tensor rest = fusedMultiplyAdd(i, by, first, loc);
    int64_t blockEnd = n - n % (2 * lanes);
    Tensor inBlock =
        binary("lt", Arg{&i, {}},
               Arg{nullptr, Scalar(static_cast<double>(blockEnd))}, loc);
    v = castTo(where(inBlock, blocked, rest, loc), dtype, loc);
  }
  if (options.requires_grad())
    v.requires_grad_(true, loc);
  return v;
}

} // namespace

Tensor strata::arange(Scalar end, TensorOptions options, SourceLoc loc) {
  return arange(0, end, 1, options, loc);
}

Tensor strata::arange(Scalar start, Scalar end, Scalar step,
                      TensorOptions options, SourceLoc loc) {
  bool floating = start.kind() == Scalar::Kind::Float ||
                  end.kind() == Scalar::Kind::Float ||
                  step.kind() == Scalar::Kind::Float;
  DType dtype = options.has_dtype() ? options.dtype()
                : floating          ? DType::F32
                                    : DType::I64;
  double s = start.toDouble(), e = end.toDouble(), st = step.toDouble();
  if (!std::isfinite(s) || !std::isfinite(e))
    fail("arange: unsupported range: " + formatScalar(start) + " -> " +
             formatScalar(end),
         "start and end must be finite", loc);
  if (st == 0)
    fail("arange: step must be nonzero", "", loc);
  auto inconsistent = [&] {
    fail("arange: upper bound and larger bound inconsistent with step sign",
         "with a positive step, end must be >= start; with a negative one, "
         "end must be <= start",
         loc);
  };
  if (isFloatingPoint(dtype) && ((st > 0 && e < s) || (st < 0 && e > s)))
    inconsistent();
  if (dtype == DType::Bool)
    fail("arange: \"arange_cpu\" not implemented for 'Bool'",
         "make an integer arange and compare it: arange(n) > k", loc);
  if (!isFloatingPoint(dtype)) {
    // PyTorch's integer arange: start, end and step truncated to int64,
    // values start + i * step exact in int64; the size from those integers
    // for int64, from the given numbers for the other integer types.
    auto trunc = [](const Scalar &v) {
      return v.isIntegral() ? v.toLong() : static_cast<int64_t>(v.toDouble());
    };
    int64_t a = trunc(start), z = trunc(end), d = trunc(step);
    if (d == 0)
      fail("arange: step must be nonzero",
           "an integer arange truncates the step: use |step| >= 1", loc);
    // (PyTorch checks the truncated bounds: arange(2, 2.1, -1) is empty.)
    if ((d > 0 && z < a) || (d < 0 && z > a))
      inconsistent();
    __int128 span = static_cast<__int128>(z) - a;
    __int128 count = d > 0 ? (span + d - 1) / d : (span + d + 1) / d;
    if (dtype == DType::I64) {
      // PyTorch's int64 count, (end - start + step - sign) / step in int64
      // arithmetic: it wraps near 2^63 (a negative count raises "invalid
      // size" below; arange(-2^63, 2^63 - 1, 2^62) is empty there).
      uint64_t num = static_cast<uint64_t>(z) - static_cast<uint64_t>(a) +
                     static_cast<uint64_t>(d) -
                     static_cast<uint64_t>(d > 0 ? 1 : -1);
      count = static_cast<int64_t>(num) / d;
    } else if (floating) {
      count = static_cast<__int128>(std::ceil((e - s) / st));
    }
    if (count > INT64_MAX || count < 0) // (PyTorch: size_d < 0 too)
      fail("arange: invalid size, possible overflow?",
           count < 0 ? "the truncated bounds and the given ones disagree on "
                       "the direction: give integral start, end and step"
                     : "the range holds more elements than int64 can count",
           loc);
    Tensor t = generated("arange", Op::Arange, {static_cast<int64_t>(count)},
                         dtype, s, st, options, loc);
    Node &node = *t.impl()->root->current;
    node.exact = true;
    node.ia = a;
    node.ib = d;
    return t;
  }
  double count = std::ceil((e - s) / st);
  if (!(count < 9.2e18))
    fail("arange: invalid size, possible overflow?",
         "the range holds more elements than int64 can count", loc);
  int64_t n = static_cast<int64_t>(count);
  return floatRange(n, dtype, s, st, options, loc);
}

Tensor strata::empty(const Shape &sizes, TensorOptions options, SourceLoc loc) {
  checkSizes(sizes, "empty", loc, options.dtype());
  DType dtype = options.dtype();
  int64_t n = layout::contiguous(sizes).numel();
  return makeLeaf(allocate(n * elementSize(dtype), loc), dtype, sizes, options,
                  "empty", loc);
}

Tensor strata::full(const Shape &sizes, Scalar value, TensorOptions options,
                    SourceLoc loc) {
  DType dtype = options.has_dtype()                   ? options.dtype()
                : value.kind() == Scalar::Kind::Float ? DType::F32
                : value.kind() == Scalar::Kind::Int   ? DType::I64
                                                      : DType::Bool;
  checkScalarFits(value, dtype, "full", loc);
  Tensor t = generated("fill", Op::Fill, sizes, dtype, value.toDouble(), 0,
                       options.dtype(dtype), loc);
  setFillValue(*t.impl()->root->current, value); // (checked to fit)
  return t;
}

Tensor strata::zeros(const Shape &sizes, TensorOptions options, SourceLoc loc) {
  return full(sizes, 0.0, options.dtype(options.dtype()), loc);
}

Tensor strata::ones(const Shape &sizes, TensorOptions options, SourceLoc loc) {
  return full(sizes, 1.0, options.dtype(options.dtype()), loc);
}

Tensor strata::rand(const Shape &sizes, TensorOptions options, SourceLoc loc) {
  return random(sizes, options, false, "rand", loc);
}

Tensor strata::randn(const Shape &sizes, TensorOptions options, SourceLoc loc) {
  return random(sizes, options, true, "randn", loc);
}

void strata::manual_seed(uint64_t seed) { gState.store(seed); }

template <typename T>
Tensor strata::from_vector(const std::vector<T> &values, const Shape &sizes,
                           TensorOptions options, SourceLoc loc) {
  Shape shape =
      sizes.empty() ? Shape{static_cast<int64_t>(values.size())} : sizes;
  checkSizes(shape, "from_vector", loc);
  int64_t n = layout::contiguous(shape).numel();
  if (n != static_cast<int64_t>(values.size()))
    fail("from_vector: shape " + layout::formatList(shape) +
             " is invalid "
             "for input of size " +
             std::to_string(values.size()),
         "the product of the sizes must equal the number of values", loc);
  DType dtype = options.has_dtype() ? options.dtype() : dtypeOfT<T>();
  // PyTorch's torch.tensor(values, dtype=...) checks each value fits an
  // integer dtype ("value cannot be converted to type int32 without
  // overflow"); floats round (1e300 into f32 is inf).
  if (dtype == DType::I32 || dtype == DType::I64)
    for (const T &v : values) {
      bool fits = fitsIn(Scalar(v), dtype);
      if (!fits)
        fail(std::string("from_vector: value cannot be converted to type ") +
                 (dtype == DType::I32 ? "int32" : "int64") +
                 " without overflow",
             "every value must lie in the range of the dtype", loc);
    }
  auto buffer = allocate(n * elementSize(dtype), loc);
  for (int64_t i = 0; i < n; ++i) {
    unsigned char *p = buffer->data() + i * elementSize(dtype);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // Integers to integers directly: a double holds only 53 bits.
      if (dtype == DType::I64) {
        int64_t v = values[i];
        std::memcpy(p, &v, sizeof v);
        continue;
      }
      if (dtype == DType::I32) {
        int32_t v = static_cast<int32_t>(values[i]);
        std::memcpy(p, &v, sizeof v);
        continue;
      }
    }
    store(p, dtype, static_cast<double>(values[i]));
  }
  return makeLeaf(std::move(buffer), dtype, shape, options, "from_vector", loc);
}

template <typename T>
Tensor strata::tensor(std::initializer_list<T> values, TensorOptions options,
                      SourceLoc loc) {
  if (!options.has_dtype())
    options = options.dtype(std::is_floating_point_v<T> ? DType::F32
                            : std::is_same_v<T, bool>   ? DType::Bool
                                                        : DType::I64);
  return from_vector(std::vector<T>(values), {}, options, loc);
}

#define STRATA_INSTANTIATE(T)                                                  \
  template Tensor strata::from_vector<T>(                                      \
      const std::vector<T> &, const Shape &, TensorOptions, SourceLoc);        \
  template Tensor strata::tensor<T>(std::initializer_list<T>, TensorOptions,   \
                                    SourceLoc);
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(int32_t)
STRATA_INSTANTIATE(int64_t)
STRATA_INSTANTIATE(long long) // int64_t is long here: `tensor({3LL})` too
STRATA_INSTANTIATE(bool)
#undef STRATA_INSTANTIATE

namespace {
/// `r`, a fresh fill or random tensor of t's sizes, laid out as PyTorch's
/// *_like (preserve_format: a non-overlapping and dense t's strides, else
/// dense in t's stride order). Its elements are all equal (or independent
/// draws), so a dense permutation of its storage holds the same tensor.
Tensor likeLayout(Tensor r, const Tensor &t) {
  layout::Layout want = layout::preserveFormat(t.impl()->layout);
  layout::Layout &have = r.impl()->layout;
  if (want.sizes == have.sizes && want.offset == 0)
    have.strides = want.strides;
  return r;
}
} // namespace

Tensor strata::empty_like(const Tensor &t, SourceLoc loc) {
  const Shape &sizes = implOf(t, loc).layout.sizes; // checked first
  return likeLayout(empty(sizes, t.options(loc).requires_grad(false), loc), t);
}
Tensor strata::zeros_like(const Tensor &t, SourceLoc loc) {
  const Shape &sizes = implOf(t, loc).layout.sizes; // checked first
  return likeLayout(zeros(sizes, t.options(loc).requires_grad(false), loc), t);
}
Tensor strata::ones_like(const Tensor &t, SourceLoc loc) {
  const Shape &sizes = implOf(t, loc).layout.sizes; // checked first
  return likeLayout(ones(sizes, t.options(loc).requires_grad(false), loc), t);
}
Tensor strata::full_like(const Tensor &t, Scalar value, SourceLoc loc) {
  const Shape &sizes = implOf(t, loc).layout.sizes; // checked first
  return likeLayout(
      full(sizes, value, t.options(loc).requires_grad(false), loc), t);
}
Tensor strata::full_like(const Tensor &t, Scalar value, TensorOptions options,
                         SourceLoc loc) {
  const Shape &sizes = implOf(t, loc).layout.sizes; // checked first
  // LibTorch merges the options into t's: an unset dtype is t's, and so is
  // the device unless a CUDA one is given (TensorOptions cannot tell an
  // explicit CPU from the default).
  TensorOptions o =
      options.dtype(options.has_dtype() ? options.dtype() : t.dtype(loc))
          .device(options.device().is_cuda() ? options.device()
                                             : t.device(loc));
  Tensor r = likeLayout(full(sizes, value, o.requires_grad(false), loc), t);
  if (options.requires_grad())
    r.requires_grad_(true, loc);
  return r;
}
Tensor strata::zeros_like(const Tensor &t, TensorOptions options,
                          SourceLoc loc) {
  return full_like(t, 0, options, loc);
}
Tensor strata::ones_like(const Tensor &t, TensorOptions options,
                         SourceLoc loc) {
  return full_like(t, 1, options, loc);
}
Tensor strata::rand_like(const Tensor &t, SourceLoc loc) {
  const Shape &sizes = implOf(t, loc).layout.sizes; // checked first
  return likeLayout(rand(sizes, t.options(loc).requires_grad(false), loc), t);
}
Tensor strata::randn_like(const Tensor &t, SourceLoc loc) {
  const Shape &sizes = implOf(t, loc).layout.sizes; // checked first
  return likeLayout(randn(sizes, t.options(loc).requires_grad(false), loc), t);
}

//===--- Memory
//---------------------------------------------------------------===//

namespace {
/// True for a usable CUDA device (throws for an unusable one).
bool isCuda(Device d, const SourceLoc &loc) {
  if (d.is_cpu())
    return false;
  checkDevice(d, loc); // the runtime's "no CUDA device: ..." reason
  return true;
}
} // namespace

MemoryStats strata::memory_stats(Device device, SourceLoc loc) {
  if (isCuda(device, loc)) {
    // The CUDA caching allocator counts rounded blocks; it keeps no count
    // of frees (num_frees is 0).
    runtime::cuda::MemoryStats s = runtime::cuda::Allocator::get().stats();
    return {s.allocated, s.peak, s.reserved, s.allocations, 0};
  }
  runtime::MemoryStats s = runtime::CpuAllocator::global().stats();
  return {s.allocatedBytes, s.peakAllocatedBytes, s.reservedBytes, s.numAllocs,
          s.numFrees};
}
void strata::reset_peak_memory_stats(Device device, SourceLoc loc) {
  if (isCuda(device, loc))
    return runtime::cuda::Allocator::get().resetPeakStats();
  runtime::CpuAllocator::global().resetPeakStats();
}
void strata::empty_cache(Device device, SourceLoc loc) {
  if (isCuda(device, loc)) {
    std::string error = runtime::cuda::Allocator::get().emptyCache();
    if (!error.empty())
      fail("empty_cache: " + error, "", loc);
    return;
  }
  runtime::CpuAllocator::global().emptyCache();
}

// What the random in-place ops and from_blob (Random.cpp, FromBlob.cpp)
// share with the factories.
uint64_t strata::detail::randomBits() { return next64(); }
double strata::detail::randomUniform() { return uniform(); }
void strata::detail::checkFactorySizes(const Shape &sizes, const char *op,
                                       DType dtype, const SourceLoc &loc) {
  checkSizes(sizes, op, loc, dtype);
}
