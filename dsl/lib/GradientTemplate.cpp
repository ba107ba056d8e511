//===- GradientTemplate.cpp - gradient programs run again without building ===//
//
// A backward's gradient program is a function of the graph's structure:
// its ops, their attributes, types, layouts and edges, which values are
// arguments. Building it (GradientRun::emit: an ir::Program, op by op,
// and its key's digest) cost a quarter of a long backward in segments,
// whose segments mostly repeat one structure, and of a training loop's
// backward, step after step (docs/performance.md). A run whose structure
// was seen before takes its program and the places of its arguments from
// the template that run kept, and builds nothing.
//
// The structure is the key itself, compared whole (an unordered map of
// word vectors: no hash collision can pair two structures): every field of the
// graph that placeArguments() and emit() read, in the order they read it.
// Runs with what templates do not describe build their program as
// before: create_graph, CUDA, non-leaf or dense targets, masked reads.
// STRATA_CHECK_TEMPLATES=1 builds the program anyway on every template hit
// and fails where the key or an argument differs (the tests run with it).
//
//===----------------------------------------------------------------------===//
#include "Eval.h"
#include "GradientRun.h"
#include "ProgramCache.h"
#include "strata/Runtime/Settings.h"

#include <cstring>
#include <mutex>
#include <unordered_map>

using namespace strata;
using namespace strata::detail;

namespace strata::detail::engine {

struct GradientTemplate {
  /// The program (the cache's: a program it evicted is built again).
  std::weak_ptr<jit::PreparedFunction> program;
  /// Each leaf argument's window, each constant's (size -1: whole).
  std::vector<std::pair<int64_t, int64_t>> leafWindows, constWindows;
  /// The scalar arguments: the op's index in the graph's ops, f64-wide.
  std::vector<std::pair<uint32_t, bool>> scalars;
  /// STRATA_CHECK_TEMPLATES: the program's key, to compare.
  std::string programKey;
};

namespace {

/// Runs of more ops keep no template (the most a graph runs as one
/// program, SegmentedBackward.cpp's kOneProgramOps).
constexpr size_t kMaxTemplateOps = 4096;
/// The most bytes of keys the templates hold (~150 bytes an op).
constexpr size_t kTemplateBytes = size_t(16) << 20;

/// The templates by structure; past kTemplateBytes of keys, the least
/// recently used go first.
class Templates {
public:
  using Key = std::vector<uint64_t>;
  std::shared_ptr<const GradientTemplate> find(const Key &key) {
    std::lock_guard<std::mutex> guard(mutex);
    auto it = map.find(key);
    if (it == map.end())
      return nullptr;
    it->second.used = ++clock;
    return it->second.t;
  }
  void keep(const Key &key, std::shared_ptr<const GradientTemplate> t) {
    std::vector<std::shared_ptr<const GradientTemplate>> dropped;
    std::lock_guard<std::mutex> guard(mutex);
    auto [it, fresh] = map.try_emplace(key);
    if (fresh)
      bytes += key.size() * sizeof(uint64_t);
    else
      dropped.push_back(std::move(it->second.t));
    it->second = {std::move(t), ++clock};
    while (bytes > kTemplateBytes && map.size() > 1) {
      auto oldest = map.begin();
      for (auto i = map.begin(); i != map.end(); ++i)
        if (i->second.used < oldest->second.used)
          oldest = i;
      bytes -= oldest->first.size() * sizeof(uint64_t);
      dropped.push_back(std::move(oldest->second.t));
      map.erase(oldest);
    }
  }

private:
  struct Entry {
    std::shared_ptr<const GradientTemplate> t;
    uint64_t used = 0;
  };
  std::mutex mutex;
  /// At most 512 of a key's words, evenly spread, hashed (a segment's key
  /// is ~5,000 words; all of them took as long as the rest of the lookup):
  /// keys are compared whole, so a collision costs a comparison, no more.
  struct Hash {
    size_t operator()(const Key &k) const {
      uint64_t h = k.size();
      for (size_t i = 0, step = k.size() / 512 + 1; i < k.size(); i += step)
        mixHash(h, k[i]);
      return h;
    }
  };
  struct Equal {
    bool operator()(const Key &a, const Key &b) const {
      return a.size() == b.size() &&
             memcmp(a.data(), b.data(), a.size() * sizeof(uint64_t)) == 0;
    }
  };
  std::unordered_map<Key, Entry, Hash, Equal> map;
  size_t bytes = 0;
  uint64_t clock = 0;
};

Templates &templates() {
  static Templates *t = new Templates; // (used by threads at exit)
  return *t;
}

/// A structure's words (appended inline: a segment's key is ~2,500).
struct KeyWriter {
  std::vector<uint64_t> out;
  void word(uint64_t v) { out.push_back(v); }
  void ptr(const void *p) { word(reinterpret_cast<uintptr_t>(p)); }
  void shape(const Shape &s) {
    word(s.size());
    for (int64_t x : s)
      word(static_cast<uint64_t>(x));
  }
  void layout(const layout::Layout &l) {
    shape(l.sizes);
    shape(l.strides);
    word(static_cast<uint64_t>(l.offset));
  }
  void real(double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    word(bits);
  }
};

} // namespace

bool GradientRun::keyTemplate() {
  if (createGraph || !perturbs.empty() || !denseLeaves.empty() ||
      !denseChains.empty() || !readMask.empty() || !perturbChain.empty() ||
      g.ops.size() > kMaxTemplateOps)
    return false;
  chooseDevice();
  if (onCuda)
    return false;
  numberArguments();
  // Each value's name in the key: ops by position, then constants, held
  // in the nodes (Node::mark for an epoch of this run's, `index`: the
  // name), as a walk's are: nothing is evaluated while the key is made.
  const uint64_t epoch = nextEpoch();
  for (size_t i = 0; i < g.ops.size(); ++i) {
    g.ops[i]->mark = epoch;
    g.ops[i]->index = static_cast<int32_t>(i);
  }
  for (size_t j = 0; j < g.constArgs.size(); ++j)
    if (g.constArgs[j]->mark != epoch) {
      g.constArgs[j]->mark = epoch;
      g.constArgs[j]->index = static_cast<int32_t>(g.ops.size() + j);
    }
  KeyWriter w;
  w.out.reserve(g.ops.size() * 24 + 64);
  bool named = true;
  auto nameOf = [&](const Node *n) {
    if (n->mark != epoch) {
      named = false; // (a value the program does not name: no template)
      return uint64_t(0);
    }
    return static_cast<uint64_t>(n->index);
  };
  auto operand = [&](const Operand &in) {
    if (auto leaf = leafOfEdge(in)) {
      w.word(1);
      w.word(g.leafIndex.at({in.node.get(), leaf.get()}));
    } else {
      // (deadLeafEdge of an edge to no leaf.)
      bool dead = !in.noGrad && leafRead(in);
      const Node *h = historyOf(in).get();
      bool constant = constantEdgeToNoLeaf(in);
      w.word(2 | uint64_t(constant) << 2 | uint64_t(dead) << 3 |
             uint64_t(in.history != nullptr) << 4);
      w.word(nameOf(in.node.get()));
      if (!constant)
        w.word(nameOf(h));
    }
    w.word(uint64_t(in.noGrad) | uint64_t(in.cutView) << 1 |
           uint64_t(in.view != nullptr) << 2 |
           uint64_t(in.view && in.view->anyAsStrided) << 3);
    w.layout(in.layout);
  };
  w.word(numOutputs | uint64_t(seeds != nullptr) << 32 | uint64_t(all) << 33 |
         uint64_t(hooks) << 34 | uint64_t(tBoundaries != nullptr) << 35);
  w.word(targets.size());
  // (grad()'s targets, given: which leaves each is.)
  for (size_t ti = 0; !all && ti < targets.size(); ++ti) {
    w.word(~uint64_t(0));
    for (size_t k = 0; k < g.leafArgs.size(); ++k)
      if (g.leafArgs[k].leaf == targets[ti].impl)
        w.word(k);
  }
  for (const Graph::LeafArg &a : g.leafArgs) {
    const TensorImpl &leaf = *a.leaf;
    w.word(static_cast<uint64_t>(a.node->dtype) |
           uint64_t(reachedLeaves.count(&leaf)) << 8 |
           uint64_t(tBoundaries && tBoundaries->count(a.node.get())) << 9 |
           uint64_t(static_cast<uint8_t>(leaf.dtype)) << 16);
    w.word(static_cast<uint64_t>(a.node->rootNumel));
    w.layout(leaf.layout);
  }
  for (const NodePtr &c : g.constArgs) {
    w.word(static_cast<uint64_t>(c->dtype) | uint64_t(c->isStorageValue())
                                                 << 8);
    w.word(static_cast<uint64_t>(c->rootNumel));
    w.layout(c->resultLayout());
  }
  for (const NodePtr &np : g.ops) {
    const Node &n = *np;
    bool scalar = scalarNodes.count(&n) > 0;
    w.word(static_cast<uint64_t>(n.op) | uint64_t(n.dtype) << 8 |
           uint64_t(static_cast<uint8_t>(n.device)) << 16 |
           uint64_t(n.requiresGrad) << 24 | uint64_t(n.keepdim) << 25 |
           uint64_t(n.exact) << 26 | uint64_t(n.scanGradInSource) << 27 |
           uint64_t(n.passHistory) << 28 | uint64_t(n.isStorageValue()) << 29 |
           uint64_t(n.requiresGrad && freshBuffer(n)) << 30 |
           uint64_t(scalar) << 31 | uint64_t(wideExponents.count(&n)) << 32 |
           uint64_t(powByArgument.count(&n)) << 33 | uint64_t(n.dimList) << 34 |
           uint64_t(n.userCast) << 35 | uint64_t(n.viewWrite) << 36 |
           uint64_t(n.buffer != nullptr) << 37);
    w.ptr(n.name);
    w.ptr(n.inplaceOp);
    w.ptr(n.compositeName());
    w.word(static_cast<uint64_t>(n.rootNumel));
    w.shape(n.sizes);
    w.shape(n.strides);
    w.shape(n.dims());
    if (!scalar) { // (a scalar argument's value is not the program's)
      w.real(n.a);
      w.real(n.b);
      w.word(static_cast<uint64_t>(n.ia));
      w.word(static_cast<uint64_t>(n.ib));
    }
    const auto &inputs = n.requiresGrad ? n.gradIn() : n.inputs;
    w.word(inputs.size());
    for (const Operand &in : inputs)
      operand(in);
  }
  w.word(~uint64_t(0));
  for (size_t i = 0; i < outEdges.size(); ++i) {
    operand(outEdges[i]);
    w.shape(outSizes[i]);
    w.word(static_cast<uint64_t>(outTypes[i]));
  }
  if (!named)
    return false;
  templateKey = std::move(w.out);
  return true;
}

bool GradientRun::argumentsFromTemplate() {
  found = templates().find(templateKey);
  if (!found)
    return false;
  foundProgram = found->program.lock();
  if (!foundProgram || found->leafWindows.size() != g.leafArgs.size() ||
      found->constWindows.size() != g.constArgs.size()) {
    found = nullptr;
    foundProgram = nullptr;
    return false;
  }
  // In placeArguments' and emit's order: leaves, constants, recorded
  // values, scalars.
  leafWindow = found->leafWindows;
  for (size_t k = 0; k < g.leafArgs.size(); ++k) {
    const Graph::LeafArg &a = g.leafArgs[k];
    storageValue(a.node.get(), a.node->buffer, &leafWindow[k]);
  }
  for (size_t j = 0; j < g.constArgs.size(); ++j)
    storageValue(g.constArgs[j].get(), g.constArgs[j]->buffer,
                 &found->constWindows[j]);
  for (const NodePtr &n : g.ops)
    if (n->requiresGrad && freshBuffer(*n))
      storageValue(n.get(), n->buffer, nullptr);
  // (Their values in one block, Storage::createSmall: not a storage each.)
  std::vector<size_t> bytes;
  for (auto [i, wide] : found->scalars)
    for (int k = 0; k < (g.ops[i]->op == Op::Arange ? 2 : 1); ++k)
      bytes.push_back(elementSize(scalarArgDType(*g.ops[i], wide)));
  std::vector<runtime::StoragePtr> slots = runtime::Storage::createSmall(bytes);
  size_t used = 0;
  for (auto [i, wide] : found->scalars) {
    const Node &n = *g.ops[i];
    for (int k = 0; k < (n.op == Op::Arange ? 2 : 1); ++k) {
      jit::JitValue v;
      v.dtype = toJitDType(scalarArgDType(n, wide));
      v.buffer = std::move(slots[used++]);
      writeScalarArg(n, k, wide, v.buffer->data());
      v.sizes = {1};
      v.strides = {1};
      v.isStorage = true;
      args.push_back(std::move(v));
    }
  }
  ++gTemplates;
  if (runtime::settings::checkTemplates())
    checkTemplate();
  return true;
}

void GradientRun::keepTemplate(
    const std::shared_ptr<jit::PreparedFunction> &program) {
  auto t = std::make_shared<GradientTemplate>();
  t->program = program;
  t->leafWindows = leafWindow;
  for (const NodePtr &c : g.constArgs) {
    auto w = window.find(c.get());
    t->constWindows.push_back(w == window.end()
                                  ? std::make_pair(int64_t(0), int64_t(-1))
                                  : w->second);
  }
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (scalarNodes.count(g.ops[i].get()))
      t->scalars.push_back(
          {static_cast<uint32_t>(i), wideExponents.count(g.ops[i].get()) > 0});
  if (runtime::settings::checkTemplates())
    t->programKey = prog.key();
  templates().keep(templateKey, std::move(t));
}

void GradientRun::checkTemplate() {
  // The template's arguments against those placeArguments() and emit()
  // give, and the program's key against the template's.
  std::vector<jit::JitValue> fromTemplate = std::move(args);
  size_t scalars = 0;
  for (auto [i, wide] : found->scalars)
    scalars += g.ops[i]->op == Op::Arange ? 2 : 1;
  const size_t firstScalar = fromTemplate.size() - scalars;
  auto kept = std::move(argRoots);
  args.clear();
  argRoots.clear();
  placeArguments();
  bool built = emit();
  auto differs = [&](const std::string &what) {
    fail("strata's gradient template differs from the program built for it (" +
             what + ")",
         "this is a strata bug; run without STRATA_CHECK_TEMPLATES to "
         "use the template as it is",
         loc);
  };
  if (!built || prog.key() != found->programKey)
    differs("program");
  if (args.size() != fromTemplate.size())
    differs("argument count");
  for (size_t i = 0; i < args.size(); ++i) {
    const jit::JitValue &a = args[i], &b = fromTemplate[i];
    bool scalar = i >= firstScalar && a.buffer && b.buffer;
    if (a.dtype != b.dtype || a.sizes != b.sizes || a.strides != b.strides ||
        a.isStorage != b.isStorage || !a.buffer != !b.buffer ||
        (a.buffer && a.buffer->nbytes() != b.buffer->nbytes()) ||
        (a.buffer && !scalar && a.buffer->data() != b.buffer->data()) ||
        (scalar &&
         memcmp(a.buffer->data(), b.buffer->data(), a.buffer->nbytes()) != 0))
      differs("argument " + std::to_string(i));
  }
}

} // namespace strata::detail::engine
