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
#include "strata/Function.h"
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
  /// Calls `hook(*this)` each time a backward() has accumulated this leaf's
  /// gradient into grad() (PyTorch 2.1's register_post_accumulate_grad_hook):
  /// as soon as the gradient is final, while the rest of the backward still
  /// runs. It may read and change grad(), not tensors the backward reads
  /// (docs/design.md, "Hooks after accumulation"). Returns a handle.
  unsigned register_post_accumulate_grad_hook(
      Function<void(const Tensor &)> hook,
      SourceLoc loc = SourceLoc::current()) const;
  /// Removes the hook `handle` names (a removed or unknown one: nothing).
  void
  remove_post_accumulate_grad_hook(unsigned handle,
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
  // Each op family is declared in its own header, included here inside the
  // class (a new op is a declaration in its family's header).
#define STRATA_TENSOR_CLASS_BODY
#include "strata/tensor/BinaryOps.h"
#include "strata/tensor/IndexOps.h"
#include "strata/tensor/Reductions.h"
#include "strata/tensor/UnaryOps.h"
#undef STRATA_TENSOR_CLASS_BODY

  /// torch.matmul.
  Tensor matmul(const Tensor &o, SourceLoc loc = SourceLoc::current()) const;
  /// exp(x) / sum(exp(x)) along dim, stable (nn::functional::softmax).
  Tensor softmax(int64_t dim, SourceLoc loc = SourceLoc::current()) const;
  /// log(softmax(x)) along dim, stable (nn::functional::log_softmax).
  Tensor log_softmax(int64_t dim, SourceLoc loc = SourceLoc::current()) const;

  //===--- In place (a write through this view; bumps the version) --------===//
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
