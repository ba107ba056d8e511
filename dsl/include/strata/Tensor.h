//===- Tensor.h - strata::Tensor, LibTorch's tensor, recorded lazily -*- C++
//-*-===//
//
// A Tensor is a handle to shared TensorImpl: dtype, device, a layout
// (sizes/strides/offset, always computed by the one layout algebra) and a
// storage root that is either materialized (a buffer) or pending (a node of
// the recorded trace). Metadata and views never compile anything; compute
// is recorded and runs through the JIT when a value is needed (data_ptr(),
// item(), to_vector(), printing, strata::eval).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TENSOR_H
#define STRATA_TENSOR_H

#include "strata/Error.h"
#include "strata/Types.h"

#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace strata {
namespace runtime {
/// The runtime's buffer (strata/Runtime/Storage.h).
class Storage;
} // namespace runtime
namespace detail {
/// A tensor's implementation (dsl/lib/Impl.h).
struct TensorImpl;
/// The versions of a storage (dsl/lib/Impl.h).
struct StorageRoot;
} // namespace detail
/// A node of the autograd graph (strata/Autograd.h).
class GradFn;
/// A tensor operand with the user's source location (defined below).
struct LocatedTensor;

/// An integer (not bool) used as one dim: `x.sum(1)` as LibTorch, whose
/// IntArrayRef converts from one int. A template, so `sum({})` and `sum({1})`
/// still pick the dim-list overload.
template <typename I>
concept IntegralDim = std::integral<I> && !std::same_as<I, bool>;

/// The flat buffer behind a tensor (PyTorch's untyped storage plus its
/// element type): it knows its element count and type, not a shape.
class Storage {
public:
  /// An undefined storage.
  Storage() = default;
  /// The first byte (null for an empty storage). Every pending reader and
  /// writer of the storage runs first, so the memory holds its current
  /// contents and a write through the pointer is seen by what is recorded
  /// after (not by what was recorded before: that has already run).
  void *data_ptr(SourceLoc loc = SourceLoc::current()) const;
  /// Size in bytes.
  int64_t nbytes() const;
  /// Number of elements.
  int64_t size() const;
  /// Bytes per element.
  int64_t element_size() const { return elementSize_; }
  /// The element type.
  DType dtype() const { return dtype_; }
  /// Every element of the buffer, size() of them in storage order whatever
  /// the tensors over it view, converted to T (integers exactly). Pending
  /// readers and writers run first, as for data_ptr(); a CUDA buffer is
  /// copied to the host. Undefined: empty.
  template <typename T>
  std::vector<T> to_vector(SourceLoc loc = SourceLoc::current()) const;
  /// to_vector<double>() (PyTorch's storage().tolist(); int64 elements
  /// beyond 2^53 round: to_vector<int64_t>() keeps them).
  std::vector<double> tolist(SourceLoc loc = SourceLoc::current()) const {
    return to_vector<double>(loc);
  }
  /// The device it lives on.
  Device device() const;
  /// How many owners share the buffer (tensors, JIT values, this handle).
  long use_count() const;
  /// Whether it refers to a buffer.
  bool defined() const { return buffer_ != nullptr; }
  /// Same buffer.
  bool is_alias_of(const Storage &o) const { return buffer_ == o.buffer_; }

  /// For the implementation.
  Storage(std::shared_ptr<runtime::Storage> buffer, DType dtype,
          std::shared_ptr<detail::StorageRoot> root = nullptr)
      : buffer_(std::move(buffer)), root_(std::move(root)), dtype_(dtype),
        elementSize_(elementSize(dtype)) {}

private:
  std::shared_ptr<runtime::Storage> buffer_;
  /// The trace's view of the buffer: data_ptr() settles it (null: none).
  std::shared_ptr<detail::StorageRoot> root_;
  DType dtype_ = DType::F32;
  int64_t elementSize_ = 1;
};

/// A strided tensor with LibTorch's names and semantics.
class Tensor {
public:
  /// An undefined tensor.
  Tensor() = default;
  /// A handle: copies share the tensor.
  Tensor(const Tensor &) = default;
  /// Moves the handle.
  Tensor(Tensor &&) noexcept = default;
  /// Rebinds this handle. Assigning to a temporary (e.g. `x.grad() = g`,
  /// which would change nothing) does not compile: use
  /// `x.mutable_grad() = g`.
  Tensor &operator=(const Tensor &) & = default;
  /// Rebinds this handle (move).
  Tensor &operator=(Tensor &&) &noexcept = default;
  /// Drops this handle.
  ~Tensor() = default;
  /// For the implementation.
  explicit Tensor(std::shared_ptr<detail::TensorImpl> impl)
      : impl_(std::move(impl)) {}

  //===--- Metadata (never compiles or runs anything) ---------------------===//
  /// Whether this handle refers to a tensor.
  bool defined() const { return impl_ != nullptr; }
  /// Sizes of each dimension.
  const Shape &sizes(SourceLoc loc = SourceLoc::current()) const;
  /// Size of dim `d` (negative counts from the end).
  int64_t size(int64_t d, SourceLoc loc = SourceLoc::current()) const;
  /// Strides in elements.
  const Shape &strides(SourceLoc loc = SourceLoc::current()) const;
  /// Stride of dim `d`.
  int64_t stride(int64_t d, SourceLoc loc = SourceLoc::current()) const;
  /// Offset of element 0 in its storage, in elements.
  int64_t storage_offset(SourceLoc loc = SourceLoc::current()) const;
  /// Number of dimensions.
  int64_t dim(SourceLoc loc = SourceLoc::current()) const;
  /// Number of elements.
  int64_t numel(SourceLoc loc = SourceLoc::current()) const;
  /// Element type.
  DType dtype(SourceLoc loc = SourceLoc::current()) const;
  /// Device.
  Device device(SourceLoc loc = SourceLoc::current()) const;
  /// Element type, device and requires_grad as options.
  TensorOptions options(SourceLoc loc = SourceLoc::current()) const;
  /// PyTorch's is_contiguous.
  bool is_contiguous(SourceLoc loc = SourceLoc::current()) const;
  /// Bytes per element.
  int64_t element_size(SourceLoc loc = SourceLoc::current()) const;
  /// Whether gradients are recorded for this tensor.
  bool requires_grad(SourceLoc loc = SourceLoc::current()) const;
  /// Sets requires_grad (only on leaves, as PyTorch); returns *this.
  Tensor &requires_grad_(bool r = true, SourceLoc loc = SourceLoc::current());
  /// True unless produced by an op from a tensor that requires grad.
  bool is_leaf(SourceLoc loc = SourceLoc::current()) const;
  /// The accumulated gradient of a leaf (undefined until a backward()). For
  /// a non-leaf without retain_grad(): undefined, with PyTorch's UserWarning
  /// (strata::set_warning_handler). A handle on the gradient, so in-place
  /// ops on it write the gradient itself, as LibTorch's
  /// `x.grad().zero_()`.
  Tensor grad(SourceLoc loc = SourceLoc::current()) const;
  /// The gradient slot, to assign or reset (LibTorch's mutable_grad()).
  Tensor &mutable_grad(SourceLoc loc = SourceLoc::current()) const;
  /// The function that made this tensor (null for leaves).
  std::shared_ptr<GradFn> grad_fn(SourceLoc loc = SourceLoc::current()) const;
  /// Keep .grad() of this non-leaf across backward().
  void retain_grad(SourceLoc loc = SourceLoc::current()) const;
  /// Whether retain_grad() was called (or this is a leaf requiring grad).
  bool retains_grad(SourceLoc loc = SourceLoc::current()) const;
  /// Accumulates d(this)/d(leaf) * gradient into every leaf's .grad();
  /// `gradient` may be omitted for a scalar. With `create_graph`, the
  /// gradients are recorded as a graph of their own (they have a grad_fn and
  /// can be differentiated again: second derivatives).
  /// `retain_graph` defaults to `create_graph` (PyTorch's and LibTorch's).
  void backward(const Tensor &gradient = Tensor(),
                std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false,
                SourceLoc loc = SourceLoc::current()) const;
  /// The storage's version counter (incremented by every in-place op).
  int64_t _version(SourceLoc loc = SourceLoc::current()) const;
  /// Whether the values are computed (false: a pending recorded op).
  bool is_materialized(SourceLoc loc = SourceLoc::current()) const;

  //===--- Storage and data pointer (evaluate if pending)
  //------------------===//
  /// The storage (evaluates a pending root and its pending readers).
  Storage storage(SourceLoc loc = SourceLoc::current()) const;
  /// storage().data_ptr() + storage_offset() * element_size(). Raw memory
  /// is handed out only after every pending reader and writer of the
  /// storage (of any of its versions, through any view) has run: a write
  /// through the pointer is seen by what is recorded after it and by
  /// nothing recorded before, as in eager PyTorch. Write before recording
  /// more reads of the storage (they run later, lazily).
  void *data_ptr(SourceLoc loc = SourceLoc::current()) const;
  /// data_ptr() as T* (T must match dtype()).
  template <typename T> T *data_ptr(SourceLoc loc = SourceLoc::current()) const;
  /// The one element as T (numel must be 1).
  template <typename T> T item(SourceLoc loc = SourceLoc::current()) const;
  /// Every element in logical (row-major) order, converted to T.
  template <typename T>
  std::vector<T> to_vector(SourceLoc loc = SourceLoc::current()) const;
  /// Evaluates this tensor (no-op when materialized); returns *this.
  const Tensor &eval(SourceLoc loc = SourceLoc::current()) const;

  //===--- Views (metadata from the layout algebra; share the storage) ----===//
  /// PyTorch's view (computeStride); one size may be -1.
  Tensor view(const Shape &shape, SourceLoc loc = SourceLoc::current()) const;
  /// A view when strides allow, else a copy.
  Tensor reshape(const Shape &shape,
                 SourceLoc loc = SourceLoc::current()) const;
  /// Transpose of a tensor with <= 2 dims.
  Tensor t(SourceLoc loc = SourceLoc::current()) const;
  /// Swaps two dims.
  Tensor transpose(int64_t dim0, int64_t dim1,
                   SourceLoc loc = SourceLoc::current()) const;
  /// Reorders dims.
  Tensor permute(const Shape &dims, SourceLoc loc = SourceLoc::current()) const;
  /// Elements [start, start + length) of dim.
  Tensor narrow(int64_t dim, int64_t start, int64_t length,
                SourceLoc loc = SourceLoc::current()) const;
  /// Index `index` of dim, which is removed.
  Tensor select(int64_t dim, int64_t index,
                SourceLoc loc = SourceLoc::current()) const;
  /// Python slicing x[start:end:step] along dim.
  Tensor slice(int64_t dim, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1,
               SourceLoc loc = SourceLoc::current()) const;
  /// An index with the user's source location (operator[] takes exactly one
  /// argument; the conversion happens in the user's expression).
  struct Index {
    /// Wraps `i`; `loc` defaults to where the conversion happens.
    Index(int64_t i, SourceLoc loc = SourceLoc::current())
        : value(i), loc(loc) {}
    /// The index.
    int64_t value;
    /// The user's source location.
    SourceLoc loc;
  };
  /// select(0, index); errors name the user's line.
  Tensor operator[](Index index) const;
  /// Broadcast to `shape` with stride 0 (-1 keeps a size).
  Tensor expand(const Shape &shape, SourceLoc loc = SourceLoc::current()) const;
  /// expand(other.sizes()).
  Tensor expand_as(const Tensor &other,
                   SourceLoc loc = SourceLoc::current()) const;
  /// Removes every size-1 dim.
  Tensor squeeze(SourceLoc loc = SourceLoc::current()) const;
  /// Removes dim if its size is 1.
  Tensor squeeze(int64_t dim, SourceLoc loc = SourceLoc::current()) const;
  /// Inserts a size-1 dim.
  Tensor unsqueeze(int64_t dim, SourceLoc loc = SourceLoc::current()) const;
  /// Flattens dims [start_dim, end_dim] (a view when strides allow).
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1,
                 SourceLoc loc = SourceLoc::current()) const;
  /// Any layout within the storage (offset: this tensor's when not given).
  Tensor as_strided(const Shape &sizes, const Shape &strides,
                    std::optional<int64_t> storage_offset = std::nullopt,
                    SourceLoc loc = SourceLoc::current()) const;
  /// A diagonal of two dims.
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1,
                  SourceLoc loc = SourceLoc::current()) const;
  /// Sliding windows of `size` with `step` along dim (a new last dim).
  Tensor unfold(int64_t dim, int64_t size, int64_t step,
                SourceLoc loc = SourceLoc::current()) const;
  /// Reversed dims: a view with negative strides (strata's extension;
  /// PyTorch copies).
  Tensor flip(const Shape &dims, SourceLoc loc = SourceLoc::current()) const;
  /// Itself when contiguous, else a contiguous copy.
  Tensor contiguous(SourceLoc loc = SourceLoc::current()) const;
  /// A copy in new storage (contiguous).
  Tensor clone(SourceLoc loc = SourceLoc::current()) const;
  /// Same storage and layout, requires_grad false, a leaf.
  Tensor detach(SourceLoc loc = SourceLoc::current()) const;
  /// Converted to element type `t` (itself when already `t`).
  Tensor to(DType t, SourceLoc loc = SourceLoc::current()) const;
  /// On device `d`: self when already there, else a contiguous copy of the
  /// logical tensor (a new leaf). CUDA throws without a driver/GPU.
  Tensor to(Device d, SourceLoc loc = SourceLoc::current()) const;

  //===--- Compute (recorded; evaluated lazily) ---------------------------===//
  /// Elementwise ops with broadcasting and PyTorch's type promotion.
  Tensor add(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// this - o.
  Tensor sub(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// this * o.
  Tensor mul(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// True division (integers give floats, as PyTorch).
  Tensor div(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// this ** o.
  Tensor pow(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// this ** s.
  Tensor pow(Scalar s, SourceLoc loc = SourceLoc::current()) const;
  /// Elementwise comparisons (bool results).
  Tensor eq(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// this != o.
  Tensor ne(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// this < o.
  Tensor lt(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// this <= o.
  Tensor le(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// this > o.
  Tensor gt(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// this >= o.
  Tensor ge(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// Unary math.
  Tensor neg(SourceLoc loc = SourceLoc::current()) const;
  /// |x|.
  Tensor abs(SourceLoc loc = SourceLoc::current()) const;
  /// e^x (integers promote to f32).
  Tensor exp(SourceLoc loc = SourceLoc::current()) const;
  /// ln x.
  Tensor log(SourceLoc loc = SourceLoc::current()) const;
  /// sqrt x.
  Tensor sqrt(SourceLoc loc = SourceLoc::current()) const;
  /// max(x, 0).
  Tensor relu(SourceLoc loc = SourceLoc::current()) const;
  /// 1 / (1 + e^-x).
  Tensor sigmoid(SourceLoc loc = SourceLoc::current()) const;
  /// tanh x.
  Tensor tanh(SourceLoc loc = SourceLoc::current()) const;
  /// Sine (integers and bool promote to f32, as all below unless said).
  Tensor sin(SourceLoc loc = SourceLoc::current()) const;
  /// Cosine.
  Tensor cos(SourceLoc loc = SourceLoc::current()) const;
  /// Tangent.
  Tensor tan(SourceLoc loc = SourceLoc::current()) const;
  /// Arcsine.
  Tensor asin(SourceLoc loc = SourceLoc::current()) const;
  /// Arccosine.
  Tensor acos(SourceLoc loc = SourceLoc::current()) const;
  /// Arctangent.
  Tensor atan(SourceLoc loc = SourceLoc::current()) const;
  /// Hyperbolic sine.
  Tensor sinh(SourceLoc loc = SourceLoc::current()) const;
  /// Hyperbolic cosine.
  Tensor cosh(SourceLoc loc = SourceLoc::current()) const;
  /// 2^x.
  Tensor exp2(SourceLoc loc = SourceLoc::current()) const;
  /// e^x - 1.
  Tensor expm1(SourceLoc loc = SourceLoc::current()) const;
  /// Base-2 logarithm.
  Tensor log2(SourceLoc loc = SourceLoc::current()) const;
  /// Base-10 logarithm.
  Tensor log10(SourceLoc loc = SourceLoc::current()) const;
  /// ln(1 + x).
  Tensor log1p(SourceLoc loc = SourceLoc::current()) const;
  /// 1 / sqrt(x).
  Tensor rsqrt(SourceLoc loc = SourceLoc::current()) const;
  /// 1 / x.
  Tensor reciprocal(SourceLoc loc = SourceLoc::current()) const;
  /// The error function.
  Tensor erf(SourceLoc loc = SourceLoc::current()) const;
  /// x * x (integers stay integers, bool becomes i64).
  Tensor square(SourceLoc loc = SourceLoc::current()) const;
  /// -1, 0 or 1 (NaN gives 0; bool stays bool).
  Tensor sign(SourceLoc loc = SourceLoc::current()) const;
  /// Floor (integers are returned as they are).
  Tensor floor(SourceLoc loc = SourceLoc::current()) const;
  /// Ceiling (integers are returned as they are).
  Tensor ceil(SourceLoc loc = SourceLoc::current()) const;
  /// Round half to even (integers are returned as they are).
  Tensor round(SourceLoc loc = SourceLoc::current()) const;
  /// Round toward zero (integers are returned as they are).
  Tensor trunc(SourceLoc loc = SourceLoc::current()) const;
  /// x * sigmoid(x) (floating point only).
  Tensor silu(SourceLoc loc = SourceLoc::current()) const;
  /// ln(1 + e^x), x itself above 20 (floating point only).
  Tensor softplus(SourceLoc loc = SourceLoc::current()) const;
  /// x == 0, as bool.
  Tensor logical_not(SourceLoc loc = SourceLoc::current()) const;
  /// ~x of integers, !x of bool.
  Tensor bitwise_not(SourceLoc loc = SourceLoc::current()) const;
  /// GELU: approximate "none" (PyTorch's default, x * Phi(x) via erf) or
  /// "tanh" (floating point only).
  Tensor gelu(const std::string &approximate = "none",
              SourceLoc loc = SourceLoc::current()) const;
  /// min(max(x, lo), hi) with optional bounds (the result type promotes
  /// with the bounds, as PyTorch's); the gradient passes where lo <= x <= hi.
  Tensor clamp(std::optional<Scalar> lo, std::optional<Scalar> hi,
               SourceLoc loc = SourceLoc::current()) const;
  /// clamp(lo, none).
  Tensor clamp_min(Scalar lo, SourceLoc loc = SourceLoc::current()) const;
  /// clamp(none, hi).
  Tensor clamp_max(Scalar hi, SourceLoc loc = SourceLoc::current()) const;
  /// NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest
  /// finite values unless given); integers and bool are returned as they
  /// are.
  Tensor nan_to_num(std::optional<double> nan = 0.0,
                    std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt,
                    SourceLoc loc = SourceLoc::current()) const;
  /// Elementwise a && b, a || b, a != b of the operands' truth values.
  Tensor logical_and(const Tensor &o,
                     SourceLoc loc = SourceLoc::current()) const;
  /// Elementwise a || b (bool result).
  Tensor logical_or(const Tensor &o,
                    SourceLoc loc = SourceLoc::current()) const;
  /// Elementwise a xor b (bool result).
  Tensor logical_xor(const Tensor &o,
                     SourceLoc loc = SourceLoc::current()) const;
  /// Bitwise and of integer or bool tensors (PyTorch's type promotion).
  Tensor bitwise_and(const Tensor &o,
                     SourceLoc loc = SourceLoc::current()) const;
  /// Bitwise and with a scalar.
  Tensor bitwise_and(Scalar s, SourceLoc loc = SourceLoc::current()) const;
  /// Bitwise or of integer or bool tensors.
  Tensor bitwise_or(const Tensor &o,
                    SourceLoc loc = SourceLoc::current()) const;
  /// Bitwise or with a scalar.
  Tensor bitwise_or(Scalar s, SourceLoc loc = SourceLoc::current()) const;
  /// Bitwise xor of integer or bool tensors.
  Tensor bitwise_xor(const Tensor &o,
                     SourceLoc loc = SourceLoc::current()) const;
  /// Bitwise xor with a scalar.
  Tensor bitwise_xor(Scalar s, SourceLoc loc = SourceLoc::current()) const;
  /// x != x: true at NaN (bool; integers are never NaN).
  Tensor isnan(SourceLoc loc = SourceLoc::current()) const;
  /// |x| == inf (bool; false for integers).
  Tensor isinf(SourceLoc loc = SourceLoc::current()) const;
  /// Neither NaN nor infinite (bool; true for integers).
  Tensor isfinite(SourceLoc loc = SourceLoc::current()) const;
  /// atan2(this, o): the angle of (o, this), a float (integers promote).
  Tensor atan2(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// C's fmod: the remainder with the sign of this (integers too; an
  /// integer division by a zero number raises ZeroDivisionError).
  Tensor fmod(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// fmod() by a number.
  Tensor fmod(Scalar s, SourceLoc loc = SourceLoc::current()) const;
  /// Python's modulo: the remainder with the sign of the divisor.
  Tensor remainder(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// remainder() by a number.
  Tensor remainder(Scalar s, SourceLoc loc = SourceLoc::current()) const;
  /// Division rounded down (PyTorch 1.13's floor_divide; no gradient).
  Tensor floor_divide(const Tensor &o,
                      SourceLoc loc = SourceLoc::current()) const;
  /// floor_divide() by a number.
  Tensor floor_divide(Scalar s, SourceLoc loc = SourceLoc::current()) const;
  /// this + weight * (end - this), as PyTorch computes it (floats).
  Tensor lerp(const Tensor &end, Scalar weight,
              SourceLoc loc = SourceLoc::current()) const;
  /// lerp() with a weight tensor (broadcast; same dtype).
  Tensor lerp(const Tensor &end, const Tensor &weight,
              SourceLoc loc = SourceLoc::current()) const;
  /// |this - o| <= atol + rtol * |o| elementwise (bool; equal values,
  /// infinities included, are close; NaNs are when equal_nan).
  Tensor isclose(const Tensor &o, double rtol = 1e-05, double atol = 1e-08,
                 bool equal_nan = false,
                 SourceLoc loc = SourceLoc::current()) const;
  /// Whether isclose() holds for every element (evaluates now).
  bool allclose(const Tensor &o, double rtol = 1e-05, double atol = 1e-08,
                bool equal_nan = false,
                SourceLoc loc = SourceLoc::current()) const;
  /// `value` (converted to this dtype) where `mask` (bool, broadcast) is
  /// true, this elsewhere; the gradient passes where the mask is false.
  Tensor masked_fill(const Tensor &mask, Scalar value,
                     SourceLoc loc = SourceLoc::current()) const;
  /// The elements of this tensor where `mask` (bool; the two broadcast) is
  /// true, as a 1-D tensor of this dtype. Reads the mask at the call (a
  /// pending mask is evaluated: docs/ops.md "Value-dependent sizes"); this
  /// tensor may stay pending, and its gradient is scattered back.
  Tensor masked_select(const Tensor &mask,
                       SourceLoc loc = SourceLoc::current()) const;
  /// The indices of the nonzero elements (NaN counts), int64 (n, dim()) in
  /// row-major order. Evaluates this tensor at the call (the result's size
  /// depends on its values); no gradient.
  Tensor nonzero(SourceLoc loc = SourceLoc::current()) const;
  /// nonzero() (torch.argwhere).
  Tensor argwhere(SourceLoc loc = SourceLoc::current()) const;
  /// PyTorch's index ops (docs/ops.md "Index"): the index's values are
  /// checked at the call, which evaluates a pending index (a sync).
  /// The slices along `dim` at `index` (int32 or int64, at most 1-D).
  Tensor index_select(int64_t dim, const Tensor &index,
                      SourceLoc loc = SourceLoc::current()) const;
  /// result[p] = self[p with p[dim] = index[p]] (int64 index, self's rank).
  Tensor gather(int64_t dim, const Tensor &index,
                SourceLoc loc = SourceLoc::current()) const;
  /// A copy with self[p with p[dim] = index[p]] = src[p] (or the value).
  Tensor scatter(int64_t dim, const Tensor &index, const Tensor &src,
                 SourceLoc loc = SourceLoc::current()) const;
  /// scatter() of one value at every index.
  Tensor scatter(int64_t dim, const Tensor &index, Scalar value,
                 SourceLoc loc = SourceLoc::current()) const;
  /// scatter() that adds src at the indices (duplicates add up).
  Tensor scatter_add(int64_t dim, const Tensor &index, const Tensor &src,
                     SourceLoc loc = SourceLoc::current()) const;
  /// A copy with alpha * source[i] added to the slice index[i] along dim.
  Tensor index_add(int64_t dim, const Tensor &index, const Tensor &source,
                   Scalar alpha = 1,
                   SourceLoc loc = SourceLoc::current()) const;
  /// Sum of every element (PyTorch's sum(): grad_fn SumBackward0);
  /// integers sum to i64.
  Tensor sum(SourceLoc loc = SourceLoc::current()) const;
  /// Sum over dims (all when empty: PyTorch's sum(dim), SumBackward1);
  /// integers sum to i64.
  Tensor sum(const Shape &dims, bool keepdim = false,
             SourceLoc loc = SourceLoc::current()) const;
  /// Mean of every element (floating point only; MeanBackward0).
  Tensor mean(SourceLoc loc = SourceLoc::current()) const;
  /// Mean over dims (all when empty; floating point only; MeanBackward1).
  Tensor mean(const Shape &dims, bool keepdim = false,
              SourceLoc loc = SourceLoc::current()) const;
  /// Product of every element (ProdBackward0); integers and bool give
  /// i64, as PyTorch.
  Tensor prod(SourceLoc loc = SourceLoc::current()) const;
  /// Product over one dim (ProdBackward1).
  Tensor prod(int64_t dim, bool keepdim = false,
              SourceLoc loc = SourceLoc::current()) const;
  /// Cumulative sum along `dim` (CumsumBackward0); integers and bool give
  /// i64 unless `dtype` is given (the input is converted to it first).
  Tensor cumsum(int64_t dim, std::optional<DType> dtype = std::nullopt,
                SourceLoc loc = SourceLoc::current()) const;
  /// Cumulative product along `dim` (CumprodBackward0), dtypes as cumsum.
  Tensor cumprod(int64_t dim, std::optional<DType> dtype = std::nullopt,
                 SourceLoc loc = SourceLoc::current()) const;
  /// In-place cumsum (the dtype, if given, must be the tensor's).
  Tensor &cumsum_(int64_t dim, std::optional<DType> dtype = std::nullopt,
                  SourceLoc loc = SourceLoc::current());
  /// In-place cumprod (the dtype, if given, must be the tensor's).
  Tensor &cumprod_(int64_t dim, std::optional<DType> dtype = std::nullopt,
                   SourceLoc loc = SourceLoc::current());
  /// Maximum over dims.
  Tensor amax(const Shape &dims = {}, bool keepdim = false,
              SourceLoc loc = SourceLoc::current()) const;
  /// Minimum over dims.
  Tensor amin(const Shape &dims = {}, bool keepdim = false,
              SourceLoc loc = SourceLoc::current()) const;
  /// torch.matmul.
  Tensor matmul(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// exp(x) / sum(exp(x)) along dim, stable (nn::functional::softmax).
  Tensor softmax(int64_t dim, SourceLoc loc = SourceLoc::current()) const;
  /// log(softmax(x)) along dim, stable (nn::functional::log_softmax).
  Tensor log_softmax(int64_t dim, SourceLoc loc = SourceLoc::current()) const;

  //===--- In place (a write through this view; bumps the version) --------===//
  /// this += o.
  Tensor &add_(const Tensor &o, SourceLoc loc = SourceLoc::current());
  /// this += s.
  Tensor &add_(Scalar s, SourceLoc loc = SourceLoc::current());
  /// this -= o.
  Tensor &sub_(const Tensor &o, SourceLoc loc = SourceLoc::current());
  /// this -= s.
  Tensor &sub_(Scalar s, SourceLoc loc = SourceLoc::current());
  /// this *= o.
  Tensor &mul_(const Tensor &o, SourceLoc loc = SourceLoc::current());
  /// this *= s.
  Tensor &mul_(Scalar s, SourceLoc loc = SourceLoc::current());
  /// this /= o.
  Tensor &div_(const Tensor &o, SourceLoc loc = SourceLoc::current());
  /// this /= s.
  Tensor &div_(Scalar s, SourceLoc loc = SourceLoc::current());
  /// atan2() in place.
  Tensor &atan2_(const Tensor &o, SourceLoc loc = SourceLoc::current());
  /// fmod() in place.
  Tensor &fmod_(const Tensor &o, SourceLoc loc = SourceLoc::current());
  /// fmod() by a number in place.
  Tensor &fmod_(Scalar s, SourceLoc loc = SourceLoc::current());
  /// remainder() in place.
  Tensor &remainder_(const Tensor &o, SourceLoc loc = SourceLoc::current());
  /// remainder() by a number in place.
  Tensor &remainder_(Scalar s, SourceLoc loc = SourceLoc::current());
  /// floor_divide() in place.
  Tensor &floor_divide_(const Tensor &o, SourceLoc loc = SourceLoc::current());
  /// floor_divide() by a number in place.
  Tensor &floor_divide_(Scalar s, SourceLoc loc = SourceLoc::current());
  /// lerp() in place.
  Tensor &lerp_(const Tensor &end, Scalar weight,
                SourceLoc loc = SourceLoc::current());
  /// lerp() with a weight tensor in place.
  Tensor &lerp_(const Tensor &end, const Tensor &weight,
                SourceLoc loc = SourceLoc::current());
  /// Every element = 0.
  Tensor &zero_(SourceLoc loc = SourceLoc::current());
  /// Every element = s.
  Tensor &fill_(Scalar s, SourceLoc loc = SourceLoc::current());
  /// Copies (broadcast, converted) `src` into this view.
  Tensor &copy_(const Tensor &src, SourceLoc loc = SourceLoc::current());
  /// Random values written in place from the global generator (manual_seed),
  /// as PyTorch's initializers: uniform in [from, to), normal(mean, std)
  /// (floating dtypes only), 1 with probability p else 0 (any dtype).
  /// Through views too; a leaf requiring grad needs a NoGradGuard.
  Tensor &uniform_(double from = 0, double to = 1,
                   SourceLoc loc = SourceLoc::current());
  /// Normal(mean, std) values written in place (floating dtypes).
  Tensor &normal_(double mean = 0, double std = 1,
                  SourceLoc loc = SourceLoc::current());
  /// 1 with probability p, else 0, written in place (any dtype).
  Tensor &bernoulli_(double p = 0.5, SourceLoc loc = SourceLoc::current());
  /// 1 with probability (*this)[i], else 0 (strata::bernoulli(*this)).
  Tensor bernoulli(SourceLoc loc = SourceLoc::current()) const;
  /// max(this, 0) in place.
  Tensor &relu_(SourceLoc loc = SourceLoc::current());
  /// sin() in place.
  Tensor &sin_(SourceLoc loc = SourceLoc::current());
  /// cos() in place.
  Tensor &cos_(SourceLoc loc = SourceLoc::current());
  /// tan() in place.
  Tensor &tan_(SourceLoc loc = SourceLoc::current());
  /// asin() in place.
  Tensor &asin_(SourceLoc loc = SourceLoc::current());
  /// acos() in place.
  Tensor &acos_(SourceLoc loc = SourceLoc::current());
  /// atan() in place.
  Tensor &atan_(SourceLoc loc = SourceLoc::current());
  /// sinh() in place.
  Tensor &sinh_(SourceLoc loc = SourceLoc::current());
  /// cosh() in place.
  Tensor &cosh_(SourceLoc loc = SourceLoc::current());
  /// exp2() in place.
  Tensor &exp2_(SourceLoc loc = SourceLoc::current());
  /// expm1() in place.
  Tensor &expm1_(SourceLoc loc = SourceLoc::current());
  /// log2() in place.
  Tensor &log2_(SourceLoc loc = SourceLoc::current());
  /// log10() in place.
  Tensor &log10_(SourceLoc loc = SourceLoc::current());
  /// log1p() in place.
  Tensor &log1p_(SourceLoc loc = SourceLoc::current());
  /// rsqrt() in place.
  Tensor &rsqrt_(SourceLoc loc = SourceLoc::current());
  /// reciprocal() in place.
  Tensor &reciprocal_(SourceLoc loc = SourceLoc::current());
  /// erf() in place.
  Tensor &erf_(SourceLoc loc = SourceLoc::current());
  /// square() in place.
  Tensor &square_(SourceLoc loc = SourceLoc::current());
  /// sign() in place.
  Tensor &sign_(SourceLoc loc = SourceLoc::current());
  /// floor() in place.
  Tensor &floor_(SourceLoc loc = SourceLoc::current());
  /// ceil() in place.
  Tensor &ceil_(SourceLoc loc = SourceLoc::current());
  /// round() in place.
  Tensor &round_(SourceLoc loc = SourceLoc::current());
  /// trunc() in place.
  Tensor &trunc_(SourceLoc loc = SourceLoc::current());
  /// silu() in place.
  Tensor &silu_(SourceLoc loc = SourceLoc::current());
  /// logical_not() in place.
  Tensor &logical_not_(SourceLoc loc = SourceLoc::current());
  /// bitwise_not() in place.
  Tensor &bitwise_not_(SourceLoc loc = SourceLoc::current());
  /// neg() in place.
  Tensor &neg_(SourceLoc loc = SourceLoc::current());
  /// abs() in place.
  Tensor &abs_(SourceLoc loc = SourceLoc::current());
  /// exp() in place.
  Tensor &exp_(SourceLoc loc = SourceLoc::current());
  /// log() in place.
  Tensor &log_(SourceLoc loc = SourceLoc::current());
  /// sqrt() in place.
  Tensor &sqrt_(SourceLoc loc = SourceLoc::current());
  /// sigmoid() in place.
  Tensor &sigmoid_(SourceLoc loc = SourceLoc::current());
  /// tanh() in place.
  Tensor &tanh_(SourceLoc loc = SourceLoc::current());
  /// gelu() in place.
  Tensor &gelu_(const std::string &approximate = "none",
                SourceLoc loc = SourceLoc::current());
  /// scatter() in place.
  Tensor &scatter_(int64_t dim, const Tensor &index, const Tensor &src,
                   SourceLoc loc = SourceLoc::current());
  /// scatter() of one value in place.
  Tensor &scatter_(int64_t dim, const Tensor &index, Scalar value,
                   SourceLoc loc = SourceLoc::current());
  /// scatter_add() in place.
  Tensor &scatter_add_(int64_t dim, const Tensor &index, const Tensor &src,
                       SourceLoc loc = SourceLoc::current());
  /// index_add() in place.
  Tensor &index_add_(int64_t dim, const Tensor &index, const Tensor &source,
                     Scalar alpha = 1, SourceLoc loc = SourceLoc::current());
  /// masked_fill() in place (the mask broadcasts to this tensor).
  Tensor &masked_fill_(const Tensor &mask, Scalar value,
                       SourceLoc loc = SourceLoc::current());
  /// clamp() in place.
  Tensor &clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi,
                 SourceLoc loc = SourceLoc::current());
  /// clamp_min() in place.
  Tensor &clamp_min_(Scalar lo, SourceLoc loc = SourceLoc::current());
  /// clamp_max() in place.
  Tensor &clamp_max_(Scalar hi, SourceLoc loc = SourceLoc::current());
  /// nan_to_num() in place.
  Tensor &nan_to_num_(std::optional<double> nan = 0.0,
                      std::optional<double> posinf = std::nullopt,
                      std::optional<double> neginf = std::nullopt,
                      SourceLoc loc = SourceLoc::current());

  //===--- Compound assignment (LibTorch's member operators) --------------===//
  /// add_(o).
  Tensor &operator+=(LocatedTensor o);
  /// add_(s).
  Tensor &operator+=(Scalar s);
  /// sub_(o).
  Tensor &operator-=(LocatedTensor o);
  /// sub_(s).
  Tensor &operator-=(Scalar s);
  /// mul_(o).
  Tensor &operator*=(LocatedTensor o);
  /// mul_(s).
  Tensor &operator*=(Scalar s);
  /// div_(o).
  Tensor &operator/=(LocatedTensor o);
  /// div_(s).
  Tensor &operator/=(Scalar s);

  //===--- One-dim overloads of the reductions ----------------------------===//
  /// sum({dim}, keepdim).
  template <IntegralDim I>
  Tensor sum(I dim, bool keepdim = false,
             SourceLoc loc = SourceLoc::current()) const {
    return sum(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
  }
  /// mean({dim}, keepdim).
  template <IntegralDim I>
  Tensor mean(I dim, bool keepdim = false,
              SourceLoc loc = SourceLoc::current()) const {
    return mean(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
  }
  /// amax({dim}, keepdim).
  template <IntegralDim I>
  Tensor amax(I dim, bool keepdim = false,
              SourceLoc loc = SourceLoc::current()) const {
    return amax(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
  }
  /// amin({dim}, keepdim).
  template <IntegralDim I>
  Tensor amin(I dim, bool keepdim = false,
              SourceLoc loc = SourceLoc::current()) const {
    return amin(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
  }

  //===--- Composite reductions (dsl/lib/CompositeReductions.cpp) ---------===//
  /// var()/std()'s `unbiased` flag: only a bool converts to it, so that a
  /// braced dim list such as `x.var({1})` takes the dims overload instead of
  /// becoming `unbiased = true` (a silent reduction over every element).
  struct Unbiased {
    /// From a bool only (not an int, nor a braced list of one).
    template <std::same_as<bool> B> constexpr Unbiased(B b) : value(b) {}
    /// Whether Bessel's correction (N - 1) is applied.
    bool value;
  };
  /// Variance of every element, with Bessel's correction when `unbiased`
  /// (floating point only; N - correction <= 0 gives inf or NaN, as PyTorch).
  Tensor var(Unbiased unbiased = true,
             SourceLoc loc = SourceLoc::current()) const;
  /// Variance over dims (all when empty).
  Tensor var(const Shape &dims, bool unbiased = true, bool keepdim = false,
             SourceLoc loc = SourceLoc::current()) const;
  /// Variance over dims dividing by N - correction (default 1).
  Tensor var(const Shape &dims, std::optional<int64_t> correction,
             bool keepdim = false, SourceLoc loc = SourceLoc::current()) const;
  /// An integer second argument is a correction (LibTorch would take it as
  /// the bool `unbiased`, so var({0}, 2) would silently mean correction 1).
  template <IntegralDim I>
  Tensor var(const Shape &dims, I correction, bool keepdim = false,
             SourceLoc loc = SourceLoc::current()) const {
    return var(dims, std::optional<int64_t>(correction), keepdim, loc);
  }
  /// Variance over one dim: `x.var(1)` reduces dim 1 (as Python; LibTorch's
  /// C++ would take the 1 as `unbiased`).
  template <IntegralDim I>
  Tensor var(I dim, bool unbiased = true, bool keepdim = false,
             SourceLoc loc = SourceLoc::current()) const {
    return var(Shape{static_cast<int64_t>(dim)}, unbiased, keepdim, loc);
  }
  /// sqrt(var()); the gradient is 0 where the result is 0, as PyTorch's.
  Tensor std(Unbiased unbiased = true,
             SourceLoc loc = SourceLoc::current()) const;
  /// Standard deviation over dims (all when empty).
  Tensor std(const Shape &dims, bool unbiased = true, bool keepdim = false,
             SourceLoc loc = SourceLoc::current()) const;
  /// Standard deviation over dims dividing by N - correction.
  Tensor std(const Shape &dims, std::optional<int64_t> correction,
             bool keepdim = false, SourceLoc loc = SourceLoc::current()) const;
  /// An integer second argument is a correction (see var).
  template <IntegralDim I>
  Tensor std(const Shape &dims, I correction, bool keepdim = false,
             SourceLoc loc = SourceLoc::current()) const {
    return std(dims, std::optional<int64_t>(correction), keepdim, loc);
  }
  /// Standard deviation over one dim.
  template <IntegralDim I>
  Tensor std(I dim, bool unbiased = true, bool keepdim = false,
             SourceLoc loc = SourceLoc::current()) const {
    return std(Shape{static_cast<int64_t>(dim)}, unbiased, keepdim, loc);
  }
  /// log(sum(exp(x))) over dims, shifted by the (detached) maximum so it
  /// neither overflows nor underflows; rows of -inf give -inf. Integers and
  /// bool give f32. An empty dim list reduces every dim (PyTorch 1.13 raises
  /// unless keepdim).
  Tensor logsumexp(const Shape &dims, bool keepdim = false,
                   SourceLoc loc = SourceLoc::current()) const;
  /// logsumexp over one dim.
  template <IntegralDim I>
  Tensor logsumexp(I dim, bool keepdim = false,
                   SourceLoc loc = SourceLoc::current()) const {
    return logsumexp(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
  }
  /// The p-norm of every element: p = 2 (default), 1, 0 (nonzero count),
  /// inf (max |x|), -inf (min |x|) or any other p, (sum |x|^p)^(1/p).
  /// Floating point only; the gradient is 0 where a 2- or p-norm is 0.
  Tensor norm(Scalar p = 2, SourceLoc loc = SourceLoc::current()) const;
  /// The p-norm over dims (all when empty; p unset: 2).
  Tensor norm(std::optional<Scalar> p, const Shape &dims, bool keepdim = false,
              SourceLoc loc = SourceLoc::current()) const;
  /// Whether any element is nonzero (bool; NaN counts as nonzero).
  Tensor any(SourceLoc loc = SourceLoc::current()) const;
  /// any() along dim.
  Tensor any(int64_t dim, bool keepdim = false,
             SourceLoc loc = SourceLoc::current()) const;
  /// Whether every element is nonzero (bool; true for an empty tensor).
  Tensor all(SourceLoc loc = SourceLoc::current()) const;
  /// all() along dim.
  Tensor all(int64_t dim, bool keepdim = false,
             SourceLoc loc = SourceLoc::current()) const;
  /// Index (i64) of the maximum along dim, or in the flattened tensor
  /// without one: the first occurrence, a NaN before any number.
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                SourceLoc loc = SourceLoc::current()) const;
  /// Index of the minimum (as argmax).
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                SourceLoc loc = SourceLoc::current()) const;
  /// The maximum of every element (amax(); NaN propagates, and its
  /// gradient is shared by the NaNs, as PyTorch's).
  Tensor max(SourceLoc loc = SourceLoc::current()) const;
  /// (values, indices) of the maximum along dim; indices as argmax, and the
  /// gradient of the values goes to that index only, as PyTorch's.
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false,
                                 SourceLoc loc = SourceLoc::current()) const;
  /// maximum(*this, other).
  Tensor max(const Tensor &other, SourceLoc loc = SourceLoc::current()) const;
  /// The minimum of every element.
  Tensor min(SourceLoc loc = SourceLoc::current()) const;
  /// (values, indices) of the minimum along dim.
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false,
                                 SourceLoc loc = SourceLoc::current()) const;
  /// minimum(*this, other).
  Tensor min(const Tensor &other, SourceLoc loc = SourceLoc::current()) const;

  //===--- Shape ops (dsl/lib/ShapeOps.cpp) -------------------------------===//
  /// Views of `split_size` elements along dim (the last may be shorter).
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0,
                            SourceLoc loc = SourceLoc::current()) const;
  /// Views of the given sizes along dim (split_with_sizes).
  std::vector<Tensor> split(const Shape &split_sizes, int64_t dim = 0,
                            SourceLoc loc = SourceLoc::current()) const;
  /// Views of the given sizes along dim; they sum to the dim's size.
  std::vector<Tensor>
  split_with_sizes(const Shape &split_sizes, int64_t dim = 0,
                   SourceLoc loc = SourceLoc::current()) const;
  /// `chunks` views (fewer when the dim is short) of ceil(size / chunks).
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0,
                            SourceLoc loc = SourceLoc::current()) const;
  /// select(dim, i) for every i.
  std::vector<Tensor> unbind(int64_t dim = 0,
                             SourceLoc loc = SourceLoc::current()) const;
  /// The tensor tiled `repeats[i]` times along dim i (new leading dims when
  /// there are more repeats than dims); a contiguous copy.
  Tensor repeat(const Shape &repeats,
                SourceLoc loc = SourceLoc::current()) const;
  /// repeat() with leading 1s added to `dims` when it is shorter.
  Tensor tile(const Shape &dims, SourceLoc loc = SourceLoc::current()) const;
  /// Elements shifted cyclically along dims (flattened when dims is empty);
  /// a copy.
  Tensor roll(const Shape &shifts, const Shape &dims = {},
              SourceLoc loc = SourceLoc::current()) const;
  /// roll({shift}, {dim}), or of the flattened tensor without a dim.
  Tensor roll(int64_t shift, std::optional<int64_t> dim = std::nullopt,
              SourceLoc loc = SourceLoc::current()) const;
  /// Zeroes above diagonal `diagonal` of the last two dims.
  Tensor tril(int64_t diagonal = 0, SourceLoc loc = SourceLoc::current()) const;
  /// Zeroes below diagonal `diagonal` of the last two dims.
  Tensor triu(int64_t diagonal = 0, SourceLoc loc = SourceLoc::current()) const;

  //===--- Inspection -----------------------------------------------------===//
  /// PyTorch's repr: "tensor([[0., 1.], [2., 3.]])" (evaluates).
  std::string toString(SourceLoc loc = SourceLoc::current()) const;
  /// The four parts, the view chain with source lines, the folded triple and
  /// what producing the tensor costs (a copy, a kernel, or nothing).
  std::string explain(SourceLoc loc = SourceLoc::current()) const;

  /// The implementation.
  const std::shared_ptr<detail::TensorImpl> &impl() const { return impl_; }

private:
  const detail::TensorImpl &checked(SourceLoc loc) const;
  std::shared_ptr<detail::TensorImpl> impl_;
};

/// An operator's tensor operand with the user's source location. Operators
/// cannot take a defaulted std::source_location parameter; the implicit
/// conversion to this type happens in the user's expression, so its
/// defaulted constructor argument is the user's file and line.
struct LocatedTensor {
  /// Wraps `t`; `loc` defaults to where the conversion happens.
  LocatedTensor(const Tensor &t, SourceLoc loc = SourceLoc::current())
      : tensor(t), loc(loc) {}
  /// The operand.
  const Tensor &tensor;
  /// The user's source location of the expression.
  SourceLoc loc;
};

/// Binary operators (tensor/tensor, tensor/scalar, scalar/tensor); errors
/// name the user's line (from the located operand).
Tensor operator+(const Tensor &a, LocatedTensor b);
/// a - b.
Tensor operator-(const Tensor &a, LocatedTensor b);
/// a * b.
Tensor operator*(const Tensor &a, LocatedTensor b);
/// a / b.
Tensor operator/(const Tensor &a, LocatedTensor b);
/// a + s.
Tensor operator+(const Tensor &a, Scalar s);
/// a - s.
Tensor operator-(const Tensor &a, Scalar s);
/// a * s.
Tensor operator*(const Tensor &a, Scalar s);
/// a / s.
Tensor operator/(const Tensor &a, Scalar s);
/// s + a.
Tensor operator+(Scalar s, const Tensor &a);
/// s - a.
Tensor operator-(Scalar s, const Tensor &a);
/// s * a.
Tensor operator*(Scalar s, const Tensor &a);
/// s / a.
Tensor operator/(Scalar s, const Tensor &a);
/// -a.
Tensor operator-(LocatedTensor a);
/// Elementwise comparisons (bool tensors).
Tensor operator==(LocatedTensor a, LocatedTensor b);
/// a != b.
Tensor operator!=(LocatedTensor a, LocatedTensor b);
/// a < b.
Tensor operator<(LocatedTensor a, LocatedTensor b);
/// a <= b.
Tensor operator<=(LocatedTensor a, LocatedTensor b);
/// a > b.
Tensor operator>(LocatedTensor a, LocatedTensor b);
/// a >= b.
Tensor operator>=(LocatedTensor a, LocatedTensor b);
/// a == s.
Tensor operator==(const Tensor &a, Scalar s);
/// a != s.
Tensor operator!=(const Tensor &a, Scalar s);
/// a < s.
Tensor operator<(const Tensor &a, Scalar s);
/// a <= s.
Tensor operator<=(const Tensor &a, Scalar s);
/// a > s.
Tensor operator>(const Tensor &a, Scalar s);
/// a >= s.
Tensor operator>=(const Tensor &a, Scalar s);
/// Prints toString().
std::ostream &operator<<(std::ostream &os, const Tensor &t);

} // namespace strata

#endif // STRATA_TENSOR_H
