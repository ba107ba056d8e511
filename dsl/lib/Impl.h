//===- Impl.h - tensors, storage roots, trace nodes ------------*- C++ -*-===//
//
// A TensorImpl is a layout over a StorageRoot. A StorageRoot's contents are
// a chain of immutable versions (Nodes): a materialized leaf, a pending
// compute result, or a pending write (an in-place op recorded functionally).
// Reading a tensor reads its root's current version. When a version is
// evaluated, its contents live in the root's one `home` buffer, which is
// what storage()/data_ptr() expose. Tensors may be shared between threads
// (PyTorch's model): every read or change of trace state -- recording an
// op, evaluating, backward(), reading elements -- holds the one trace lock
// (TraceLock, docs/design.md "Threads"); compiling a program, the slow
// part, happens outside it (tests/unit/dsl/ThreadTest.cpp, run under TSan).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_IMPL_H
#define STRATA_DSL_LIB_IMPL_H

#include "Node.h"
#include "TraceLock.h"
#include "WriteLocs.h"
#include "strata/JIT/Jit.h"
#include "strata/Layout/LayoutAlgebra.h"
#include "strata/Runtime/Storage.h"
#include "strata/strata.h"
#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata::detail {

/// What backward's checks of a saved root need once the root is gone (no
/// tensor refers to it, while a version of it is still read): its version
/// count, its latest version (whose grad_fn the error names), its dtype and
/// where each write was made. Made when a version of the root is first
/// saved (recordOf), kept up to date by every write after.
struct VersionRecord {
  int64_t version = 0;
  std::weak_ptr<Node> current;
  DType dtype = DType::F32;
  WriteLocs writeLocs;
};

/// One storage: its versions, its buffer once evaluated, its version count.
struct StorageRoot {
  NodePtr current;
  runtime::StoragePtr home;
  DType dtype = DType::F32;
  int64_t numel = 0;
  /// In-place ops so far (PyTorch's _version).
  int64_t version = 0;
  /// Pending nodes that read some version of this root: those reading the
  /// version in the home buffer must be evaluated (or that version kept)
  /// before the home buffer is overwritten (Slice::visitStaleReaders).
  std::vector<std::weak_ptr<Node>> readers;
  /// `readers` is pruned (pruneReaders) when it reaches this size, which
  /// then becomes twice what is left (amortized O(1) a reader).
  size_t readersPruneAt = 32;
  /// Creation order of the version whose contents are in `home`.
  uint64_t homeSeq = 0;
  /// Where the recent in-place writes were made (WriteLocs.h).
  WriteLocs writeLocs;
  /// Set once a version of this root is saved for backward (VersionRecord).
  std::shared_ptr<VersionRecord> record;
};

/// Autograd state of a tensor: its accumulated gradient and hooks.
struct AutogradMeta {
  Tensor grad;
  /// A leaf's post-accumulate-grad hooks (handle, hook), in order.
  std::vector<std::pair<unsigned, Function<void(const Tensor &)>>> hooks;
  bool retainGrad = false;
  /// A retained non-view's version whose history it retains (PyTorch hooks
  /// its grad_fn at retain_grad(), moved by its own in-place ops only).
  std::weak_ptr<Node> retainedAt;
};

/// A tensor: dtype, layout over a root, grad flags, and how it was made.
struct TensorImpl : std::enable_shared_from_this<TensorImpl> {
  DType dtype = DType::F32;
  layout::Layout layout;
  std::shared_ptr<StorageRoot> root;
  bool requiresGrad = false;
  bool isLeaf = true;
  /// The view op that made this tensor from `base` (null: not a view).
  const char *viewOp = nullptr;
  /// Autograd: made by detach() (shares the storage and its version
  /// counter, not the history), or a view made in no-grad mode (PyTorch's
  /// CreationMeta::NO_GRAD_MODE): neither follows its base's history.
  bool detached = false;
  bool noGradView = false;
  /// CreationMeta::MULTI_OUTPUT_NODE: AutogradGraph.h's multiOutputOf().
  int32_t multiOutput = 0;
  /// Autograd: for a differentiable view (made by a view op, not
  /// detach()), the tensor at the bottom of its chain of views, whose
  /// requires_grad it follows (PyTorch's `_base`); null otherwise. Held
  /// alive by `base`.
  TensorImpl *gradBase = nullptr;
  /// Autograd, differentiable views (PyTorch's DifferentiableViewMeta):
  /// the root's version when the view was made, and whether it was given a
  /// grad_fn then (grad mode on and its input requiring grad). Once the
  /// root is written in place, the view's grad_fn is regenerated per
  /// version (AsStridedBackward0 over the base's new history).
  int64_t viewVersion = 0;
  bool viewGradFn = false;
  /// The regenerated grad_fn's node and the version it is for.
  mutable std::shared_ptr<const ViewChain> regenChain;
  mutable int64_t regenVersion = -1;
  Shape viewArgs;
  std::shared_ptr<TensorImpl> base;
  /// What made the root ("arange", "add", "from_vector", ...).
  const char *origin = "";
  SourceLoc loc;
  /// Autograd state (created on first use).
  std::shared_ptr<AutogradMeta> autograd;
  /// Autograd: the view chain of a view requiring grad (made on first use).
  mutable std::shared_ptr<const ViewChain> viewChain;
  /// Releases `base` without recursion (a view of a view of ... 10^6 deep).
  ~TensorImpl();
};

//===--- Shared helpers (Record.cpp, Eval.cpp) ----------------------------===//

/// Throws strata::Error.
[[noreturn]] void fail(const std::string &message, const std::string &hint,
                       const SourceLoc &loc);
/// PyTorch's "Storage size calculation overflowed with sizes=[...]" when
/// the elements or bytes of `sizes` overflow int64; returns the numel.
int64_t checkStorageSize(const Shape &sizes, int64_t elementSize,
                         const char *op, const SourceLoc &loc);
/// Throws on a failed algebra result; returns the value otherwise. (The
/// hint is a view: recording an op builds no string unless it fails.)
template <typename T>
T check(layout::Result<T> &&r, const SourceLoc &loc,
        std::string_view hint = {}) {
  if (!r.ok())
    fail(r.error(), std::string(hint), loc);
  return std::move(r.value());
}
/// The impl of a defined tensor (throws for an undefined one).
const TensorImpl &implOf(const Tensor &t, const SourceLoc &loc);
/// The read of `t`'s current contents; registers the reader later.
Operand operandOf(const TensorImpl &t);
/// The strides PyTorch gives the result of `n` (offset 0) when its inputs
/// have layouts `ins`: elementwise ops follow their inputs (TensorIterator),
/// clone() and to(dtype) keep a dense input's strides (preserve_format),
/// everything else is contiguous (contiguous(), reshape copies, reductions,
/// matmul, factories).
Shape resultStrides(const Node &n, std::span<const layout::Layout> ins);
/// A tensor over a fresh root whose current version is `node` (a compute
/// node, contiguous); registers `node` as a reader of its inputs' roots.
Tensor makeResult(NodePtr node, const SourceLoc &loc, bool requiresGrad);
/// What makeResult does to `node` but the tensor: its strides, device,
/// depth, autograd (when `requiresGrad`, in grad mode, of a float dtype:
/// returned), and its reads registered; `root` (may be null: a value
/// written in place at once) becomes its root.
bool finishNode(const NodePtr &node, const SourceLoc &loc, bool requiresGrad,
                const std::shared_ptr<StorageRoot> &root);
/// A row-major copy of `t` (contiguous(), reshape copies): clone() keeps
/// the input's layout (preserve_format), this does not.
Tensor contiguousCopy(const Tensor &t, const SourceLoc &loc);
/// Pending ops a chain may reach before the tensor ending it is evaluated
/// at record time (docs/design.md "Deep programs").
constexpr int32_t kMaxPendingDepth = 4000;
/// Sets `node.depth` from its inputs'.
void setDepth(Node &node);
/// Evaluates `t` when its current version ends a chain deeper than
/// kMaxPendingDepth and does not require grad (how a 10^6-op trace runs in
/// pieces).
void cutDeepChain(const TensorImpl &t, const SourceLoc &loc);
/// PyTorch's "Only Tensors of floating point and complex dtype can require
/// gradients" when `options` asks for grad on a non-float `dtype`.
void checkRequiresGrad(const TensorOptions &options, DType dtype,
                       const SourceLoc &loc);
/// A tensor over a fresh materialized root.
Tensor makeLeaf(runtime::StoragePtr buffer, DType dtype, const Shape &sizes,
                const TensorOptions &options, const char *origin,
                const SourceLoc &loc);
/// The global generator of rand/randn (manual_seed): 64 random bits, and
/// a double uniform in [0, 1).
uint64_t randomBits();
double randomUniform();
/// A factory's sizes: none negative ("Trying to create tensor with negative
/// dimension"), their product within int64 for `dtype`'s element size.
void checkFactorySizes(const Shape &sizes, const char *op, DType dtype,
                       const SourceLoc &loc);
/// PyTorch's ScalarType name ("Float", "Long"), as its "not implemented
/// for" messages print it.
const char *torchTypeName(DType t);
/// The C++ type name of a dtype as PyTorch's caffe2 TypeMeta prints it
/// ("float", "long int"), for its "expected dtype" and "Bad in-place
/// call" messages.
const char *cppTypeName(DType t);
/// PyTorch's `"<kernel>" not implemented for '<type>'` error.
[[noreturn]] void notImplementedFor(const char *kernel, DType t,
                                    const char *hint, const SourceLoc &loc);
/// PyTorch's error when two elements of written-to `l` share a location.
void refuseOverlappingWrite(const layout::Layout &l, const char *op,
                            const SourceLoc &loc);
/// Allocates `nbytes` or throws strata::Error with the allocator's message.
runtime::StoragePtr allocate(int64_t nbytes, const SourceLoc &loc);
/// A pending 0-d fill (how scalars enter programs): `value` converted to
/// `dtype` as PyTorch's arithmetic does (integers exact, wrapping into
/// int32; a float truncates into an integer type).
Tensor scalarTensor(const Scalar &value, DType dtype, const SourceLoc &loc);
/// Records compute op `name` (its IR mnemonic, of static lifetime) of kind
/// `op` over `inputs`, its dtype and sizes given (no promotion or checks:
/// the autograd engine's create_graph replays typed IR with it).
Tensor recordOp(Op op, const char *name, DType dtype, Shape sizes,
                const std::vector<const Tensor *> &inputs, const SourceLoc &loc,
                Shape dims = {}, bool keepdim = false);
/// Whether `value` converts to `dtype` without overflow (PyTorch's
/// checked_convert: NaN and out-of-range into integers, finite values past
/// FLT_MAX into f32); fill_, full, from_vector and item<T>() ask it.
bool fitsIn(const Scalar &value, DType dtype);
/// PyTorch's checked conversion of a fill value (fill_, full): throws
/// "value cannot be converted to type int without overflow" and the like.
void checkScalarFits(const Scalar &value, DType dtype, const char *op,
                     const SourceLoc &loc);
/// The elements of `t` at the row-major flat indices `flat` (T: double or
/// int64_t, integers exact), evaluating it first; reads only those (a
/// printed summary of 3e9 expanded elements reads 36).
template <typename T>
std::vector<T> elementsAt(const Tensor &t, const std::vector<int64_t> &flat,
                          const SourceLoc &loc);
/// PyTorch's can_cast: no conversion to a lower category (float > integer
/// > bool); in-place ops and the `_out` forms check it.
bool canCast(DType from, DType to);
/// PyTorch's assert_no_partial_overlap: an input of an op writing `dest`
/// that shares memory with it must be exactly it (same start, end and
/// strides); inputs with internal overlap are "too hard" and pass.
void checkNoPartialOverlap(const TensorImpl &dest, const TensorImpl &in,
                           const char *op, const SourceLoc &loc);
/// Records `dest.copy_(src)`: a write of `src` (converted to dest's dtype,
/// broadcast to its shape) into dest's root.
void recordWrite(const TensorImpl &dest, const Tensor &src,
                 const SourceLoc &loc, const char *op);
/// Counts a program run outside evaluation (a gradient program) in
/// eval_stats(): its kernels, and whether it was compiled for this run.
void countProgramRun(int64_t kernels, bool compiled);
/// Evaluates the current versions of the roots of `tensors` in one program.
void evaluate(const std::vector<const TensorImpl *> &tensors,
              const SourceLoc &loc);
/// Computes version `n` of a storage (pending) into a buffer of its own:
/// an older version than the current one stays out of the home buffer.
void evaluateNode(const NodePtr &n, const SourceLoc &loc);
/// Stores fill `n`'s value at `p` in its dtype (f32, f64, i32 or i64), as
/// the kernels' constant would hold it: a scalar passed as an argument.
void writeScalar(const Node &n, void *p);
/// While alive, on this thread, evaluations are of the boundaries of a
/// segmented backward (AutogradEngine.cpp, backwardInSegments) or a deep
/// chain's levels (evaluateDeepInPieces): in a program that writes no
/// storage's current version over its home buffer, an elementwise result
/// or a write that only the kept inputs of an op requiring grad (its
/// backward) refer to is not written (a gradient program recomputes it
/// from its inputs; a version it would be recomputed from may be in a
/// home buffer the program overwrites), and a program that does not
/// compute a storage's current version does not evaluate the pending
/// readers of its older versions first (a version it writes over, in the
/// home buffer or one of its own, is copied instead, runSlice).
struct BoundaryEvaluation {
  BoundaryEvaluation();
  ~BoundaryEvaluation();
  BoundaryEvaluation(const BoundaryEvaluation &) = delete;
  BoundaryEvaluation &operator=(const BoundaryEvaluation &) = delete;

private:
  bool was;
};
/// Drops from `root.readers` the dead, the evaluated, and, once the root
/// has a home buffer, those that read no version of it that is or may
/// become the one in that buffer (only older pending versions, or ones
/// with buffers of their own: Slice::visitStaleReaders never needs them).
/// The next prune then waits until the list has doubled.
void pruneReaders(StorageRoot &root);
/// Makes `root`'s storage safe to hand out as raw memory (data_ptr(),
/// storage(), DLPack): evaluates its current version and every pending
/// reader of any version of it, and waits for a CUDA stream. What is
/// recorded afterwards sees writes made through the memory meanwhile.
void settleStorage(StorageRoot &root, const SourceLoc &loc);
/// Throws strata::Error unless `d` can be used: the CPU, or cuda:0 with a
/// driver and a GPU (the runtime's "no CUDA device: ..." reason otherwise).
void checkDevice(const Device &d, const SourceLoc &loc);
/// The device of a node's version as a Device.
Device deviceOf(int8_t device);
/// The device common to `a` and `b` (kDevAny joins either); throws
/// PyTorch's "Expected all tensors to be on the same device" otherwise.
int8_t joinDevices(int8_t a, int8_t b, const SourceLoc &loc);
/// `buffer` itself on the host; a CUDA storage is copied to a fresh host
/// storage (synchronizing the stream). Throws on a driver error.
runtime::StoragePtr hostBuffer(const runtime::StoragePtr &buffer,
                               const SourceLoc &loc);
/// A fresh storage on `device` with the bytes of `buffer` (any devices).
runtime::StoragePtr copyBuffer(const runtime::StoragePtr &buffer,
                               runtime::DeviceKind device,
                               const SourceLoc &loc);
/// The JIT's spelling of a dtype: the same enum (strata/Runtime/DType.h).
inline jit::DType toJitDType(DType t) { return static_cast<jit::DType>(t); }
/// Runs a prepared program on the CPU JIT, or with `onCuda` on the GPU with
/// its results left there (both the evaluator's programs and backward()'s).
jit::RunResult runPrepared(const jit::PreparedFunction &fn,
                           const std::vector<jit::JitValue> &args, bool onCuda,
                           const jit::RunOptions &options = {});
/// The window a program receives of a read-only storage of `numel`
/// elements whose reads reach elements [lo, hi]: {start, size}. On CUDA
/// the start is rounded down to 4 elements (vectorized kernels load 4 at
/// once from an offset they see as a multiple of 4) and the size up.
std::pair<int64_t, int64_t> readWindow(int64_t lo, int64_t hi, int64_t numel,
                                       bool onCuda);
/// Elements [start, start + size) of `buffer` (of dtype `t`) as a storage
/// sharing its bytes (no copy; a device address stays one) and keeping
/// `buffer` alive.
runtime::StoragePtr storageWindow(const runtime::StoragePtr &buffer, DType t,
                                  int64_t start, int64_t size);
/// Element `storageIndex` of a home buffer as a double.
double loadElement(const runtime::Storage &buffer, DType dtype,
                   int64_t storageIndex);
/// The IR element type: "f32", "f64", "i32", "i64", "i1".
const char *irType(DType t);
std::string formatLoc(const SourceLoc &loc); // "file:line"

//===--- Autograd hooks (Autograd.cpp) ------------------------------------===//
/// Whether grad mode is on (off inside a NoGradGuard).
bool gradEnabled();
/// PyTorch's requires_grad of `t`: its own flag, or for a differentiable
/// view its base's, or the history its storage was given by an in-place
/// write (x.select(0, 0).copy_(y) makes x require grad: CopySlices).
bool requiresGradOf(const TensorImpl &t);
/// PyTorch's is_leaf: no grad_fn (does not require grad, or is a leaf
/// requiring grad whose storage no in-place op with grad has written).
bool isLeafOf(const TensorImpl &t);
/// PyTorch's grad_fn field as it stands, not regenerated (requires_grad_()
/// and the in-place leaf check test it): a view's is set when it is made
/// with grad mode on or its grad_fn is regenerated, not by a write alone.
bool gradFnFieldIsNull(const TensorImpl &t);
/// The views `t` was made by when it requires grad (null otherwise): the
/// identity of its grad_fn, one per view and version of its root.
std::shared_ptr<const ViewChain> viewChainOf(const TensorImpl &t);
/// View op `c` (its op and arguments) applied to layout `in` instead of
/// the layout it was made from: how a view is replayed over a dense copy of
/// a tensor whose elements overlap in memory (the gradient with respect to
/// an expand is per element). Null where the op cannot be replayed (an
/// as_strided addresses storage, not its input; a view strides cannot
/// express on `in`).
std::optional<layout::Layout> replayView(const ViewChain &c,
                                         const layout::Layout &in);
/// Whether a differentiable view has a grad_fn (PyTorch's
/// VariableHooks::grad_fn): it was given one when made, or its root was
/// written since and its base requires grad.
bool viewHasGradFn(const TensorImpl &t);
/// Called by makeResult for a node that requires grad: keeps its inputs and
/// records what it saves for backward.
void recordGradNode(Node &node);
/// Sets `node.gradWeight` from its gradInputs'.
void setGradWeight(Node &node);
/// `root`'s VersionRecord, made on first use.
std::shared_ptr<const VersionRecord> recordOf(StorageRoot &root);
/// Records `input`, operand `index` of `node`'s op (Node::Saved::input), as
/// a tensor `node`'s backward reads (PyTorch's saved `self`): a later
/// in-place write to it makes backward raise.
void saveInput(Node &node, const Operand &input, int index);
/// Marks the version `t` reads as the data of a leaf when `t` requires grad
/// and that version was not computed from a tensor requiring grad (what the
/// grad_fn of a view of a leaf shows as AccumulateGrad).
void markGradLeaf(const std::shared_ptr<TensorImpl> &t);
/// Whether a read of `t` through view chain `chain` (viewChainOf(t)) is
/// an edge to nothing: a view without grad_fn that is no leaf of its own,
/// or one made of such a view (PyTorch's gradient_edge is invalid).
bool gradGoesNowhere(const TensorImpl &t, const ViewChain *chain);
/// Sets the autograd edge of `o`, a read of `t` (Operand::leaf, noGrad).
void setGradEdge(Operand &o, const TensorImpl &t);
/// Called before an op reads `t` in grad mode: PyTorch refuses a view made
/// in no-grad mode whose root was written since (its grad_fn would be
/// regenerated from a history it was not made in). Only by an op whose
/// result can require grad (a float one): PyTorch reads the grad_fn only
/// then (`v > 0`, `v.to(kInt64)`, a bool's copy_(v) read it without).
void checkViewRead(const TensorImpl &t, const SourceLoc &loc,
                   bool anyMode = false);
/// Called by recordWrite before a write of `value` into `dest`: PyTorch's
/// in-place checks.
void checkInplace(const TensorImpl &dest, bool valueGrad, const char *op,
                  const SourceLoc &loc);
/// PyTorch's name of the grad_fn showing version `n` ("" when none).
std::string gradFnName(const NodePtr &n);
/// Called by recordWrite after a write node is made current.
/// `value`: the version written (converted to dest's dtype), `valueGrad`
/// whether it requires grad.
void recordGradWrite(const TensorImpl &dest, Node &value, bool valueGrad,
                     Node &write, const char *op, const SourceLoc &loc);

} // namespace strata::detail

#endif // STRATA_DSL_LIB_IMPL_H
