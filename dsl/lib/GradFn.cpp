//===- GradFn.cpp - the recorded graph as PyTorch shows it ----------------===//
//
// GradFn wraps a recorded node (or a view chain, or a leaf's
// AccumulateGrad) and shows it as PyTorch's grad_fn: its name, its
// next_functions in PyTorch's order, its saved sizes; format_graph prints
// the paths from a tensor to its leaves.
//
//===----------------------------------------------------------------------===//
#include "AutogradGraph.h"

#include <sstream>

using namespace strata;
using namespace strata::detail;

namespace {
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
} // namespace

//===--- GradFn -----------------------------------------------------------===//

GradFn::GradFn(std::shared_ptr<Node> node, std::weak_ptr<TensorImpl> leaf)
    : node_(std::move(node)), leaf_(std::move(leaf)) {
  name_ = node_ ? gradFnNameOf(*node_) : "AccumulateGrad";
}

GradFn::GradFn(std::shared_ptr<Node> node,
               std::shared_ptr<const ViewChain> view,
               std::weak_ptr<TensorImpl> leaf)
    : node_(std::move(node)), leaf_(std::move(leaf)), view_(std::move(view)) {
  name_ = viewGradFnName(*view_);
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
  if (auto leaf = n->gradLeaf().lock(); leaf && leaf->requiresGrad)
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
  if (n.compositeName() && !n.compositeInputs().empty()) {
    for (const Operand &o : n.compositeInputs())
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
    if ((isOp(n, "where") && i == 0) || isScalarArgument(n, i))
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
