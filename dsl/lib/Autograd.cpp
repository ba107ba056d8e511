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

/// The ops whose backward reads an input (PyTorch saves it).
bool savesInputs(const Node &n) {
  for (const char *s : {"mul", "div", "pow", "matmul", "maximum", "minimum",
                        "log", "abs", "amax", "amin"})
    if (is(n, s))
      return true;
  return false;
}
/// The ops whose backward reads the result.
bool savesResult(const Node &n) {
  for (const char *s : {"exp", "sqrt", "tanh", "sigmoid", "relu"})
    if (is(n, s))
      return true;
  return false;
}

/// The node whose grad_fn `n` shows: a full in-place write shows its op.
const Node *shown(const Node *n) {
  while (n->op == Op::Write && !n->viewWrite &&
         n->inputs.size() + n->gradInputs.size() > 0) {
    const auto &in = n->gradInputs.empty() ? n->inputs : n->gradInputs;
    const Node *v = in[0].node.get();
    if (!v->requiresGrad || v->op == Op::Write)
      break;
    // A cast inserted by promotion is not a node of PyTorch's graph.
    while (v->op == Op::Cast && !v->gradInputs.empty() &&
           v->gradInputs[0].node->requiresGrad)
      v = v->gradInputs[0].node.get();
    return v;
  }
  return n;
}

std::string nameOf(const Node &n) {
  static const std::pair<const char *, const char *> names[] = {
      {"add", "AddBackward0"},         {"sub", "SubBackward0"},
      {"mul", "MulBackward0"},         {"div", "DivBackward0"},
      {"neg", "NegBackward0"},         {"abs", "AbsBackward0"},
      {"exp", "ExpBackward0"},         {"log", "LogBackward0"},
      {"sqrt", "SqrtBackward0"},       {"relu", "ReluBackward0"},
      {"sigmoid", "SigmoidBackward0"}, {"tanh", "TanhBackward0"},
      {"amax", "AmaxBackward0"},       {"amin", "AminBackward0"},
      {"where", "WhereBackward0"},     {"maximum", "MaximumBackward0"},
      {"minimum", "MinimumBackward0"}, {"cast", "ToCopyBackward0"},
      {"copy", "CloneBackward0"},      {"contiguous", "CloneBackward0"}};
  const auto &in = n.gradInputs;
  if (n.op == Op::Write) {
    if (n.viewWrite)
      return "CopySlices";
    std::string op = n.inplaceOp ? n.inplaceOp : "copy_";
    if (op == "copy_")
      return "CopyBackwards";
    if (op == "fill_")
      return "FillBackward0";
    op.pop_back();
    op[0] = static_cast<char>(toupper(op[0]));
    return op + "Backward0";
  }
  if (is(n, "sum"))
    return n.dims.empty() ? "SumBackward0" : "SumBackward1";
  if (is(n, "mean"))
    return n.dims.empty() ? "MeanBackward0" : "MeanBackward1";
  if (is(n, "pow"))
    return in.size() == 2 && in[1].node->requiresGrad ? "PowBackward1"
                                                      : "PowBackward0";
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

/// The leaf impl behind `t` (t itself, or the leaf a view chain starts at).
const TensorImpl *leafOf(const TensorImpl &t) {
  const TensorImpl *p = &t;
  while (p && !p->isLeaf)
    p = p->base.get();
  return p && p->requiresGrad ? p : nullptr;
}
} // namespace

//===--- Hooks ------------------------------------------------------------===//

bool strata::detail::gradEnabled() { return gGradEnabled; }
bool strata::is_grad_enabled() { return gGradEnabled; }
NoGradGuard::NoGradGuard() : previous_(gGradEnabled) { gGradEnabled = false; }
NoGradGuard::~NoGradGuard() { gGradEnabled = previous_; }
void strata::set_detect_anomaly(bool enabled) { gAnomaly = enabled; }
bool strata::is_anomaly_enabled() { return gAnomaly; }

std::shared_ptr<const ViewChain>
strata::detail::viewChainOf(const TensorImpl &t) {
  // (A copy keeps viewOp and base for explain(): not a view, another root.)
  if (!t.viewOp || !t.requiresGrad || !gGradEnabled || !t.base ||
      t.base->root != t.root)
    return nullptr;
  if (!t.viewChain) {
    // A view whose storage was written in place since reads the new
    // version (CopySlices), not the version it was taken of.
    const Node &current = *t.root->current;
    if (current.op == Op::Write)
      return nullptr;
    auto chain = std::make_shared<ViewChain>();
    chain->op = t.viewOp;
    chain->args = t.viewArgs;
    chain->loc = t.loc;
    chain->next = viewChainOf(*t.base);
    t.viewChain = std::move(chain);
  }
  return t.viewChain;
}

void strata::detail::markGradLeaf(const std::shared_ptr<TensorImpl> &t) {
  if (!t->requiresGrad || !gGradEnabled)
    return;
  Node &n = *t->root->current;
  if (n.requiresGrad || !n.gradLeaf.expired())
    return;
  // The leaf: t itself, or the leaf its view chain starts at.
  std::shared_ptr<TensorImpl> p = t;
  while (p && !p->isLeaf)
    p = p->base;
  if (p && p->requiresGrad)
    n.gradLeaf = p;
}

void strata::detail::recordGradNode(Node &node) {
  node.requiresGrad = true;
  node.gradInputs = node.inputs;
  if (savesInputs(node))
    for (const Operand &in : node.inputs)
      if (auto r = in.node->root.lock())
        node.saved.push_back({r, r->version, in.layout.sizes});
  if (savesResult(node))
    node.saved.push_back({node.root, 0, node.sizes});
}

void strata::detail::checkInplace(const TensorImpl &dest, const char *op,
                                  const SourceLoc &loc) {
  if (!gGradEnabled || !dest.requiresGrad)
    return;
  if (dest.isLeaf)
    fail(std::string(op) + ": a leaf Variable that requires grad is being "
                           "used in an in-place operation.",
         "write into x.detach() or under strata::NoGradGuard, or do it "
         "before requires_grad_()",
         loc);
  if (leafOf(dest) && !dest.root->current->requiresGrad)
    fail(std::string(op) + ": a view of a leaf Variable that requires grad "
                           "is being used in an in-place operation.",
         "write into x.detach() or under strata::NoGradGuard", loc);
}

void strata::detail::recordGradWrite(const TensorImpl &dest,
                                     const TensorImpl &value, Node &write,
                                     const char *op, const SourceLoc &loc) {
  (void)loc;
  write.inplaceOp = op;
  // The op computing the written value read the old version, which stays
  // immutable in the trace: what it saved is the version the write consumed.
  for (Node *v = value.root->current.get(); v;) {
    for (Node::Saved &sv : v->saved)
      if (sv.root.lock() == dest.root && sv.version == dest.root->version - 1)
        sv.version = dest.root->version;
    v = v->op == Op::Cast && !v->inputs.empty() ? v->inputs[0].node.get()
                                                : nullptr;
  }
  write.viewWrite =
      !(dest.layout.offset == 0 && dest.layout.numel() == dest.root->numel &&
        layout::isContiguous(dest.layout));
  if (!gGradEnabled || !(value.requiresGrad || dest.requiresGrad))
    return;
  write.requiresGrad = true;
  write.gradInputs = write.inputs;
  // The destination now depends on the value: no longer a leaf.
  auto &d = const_cast<TensorImpl &>(dest);
  d.requiresGrad = true;
  d.isLeaf = false;
}

//===--- GradFn -----------------------------------------------------------===//

GradFn::GradFn(std::shared_ptr<Node> node, std::weak_ptr<TensorImpl> leaf)
    : node_(std::move(node)), leaf_(std::move(leaf)) {
  name_ = node_ ? nameOf(*node_) : "AccumulateGrad";
}

GradFn::GradFn(std::shared_ptr<Node> node,
               std::shared_ptr<const ViewChain> view)
    : node_(std::move(node)), view_(std::move(view)) {
  name_ = viewName(*view_);
}

namespace {
/// The grad_fn of a version read by a recorded op (null: no gradient).
GradFnPtr fnOfVersion(const NodePtr &n) {
  if (!n)
    return nullptr;
  if (n->requiresGrad) {
    const Node *s = shown(n.get());
    NodePtr owner =
        s == n.get() ? n : const_cast<Node *>(s)->shared_from_this();
    // Casts from promotion are transparent.
    while (owner->op == Op::Cast && !owner->gradInputs.empty() &&
           owner->gradInputs[0].node->requiresGrad)
      owner = owner->gradInputs[0].node;
    return std::make_shared<GradFn>(owner, std::weak_ptr<TensorImpl>());
  }
  if (auto leaf = n->gradLeaf.lock(); leaf && leaf->requiresGrad)
    return std::make_shared<GradFn>(nullptr, leaf);
  return nullptr;
}

/// The grad_fn of a read of version `n` through the views `view`.
GradFnPtr fnOfRead(const NodePtr &n, std::shared_ptr<const ViewChain> view) {
  if (view && n)
    return std::make_shared<GradFn>(n, std::move(view));
  return fnOfVersion(n);
}
} // namespace

std::string strata::detail::gradFnName(const NodePtr &n) {
  GradFnPtr f = fnOfVersion(n);
  return f ? f->name() : "";
}

std::vector<GradFnPtr> GradFn::next_functions() const {
  std::vector<GradFnPtr> out;
  if (view_) // the view's input: the rest of the chain, then the version
    return {fnOfRead(node_, view_->next)};
  if (!node_)
    return out;
  for (const Operand &in : node_->gradInputs) {
    if (in.node->op == Op::Fill && !in.node->requiresGrad) {
      out.push_back(nullptr);
      continue;
    }
    out.push_back(fnOfRead(in.node, in.view));
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

Tensor GradFn::variable() const {
  auto l = leaf_.lock();
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

const Tensor &Tensor::grad(SourceLoc loc) const {
  AutogradMeta &m = meta(*this, loc);
  const TensorImpl &t = *impl();
  if (!t.isLeaf && !m.retainGrad && !m.grad.defined())
    warn(kNonLeafGrad, loc);
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
  if (!t.requiresGrad || t.isLeaf)
    return nullptr;
  return fnOfRead(t.root->current, viewChainOf(t));
}

//===--- Printing the graph -----------------------------------------------===//

std::string strata::format_graph(const Tensor &t) {
  std::ostringstream os;
  std::function<void(const GradFnPtr &, std::string)> walk =
      [&](const GradFnPtr &f, std::string prefix) {
        prefix += f->name();
        bool any = false;
        for (const GradFnPtr &next : f->next_functions())
          if (next) {
            any = true;
            walk(next, prefix + " -> ");
          }
        if (!any)
          os << prefix << "\n";
      };
  if (GradFnPtr f = t.grad_fn())
    walk(f, "");
  return os.str();
}

std::string strata::detail::autogradDot(const std::vector<Tensor> &tensors) {
  std::ostringstream os;
  os << "digraph autograd {\n  rankdir=BT;\n  node [fontname=\"monospace\", "
        "fontsize=10, shape=box];\n";
  std::map<const void *, std::string> ids;
  std::function<std::string(const GradFnPtr &)> visit =
      [&](const GradFnPtr &f) -> std::string {
    const void *key = f->id();
    std::string label =
        f->name() + (f->where().empty() ? "" : "\\n" + f->where());
    std::string id = "n" + std::to_string(ids.size());
    auto [it, fresh] = ids.emplace(key, id);
    if (!fresh)
      return it->second;
    os << "  " << id << " [label=\"" << label << "\""
       << (f->name() == "AccumulateGrad" ? ", style=filled, fillcolor=lightblue"
                                         : "")
       << "];\n";
    for (const GradFnPtr &next : f->next_functions())
      if (next)
        os << "  " << id << " -> " << visit(next) << ";\n";
    return id;
  };
  for (size_t i = 0; i < tensors.size(); ++i)
    if (GradFnPtr f = tensors[i].grad_fn())
      os << "  out" << i << " [label=\"tensor " << i
         << "\", shape=ellipse];\n  " << visit(f) << " -> out" << i << ";\n";
  os << "}\n";
  return os.str();
}
