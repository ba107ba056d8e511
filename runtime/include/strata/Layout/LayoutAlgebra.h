//===- LayoutAlgebra.h - sizes/strides/offset rules of every view op ------===//
//
// The one implementation of PyTorch's view rules. The DSL (metadata without
// compiling), the dialect's type inference and verifiers, the passes and
// autograd all call these functions; no other code computes a stride.
//
// Offsets are absolute element offsets into the storage root. Nothing here
// throws: the compiler libraries are built without exceptions, so every rule
// returns a Result that holds either the layout or a precise error message
// (naming the op, the argument, the valid range and the value given).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LAYOUT_LAYOUTALGEBRA_H
#define STRATA_LAYOUT_LAYOUTALGEBRA_H

#include "strata/Layout/Shape.h"

#include <cassert>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace strata::layout {

// Sizes, strides or dims: Shape (strata/Layout/Shape.h), six inline.
/// A read-only list of sizes, strides or dims (any contiguous container).
using IntList = std::span<const int64_t>;

/// How a tensor maps an n-d index onto a flat storage: element
/// (i0, ..., in-1) lives at storage[offset + sum(ik * strides[k])].
struct Layout {
  /// Size of each dim.
  Shape sizes;
  /// Stride of each dim, in elements (may be 0 or negative).
  Shape strides;
  /// Storage index of element (0, ..., 0).
  int64_t offset = 0;

  /// Number of dims.
  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  /// Number of elements (the product of the sizes; 1 for 0-d).
  int64_t numel() const;
  /// Same sizes, strides and offset.
  bool operator==(const Layout &) const = default;
};

/// Either a value or an error message; the error channel of the algebra.
template <typename T> class Result {
public:
  /// A success holding `value`.
  Result(T value) : value_(std::move(value)) {}
  /// A failure with `message` (PyTorch's wording where PyTorch has one).
  static Result failure(std::string message) {
    Result r;
    r.error_ = std::move(message);
    return r;
  }
  /// True on success.
  explicit operator bool() const { return value_.has_value(); }
  /// True on success.
  bool ok() const { return value_.has_value(); }
  /// The value (asserts success).
  const T &value() const {
    assert(ok() && "value() of a failed layout Result");
    return *value_;
  }
  /// The value, mutable (asserts success).
  T &value() {
    assert(ok() && "value() of a failed layout Result");
    return *value_;
  }
  /// value().
  const T &operator*() const { return value(); }
  /// &value().
  const T *operator->() const { return &value(); }
  /// The message of a failure ("" on success).
  const std::string &error() const { return error_; }

private:
  Result() = default;
  std::optional<T> value_;
  std::string error_;
};

/// The result of an op that is a view when strides allow and a copy
/// otherwise (reshape, flatten). When `needsCopy`, `layout` is the
/// contiguous layout (offset 0) of the fresh tensor the copy produces.
struct MaybeView {
  /// The view's layout, or the copy's contiguous one.
  Layout layout;
  /// True when strides cannot express the result.
  bool needsCopy = false;
  /// Same layout and same need of a copy.
  bool operator==(const MaybeView &) const = default;
};

//===--- Basic queries ----------------------------------------------------===//

/// Row-major strides of `sizes` (PyTorch: size-1 and size-0 dims still get
/// the running product, the last dim stride 1).
Shape contiguousStrides(IntList sizes);
/// The contiguous layout of `sizes` starting at `offset`.
Layout contiguous(IntList sizes, int64_t offset = 0);
/// PyTorch's is_contiguous: numel 0 is contiguous; size-1 dims are ignored.
bool isContiguous(const Layout &l);
/// PyTorch's has_internal_overlap == YES: some dim has stride 0 and size > 1.
bool hasInternalOverlap(const Layout &l);
/// True unless `l` provably addresses every element at its own storage
/// index: sorted by |stride|, each stride must exceed the extent of the
/// smaller dims (expand, overlapping unfold and as_strided say true).
bool mayOverlap(const Layout &l);
/// Exactly: two elements of `l` share a storage index (mayOverlap, then
/// the indices themselves where it cannot say).
bool overlaps(const Layout &l);
/// PyTorch's is_non_overlapping_and_dense: some permutation of the dims is
/// contiguous (size-1 dims ignored; negative strides never are).
bool isNonOverlappingAndDense(const Layout &l);
/// The number of storage elements a layout needs: 1 + the largest storage
/// index it addresses (0 when numel is 0). With negative strides the
/// smallest index must also be >= 0: see `checkInStorage`.
int64_t requiredStorageSize(const Layout &l);
/// Smallest and largest storage index addressed (numel must be > 0).
std::pair<int64_t, int64_t> indexRange(const Layout &l);
/// Every storage index the layout addresses, in row-major element order.
std::vector<int64_t> storageIndices(const Layout &l);
/// Fails unless every index the layout addresses lies in [0, storageSize).
Result<Layout> checkInStorage(const Layout &l, int64_t storageSize,
                              const char *op);

/// PyTorch's maybe_wrap_dim: accepts [-rank, rank-1] (for rank 0, [-1, 0]);
/// error "<op>: Dimension out of range (expected to be in range of [lo, hi],
/// but got d)".
Result<int64_t> wrapDim(int64_t dim, int64_t rank, const char *op);
/// PyTorch's infer_size: at most one -1, product must match numel.
Result<Shape> inferSize(IntList shape, int64_t numel, const char *op);
/// Broadcasting of two shapes, trailing dims aligned.
Result<Shape> broadcastShapes(IntList a, IntList b, const char *op);
/// Result shape of a reduction over `dims` (empty = all dims).
Result<Shape> reduceShape(IntList sizes, IntList dims, bool keepdim,
                          const char *op);

//===--- View ops (PyTorch's rules) ---------------------------------------===//

/// computeStride; error as PyTorch's "view size is not compatible with input
/// tensor's size and stride (at least one dimension spans across two
/// contiguous subspaces). Use .reshape(...) instead."
Result<Layout> view(const Layout &l, IntList shape);
/// view() when strides allow it, else the contiguous layout of a copy
/// (PyTorch's reshape); one size may be -1.
Result<MaybeView> reshape(const Layout &l, IntList shape);
/// Dims reordered: dim i of the result is dim dims[i] (each dim once).
Result<Layout> permute(const Layout &l, IntList dims);
/// Dims dim0 and dim1 swapped.
Result<Layout> transpose(const Layout &l, int64_t dim0, int64_t dim1);
/// t(): rank <= 2 only (PyTorch's "t() expects a tensor with <= 2 dimensions").
Result<Layout> t(const Layout &l);
/// Python slicing: negative start/end count from the end, both clamped to
/// [0, size]; end < start gives size 0; step must be positive.
Result<Layout> slice(const Layout &l, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step);
/// Index `index` of dim (negative counts from the end), which is removed.
Result<Layout> select(const Layout &l, int64_t dim, int64_t index);
/// Elements [start, start + length) of dim (start may be negative).
Result<Layout> narrow(const Layout &l, int64_t dim, int64_t start,
                      int64_t length);
/// -1 keeps a size; new leading dims allowed; expanded dims get stride 0.
Result<Layout> expand(const Layout &l, IntList shape);
/// No dims: every size-1 dim. With dims: those of size 1 (others are kept).
Result<Layout> squeeze(const Layout &l, IntList dims = {});
/// PyTorch's stride for the new dim: sizes[d] * strides[d] (1 at the end).
Result<Layout> unsqueeze(const Layout &l, int64_t dim);
/// Dims [startDim, endDim] merged into one: a view when strides allow
/// it, else the contiguous layout of a copy.
Result<MaybeView> flatten(const Layout &l, int64_t startDim, int64_t endDim);
/// Sizes, strides and absolute offset are taken as given (negative strides
/// rejected, as PyTorch does); every index must lie in [0, storageSize).
Result<Layout> asStrided(IntList sizes, IntList strides, int64_t offset,
                         int64_t storageSize);
/// The diagonal of dims dim1 and dim2 (above it for offset > 0), as a new
/// last dim with stride strides[dim1] + strides[dim2].
Result<Layout> diagonal(const Layout &l, int64_t offset, int64_t dim1,
                        int64_t dim2);
/// Windows of `size` elements every `step` along dim: dim gets
/// (size_d - size) / step + 1 windows and a new last dim of `size`.
Result<Layout> unfold(const Layout &l, int64_t dim, int64_t size, int64_t step);
/// Negative strides: strata's documented extension (PyTorch copies).
Result<Layout> flip(const Layout &l, IntList dims);

//===--- Layouts of results (PyTorch's TensorIterator, preserve_format) -===//
//
// A compute result is a fresh tensor (offset 0) whose strides follow its
// inputs as PyTorch allocates it. Negative strides (strata's flip) count by
// their magnitude: PyTorch's flip copies into a tensor with the input's
// strides, which is what these rules then see.

/// The result of an elementwise op (unary, binary, where, compare) over
/// `inputs`, whose broadcast shape is `shape`: PyTorch's TensorIterator.
/// When all inputs have `shape` and are contiguous, the result is; when they
/// are channels-last (4-d), so is it; when they are non-overlapping and dense
/// with one set of strides, it has those strides. Otherwise the dims are
/// sorted by the inputs' strides, the first input deciding and the next ones
/// breaking ties (broadcast dims compare as ambiguous, equal strides put the
/// smaller dim inner), and the result is dense in that order.
Layout elementwiseResult(std::span<const Layout> inputs, IntList shape);
/// clone(), to(dtype) and empty_like with preserve_format: the strides of a
/// non-overlapping and dense input, else dense strides in the input's stride
/// order (PyTorch's infer_dense_strides).
Layout preserveFormat(const Layout &l);
/// The layout AccumulateGrad gives a new `.grad()` of a leaf with layout
/// `leaf` from an incoming gradient with layout `incoming` (PyTorch's
/// gradient layout contract): the incoming one when it agrees with the
/// leaf's strides on every dim of size > 1 (or, for a leaf that is not
/// non-overlapping and dense, when it is contiguous), else the leaf's
/// strides (contiguous for a leaf that is not non-overlapping and dense).
Layout gradientLayout(const Layout &leaf, const Layout &incoming);

/// torch.matmul's result of `a` @ `b`, whose shape is `shape`: row-major,
/// but a matrix @ batch (`a` 2-d, `b` 3-d or more, not a transposed batch)
/// is folded into one mm of the transposed operands (PyTorch 1.13's
/// should_fold), whose result mT().contiguous() keeps the transposed
/// strides where a size-1 dim makes it count as contiguous.
Layout matmulResult(const Layout &a, const Layout &b, IntList shape);
/// PyTorch 1.13's exception to folding a batch into one mm: a 3-d layout
/// whose first dim is the slowest and whose last two are transposed
/// (permute(0, 2, 1) of a contiguous tensor), which matmul runs as bmm.
bool isTransposedBatch(const Layout &l);

/// "[a, b, c]" for messages and printing.
std::string formatList(IntList values);

} // namespace strata::layout

#endif // STRATA_LAYOUT_LAYOUTALGEBRA_H
