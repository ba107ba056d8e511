//===- Autograd.cpp - grad mode and the recorded graph's edges ------------===//
//
// The autograd graph is the trace itself: a node that requires grad keeps
// its inputs (`gradInputs`) after evaluation, the versions of what it saves
// for backward (SavedTensors.cpp), and the leaf it reads when it reads a
// leaf's data. This file holds grad mode, the edge each read records
// (setGradEdge), the grad_fns of views (viewChainOf) and the Tensor methods
// of .grad. GradFn.cpp shows the graph as PyTorch does; AutogradInplace.cpp
// records in-place writes.
//
//===----------------------------------------------------------------------===//
#include "AutogradGraph.h"

#include <atomic>
#include <cstdio>
#include <set>

using namespace strata;
using namespace strata::detail;

namespace {
/// Thread-local, as PyTorch's grad mode: a NoGradGuard in one thread does
/// not change what other threads record.
thread_local bool gGradEnabled = true;
std::atomic<bool> gAnomaly{false};

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

/// The leaf requiring grad whose data `t` reads (t itself, or the leaf a
/// chain of differentiable views starts at); null when `t` reads a history.
const TensorImpl *leafOf(const TensorImpl &t) {
  if (t.requiresGrad && t.isLeaf && (!isDiffView(t) || !viewHasGradFn(t)))
    return &t;
  const TensorImpl *b = t.gradBase;
  return b && b->requiresGrad && b->isLeaf ? b : nullptr;
}

} // namespace

bool strata::detail::isNumber(const Operand &o) {
  const Node *v = o.node.get();
  while (v && v->op == Op::Cast && !v->inputs.empty())
    v = v->inputs[0].node.get();
  // (Only numbers are on no device: a cast of one evaluated since, its
  // input released, is one too.)
  return v && (v->op == Op::Fill || v->op == Op::Cast) && v->device == kDevAny;
}

bool strata::detail::isScalarArgument(const Node &n, size_t i) {
  if (i >= n.inputs.size() || !isNumber(n.inputs[i]))
    return false;
  return isOp(n, "pow") ||
         ((isOp(n, "fmod") || isOp(n, "remainder")) && i == 1) ||
         (isOp(n, "lerp") && i == 2) || (isOp(n, "sub") && i == 0) ||
         (isOp(n, "fma") && i == 1); // add(other, alpha)
}

bool strata::detail::boolTensorCast(const Operand &o) {
  const Node *e = o.node.get();
  while (e && e->op == Op::Cast && e->dtype != DType::Bool &&
         !e->inputs.empty() && e->inputs[0].node->dtype != DType::Bool)
    e = e->inputs[0].node.get();
  return e && e->op == Op::Cast && !e->inputs.empty() &&
         e->inputs[0].node->dtype == DType::Bool && !isNumber(o);
}

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
    chain->shownAs = multiOutputName(multiOutputOf(t).first);
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
  if (n.requiresGrad || !n.gradLeaf().expired())
    return;
  // The leaf: t itself, or the leaf its view chain starts at.
  if (const TensorImpl *leaf = leafOf(*t))
    n.rareFields().gradLeaf = const_cast<TensorImpl *>(leaf)->weak_from_this();
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
