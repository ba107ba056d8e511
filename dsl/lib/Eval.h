//===- Eval.h - the slice of the trace one evaluation runs ------*- C++ -*-===//
#ifndef STRATA_DSL_LIB_EVAL_H
#define STRATA_DSL_LIB_EVAL_H

#include "Impl.h"

#include <algorithm>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace strata::detail {

/// A fresh Node::mark (under the trace lock): a slice marks the nodes it
/// reaches with one, as may a walk that evaluates nothing while it runs
/// (taking `index` and `refsInSlice` too) instead of hash sets.
uint64_t nextEpoch();

/// Computes versions `nodes` of storages (those pending) into buffers of
/// their own, in one program (evaluateNode, Impl.h, of each).
void evaluateNodes(std::span<const NodePtr> nodes, const SourceLoc &loc);

struct Slice;
/// Evaluates, level by level, the pending nodes of `slice` at each multiple
/// of kMaxPendingDepth deep (not its roots), where it reaches twice as deep:
/// what is left of it is then a slice of bounded depth. False where it
/// evaluated nothing. (Not called within a boundary evaluation: a
/// backward's plan, or these levels themselves, cut those.)
bool evaluateDeepInPieces(const Slice &slice, const SourceLoc &loc);

/// Mixes `v` (a Shape: its size and values) into the structure hash `h`
/// (the recorded graph hashes, Node::gradShape; backward's Walk).
inline void mixHash(uint64_t &h, uint64_t v) {
  h = (h ^ v) * 0x100000001b3ull;
  h ^= h >> 29;
}
inline void mixHash(uint64_t &h, const Shape &s) {
  mixHash(h, s.size());
  for (int64_t x : s)
    mixHash(h, static_cast<uint64_t>(x));
}

/// Per program structure, the offsets of its views it last ran with, and
/// whether they ever changed (then for good: specialize on the first
/// offsets, generalize on the first change, as Dynamo's automatic
/// dynamic). The evaluator's (Slice::offsetsVary) and backward's
/// (SegmentedBackward.cpp) keep one each. Bounded: a full table starts
/// again (a structure then specializes once more). Thread-safe.
class OffsetHistory {
public:
  /// Records `offsets` for `structure`; whether they ever changed.
  bool vary(uint64_t structure, uint64_t offsets);
  /// Whether `structure`'s offsets changed, recording nothing.
  bool varied(uint64_t structure);

private:
  struct Seen {
    uint64_t offsets;
    bool varied;
  };
  std::mutex mutex;
  std::unordered_map<uint64_t, Seen> seen;
};

/// The nodes one evaluation needs, in creation order.
struct Slice {
  /// Collects the slice reaching `roots` (pending nodes).
  explicit Slice(const std::vector<Node *> &roots);
  /// The nodes the slice was made for.
  std::vector<Node *> roots;
  /// Every node (arguments and pending), creation order.
  std::vector<Node *> nodes;
  /// Materialized nodes: the storage arguments, in order of first use by
  /// `pending` (not creation: the key then does not depend on which input
  /// was made first).
  std::vector<Node *> args;
  /// Per argument: written by the slice (donated: the program may write
  /// its window in place), else read only.
  std::vector<bool> donated;
  /// Per argument: the window of its storage passed to the program, in
  /// elements: from the smallest to the largest element the slice reads
  /// or writes of it (the start rounded down to 4 elements on CUDA, whose
  /// vector loads rely on that alignment), so a view's offset into its
  /// storage is not in the key. A written argument's window also covers
  /// every read and write of the versions the program makes of it; one
  /// read only through empty views, or written where the window cannot
  /// serve (not its storage's home buffer, an older version returned), is
  /// passed whole (start 0).
  std::vector<int64_t> windowStart, windowSize;
  /// Pending nodes, in order.
  std::vector<Node *> pending;
  /// Per pending node: for a write of a donated argument's storage
  /// (directly or after other such writes), that argument's index, whose
  /// window the write's result is; -1 otherwise.
  std::vector<int32_t> writeWindow;
  /// Readers pulled in (held while evaluating).
  std::vector<NodePtr> keepAlive;
  /// Scalars passed as arguments (after the storages): the values of
  /// pending fills that select no code, and the start and step of each
  /// pending arange (two entries, that order), so the key holds none of
  /// them.
  std::vector<Node *> scalars;
  /// Per pending node: its (first) position in `scalars`, or -1.
  std::vector<int32_t> scalarArg;
  /// Per entry of `scalars`: a pow exponent of an f32 base that f32 cannot
  /// hold, passed as PyTorch's double Scalar (the pow computes in f64).
  std::vector<bool> wideScalar;
  /// How pow node `n`'s exponent enters its program (docs/design.md
  /// "Scalars are arguments").
  enum class Exponent {
    Tensor,   ///< not a number (or no pow): a tensor operand
    Constant, ///< a number whose value selects the code (0.5: sqrt, 2: x*x)
    Value,    ///< a number in the tensor's dtype, any value one program
    Wide,     ///< a number f32 cannot hold, of an f32 base: passed in f64
  };
  static Exponent exponentOf(const Node &n);
  /// Chooses the scalar arguments (`scalars`, `scalarArg`, `wideScalar`).
  void placeScalars();
  /// The dtype of scalar argument `k`: a fill's own; an arange's start and
  /// step in the type its kernel computes in (i64 exact, or f64).
  DType scalarDType(size_t k) const;
  /// Writes scalar argument `k`'s value, in scalarDType(k), to `p`.
  void writeScalarArg(size_t k, void *p) const;
  /// Whether fill `n` can take its value as an argument: a 0-d one (read
  /// in place, or returned as `ones * v`), or a sized one as `ones * v`
  /// (program()) when that product's inferred layout is the fill's own
  /// (not on some empty shapes: [0, 1]).
  static bool fillTakesArgument(const Node &n);
  /// The structural cache key (no data). Its last `8 * k` bytes are the
  /// offsets of the slice's k reads of pending sources (views of what the
  /// program computes, whose offsets are in the program), after the
  /// structure.
  std::string key() const;
  /// Whether `key` (this slice's key()) is of a structure that was seen
  /// before with other offsets of its pending sources' reads (a narrow of
  /// a computed tensor at a random offset each step): then those sources
  /// are evaluated first (viewedSources()), so that the reads are of
  /// arguments, whose windows keep offsets out of the key, instead of one
  /// program per offset. The first offsets seen are fused (docs/design.md,
  /// "Offsets are arguments").
  bool offsetsVary(const std::string &key) const;
  /// What to evaluate first when offsetsVary(), each in turn: the pending
  /// sources read through a part of them (at any offset, 0 too), then the
  /// writes at an offset into a window the program reads elsewhere too;
  /// none of the roots. (In turn: a source or write reading another at an
  /// offset, as `cat`'s pieces do, then reads an argument's window.)
  std::vector<NodePtr> viewedSources() const;
  /// Makes each of the evaluated `sources` that is an older version of a
  /// storage with no home buffer yet that storage's home: as if it had
  /// been evaluated while it was the current version, so that a write
  /// into it at an offset gets a window (placeArgs).
  static void takeHomes(const std::vector<NodePtr> &sources);
  /// Those of `nodes` not evaluated yet.
  static std::vector<NodePtr> stillPending(const std::vector<NodePtr> &nodes);
  /// The program; appends the returned nodes to `outputs`. With
  /// `valueArgs` false the scalars are constants and the storages whole (a
  /// self-contained dump).
  ir::Program program(std::vector<const Node *> &outputs,
                      bool valueArgs = true) const;
  /// Whether operand `in` of `reader` reads a pending fill (its offset is
  /// then fillOffset's: every element is the same), not as a write's
  /// destination.
  static bool readsFill(const Node &reader, const Operand &in);
  /// The offset a read of a fill through `l` is given: the lowest at which
  /// it stays in bounds (0 unless a stride is negative).
  static int64_t fillOffset(const layout::Layout &l);
  /// The offset of read `in` in what the program receives: relative to its
  /// argument's window, or absolute (a pending source, or `windows` false).
  int64_t readOffset(const Operand &in, bool windows = true) const;
  /// The argument whose window `n`'s storage is (an argument itself, or a
  /// write of a donated one), or -1.
  int32_t windowOf(const Node *n) const {
    return n->buffer ? n->index : writeWindow[n->index];
  }
  /// Elements of the storage value `n` in the program (its window's with
  /// `windows`, else its root's).
  int64_t storageSize(const Node *n, bool windows = true) const {
    int32_t w = windowOf(n);
    return windows && w >= 0 ? windowSize[w] : n->rootNumel;
  }

  /// Whether the slice computes `root`'s current version (pending).
  bool computesCurrent(const StorageRoot &root) const {
    return std::find(pending.begin(), pending.end(), root.current.get()) !=
           pending.end();
  }

private:
  void visit(Node *n);
  /// The pending readers of older versions of `root`, which this slice
  /// writes: each is visited (evaluated with the slice), or, where every
  /// older version it reads is the one in the home buffer and read by
  /// this slice too, that version keeps its data instead (a copy before
  /// the program writes the home buffer, runSlice) when `mayKeep`.
  void visitStaleReaders(StorageRoot &root, bool mayKeep);
  void placeArgs(bool onCuda);
  uint64_t epoch;
  /// key()'s length without the offsets of pending sources' reads.
  mutable size_t structureSize = 0;
  /// Whether a read of a pending source reads a part of it (key()).
  mutable bool partialReads = false;
  /// visit()'s stack of (node, next input), empty between visits.
  std::vector<std::pair<Node *, size_t>> stack;
};

} // namespace strata::detail

#endif // STRATA_DSL_LIB_EVAL_H
