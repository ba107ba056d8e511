//===- Eval.cpp - evaluate a slice of the trace through the JIT ----------===//
//
// Algorithm. (1) Collect the pending nodes reaching the requested roots
// (materialized nodes become storage arguments) plus every pending reader
// of an older version of a root this slice writes (so overwriting the
// root's home buffer loses nothing), in creation order. (2) A node is an
// output when something outside the slice still refers to it (a tensor's
// root, another pending node); temporaries stay inside the fused program.
// (3) Key: the structure of the slice (ops, attributes, dtypes, layouts, not
// data); a hit reuses a jit::PreparedFunction, a miss builds and prepares
// it. Fill values (0-d fills: `x * lr`, `fill_(v)`, clamp bounds; `full`,
// `zeros`, `ones` of any shape) are arguments, not in the key; only a
// value that selects code stays a constant (a pow exponent 0.5 is sqrt, 2
// a product: Slice::exponentOf), and bool fills. A read of a fill is at
// offset 0 (its elements are all the same). Storage offsets are arguments
// too: each read-only storage is passed as the window its reads reach, the
// reads' offsets relative to it, so `x.narrow(0, k, B)` is one program for
// every k (SliceWindows.cpp); arguments are numbered by first use. A view
// at an offset of a pending result read with other offsets each time
// evaluates that result first (Slice::offsetsVary). (4) Run with written
// arguments donated; results become the roots' home buffers (an in-place
// result not written in place is copied back into the user's buffer).
//
//===----------------------------------------------------------------------===//
#include "Eval.h"

#include "Emit.h"
#include "Impl.h"
#include "ProgramCache.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"

#include "strata/JIT/CudaJit.h"
#include "strata/JIT/Jit.h"
#include "strata/Runtime/CudaDriver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

using namespace strata;
using namespace strata::detail;

jit::RunResult
strata::detail::runPrepared(const jit::PreparedFunction &fn,
                            const std::vector<jit::JitValue> &args, bool onCuda,
                            const jit::RunOptions &options) {
  if (!onCuda)
    return fn.run(args, options);
  jit::RunOptions cuda = options; // (results stay on the GPU)
  cuda.cuda = true;
  return fn.run(args, cuda);
}

namespace {

EvalStats gStats;
std::mutex gStatsMutex; // guards gStats (threads evaluate at once)

/// Applies `update` to the statistics.
template <typename F> void countStats(F update) {
  std::lock_guard<std::mutex> lock(gStatsMutex);
  update(gStats);
}

/// A prepared program and what running it needs (not its source: a
/// cached program keeps only what runs, docs/design.md "Memory").
struct Program {
  std::unique_ptr<jit::PreparedFunction> fn;
  std::vector<bool> donated;
};

/// Prepared programs by structure (bounded, least recently used out;
/// ProgramCache.h). Threads that need one program at once wait while the
/// first prepares it: each is prepared (its kernels compiled) once.
strata::detail::ProgramCache<Program> &cache() {
  static auto *c = new strata::detail::ProgramCache<Program>;
  return *c;
}

constexpr int kMaxRecompute = 8; // ops a deferred temporary recomputes (Slice)
constexpr size_t kMaxProgramRoots = 512; // roots a program evaluates

/// Set by BoundaryEvaluation.
thread_local bool tBoundaryEvaluation = false;

/// Ops that compute each element from the same element of their inputs.
bool isElementwise(Op op) {
  switch (op) {
  case Op::Unary:
  case Op::Binary:
  case Op::Where:
  case Op::Cast:
  case Op::Fill:
  case Op::Arange:
  case Op::Copy:
    return true;
  default:
    return false;
  }
}

/// A number not yet evaluated: a 0-d fill on no device in particular
/// (scalarTensor), or a pending cast of one.
bool isPendingNumber(const Node &n) {
  const Node *v = &n;
  while (v->op == Op::Cast && !v->buffer && v->inputs.size() == 1)
    v = v->inputs[0].node.get();
  return v->op == Op::Fill && !v->buffer && v->device == kDevAny &&
         v->sizes.empty();
}

} // namespace

uint64_t strata::detail::nextEpoch() {
  static std::atomic<uint64_t> epoch{0};
  return ++epoch;
}

void Slice::visit(Node *start) {
  // Iterative (a pending chain may be 10^5 ops long): each node is marked
  // when first reached and pushed after its inputs; the order does not
  // matter (the slice is sorted by creation below).
  // (One stack for the slice's visits, one per root: 512 for an eval().)
  stack.reserve(16); // (one allocation for a short chain, not four)
  auto reach = [&](Node *n) {
    if (n->mark == epoch)
      return;
    n->mark = epoch;
    n->refsInSlice = 0;
    stack.push_back({n, 0});
  };
  reach(start);
  while (!stack.empty()) {
    auto &[n, next] = stack.back();
    if (!n->buffer && next < n->inputs.size()) {
      reach(n->inputs[next++].node.get());
      continue;
    }
    nodes.push_back(n);
    stack.pop_back();
  }
}

Slice::Slice(const std::vector<Node *> &roots)
    : roots(roots), epoch(nextEpoch()) {
  nodes.reserve(16);
  for (Node *n : roots)
    visit(n);
  // Readers of older versions of the roots written here: each root's
  // readers once (n pending writes to one root would otherwise scan its
  // readers n times).
  std::unordered_set<const StorageRoot *> rootsScanned;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node *n = nodes[i];
    if (n->op != Op::Write || n->buffer)
      continue;
    auto root = n->root.lock();
    // (A storage never computed whole has no home a reader may read; the
    // versions with buffers of their own this writes over are copied.)
    if (!root || !root->home || !rootsScanned.insert(root.get()).second)
      continue;
    // Evaluating boundaries (of a segmented backward, or a deep chain's
    // levels): this program overwrites no buffer a pending reader of an
    // older version reads unless it computes the storage's current version
    // (its home): a version it writes over gets a copy first (runSlice).
    if (tBoundaryEvaluation &&
        (root->current->buffer || root->current->mark != epoch))
      continue;
    visitStaleReaders(*root, !tBoundaryEvaluation);
  }
  std::sort(nodes.begin(), nodes.end(),
            [](Node *a, Node *b) { return a->seq < b->seq; });
  // Backward's references (gradIn()) are from outside: what a gradient
  // reads is written (but see below); one shared with `inputs` stands
  // for both.
  for (Node *n : nodes)
    if (!n->buffer && !n->gradSharesInputs)
      for (const Operand &in : n->inputs)
        ++in.node->refsInSlice;
  // Evaluating the boundaries of a segmented backward: an elementwise
  // result kept only for a consumer's backward is recomputed by the
  // gradient program, not written (BoundaryEvaluation).
  // Not in a program that writes over a storage's home buffer with the
  // storage's current version: a version such a pending node would be
  // recomputed from may be there. (A version it writes over otherwise is
  // copied first, runSlice; what the program computes is recomputed from
  // its inputs.)
  if (tBoundaryEvaluation &&
      std::none_of(nodes.begin(), nodes.end(), [this](const Node *n) {
        if (n->buffer || n->op != Op::Write)
          return false;
        const Node *old = n->inputs[1].node.get();
        auto root = old->root.lock();
        return old->buffer &&
               (!root || (old->buffer == root->home && !root->current->buffer &&
                          root->current->mark == epoch));
      }))
    for (Node *n : nodes)
      if (!n->buffer && n->requiresGrad)
        for (const Operand &in : n->gradIn())
          if (in.node->mark == epoch && !in.node->buffer &&
              (isElementwise(in.node->op) || in.node->op == Op::Write))
            ++in.node->refsInSlice;
  for (const NodePtr &k : keepAlive)
    ++k->refsInSlice; // our own reference
  // Temporaries of the caller's expression may stay pending (below) unless
  // this slice writes a storage (it could overwrite what they read) or
  // pulled readers of older versions in (those must be written now).
  bool mayDefer = keepAlive.empty();
  for (const Node *n : nodes)
    mayDefer &= n->buffer || n->op != Op::Write;
  // Ops a deferred node costs to recompute (itself and the pending,
  // unreturned nodes it reads); -1: not cheap (a reduction, a matmul).
  std::vector<int> recompute;
  recompute.reserve(nodes.size());
  args.reserve(nodes.size());
  pending.reserve(nodes.size());
  for (Node *n : nodes) {
    if (n->buffer) {
      n->index = static_cast<int32_t>(args.size());
      args.push_back(n);
      continue;
    }
    n->index = static_cast<int32_t>(pending.size());
    pending.push_back(n);
    // Referred to from outside the slice: a tensor's root, or a pending op
    // that is not part of this slice.
    long outside = n->weak_from_this().use_count() - n->refsInSlice;
    n->output = outside > 0;
    // A C++ number (a 0-d fill on no device, maybe cast by promotion) is
    // never written: it stays pending, a constant or scalar argument of
    // every program that reads it. (Returned, a later program would read
    // it as a stored 0-d tensor, and pow by a tensor is laid out unlike
    // pow by a number: PyTorch's [0,1,1] ** 2 keeps strides [1,1,1].)
    if (n->output && isPendingNumber(*n) &&
        std::find(roots.begin(), roots.end(), n) == roots.end())
      n->output = false;
    int cost = -1;
    if (isElementwise(n->op) && !n->requiresGrad) {
      cost = 1;
      for (const Operand &in : n->inputs) {
        const Node *src = in.node.get();
        if (src->buffer || src->output)
          continue;
        int c = recompute[src->index];
        cost = c < 0 ? -1 : cost + c;
        if (cost < 0)
          break;
      }
    }
    // Only a tensor handle refers to it (a temporary of the full expression
    // that called eval(), like `a * 2` in `((a * 2 + 1).relu()).eval()`,
    // or a named intermediate) and it was not asked for: it stays pending
    // and is not written (a 64 MiB store less per such node); evaluated
    // later, it is recomputed from its inputs, which are immutable versions
    // (an in-place write to one of them first evaluates it, as it does for
    // every pending reader of an older version). Bounded: a node whose
    // recomputation would take more than kMaxRecompute ops is written.
    if (n->output && mayDefer && outside == 1 && cost > 0 &&
        cost <= kMaxRecompute &&
        std::find(roots.begin(), roots.end(), n) == roots.end()) {
      auto root = n->root.lock();
      n->output = !(root && root->current.get() == n);
    }
    recompute.push_back(n->output ? 0 : cost);
  }
  placeScalars();
  bool onCuda = false;
  for (const Node *n : nodes)
    onCuda |= n->device == kDevCUDA;
  placeArgs(onCuda);
}

namespace {

/// What compiling a slice's program needs (no trace state: it is made
/// under the trace lock and compiled outside it).
struct Recipe {
  ir::Program program;
  /// Prepared for the GPU (its CPU plan is not built).
  bool onCuda = false;
  std::vector<bool> donated;
  size_t ops = 0;
};

Recipe recipeOf(const Slice &slice) {
  Recipe r;
  std::vector<const Node *> outputs;
  r.program = slice.program(outputs);
  for (const Node *n : slice.nodes)
    r.onCuda |= n->device == kDevCUDA;
  r.donated = slice.donated;
  r.ops = slice.pending.size();
  return r;
}

/// The prepared program of `key`, compiled from `recipe` on a miss.
std::shared_ptr<Program> prepare(const std::string &key, const Recipe &recipe,
                                 const SourceLoc &loc, bool &hit) {
  return cache().get(
      key,
      [&] {
        auto program = std::make_unique<Program>();
        program->donated = recipe.donated;
        auto start = std::chrono::steady_clock::now();
        std::string error;
        program->fn = jit::PreparedFunction::fromProgram(
            recipe.program, error,
            recipe.onCuda ? jit::Backend::CUDA : jit::Backend::CPU);
        if (!program->fn)
          fail("strata could not compile this program: " + error,
               "this is a strata bug; set STRATA_DEBUG=3 to see the program",
               loc);
        if (runtime::settings::debugLevel() >= 1) // STRATA_DEBUG
          fprintf(stderr,
                  "[strata] compiled a program of %zu ops (%d kernels) in "
                  "%.1f ms at %s\n",
                  recipe.ops, program->fn->numKernels(),
                  std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count(),
                  formatLoc(loc).c_str());
        if (runtime::settings::debugLevel() >= 3)
          fprintf(stderr, "%s", recipe.program.print().c_str());
        countStats([](EvalStats &s) { ++s.compiles; });
        return program;
      },
      hit);
}

} // namespace

namespace {

/// Runs `program` (prepared for `slice`) and makes its results the
/// versions' contents; under the trace lock.
void runSlice(const Slice &slice, const Program &program, bool hit,
              const SourceLoc &loc) {
  bool onCuda = false;
  for (const Node *n : slice.nodes)
    onCuda |= n->device == kDevCUDA;
  if (hit)
    countStats([](EvalStats &s) { ++s.cacheHits; });
  std::vector<jit::JitValue> args(slice.args.size() + slice.scalars.size());
  // The scalars' values, each in its dtype as Fuse would have made the
  // constant, in one block (Storage::createSmall): not a storage each.
  std::vector<size_t> bytes;
  for (size_t i = 0; i < slice.scalars.size(); ++i)
    bytes.push_back(elementSize(slice.scalarDType(i)));
  std::vector<runtime::StoragePtr> scalars =
      runtime::Storage::createSmall(bytes);
  for (size_t i = 0; i < slice.scalars.size(); ++i) {
    jit::JitValue &v = args[slice.args.size() + i];
    v.dtype = toJitDType(slice.scalarDType(i));
    v.buffer = std::move(scalars[i]);
    slice.writeScalarArg(i, v.buffer->data());
    v.sizes = {1};
    v.strides = {1};
    v.isStorage = true;
  }
  for (size_t i = 0; i < slice.args.size(); ++i) {
    const Node *a = slice.args[i];
    jit::JitValue &v = args[i];
    v.dtype = toJitDType(a->dtype);
    // A CUDA program uploads host arguments itself; a CPU program reads
    // device ones (a scalar computed on the GPU) from a host copy.
    runtime::StoragePtr whole = onCuda ? a->buffer : hostBuffer(a->buffer, loc);
    int64_t start = slice.windowStart[i], size = slice.windowSize[i];
    // The window the program reads: a view of the buffer, no copy.
    v.buffer = start == 0 && size == a->rootNumel
                   ? std::move(whole)
                   : storageWindow(whole, a->dtype, start, size);
    v.sizes = {size};
    v.strides = {1};
    v.isStorage = true;
  }
  // An older version with a buffer of its own written over keeps its data
  // (its pending readers are not evaluated first, Slice::visitStaleReaders),
  // as does, evaluating boundaries, the version in a home buffer written
  // over by a program that does not compute the storage's current version
  // (a deep chain's level, a segment's boundary): a gradient program may
  // recompute from it after a later program wrote the home (Slice::Slice).
  for (size_t i = 0; i < slice.args.size(); ++i)
    if (auto root = slice.args[i]->root.lock();
        slice.donated[i] &&
        (!root || slice.args[i]->buffer != root->home ||
         (tBoundaryEvaluation && !slice.computesCurrent(*root))))
      slice.args[i]->buffer = copyBuffer(slice.args[i]->buffer,
                                         slice.args[i]->buffer->device(), loc);
  // A version some backward may read (saved for it) keeps its data: when
  // this program writes its root's home buffer, the version gets a copy
  // first (PyTorch saves the original of an in-place op's input).
  for (const Node *out : slice.pending) {
    if (!out->output)
      continue;
    auto root = out->root.lock();
    if (!root || !root->home)
      continue;
    for (const Node *a : slice.args)
      if (a->keepData && a->buffer == root->home && a->root.lock() == root)
        const_cast<Node *>(a)->buffer =
            copyBuffer(root->home, root->home->device(), loc);
  }
  jit::RunOptions options;
  options.donated = program.donated;
  jit::RunResult result = runPrepared(*program.fn, args, onCuda, options);
  args.clear();
  if (!result.ok)
    fail("strata could not run this program: " + result.error,
         "memory: free tensors you no longer need or call "
         "strata::empty_cache()",
         loc);
  countStats([&](EvalStats &s) {
    ++s.programs;
    s.kernels += program.fn->numKernels();
  });
  std::vector<Node *> outputs;
  for (Node *n : slice.pending)
    if (n->output)
      outputs.push_back(n);
  // The newest version of each root this program returns: it alone lives
  // in the root's home buffer; an older version returned too (saved for
  // backward, `p` in `p.mul_(b)`) keeps a buffer of its own, which the
  // newer version's copy into home must not overwrite.
  llvm::DenseMap<const StorageRoot *, uint64_t> newest(outputs.size());
  for (const Node *n : outputs)
    if (auto root = n->root.lock()) {
      uint64_t &s = newest[root.get()];
      s = std::max(s, n->seq);
    }
  for (size_t i = 0; i < outputs.size(); ++i) {
    Node *n = outputs[i];
    runtime::StoragePtr buffer = std::move(result.values[i].buffer);
    auto root = n->root.lock();
    // (An older version than the storage's current one never takes the
    // home buffer: a leaf's data read before later writes, computed for
    // backward.)
    if (root && (newest[root.get()] != n->seq || root->current.get() != n)) {
      bool inHome = root->home && buffer->data() >= root->home->data() &&
                    buffer->data() < root->home->data() + root->home->nbytes();
      // Written in place into home (its window or all of it), which holds
      // this version whole now: a copy of it, before the newer version
      // (later in `outputs`: they run by seq) is copied into home.
      n->buffer = inHome ? copyBuffer(root->home, root->home->device(), loc)
                         : std::move(buffer);
      if (inHome)
        root->homeSeq = n->seq; // (the version home held is gone)
      continue;
    }
    // A written window is the home buffer's bytes from its start on.
    int32_t w = n->op == Op::Write ? slice.writeWindow[n->index] : -1;
    size_t at =
        w >= 0
            ? static_cast<size_t>(slice.windowStart[w] * elementSize(n->dtype))
            : 0;
    if (root && root->home && root->home != buffer &&
        buffer->data() == root->home->data() + at) {
      buffer = root->home; // written in place
    } else if (root && root->home && root->home != buffer) {
      // Not written in place (the old version was still read): the new
      // version copied into the home buffer, on its device (views share
      // that buffer).
      if (std::string error = runtime::Storage::copy(*root->home, at, *buffer,
                                                     0, buffer->nbytes());
          !error.empty())
        fail(error, "", loc);
      countStats([](EvalStats &s) { ++s.copyBacks; });
      buffer = root->home;
    } else if (root && !root->home) {
      root->home = buffer;
    }
    if (root)
      root->homeSeq = n->seq;
    n->buffer = std::move(buffer);
  }
  for (Node *n : outputs)
    n->releaseInputs();
}

/// The pending nodes an evaluation must run; called again each time the
/// trace lock was released (another thread may have run or added some).
using CollectRoots = std::function<std::vector<NodePtr>()>;

void evaluateRoots(const CollectRoots &collect, const SourceLoc &loc);

/// Evaluates the nodes `collect` returns in one program per device.
void evaluateProgram(TraceLock &lock, const CollectRoots &collect,
                     const SourceLoc &loc) {
  // A program compiled outside the lock, for the slice of `compiledKey`.
  std::shared_ptr<Program> compiled;
  std::string compiledKey;
  bool compiledHit = false, varying = false;
  for (;;) {
    std::vector<NodePtr> pendingRoots = collect();
    if (pendingRoots.empty())
      return; // (perhaps another thread evaluated them meanwhile)
    // One program runs on one device: CPU and CUDA roots evaluate apart.
    bool anyCuda = false, allCuda = true;
    for (const NodePtr &r : pendingRoots) {
      anyCuda |= r->device == kDevCUDA;
      allCuda &= r->device == kDevCUDA;
    }
    if (anyCuda && !allCuda) {
      for (bool cuda : {false, true})
        evaluateRoots(
            [&collect, cuda] {
              std::vector<NodePtr> some = collect();
              std::erase_if(some, [cuda](const NodePtr &n) {
                return (n->device == kDevCUDA) != cuda;
              });
              return some;
            },
            loc);
      return;
    }
    std::vector<Node *> roots;
    for (const NodePtr &r : pendingRoots)
      roots.push_back(r.get());
    Slice slice(roots);
    if (!tBoundaryEvaluation && evaluateDeepInPieces(slice, loc))
      continue; // (a backward's boundaries are cut by its own plan)
    std::string key = slice.key();
    // (Once offsets vary, what is left after the split splits too.)
    static thread_local int splits = 0; // (nested: a bounded depth)
    if (splits < 4 && (varying || slice.offsetsVary(key))) {
      varying = true;
      std::vector<NodePtr> sources = slice.viewedSources();
      ++splits;
      auto depth = llvm::make_scope_exit([] { --splits; });
      for (const NodePtr &n : sources) // (each in turn: viewedSources)
        evaluateProgram(
            lock, [&] { return Slice::stillPending({n}); }, loc);
      Slice::takeHomes(sources);
      if (std::any_of(sources.begin(), sources.end(),
                      [](const NodePtr &n) { return n->buffer; }))
        continue; // (their readers now read arguments)
    }
    std::shared_ptr<Program> prepared;
    bool hit = false;
    if (compiled && key == compiledKey) {
      prepared = compiled;
      hit = compiledHit;
    } else if ((prepared = cache().find(key))) {
      hit = true;
    } else if (lock.outermost() && !compiled) {
      // Compile with the trace lock released (other threads record and
      // run meanwhile), then collect the slice again: it may have changed.
      Recipe recipe = recipeOf(slice);
      compiled =
          lock.unlocked([&] { return prepare(key, recipe, loc, compiledHit); });
      compiledKey = std::move(key);
      continue;
    } else {
      // Nested in another evaluation or backward, or the slice changed
      // while compiling: compile under the lock (always makes progress).
      prepared = prepare(key, recipeOf(slice), loc, hit);
    }
    runSlice(slice, *prepared, hit, loc);
    return;
  }
}

/// Evaluates the nodes `collect` returns: in one program per device, or,
/// past kMaxProgramRoots roots (an eval() of 10^5 outputs), in programs of
/// kMaxProgramRoots roots each, of repeated structure (one prepare serves
/// them all) and no wider than that for the passes. Each collect() is one
/// scan of the caller's list: the chunks are taken from it.
void evaluateRoots(const CollectRoots &collect, const SourceLoc &loc) {
  TraceLock lock;
  for (;;) {
    std::vector<NodePtr> all = collect();
    if (all.size() <= kMaxProgramRoots) {
      evaluateProgram(lock, collect, loc);
      return;
    }
    for (size_t i = 0; i < all.size(); i += kMaxProgramRoots) {
      size_t end = std::min(all.size(), i + kMaxProgramRoots);
      evaluateProgram(
          lock,
          [&all, i, end] {
            std::vector<NodePtr> some;
            for (size_t k = i; k < end; ++k)
              if (!all[k]->buffer)
                some.push_back(all[k]);
            return some;
          },
          loc);
    }
    // (Roots another thread added while a chunk compiled: collected again.)
  }
}

} // namespace

void strata::detail::evaluate(const std::vector<const TensorImpl *> &tensors,
                              const SourceLoc &loc) {
  evaluateRoots(
      [&tensors] {
        std::vector<NodePtr> roots;
        for (const TensorImpl *t : tensors)
          if (!t->root->current->buffer)
            roots.push_back(t->root->current);
        return roots;
      },
      loc);
}

void strata::detail::evaluateNodes(std::span<const NodePtr> nodes,
                                   const SourceLoc &loc) {
  evaluateRoots(
      [nodes] {
        std::vector<NodePtr> roots;
        for (const NodePtr &n : nodes)
          if (!n->buffer)
            roots.push_back(n);
        return roots;
      },
      loc);
}

void strata::eval(const std::vector<Tensor> &tensors, SourceLoc loc) {
  std::vector<const TensorImpl *> impls;
  for (const Tensor &t : tensors)
    impls.push_back(&implOf(t, loc));
  evaluate(impls, loc);
}

IRDump strata::dump_ir(const std::vector<Tensor> &tensors, SourceLoc loc) {
  TraceLock lock;
  std::vector<Node *> roots;
  for (const Tensor &t : tensors)
    if (!implOf(t, loc).root->current->buffer)
      roots.push_back(t.impl()->root->current.get());
  if (roots.empty())
    return {};
  Slice slice(roots);
  bool hit;
  std::shared_ptr<Program> program =
      prepare(slice.key(), recipeOf(slice), loc, hit);
  // The program with its scalars as constants: it runs on its own.
  std::vector<const Node *> outputs;
  return {slice.program(outputs, false).print(), program->fn->loweredIR()};
}

EvalStats strata::eval_stats() {
  EvalStats copy;
  countStats([&](EvalStats &s) { copy = s; });
  return copy;
}
void strata::reset_eval_stats() {
  countStats([](EvalStats &s) { s = {}; });
}
void strata::set_program_cache_capacity(int64_t programs, SourceLoc loc) {
  if (programs < 1)
    fail("set_program_cache_capacity: expected at least 1 program, got " +
             std::to_string(programs),
         "pass a positive bound (1 keeps only the program that ran last)", loc);
  detail::programCacheCapacity() = programs;
  cache().trim();
  detail::trimGradientPrograms();
}
int64_t strata::program_cache_capacity() {
  return detail::programCacheCapacity().load();
}
int64_t strata::program_cache_size() {
  return cache().size() + detail::trimGradientPrograms();
}
void strata::detail::countProgramRun(int64_t kernels, bool compiled) {
  countStats([&](EvalStats &s) {
    ++s.programs;
    ++(compiled ? s.compiles : s.cacheHits);
    s.kernels += kernels;
  });
}

strata::detail::BoundaryEvaluation::BoundaryEvaluation()
    : was(tBoundaryEvaluation) {
  tBoundaryEvaluation = true;
}
strata::detail::BoundaryEvaluation::~BoundaryEvaluation() {
  tBoundaryEvaluation = was;
}

void strata::detail::writeScalar(const Node &n, void *p) {
  auto iv = [&n] { return n.exact ? n.ia : static_cast<int64_t>(n.a); };
  if (n.dtype == DType::F32) // (an int64 rounded once, as PyTorch's)
    *static_cast<float *>(p) =
        n.exact ? static_cast<float>(n.ia) : static_cast<float>(n.a);
  else if (n.dtype == DType::F64)
    *static_cast<double *>(p) = n.exact ? static_cast<double>(n.ia) : n.a;
  else if (n.dtype == DType::I32)
    *static_cast<int32_t *>(p) =
        static_cast<int32_t>(static_cast<uint32_t>(iv()));
  else
    *static_cast<int64_t *>(p) = iv();
}
