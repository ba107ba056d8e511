//===- Autograd.cpp - grad mode, the recorded graph and grad_fn names -----===//
//
// The autograd graph is the trace itself: a node that requires grad keeps
// its inputs (`gradInputs`) after evaluation, the versions of what it saves
// for backward, and the leaf it reads when it reads a leaf's data. GradFn
// wraps such a node and names it as PyTorch does.
//
//===----------------------------------------------------------------------===//
#include "Impl.h"

#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>

using namespace strata;
using namespace strata::detail;

namespace {
/// Thread-local, as PyTorch's grad mode: a NoGradGuard in one thread does
/// not change what other threads record.
thread_local bool gGradEnabled = true;
std::atomic<bool> gAnomaly{false};

bool is(const Node &n, const char *name) {
  return std::string_view(n.name) == name;
}

/// The ops whose backward reads the result (PyTorch saves `result`).
bool savesResult(const Node &n) {
  for (const char *s : {"exp", "sqrt", "tanh", "sigmoid", "relu", "tan", "exp2",
                        "expm1", "rsqrt", "reciprocal"})
    if (is(n, s))
      return true;
  return false;
}

/// The unary ops whose backward reads their input (PyTorch saves `self`,
/// derivatives.yaml).
bool savesInput(const Node &n) {
  for (const char *s : {"log", "abs", "sin", "cos", "asin", "acos", "atan",
                        "sinh", "cosh", "log2", "log10", "log1p", "erf", "gelu",
                        "gelu_tanh", "silu", "softplus", "square"})
    if (is(n, s))
      return true;
  return false;
}

/// A differentiable view: made by a view op in grad mode, over its base's
/// storage (not detach(), not a copying reshape).
bool isDiffView(const TensorImpl &t) { return t.gradBase != nullptr; }

/// The tensor whose autograd history `t` shares: the base of a
/// differentiable view, else `t` (detach() starts a new one).
const TensorImpl &autogradIdentity(const TensorImpl &t) {
  return t.gradBase ? *t.gradBase : t;
}

/// The version whose history a read of version `n` through identity `id`
/// continues: `n`, or the version before the in-place writes other
/// identities made with history (their history is theirs).
const NodePtr &historyFor(const NodePtr &n, const TensorImpl &id) {
  // Skipped: writes through another autograd identity (across a detach()),
  // and untracked writes (no-grad mode, passHistory): neither changes this
  // identity's history. An untracked write through this identity right
  // over that history is returned (it continues it). Iterative: 10^5
  // writes in a row.
  const NodePtr *h = &n, *above = nullptr;
  while ((*h)->op == Op::Write && (*h)->requiresGrad &&
         (*h)->gradIn().size() == 2) {
    if (!(*h)->passHistory && (*h)->writer.lock().get() == &id)
      break;
    above = h;
    h = &(*h)->gradIn()[1].node;
  }
  if (above && (*above)->passHistory) {
    // It continues its writer's history: this identity's only when written
    // through it (d = h.detach(); d.add_(x); h.mul_(2) under no_grad: a
    // read of d passes its gradient to d's add_, as PyTorch's d.grad_fn).
    auto writer = (*above)->writer.lock();
    if (!writer || writer.get() == &id)
      return *above;
  }
  return *h;
}

/// The node whose grad_fn `n` shows: a full in-place write shows its op.
const Node *shown(const Node *n) {
  auto ownNode = [](const Node *w) { // CopyBackwards, FillBackward2, ...
    std::string_view op = w->inplaceOp ? w->inplaceOp : "copy_";
    return op == "copy_" || op == "fill_" || op == "zero_";
  };
  while (n->op == Op::Write && !n->viewWrite && !ownNode(n) &&
         n->inputs.size() + n->gradIn().size() > 0) {
    const auto &in = n->gradIn().empty() ? n->inputs : n->gradIn();
    const Node *v = in[0].node.get();
    if (!v->requiresGrad || v->op == Op::Write)
      break;
    // A cast inserted by promotion is not a node of PyTorch's graph.
    while (v->op == Op::Cast && !v->userCast && !v->gradIn().empty() &&
           v->gradIn()[0].node->requiresGrad)
      v = v->gradIn()[0].node.get();
    return v;
  }
  return n;
}

/// Whether `o` reads a C++ number: a 0-d fill on no device in particular
/// (scalarTensor), maybe cast by promotion.
bool isNumber(const Operand &o) {
  const Node *v = o.node.get();
  while (v && v->op == Op::Cast && !v->inputs.empty())
    v = v->inputs[0].node.get();
  // (Only numbers are on no device: a cast of one evaluated since, its
  // input released, is one too.)
  return v && (v->op == Op::Fill || v->op == Op::Cast) && v->device == kDevAny;
}

/// Whether `o` reads a bool tensor (not a number) cast by promotion.
bool boolTensorCast(const Operand &o) {
  const Node *e = o.node.get();
  while (e && e->op == Op::Cast && e->dtype != DType::Bool &&
         !e->inputs.empty() && e->inputs[0].node->dtype != DType::Bool)
    e = e->inputs[0].node.get();
  return e && e->op == Op::Cast && !e->inputs.empty() &&
         e->inputs[0].node->dtype == DType::Bool && !isNumber(o);
}

std::string nameOf(const Node &n) {
  static const std::pair<const char *, const char *> names[] = {
      {"add", "AddBackward0"},
      {"sub", "SubBackward0"},
      {"mul", "MulBackward0"},
      {"div", "DivBackward0"},
      {"neg", "NegBackward0"},
      {"abs", "AbsBackward0"},
      {"exp", "ExpBackward0"},
      {"log", "LogBackward0"},
      {"sqrt", "SqrtBackward0"},
      {"relu", "ReluBackward0"},
      {"sigmoid", "SigmoidBackward0"},
      {"tanh", "TanhBackward0"},
      {"cumsum", "CumsumBackward0"},
      {"cumprod", "CumprodBackward0"},
      {"amax", "AmaxBackward0"},
      {"amin", "AminBackward0"},
      {"where", "WhereBackward0"},
      {"maximum", "MaximumBackward0"},
      {"minimum", "MinimumBackward0"},
      {"atan2", "Atan2Backward0"},
      {"floor_divide", "NotImplemented"},
      {"cast", "ToCopyBackward0"},
      {"copy", "CloneBackward0"},
      {"contiguous", "CloneBackward0"},
      {"sin", "SinBackward0"},
      {"cos", "CosBackward0"},
      {"tan", "TanBackward0"},
      {"asin", "AsinBackward0"},
      {"acos", "AcosBackward0"},
      {"atan", "AtanBackward0"},
      {"sinh", "SinhBackward0"},
      {"cosh", "CoshBackward0"},
      {"exp2", "Exp2Backward0"},
      {"expm1", "Expm1Backward0"},
      {"log2", "Log2Backward0"},
      {"log10", "Log10Backward0"},
      {"log1p", "Log1PBackward0"},
      {"rsqrt", "RsqrtBackward0"},
      {"reciprocal", "ReciprocalBackward0"},
      {"square", "PowBackward0"}, // torch.square is pow(x, 2)
      {"sign", "SignBackward0"},
      {"floor", "FloorBackward0"},
      {"ceil", "CeilBackward0"},
      {"round", "RoundBackward0"},
      {"trunc", "TruncBackward0"},
      {"erf", "ErfBackward0"},
      {"gelu", "GeluBackward0"},
      {"gelu_tanh", "GeluBackward0"},
      {"silu", "SiluBackward0"},
      {"softplus", "SoftplusBackward0"},
      {"gather", "GatherBackward0"},
      {"scatter", "ScatterBackward0"},
      {"scatter_add", "ScatterAddBackward0"}};
  const auto &in = n.gradIn();
  if (n.compositeName)
    return n.compositeName;
  if (n.op == Op::Write) {
    if (n.viewWrite)
      return "CopySlices";
    std::string op = n.inplaceOp ? n.inplaceOp : "copy_";
    if (op == "copy_")
      return "CopyBackwards";
    if (op == "fill_")
      return "FillBackward2"; // fill_.Scalar (derivatives.yaml's third)
    op.pop_back();
    op[0] = static_cast<char>(toupper(op[0]));
    return op + "Backward0";
  }
  if (is(n, "sum"))
    return n.dimList ? "SumBackward1" : "SumBackward0";
  if (is(n, "mean"))
    return n.dimList ? "MeanBackward1" : "MeanBackward0";
  if (is(n, "prod"))
    return n.dimList ? "ProdBackward1" : "ProdBackward0";
  auto number = [&](size_t i) { return i < in.size() && isNumber(in[i]); };
  if (is(n, "pow")) // pow(Tensor, Scalar), pow(Tensor, Tensor), pow(Scalar, ..)
    return number(1)   ? "PowBackward0"
           : number(0) ? "PowBackward2"
                       : "PowBackward1";
  if (is(n, "sub") && number(0))
    return "RsubBackward1"; // number - t is rsub(t, number)
  if (is(n, "fmod"))        // fmod(Tensor, Scalar), fmod(Tensor, Tensor)
    return number(1) ? "FmodBackward0" : "FmodBackward1";
  if (is(n, "remainder"))
    return number(1) ? "RemainderBackward0" : "RemainderBackward1";
  if (is(n, "lerp")) // lerp(.., Scalar weight), lerp(.., Tensor weight)
    return number(2) ? "LerpBackward0" : "LerpBackward1";
  if (is(n, "matmul") && in.size() == 2) {
    size_t a = in[0].layout.sizes.size(), b = in[1].layout.sizes.size();
    if (a == 1 && b == 1)
      return "DotBackward0";
    if (a == 2 && b == 1)
      return "MvBackward0";
    if (a == 2 && b == 2)
      return "MmBackward0";
    return "BmmBackward0";
  }
  for (const auto &[op, name] : names)
    if (is(n, op))
      return name;
  return std::string(n.name) + "Backward";
}

/// PyTorch 1.13's grad_fn of view op `v` (scripts/gen_autograd_golden.py
/// checks them against torch).
std::string viewName(const ViewChain &v) {
  static const std::pair<const char *, const char *> names[] = {
      {"t", "TBackward0"},
      {"transpose", "TransposeBackward0"},
      {"permute", "PermuteBackward0"},
      {"view", "ViewBackward0"},
      {"reshape", "ReshapeAliasBackward0"},
      {"flatten", "ReshapeAliasBackward0"},
      {"slice", "SliceBackward0"},
      {"narrow", "SliceBackward0"},
      {"select", "SelectBackward0"},
      {"expand", "ExpandBackward0"},
      {"unsqueeze", "UnsqueezeBackward0"},
      {"as_strided", "AsStridedBackward0"},
      {"diagonal", "DiagonalBackward0"},
      {"unfold", "UnfoldBackward0"},
      {"flip", "FlipBackward0"}};
  std::string_view op = v.op;
  if (op == "squeeze")
    return v.args.empty() ? "SqueezeBackward0" : "SqueezeBackward1";
  for (const auto &[o, name] : names)
    if (op == o)
      return name;
  return std::string(v.op) + "Backward";
}

/// The leaf requiring grad whose data `t` reads (t itself, or the leaf a
/// chain of differentiable views starts at); null when `t` reads a history.
const TensorImpl *leafOf(const TensorImpl &t) {
  if (t.requiresGrad && t.isLeaf && (!isDiffView(t) || !viewHasGradFn(t)))
    return &t;
  const TensorImpl *b = t.gradBase;
  return b && b->requiresGrad && b->isLeaf ? b : nullptr;
}
} // namespace

//===--- Hooks ------------------------------------------------------------===//

bool strata::detail::gradEnabled() { return gGradEnabled; }

namespace {
/// A view's grad_fn regenerated for the root's current version (PyTorch
/// keeps it, whatever its base's requires_grad becomes).
bool regenerated(const TensorImpl &t) {
  return t.regenChain && t.regenVersion == t.root->version;
}
} // namespace

bool strata::detail::requiresGradOf(const TensorImpl &t) {
  // PyTorch: requires_grad_, or a grad_fn, or a view of a base requiring it.
  return t.requiresGrad ||
         (t.gradBase &&
          (t.viewGradFn || t.gradBase->requiresGrad || regenerated(t)));
}

bool strata::detail::viewHasGradFn(const TensorImpl &t) {
  return t.viewGradFn || (t.root->version != t.viewVersion &&
                          (t.gradBase->requiresGrad || regenerated(t)));
}

bool strata::detail::isLeafOf(const TensorImpl &t) {
  if (!requiresGradOf(t))
    return true;
  return isDiffView(t) ? !viewHasGradFn(t) : t.isLeaf;
}

bool strata::detail::gradFnFieldIsNull(const TensorImpl &t) {
  if (!requiresGradOf(t))
    return true;
  return isDiffView(t) ? t.isLeaf && !t.viewGradFn && !t.regenChain : t.isLeaf;
}

bool strata::detail::gradGoesNowhere(const TensorImpl &t,
                                     const ViewChain *chain) {
  return isDiffView(t) &&
         (chain ? chain->cut : !(t.requiresGrad && isLeafOf(t)));
}

void strata::detail::setGradEdge(Operand &o, const TensorImpl &t) {
  // A view without a grad_fn, or made of one, is an edge to nothing: its
  // gradient is dropped, as PyTorch's (the view is no leaf of its own).
  o.noGrad = !requiresGradOf(t) || gradGoesNowhere(t, o.view.get());
  o.cutView = o.noGrad && o.view && requiresGradOf(t) && gGradEnabled;
  if (!o.noGrad) {
    if (o.view && !o.view->leafView.expired())
      o.leaf = o.view->leafView;
    else if (const TensorImpl *leaf = leafOf(t))
      o.leaf = const_cast<TensorImpl *>(leaf)->weak_from_this();
    else if (const NodePtr &h = historyFor(o.node, autogradIdentity(t));
             h != o.node)
      o.history = h;
  }
  o.noGrad |= !gGradEnabled;
}
bool strata::is_grad_enabled() { return gGradEnabled; }
NoGradGuard::NoGradGuard() : previous_(gGradEnabled) { gGradEnabled = false; }
NoGradGuard::~NoGradGuard() { gGradEnabled = previous_; }
AutoGradMode::AutoGradMode(bool enabled) : previous_(gGradEnabled) {
  gGradEnabled = enabled;
}
AutoGradMode::~AutoGradMode() { gGradEnabled = previous_; }
void strata::set_detect_anomaly(bool enabled) { gAnomaly = enabled; }
bool strata::is_anomaly_enabled() { return gAnomaly; }

std::shared_ptr<const ViewChain>
strata::detail::viewChainOf(const TensorImpl &t) {
  // (A copy keeps viewOp and base for explain(): not a view, another root.)
  if (!isDiffView(t) || !requiresGradOf(t) || !viewHasGradFn(t))
    return nullptr;
  if (t.root->version != t.viewVersion) {
    // Written in place since it was made: PyTorch regenerates the grad_fn,
    // once per version, as an as_strided of the base's new history.
    if (!t.regenChain || t.regenVersion != t.root->version) {
      auto chain = std::make_shared<ViewChain>();
      chain->op = "as_strided";
      chain->args = t.layout.sizes;
      chain->loc = t.loc;
      t.regenChain = std::move(chain);
      t.regenVersion = t.root->version;
    }
    return t.regenChain;
  }
  if (!t.viewChain) {
    auto chain = std::make_shared<ViewChain>();
    chain->op = t.viewOp;
    chain->args = t.viewArgs;
    chain->loc = t.loc;
    const TensorImpl &base = *t.base;
    if (std::string_view(t.viewOp) == "as_strided")
      chain->asStridedInput = base.layout;
    chain->next = viewChainOf(base);
    chain->anyAsStrided = chain->asStridedInput.has_value() ||
                          (chain->next && chain->next->anyAsStrided);
    if (chain->next) {
      chain->cut = chain->next->cut;
      chain->leafView = chain->next->leafView;
    } else if (isDiffView(base)) {
      // A view without grad_fn below: a leaf of its own, or the gradient
      // goes nowhere.
      if (base.requiresGrad && isLeafOf(base))
        chain->leafView = const_cast<TensorImpl &>(base).weak_from_this();
      else
        chain->cut = true;
    }
    t.viewChain = std::move(chain);
  }
  return t.viewChain;
}

void strata::detail::markGradLeaf(const std::shared_ptr<TensorImpl> &t) {
  if (!gGradEnabled || !requiresGradOf(*t))
    return;
  Node &n = *t->root->current;
  if (n.requiresGrad || !n.gradLeaf.expired())
    return;
  // The leaf: t itself, or the leaf its view chain starts at.
  if (const TensorImpl *leaf = leafOf(*t))
    n.gradLeaf = const_cast<TensorImpl *>(leaf)->weak_from_this();
}

void strata::detail::saveInput(Node &node, const Operand &input, int index) {
  // PyTorch saves the tensor the user passed, before type promotion
  // (maximum(f32, i32) saves the int tensor): an in-place write to it
  // is caught though the op read a cast of it.
  const Operand *o = &input;
  while (o->node->op == Op::Cast && !o->node->userCast &&
         !o->node->inputs.empty())
    o = &o->node->inputs[0];
  if (auto r = o->node->root.lock()) {
    node.saved.push_back(
        {r, r->version, o->layout.sizes, recordOf(*r), {}, index});
    o->node->keepData = true;
    input.node->keepData = true;
  }
}

std::shared_ptr<const VersionRecord>
strata::detail::recordOf(StorageRoot &root) {
  if (!root.record) {
    root.record = std::make_shared<VersionRecord>();
    root.record->version = root.version;
    root.record->current = root.current;
    root.record->dtype = root.dtype;
    root.record->writeLocs = root.writeLocs;
  }
  return root.record;
}

void strata::detail::setGradWeight(Node &node) {
  constexpr int64_t kCap = int64_t(1) << 40;
  int64_t w = 1;
  for (const Operand &in : node.gradIn())
    if (!in.noGrad && in.node->requiresGrad)
      w = std::min(kCap, w + in.node->gradWeight);
  node.gradWeight = w;
}

void strata::detail::recordGradNode(Node &node) {
  node.requiresGrad = true;
  node.gradSharesInputs = true;
  setGradWeight(node);
  // PyTorch's saved tensors (derivatives.yaml): an input is saved only when
  // a gradient that needs it is computed (x * 2 saves the 2, not x).
  const std::vector<Operand> &in = node.inputs;
  auto rg = [&](size_t i) { // PyTorch's should_compute_output(i)
    return i < in.size() && (!in[i].noGrad || in[i].cutView);
  };
  auto save = [&](size_t i) {
    if (i < in.size())
      saveInput(node, in[i], static_cast<int>(i));
  };
  auto saveResult = [&] {
    auto root = node.root.lock();
    node.saved.push_back({node.root, 0, node.sizes,
                          root ? recordOf(*root) : nullptr,
                          node.weak_from_this()});
    node.keepData = true;
  };
  if (node.op == Op::Index) { // the index (PyTorch saves it)
    save(1);
  } else if (is(node, "mul") || is(node, "matmul")) {
    if (rg(0))
      save(1);
    if (rg(1))
      save(0);
  } else if (is(node, "div")) {
    // `other` is in both formulas: saved whenever an input requires grad,
    // even one whose gradient goes nowhere (a view made in no-grad mode);
    // a saved input used by one formula only is saved when that gradient
    // is computed (PyTorch's should_compute_output).
    save(1);
    if (rg(1))
      save(0);
  } else if (is(node, "pow")) {
    save(0);
    save(1);
    // A bool exponent tensor, cast by promotion (see Node::boolExponent;
    // pow(x, False), a number, computes).
    node.boolExponent = in.size() == 2 && boolTensorCast(in[1]);
    // pow(Tensor, Tensor) and pow(Scalar, Tensor) save their result
    // whether or not the exponent's gradient is computed (PowBackward1/2).
    if (rg(1) || !isNumber(in[1]))
      saveResult();
  } else if (is(node, "maximum") || is(node, "minimum") || is(node, "atan2")) {
    if (is(node, "atan2")) // a bool self cast by promotion (boolSelf)
      node.boolSelf = in.size() == 2 && boolTensorCast(in[0]);
    save(0);
    save(1);
  } else if (is(node, "fmod") || is(node, "remainder")) {
    if (rg(1)) { // other: -grad * self.div(other, rounding_mode)
      save(0);
      save(1);
    }
  } else if (is(node, "lerp")) {
    if (!isNumber(in[2])) { // lerp.Tensor: weight; self and end when
      save(2);              // weight's gradient (end - self) is computed
      if (rg(2)) {
        save(0);
        save(1);
      }
    }
  } else if (savesInput(node)) {
    save(0);
  } else if (is(node, "amax") || is(node, "amin") || is(node, "prod") ||
             is(node, "cumprod")) {
    save(0);
    saveResult();
  } else if (is(node, "where") || (is(node, "mean") && node.dimList)) {
    save(0); // (MeanBackward1 saves self in PyTorch 1.13)
  } else if (savesResult(node)) {
    saveResult();
  }
}

void strata::detail::checkViewRead(const TensorImpl &t, const SourceLoc &loc,
                                   bool anyMode) {
  if (!(gGradEnabled || anyMode) || !isDiffView(t) || !t.noGradView ||
      t.root->version == t.viewVersion || !t.gradBase->requiresGrad)
    return;
  fail("A view was created in no_grad mode and its base or another view of "
       "its base has been modified inplace with grad mode enabled. Given "
       "that this use case is ambiguous and error-prone, it is forbidden. "
       "You can clarify your code by moving both the view and the inplace "
       "either both inside the no_grad block (if you don't want the inplace "
       "to be tracked) or both outside (if you want the inplace to be "
       "tracked).",
       "take the view again after the in-place write, or read it in no-grad "
       "mode",
       loc);
}

void strata::detail::checkInplace(const TensorImpl &dest,
                                  const TensorImpl &value, const char *op,
                                  const SourceLoc &loc) {
  if (!gGradEnabled)
    return;
  bool destGrad = requiresGradOf(dest);
  if (!destGrad && !requiresGradOf(value))
    return;
  // A destination of an integer or bool dtype records no autograd (its
  // result cannot require grad): PyTorch checks nothing.
  if (!isFloatingPoint(dest.dtype))
    return;
  if (isDiffView(dest) && dest.noGradView)
    fail(std::string(op) +
             ": A view was created in no_grad mode and is being modified "
             "inplace with grad mode enabled. Given that this use case is "
             "ambiguous and error-prone, it is forbidden. You can clarify "
             "your code by moving both the view and the inplace either both "
             "inside the no_grad block (if you don't want the inplace to be "
             "tracked) or both outside (if you want the inplace to be "
             "tracked).",
         "make the view and the in-place write in the same grad mode", loc);
  if (!destGrad)
    return;
  // PyTorch's check_inplace: a view of a leaf first, then a leaf as its
  // grad_fn field stands (a view's grad_fn is regenerated only when read,
  // so a view made before its base required grad is still a leaf here).
  if (isDiffView(dest) && isLeafOf(*dest.gradBase))
    fail(std::string(op) + ": a view of a leaf Variable that requires grad "
                           "is being used in an in-place operation.",
         "write into x.detach() or under strata::NoGradGuard", loc);
  if (gradFnFieldIsNull(dest))
    fail(std::string(op) + ": a leaf Variable that requires grad is being "
                           "used in an in-place operation.",
         "write into x.detach() or under strata::NoGradGuard, or do it "
         "before requires_grad_()",
         loc);
}

void strata::detail::recordGradWrite(const TensorImpl &dest,
                                     const TensorImpl &value, Node &write,
                                     const char *op, const SourceLoc &loc) {
  (void)loc;
  write.inplaceOp = op;
  // The op computing the written value read the old version of dest: as
  // PyTorch, that original value is saved as a copy (the old version stays
  // immutable in the trace and keeps its data), so no later write
  // invalidates it. An op saving its result saved what is now dest's new
  // version: writing dest again does (a.exp_(); a.add_(1) cannot backward).
  for (Node *v = value.root->current.get(); v;) {
    bool savedResult = false;
    for (Node::Saved &sv : v->saved) {
      auto r = sv.root.lock();
      // (Not for copy_: its value was computed by another op, which saved
      // dest's old value as any reader does: x.copy_(x.sin()) cannot
      // backward, as in PyTorch.)
      if (r == dest.root && sv.version == dest.root->version - 1 &&
          sv.input == 0 && std::string_view(op) != "copy_")
        sv.version = Node::kSavedCopy;
      savedResult |= r && r == v->root.lock();
    }
    if (savedResult && std::string_view(op) != "copy_")
      v->saved.push_back({dest.root, dest.root->version, dest.layout.sizes,
                          recordOf(*dest.root), dest.root->current});
    v = v->op == Op::Cast && !v->inputs.empty() ? v->inputs[0].node.get()
                                                : nullptr;
  }
  // PyTorch: any in-place op on a differentiable view rebases its base's
  // history on CopySlices, whatever part of the storage it covers.
  write.viewWrite = isDiffView(dest);
  if (!gGradEnabled || !(requiresGradOf(value) || requiresGradOf(dest))) {
    const Node &old = *write.inputs[1].node;
    if (old.requiresGrad) {
      // Untracked: the history goes on through the new version.
      write.requiresGrad = true;
      write.passHistory = true;
      write.writer = autogradIdentity(dest).weak_from_this();
      write.gradInputs = write.inputs;
      write.gradSharesInputs = false;
      write.gradInputs[0].noGrad = true;
      write.gradInputs[1].noGrad = false;
      write.gradInputs[1].leaf.reset();
      // The old history goes on as it is: not a read through dest's view
      // (whose grad_fn, and a retain_grad hook on it, PyTorch leaves off
      // the path).
      write.gradInputs[1].view = nullptr;
      setGradWeight(write);
    }
    return;
  }
  write.requiresGrad = true;
  write.gradSharesInputs = true;
  setGradWeight(write);
  write.writer = autogradIdentity(dest).weak_from_this();
  // A retained tensor written in place itself retains the new history
  // (PyTorch moves its retain_grad hook); through a view it keeps the old.
  if (dest.autograd && dest.autograd->retainGrad && !isDiffView(dest))
    const_cast<TensorImpl &>(dest).autograd->retainedAt =
        write.shared_from_this();
  // A differentiable view written in place has its grad_fn regenerated at
  // once (PyTorch's rebase_history calls self.grad_fn()), which moves its
  // retain_grad hook there: gradient reaches it only through later reads.
  if (isDiffView(dest) && dest.autograd && dest.autograd->retainGrad)
    viewChainOf(dest);
  // The destination, and the bases it is a view of, now depend on the
  // value: no longer leaves (PyTorch's CopySlices on the base).
  for (TensorImpl *p : {const_cast<TensorImpl *>(&dest), dest.gradBase})
    if (p) {
      p->requiresGrad = true;
      p->isLeaf = false;
    }
}

//===--- GradFn -----------------------------------------------------------===//

GradFn::GradFn(std::shared_ptr<Node> node, std::weak_ptr<TensorImpl> leaf)
    : node_(std::move(node)), leaf_(std::move(leaf)) {
  name_ = node_ ? nameOf(*node_) : "AccumulateGrad";
}

GradFn::GradFn(std::shared_ptr<Node> node,
               std::shared_ptr<const ViewChain> view,
               std::weak_ptr<TensorImpl> leaf)
    : node_(std::move(node)), leaf_(std::move(leaf)), view_(std::move(view)) {
  name_ = viewName(*view_);
}

namespace {
/// The grad_fn of a version read by a recorded op (null: no gradient).
GradFnPtr fnOfVersion(NodePtr n) {
  while (n && n->passHistory) // an untracked write keeps the old grad_fn
    n = n->gradIn()[1].node;
  if (!n)
    return nullptr;
  if (n->requiresGrad) {
    const Node *s = shown(n.get());
    NodePtr owner =
        s == n.get() ? n : const_cast<Node *>(s)->shared_from_this();
    // Casts from promotion are transparent.
    while (owner->op == Op::Cast && !owner->userCast &&
           !owner->gradIn().empty() && owner->gradIn()[0].node->requiresGrad)
      owner = owner->gradIn()[0].node;
    return std::make_shared<GradFn>(owner, std::weak_ptr<TensorImpl>());
  }
  if (auto leaf = n->gradLeaf.lock(); leaf && leaf->requiresGrad)
    return std::make_shared<GradFn>(nullptr, leaf);
  return nullptr;
}

/// The grad_fn of a read of version `n` through the views `view`, the data
/// of `leaf` when set.
GradFnPtr fnOfRead(const NodePtr &n, std::shared_ptr<const ViewChain> view,
                   const std::weak_ptr<TensorImpl> &leaf) {
  if (view && n)
    return std::make_shared<GradFn>(n, std::move(view), leaf);
  if (auto l = leaf.lock())
    return std::make_shared<GradFn>(nullptr, l);
  return fnOfVersion(n);
}

/// The grad_fn an edge leads to (null: no gradient flows through it).
GradFnPtr fnOfEdge(const Operand &o) {
  return o.noGrad ? nullptr
                  : fnOfRead(o.history ? o.history : o.node, o.view, o.leaf);
}
} // namespace

std::string strata::detail::gradFnName(const NodePtr &n) {
  if (!n || !n->requiresGrad)
    return ""; // a leaf's data or a constant: no grad_fn
  GradFnPtr f = fnOfVersion(n);
  return f ? f->name() : "";
}

std::vector<GradFnPtr> GradFn::next_functions() const {
  std::vector<GradFnPtr> out;
  if (view_) // the view's input: the rest of the chain, then the version
    return {fnOfRead(node_, view_->next, leaf_)};
  if (!node_)
    return out;
  const Node &n = *node_;
  if (n.compositeName && !n.compositeInputs.empty()) {
    for (const Operand &o : n.compositeInputs)
      out.push_back(fnOfEdge(o));
    return out;
  }
  const std::vector<Operand> &in = n.gradIn();
  if (n.op == Op::Write && in.size() == 2) {
    // PyTorch's order: the destination's old history first. CopySlices
    // then lists the edges of the op it wraps but its first (the view);
    // CopyBackwards the source; Fill/ZeroBackward nothing more.
    Operand dest = in[1];
    dest.view = nullptr; // (the base's history, not the view's)
    out.push_back(fnOfEdge(dest));
    std::string_view op = n.inplaceOp ? n.inplaceOp : "copy_";
    if (n.viewWrite) {
      const Node *v = in[0].node.get();
      if (op != "copy_" && op != "fill_" && op != "zero_" && v->requiresGrad &&
          v->gradIn().size() > 1) {
        for (size_t i = 1; i < v->gradIn().size(); ++i)
          out.push_back(fnOfEdge(v->gradIn()[i]));
      } else if (op == "copy_") {
        out.push_back(fnOfEdge(in[0]));
      }
    } else if (op == "copy_") {
      out.push_back(fnOfEdge(in[0]));
    }
    return out;
  }
  for (size_t i = 0; i < in.size(); ++i) {
    // Operands PyTorch takes as a Scalar, or does not differentiate, are
    // no edge of its node: where's condition, pow's and rsub's number.
    if ((is(n, "where") && i == 0) ||
        (is(n, "pow") && i == 1 && isNumber(in[i])) ||
        ((is(n, "fmod") || is(n, "remainder")) && i == 1 && isNumber(in[i])) ||
        (is(n, "lerp") && i == 2 && isNumber(in[i])) ||
        (is(n, "sub") && i == 0 && isNumber(in[i])))
      continue;
    out.push_back(fnOfEdge(in[i]));
  }
  return out;
}

const void *GradFn::id() const {
  if (view_)
    return view_.get();
  return node_ ? static_cast<const void *>(node_.get())
               : static_cast<const void *>(leaf_.lock().get());
}

std::string GradFn::where() const {
  if (view_)
    return formatLoc(view_->loc);
  return node_ ? formatLoc(node_->loc) : "";
}

std::vector<Shape> GradFn::saved_sizes() const {
  std::vector<Shape> out;
  if (node_ && !view_)
    for (const Node::Saved &sv : node_->saved)
      out.push_back(sv.sizes);
  return out;
}

Tensor GradFn::variable() const {
  auto l = view_ || node_ ? nullptr : leaf_.lock();
  return l ? Tensor(l) : Tensor();
}

//===--- Tensor methods ---------------------------------------------------===//

namespace {
AutogradMeta &meta(const Tensor &t, const SourceLoc &loc) {
  auto &impl = const_cast<TensorImpl &>(implOf(t, loc));
  TraceLock lock; // two threads asking at once make one
  if (!impl.autograd)
    impl.autograd = std::make_shared<AutogradMeta>();
  return *impl.autograd;
}
} // namespace

namespace {
WarningHandler &warningHandler() {
  static WarningHandler handler;
  return handler;
}

void warn(const std::string &message, const SourceLoc &loc) {
  std::string where = formatLoc(loc);
  if (warningHandler()) {
    warningHandler()(message, where);
    return;
  }
  static std::set<std::pair<std::string, std::string>> shown;
  if (shown.insert({message, where}).second)
    std::fprintf(stderr, "%s: UserWarning: %s\n", where.c_str(),
                 message.c_str());
}

const char *kNonLeafGrad =
    "The .grad attribute of a Tensor that is not a leaf Tensor is being "
    "accessed. Its .grad attribute won't be populated during "
    "autograd.backward(). If you indeed want the .grad field to be populated "
    "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf "
    "Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
    "informations.";
} // namespace

void strata::set_warning_handler(WarningHandler handler) {
  warningHandler() = std::move(handler);
}

Tensor Tensor::grad(SourceLoc loc) const {
  AutogradMeta &m = meta(*this, loc);
  const TensorImpl &t = *impl();
  if (!isLeafOf(t) && !m.retainGrad && !m.grad.defined())
    warn(kNonLeafGrad, loc);
  TraceLock lock; // (a backward may replace the slot meanwhile)
  return m.grad;
}
Tensor &Tensor::mutable_grad(SourceLoc loc) const {
  return meta(*this, loc).grad;
}
bool Tensor::retains_grad(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  return t.autograd && t.autograd->retainGrad;
}

GradFnPtr Tensor::grad_fn(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  TraceLock lock;
  checkViewRead(t, loc); // (PyTorch regenerates it here, or refuses)
  if (isLeafOf(t))
    return nullptr;
  Operand o = operandOf(t);
  o.noGrad = false; // (also in no-grad mode)
  return fnOfEdge(o);
}

//===--- Printing the graph -----------------------------------------------===//

std::string strata::format_graph(const Tensor &t) {
  // Depth first over one shared prefix, without recursion (a chain of 10^5
  // ops is one line of 10^5 names); a graph with more than kMaxPaths paths
  // from t to its leaves (diamonds double them) is cut with a count.
  constexpr int64_t kMaxPaths = 10000;
  std::ostringstream os;
  GradFnPtr root = t.grad_fn();
  if (!root)
    return "";
  struct Frame {
    std::vector<GradFnPtr> next;
    size_t i = 0;
    size_t prefix = 0;
    bool any = false;
  };
  std::string prefix;
  std::vector<Frame> stack;
  int64_t paths = 0, cut = 0;
  auto enter = [&](const GradFnPtr &f) {
    Frame fr;
    fr.prefix = prefix.size();
    prefix += (prefix.empty() ? "" : " -> ") + f->name();
    fr.next = f->next_functions();
    stack.push_back(std::move(fr));
  };
  enter(root);
  while (!stack.empty()) {
    Frame &fr = stack.back();
    if (fr.i < fr.next.size()) {
      GradFnPtr n = fr.next[fr.i++];
      if (!n)
        continue;
      fr.any = true;
      if (paths >= kMaxPaths) {
        ++cut;
        continue;
      }
      enter(n);
      continue;
    }
    if (!fr.any) {
      if (paths < kMaxPaths)
        os << prefix << "\n";
      ++paths;
    }
    prefix.resize(fr.prefix);
    stack.pop_back();
  }
  if (cut)
    os << "... (more paths not shown: the graph has more than " << kMaxPaths
       << ")\n";
  return os.str();
}
