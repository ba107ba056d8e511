//===- Node.h - trace nodes and the reads between them ---------*- C++ -*-===//
//
// Private to dsl/lib (Impl.h includes it). A Node is one version of a
// storage root's contents: a materialized leaf, a pending compute result,
// or a pending write; an Operand is a read of a version through a layout.
// A recorded program holds a node or three per op, so the fields few nodes
// set are held apart (Node::Rare).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_NODE_H
#define STRATA_DSL_LIB_NODE_H

#include "strata/Layout/LayoutAlgebra.h"
#include "strata/Runtime/Storage.h"
#include "strata/strata.h"
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

namespace strata::detail {

struct TensorImpl;

constexpr int8_t kDevAny = -1, kDevCPU = 0, kDevCUDA = 1; // Node::device

/// Kinds of trace node.
enum class Op : uint8_t {
  Leaf,
  Unary,
  Binary,
  Where,
  Cast,
  Reduce,
  Matmul,
  Scan, // cumsum, cumprod (ScanOps.cpp)
  Fill,
  Arange,
  Copy,
  Write,
  /// strata.gather / scatter / scatter_add along dims[0] (IndexOps.cpp).
  Index
};

struct Node;
struct StorageRoot;
struct VersionRecord;
using NodePtr = std::shared_ptr<Node>; // (shared ownership of a node)

/// Autograd: the view ops a tensor requiring grad was made by, last first
/// (x.t().unsqueeze(0): unsqueeze, then t); each is a node of the autograd
/// graph (TBackward0, ...) between a reader and the version viewed.
struct ViewChain {
  /// The view op ("t", "slice", ...), its arguments and PyTorch's node name
  /// where not the op's (split's narrows: SplitBackward0; else null).
  const char *op;
  Shape args;
  SourceLoc loc;
  const char *shownAs = nullptr;
  /// The view it was applied to (null: applied to a non-view tensor, or
  /// a regenerated view, which reads its root's version directly).
  std::shared_ptr<const ViewChain> next;
  /// No gradient reaches the version through this chain (a view below has
  /// no grad_fn: made before its base required grad, or in no-grad mode).
  bool cut = false;
  /// The leaf the chain's bottom view is when that view requires grad of
  /// its own (requires_grad_() on a view without grad_fn): the gradient
  /// accumulates there.
  std::weak_ptr<TensorImpl> leafView;
  /// For an as_strided: its input's layout (the root's); PyTorch's backward
  /// passes the gradient only to the storage elements that input addresses.
  std::optional<layout::Layout> asStridedInput;
  /// This view or one below it is such an as_strided (backward tests this
  /// before walking the chain).
  bool anyAsStrided = false;
  /// Releases `next` without recursion.
  ~ViewChain();
};

/// A read of a version through a layout (absolute in the version's root).
struct Operand {
  NodePtr node;
  layout::Layout layout;
  /// Autograd: the views the read went through (null: none, or no grad).
  std::shared_ptr<const ViewChain> view = nullptr;
  /// Autograd: the edge of the read (PyTorch's next_functions entry). Set:
  /// a read of this leaf requiring grad (AccumulateGrad; the version read
  /// is its data). `noGrad`: a read of a tensor that does not require grad
  /// (detach(), made or read in no-grad mode, a constant), through which no
  /// gradient flows whatever `node` was computed from. Neither: the history
  /// of `node` (the op that computed it).
  std::weak_ptr<TensorImpl> leaf;
  bool noGrad = true;
  /// A read, in grad mode, through a view with a grad_fn whose chain leads
  /// nowhere (a view of a view made in no-grad mode): no gradient flows
  /// (noGrad), but PyTorch's edge is valid, so the op saves what this
  /// input's derivative needs (should_compute_output).
  bool cutView = false;
  /// Autograd: set when `node` is an in-place write made through a tensor
  /// of another autograd identity (across a detach(): PyTorch's detached
  /// tensor shares the data, not the history). The read takes its value
  /// from `node` and passes its gradient to `history`, the version before
  /// the writes this reader's history does not see.
  NodePtr history;
};

/// One version of a storage root's contents. (Small fields sit together.)
struct Node : std::enable_shared_from_this<Node> {
  Op op = Op::Leaf;
  DType dtype = DType::F32;
  /// Where this version lives: kDevCPU, kDevCUDA, or kDevAny for a scalar
  /// fill (`x + 2`), which joins a program on either device.
  int8_t device = 0;
  /// The IR mnemonic ("add", "exp", "sum", ...).
  const char *name = "";
  /// Sizes and strides of a compute result (offset 0): its layout is
  /// PyTorch's (TensorIterator, preserve_format; makeResult sets strides).
  Shape sizes, strides;
  /// Elements of the root this version is a version of.
  int64_t rootNumel = 0;
  std::vector<Operand> inputs;
  /// Attributes: reduce dims (dims()) + keepdim; fill value (a); arange
  /// start/step.
  double a = 0, b = 0;
  /// With `exact`: the fill value / arange start and step as int64 (an
  /// integer or bool fill, an integer arange), which doubles cannot hold.
  int64_t ia = 0, ib = 0;
  bool exact = false;
  bool keepdim = false;
  /// A sum or mean given a dim list (PyTorch's sum.dim_IntList, even an
  /// empty one: SumBackward1), not sum() (SumBackward0).
  bool dimList = false;
  /// A cast the user asked for (to(dtype): ToCopyBackward0), not one that
  /// promotion inserted (no node of PyTorch's graph).
  bool userCast = false;
  /// pow whose exponent was a bool tensor cast by promotion (PyTorch's
  /// backward refuses `exponent - 1` on it), atan2 whose first operand was
  /// (its backward for `other` refuses `-self`): found when recorded, as
  /// the cast's inputs go once it is evaluated.
  bool boolExponent = false;
  bool boolSelf = false;
  /// cumsum/cumprod with a float `dtype` other than the float input's: its
  /// backward runs in the input's dtype (PyTorch converts the gradient to
  /// `self`'s type first), printed as `strata.scan_grad_in_source`.
  bool scanGradInSource = false;
  /// Set once evaluated (then `inputs` are dropped).
  runtime::StoragePtr buffer;
  /// The root whose version this is.
  std::weak_ptr<StorageRoot> root;
  SourceLoc loc;
  /// Creation order: a slice runs in program order.
  uint64_t seq = nextSeq();
  /// Evaluation bookkeeping: the last slice's or walk's nextEpoch() there.
  uint64_t mark = 0;
  int32_t refsInSlice = 0;
  int32_t index = -1;
  /// The longest chain of pending ops ending here (this one included).
  int32_t depth = 1;
  /// Returned by the slice's program (something outside refers to it).
  bool output = false;
  /// Autograd: this version depends on a tensor that requires grad.
  bool requiresGrad = false;
  /// Autograd: a backward without retain_graph went through it, or through
  /// its copy in a create_graph gradient's graph (Rare::recomputes, held by
  /// the copy: PyTorch's graph holds and runs this op; Graph::check,
  /// findMasks).
  bool gradFreed = false;
  bool gradSharesInputs = false; // (gradInputs, below)
  /// Autograd: the inputs as backward sees them; read them through
  /// gradIn(). While `gradSharesInputs` (recorded with the same edges as
  /// `inputs`, the common case) they are `inputs` themselves and this stays
  /// empty: one copy of the edges, one reference to each input (the
  /// evaluator's "referenced outside" count, Eval.cpp, relies on it). When
  /// `inputs` go on evaluation (releaseInputs) they move here.
  std::vector<Operand> gradInputs;
  const std::vector<Operand> &gradIn() const {
    return gradSharesInputs ? inputs : gradInputs;
  }
  /// Drops `inputs` once evaluated, keeping backward's edges (gradIn()).
  void releaseInputs() {
    if (gradSharesInputs) {
      gradInputs = std::move(inputs);
      gradSharesInputs = false;
    }
    inputs.clear();
    inputs.shrink_to_fit();
  }
  /// Autograd: a bound on the ops a backward from here walks (long: in
  /// segments); hashes of the graph below, its views' offsets apart (0: none).
  int64_t gradWeight = 1;
  uint64_t gradShape = 0, gradOffsets = 0;
  /// Autograd: a root saved for backward and its version when saved
  /// (kSavedCopy: the original value of an in-place op's own destination,
  /// which PyTorch saves as a copy, so later writes do not invalidate it).
  struct Saved {
    std::weak_ptr<StorageRoot> root;
    int64_t version;
    Shape sizes;
    /// The root's versions, kept when no tensor refers to the root any more
    /// (`h = h * 2` drops the `h` an op saved, which a write may have
    /// changed before): backward still checks them.
    std::shared_ptr<const VersionRecord> record;
    /// For a saved result, the op that saved it (its grad_fn names it in
    /// the error, as PyTorch's saved outputs); a saved input names the
    /// root's current grad_fn.
    std::weak_ptr<Node> node;
    /// The input saved (-1: the result): an in-place op's own destination
    /// (input 0) is saved as a copy, another operand reading the same
    /// storage is not (x.mul_(x) cannot backward, as in PyTorch).
    int input = -1;
  };
  static constexpr int64_t kSavedCopy = -1;
  /// Autograd: what this op saves for backward (PyTorch's saved tensors).
  std::vector<Saved> saved;
  /// Autograd: for a write, the in-place op ("add_") that recorded it.
  const char *inplaceOp = nullptr;
  /// Autograd: for a write with history, the autograd identity written
  /// through (autogradIdentity of the destination): tensors of another
  /// identity over the same storage do not see it in their history.
  std::weak_ptr<const TensorImpl> writer;
  /// Autograd: the write went through a view (PyTorch's CopySlices).
  bool viewWrite = false;
  /// The write (a fill_ or zero_) went through a view with a stride-0 dim
  /// (has_internal_overlap): PyTorch records it and refuses its backward.
  bool overlapWrite = false;
  /// Autograd: an untracked write (no-grad mode, or through detach()) over
  /// a version with history: invisible to autograd, as in PyTorch. Its
  /// gradInputs are {the value read without grad, the old version}; reads
  /// of this version pass their whole gradient to the old one.
  bool passHistory = false;
  /// Autograd: some backward may read this version's value (it is saved):
  /// evaluating an in-place write over its buffer first gives it a copy.
  bool keepData = false;

  /// Fields few nodes set, held apart (allocated when one is first set):
  /// a recorded program holds a node or three an op, and these would make
  /// each a fifth larger.
  struct Rare {
    /// A reduction's or scan's dims.
    Shape dims;
    /// The grad_fn name of a composite the DSL built of other ops (clamp is
    /// where(x < lo, lo, x): ClampBackward1, not WhereBackward0).
    const char *compositeName = nullptr;
    /// A composite's inputs as PyTorch's node has them (its grad_fn's
    /// next_functions): clamp's input, not the where and compares inside.
    std::vector<Operand> compositeInputs;
    /// A create_graph copy's forward op (gradFreed).
    NodePtr recomputes;
    /// Autograd: the leaf tensor (requiring grad) this version is the data
    /// of.
    std::weak_ptr<TensorImpl> gradLeaf;
  };
  std::unique_ptr<Rare> rare;
  /// The rare fields, allocated on first use.
  Rare &rareFields() {
    if (!rare)
      rare = std::make_unique<Rare>();
    return *rare;
  }
  /// The rare fields to read (defaults where none was set).
  const Rare &rareOrDefault() const {
    static const Rare none{};
    return rare ? *rare : none;
  }
  const Shape &dims() const { return rareOrDefault().dims; }
  const char *compositeName() const { return rareOrDefault().compositeName; }
  const std::vector<Operand> &compositeInputs() const {
    return rareOrDefault().compositeInputs;
  }
  const NodePtr &recomputes() const { return rareOrDefault().recomputes; }
  const std::weak_ptr<TensorImpl> &gradLeaf() const {
    return rareOrDefault().gradLeaf;
  }

  /// A compute result's layout in its root: {sizes, strides, 0}.
  layout::Layout resultLayout() const { return {sizes, strides, 0}; }

  /// Releases the inputs without recursion (Core.cpp): dropping the last
  /// handle of a chain of 10^6 pending ops frees it on a 1 MB stack.
  ~Node();

  static uint64_t nextSeq() {
    static std::atomic<uint64_t> counter{0};
    return ++counter;
  }

  /// Leaves and writes are storage values in the IR; others are tensors.
  bool isStorageValue() const { return op == Op::Leaf || op == Op::Write; }
};

} // namespace strata::detail

#endif // STRATA_DSL_LIB_NODE_H
