//===- Functions.h - factories, free ops, evaluation, memory ----*- C++ -*-===//
#ifndef STRATA_FUNCTIONS_H
#define STRATA_FUNCTIONS_H

#include "strata/Tensor.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace strata {

//===--- Factories
//----------------------------------------------------------===//
/// 0, 1, ..., end-1 (i64 unless options give a dtype, as PyTorch).
Tensor arange(Scalar end, TensorOptions options = {},
              SourceLoc loc = SourceLoc::current());
/// start, start+step, ... below end (float when any bound is floating).
Tensor arange(Scalar start, Scalar end, Scalar step = 1,
              TensorOptions options = {}, SourceLoc loc = SourceLoc::current());
/// Uninitialized contiguous storage (allocated at once).
Tensor empty(const Shape &sizes, TensorOptions options = {},
             SourceLoc loc = SourceLoc::current());
/// All zeros.
Tensor zeros(const Shape &sizes, TensorOptions options = {},
             SourceLoc loc = SourceLoc::current());
/// All ones.
Tensor ones(const Shape &sizes, TensorOptions options = {},
            SourceLoc loc = SourceLoc::current());
/// Every element `value` (dtype from the value's kind unless given).
Tensor full(const Shape &sizes, Scalar value, TensorOptions options = {},
            SourceLoc loc = SourceLoc::current());
/// Uniform in [0, 1) from the global generator (manual_seed).
Tensor rand(const Shape &sizes, TensorOptions options = {},
            SourceLoc loc = SourceLoc::current());
/// Standard normal from the global generator.
Tensor randn(const Shape &sizes, TensorOptions options = {},
             SourceLoc loc = SourceLoc::current());
/// Seeds the generator of rand/randn.
void manual_seed(uint64_t seed);
/// Integers uniform in [low, high) (int64 unless the options say another
/// dtype), from the global generator. high <= low is an error, as PyTorch's.
Tensor randint(int64_t high, const Shape &sizes, TensorOptions options = {},
               SourceLoc loc = SourceLoc::current());
/// Integers uniform in [low, high): randint(0, high, sizes) above.
Tensor randint(int64_t low, int64_t high, const Shape &sizes,
               TensorOptions options = {},
               SourceLoc loc = SourceLoc::current());
/// A random permutation of 0 .. n-1 (int64 unless the options say another
/// dtype), from the global generator.
Tensor randperm(int64_t n, TensorOptions options = {},
                SourceLoc loc = SourceLoc::current());
/// 1 with probability p[i], else 0, per element (p's dtype; p in [0, 1]).
Tensor bernoulli(const Tensor &p, SourceLoc loc = SourceLoc::current());
/// A tensor over memory strata does not own (LibTorch's from_blob): no
/// copy; `data` must stay valid while any tensor or view of it lives (or
/// pass `deleter`, called once with `data` when the last one is gone).
/// Contiguous unless `strides` are given (non-negative). In-place ops on
/// it write the memory; what strata writes there is there once the tensor
/// is read (data_ptr(), item(), to_vector(), eval()). float32 unless the
/// options say another dtype; a CUDA device means `data` is a device
/// address.
Tensor from_blob(void *data, const Shape &sizes, TensorOptions options = {},
                 SourceLoc loc = SourceLoc::current());
/// from_blob with element strides (non-negative).
Tensor from_blob(void *data, const Shape &sizes, const Shape &strides,
                 TensorOptions options = {},
                 SourceLoc loc = SourceLoc::current());
/// from_blob that calls `deleter(data)` when the last tensor over it dies.
Tensor from_blob(void *data, const Shape &sizes,
                 const std::function<void(void *)> &deleter,
                 TensorOptions options = {},
                 SourceLoc loc = SourceLoc::current());
/// from_blob with strides and a deleter.
Tensor from_blob(void *data, const Shape &sizes, const Shape &strides,
                 const std::function<void(void *)> &deleter,
                 TensorOptions options = {},
                 SourceLoc loc = SourceLoc::current());
/// A tensor holding `values` (row-major) with `sizes` (empty: 1-D); the dtype
/// follows T (float f32, double f64, int32_t i32, int64_t i64, bool) unless
/// the options give one.
template <typename T>
Tensor from_vector(const std::vector<T> &values, const Shape &sizes = {},
                   TensorOptions options = {},
                   SourceLoc loc = SourceLoc::current());
/// torch::tensor({...}): floating literals give f32, integers i64.
template <typename T>
Tensor tensor(std::initializer_list<T> values, TensorOptions options = {},
              SourceLoc loc = SourceLoc::current());
/// empty with another tensor's sizes and options.
Tensor empty_like(const Tensor &t, SourceLoc loc = SourceLoc::current());
/// zeros like t.
Tensor zeros_like(const Tensor &t, SourceLoc loc = SourceLoc::current());
/// ones like t.
Tensor ones_like(const Tensor &t, SourceLoc loc = SourceLoc::current());
/// full like t.
Tensor full_like(const Tensor &t, Scalar value,
                 SourceLoc loc = SourceLoc::current());
/// full like t with other options (dtype, device, requires_grad): an unset
/// dtype is t's, and so is the device unless a CUDA one is given.
Tensor full_like(const Tensor &t, Scalar value, TensorOptions options,
                 SourceLoc loc = SourceLoc::current());
/// zeros like t with other options.
Tensor zeros_like(const Tensor &t, TensorOptions options,
                  SourceLoc loc = SourceLoc::current());
/// ones like t with other options.
Tensor ones_like(const Tensor &t, TensorOptions options,
                 SourceLoc loc = SourceLoc::current());
/// rand like t.
Tensor rand_like(const Tensor &t, SourceLoc loc = SourceLoc::current());
/// randn like t.
Tensor randn_like(const Tensor &t, SourceLoc loc = SourceLoc::current());

//===--- Range factories (dsl/lib/RangeFactories.cpp) ---------------------===//
/// The n x n identity (f32 unless options give a dtype).
Tensor eye(int64_t n, TensorOptions options = {},
           SourceLoc loc = SourceLoc::current());
/// n x m with ones on the main diagonal.
Tensor eye(int64_t n, int64_t m, TensorOptions options = {},
           SourceLoc loc = SourceLoc::current());
/// `steps` values evenly spaced from start to end inclusive (f32 unless
/// options give a dtype), with PyTorch's formula: the first half counted
/// from start, the second from end, so both ends are exact.
Tensor linspace(Scalar start, Scalar end, int64_t steps,
                TensorOptions options = {},
                SourceLoc loc = SourceLoc::current());
/// base ** linspace(start, end, steps), the power taken in double.
Tensor logspace(Scalar start, Scalar end, int64_t steps, double base = 10.0,
                TensorOptions options = {},
                SourceLoc loc = SourceLoc::current());

/// torch.index_select (Tensor::index_select).
Tensor index_select(const Tensor &t, int64_t dim, const Tensor &index,
                    SourceLoc loc = SourceLoc::current());
/// torch.gather (Tensor::gather).
Tensor gather(const Tensor &t, int64_t dim, const Tensor &index,
              SourceLoc loc = SourceLoc::current());
/// torch.masked_select (Tensor::masked_select).
Tensor masked_select(const Tensor &t, const Tensor &mask,
                     SourceLoc loc = SourceLoc::current());
/// torch.nonzero (Tensor::nonzero).
Tensor nonzero(const Tensor &t, SourceLoc loc = SourceLoc::current());
/// torch.argwhere (Tensor::argwhere).
Tensor argwhere(const Tensor &t, SourceLoc loc = SourceLoc::current());
//===--- Joining and one-hot (dsl/lib/ShapeOps.cpp) ----------------------===//
/// The tensors joined along dim (PyTorch's type promotion; all sizes but
/// dim's equal; 1-D empty tensors are skipped, as PyTorch's legacy rule).
/// A new contiguous tensor: each input is copied into a view of it, so the
/// gradient of each is its slice of the result's.
Tensor cat(const std::vector<Tensor> &tensors, int64_t dim = 0,
           SourceLoc loc = SourceLoc::current());
/// The tensors (of equal sizes) joined along a new dim.
Tensor stack(const std::vector<Tensor> &tensors, int64_t dim = 0,
             SourceLoc loc = SourceLoc::current());
/// i64 class indices as one-hot rows: a new last dim of num_classes (-1:
/// the largest index + 1, which evaluates the indices), i64 0/1. Indices
/// outside [0, num_classes) raise PyTorch's errors when their values are
/// already computed; a pending tensor is not evaluated for the check (an
/// out-of-range index then gives a row of zeros).
Tensor one_hot(const Tensor &tensor, int64_t num_classes = -1,
               SourceLoc loc = SourceLoc::current());

//===--- Free ops
//-----------------------------------------------------------===//
/// cond ? a : b with broadcasting.
Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b,
             SourceLoc loc = SourceLoc::current());
/// cond ? a : b with a number (PyTorch's type promotion with numbers).
Tensor where(const Tensor &cond, Scalar a, const Tensor &b,
             SourceLoc loc = SourceLoc::current());
/// cond ? a : b with a number.
Tensor where(const Tensor &cond, const Tensor &a, Scalar b,
             SourceLoc loc = SourceLoc::current());
/// cond ? a : b of two numbers (f32 for a float, i64 for integers).
Tensor where(const Tensor &cond, Scalar a, Scalar b,
             SourceLoc loc = SourceLoc::current());
/// Elementwise maximum.
Tensor maximum(const Tensor &a, const Tensor &b,
               SourceLoc loc = SourceLoc::current());
/// Elementwise minimum.
Tensor minimum(const Tensor &a, const Tensor &b,
               SourceLoc loc = SourceLoc::current());
/// torch.cumsum (Tensor::cumsum).
Tensor cumsum(const Tensor &x, int64_t dim,
              std::optional<DType> dtype = std::nullopt,
              SourceLoc loc = SourceLoc::current());
/// torch.cumprod (Tensor::cumprod).
Tensor cumprod(const Tensor &x, int64_t dim,
               std::optional<DType> dtype = std::nullopt,
               SourceLoc loc = SourceLoc::current());
/// torch.matmul.
Tensor matmul(const Tensor &a, const Tensor &b,
              SourceLoc loc = SourceLoc::current());
//===--- Out forms (dsl/lib/OutOps.cpp; docs/ops.md "Out forms") ---------===//
// LibTorch's `_out` functions: the op's value written into `out` (a pending
// write of out's storage, as `out.copy_(...)`), returned. `out` may be a
// view; its dtype may be wider than the result's (PyTorch's can_cast; the
// products want the result's dtype). An out of another shape is resized
// only when it is empty (numel 0, not a view); otherwise strata raises
// where PyTorch resizes with a warning. In grad mode no argument may
// require grad; an elementwise input may share memory with out only
// exactly (add_out(a, a, b)).
/// out = self + alpha * other (torch.add(self, other, alpha=alpha, out=out)).
Tensor &add_out(Tensor &out, const Tensor &self, const Tensor &other,
                Scalar alpha = 1, SourceLoc loc = SourceLoc::current());
/// out = self - alpha * other.
Tensor &sub_out(Tensor &out, const Tensor &self, const Tensor &other,
                Scalar alpha = 1, SourceLoc loc = SourceLoc::current());
/// out = self * other.
Tensor &mul_out(Tensor &out, const Tensor &self, const Tensor &other,
                SourceLoc loc = SourceLoc::current());
/// out = self / other (true division: integers give floats).
Tensor &div_out(Tensor &out, const Tensor &self, const Tensor &other,
                SourceLoc loc = SourceLoc::current());
/// out = matmul(self, other); out's dtype must be the product's.
Tensor &matmul_out(Tensor &out, const Tensor &self, const Tensor &other,
                   SourceLoc loc = SourceLoc::current());
/// out = self @ mat2 for two matrices (torch.mm).
Tensor &mm_out(Tensor &out, const Tensor &self, const Tensor &mat2,
               SourceLoc loc = SourceLoc::current());

/// torch.atan2 (Tensor::atan2).
Tensor atan2(const Tensor &a, const Tensor &b,
             SourceLoc loc = SourceLoc::current());
/// torch.hypot (Tensor::hypot).
Tensor hypot(const Tensor &a, const Tensor &b,
             SourceLoc loc = SourceLoc::current());
/// torch.logaddexp (Tensor::logaddexp).
Tensor logaddexp(const Tensor &a, const Tensor &b,
                 SourceLoc loc = SourceLoc::current());
/// torch.fmod (Tensor::fmod).
Tensor fmod(const Tensor &a, const Tensor &b,
            SourceLoc loc = SourceLoc::current());
/// torch.fmod by a number.
Tensor fmod(const Tensor &a, Scalar b, SourceLoc loc = SourceLoc::current());
/// torch.remainder (Tensor::remainder).
Tensor remainder(const Tensor &a, const Tensor &b,
                 SourceLoc loc = SourceLoc::current());
/// torch.remainder by a number.
Tensor remainder(const Tensor &a, Scalar b,
                 SourceLoc loc = SourceLoc::current());
/// torch.remainder of a number by a tensor.
Tensor remainder(Scalar a, const Tensor &b,
                 SourceLoc loc = SourceLoc::current());
/// torch.floor_divide (Tensor::floor_divide).
Tensor floor_divide(const Tensor &a, const Tensor &b,
                    SourceLoc loc = SourceLoc::current());
/// torch.floor_divide by a number.
Tensor floor_divide(const Tensor &a, Scalar b,
                    SourceLoc loc = SourceLoc::current());
/// torch.lerp (Tensor::lerp).
Tensor lerp(const Tensor &start, const Tensor &end, Scalar weight,
            SourceLoc loc = SourceLoc::current());
/// torch.lerp with a weight tensor.
Tensor lerp(const Tensor &start, const Tensor &end, const Tensor &weight,
            SourceLoc loc = SourceLoc::current());
/// torch.isclose (Tensor::isclose).
Tensor isclose(const Tensor &a, const Tensor &b, double rtol = 1e-05,
               double atol = 1e-08, bool equal_nan = false,
               SourceLoc loc = SourceLoc::current());
/// torch.allclose (Tensor::allclose).
bool allclose(const Tensor &a, const Tensor &b, double rtol = 1e-05,
              double atol = 1e-08, bool equal_nan = false,
              SourceLoc loc = SourceLoc::current());

//===--- Evaluation
//---------------------------------------------------------===//
/// Evaluates every pending tensor of `tensors` in ONE compiled program.
void eval(const std::vector<Tensor> &tensors,
          SourceLoc loc = SourceLoc::current());
/// The program that evaluating `tensors` runs: its IR as recorded ("before")
/// and after the strata pipeline ("after"); empty when nothing is pending.
struct IRDump {
  std::string before; ///< the recorded function
  std::string after;  ///< after buildStrataPipeline (through kernels)
};
/// The IR of the program that would evaluate `tensors` (runs nothing).
IRDump dump_ir(const std::vector<Tensor> &tensors,
               SourceLoc loc = SourceLoc::current());

/// What evaluation did since reset_eval_stats().
struct EvalStats {
  int64_t programs = 0;  ///< programs run
  int64_t compiles = 0;  ///< programs prepared (cache misses)
  int64_t cacheHits = 0; ///< programs found prepared
  int64_t kernels = 0;   ///< strata.kernel launches
  int64_t copyBacks = 0; ///< in-place results copied into the user buffer
};
/// Counters of evaluation.
EvalStats eval_stats();
/// Zeroes the counters.
void reset_eval_stats();

/// How many prepared programs the evaluator and the autograd engine each
/// keep (by structure; the least recently used goes first). Default 256,
/// or `STRATA_PROGRAM_CACHE_SIZE`; a small prepared program holds about
/// 5-8 KB, its kernels about 40 KB each in the JIT's own cache
/// (docs/performance.md, "Memory per prepared program").
/// Lowering it drops programs at once; an evicted program is prepared
/// again when next needed (its kernels usually come from the JIT's cache).
void set_program_cache_capacity(int64_t programs,
                                SourceLoc loc = SourceLoc::current());
/// The current bound (see set_program_cache_capacity).
int64_t program_cache_capacity();
/// Prepared programs held now: the evaluator's plus the autograd engine's.
int64_t program_cache_size();

//===--- Memory
//-------------------------------------------------------------===//
/// PyTorch's memory_stats keys for one device.
struct MemoryStats {
  int64_t allocated_bytes = 0;      ///< live buffers
  int64_t peak_allocated_bytes = 0; ///< max since reset
  int64_t reserved_bytes = 0;       ///< live + cached blocks
  int64_t num_allocs = 0;           ///< allocations since start
  int64_t num_frees = 0;            ///< frees since start
};
/// Stats of `device` (CUDA: the caching allocator; throws without a GPU).
MemoryStats memory_stats(Device device = Device::cpu(),
                         SourceLoc loc = SourceLoc::current());
/// Peak = current.
void reset_peak_memory_stats(Device device = Device::cpu(),
                             SourceLoc loc = SourceLoc::current());
/// Returns cached blocks to the system.
void empty_cache(Device device = Device::cpu(),
                 SourceLoc loc = SourceLoc::current());

} // namespace strata

#endif // STRATA_FUNCTIONS_H
