//===- BackwardGraph.cpp - the graph a backward runs, and its checks ------===//
//
// The recorded graph from the outputs back to the leaves (Graph: ops to
// re-emit, leaves' data and constants as arguments), the edges the
// gradient reaches, and PyTorch's checks of each op it runs (saved tensors
// freed or modified, formulas PyTorch refuses). GradientRun.h.
//
//===----------------------------------------------------------------------===//
#include "GradientRun.h"

#include <algorithm>

using namespace strata;
using namespace strata::detail;

namespace strata::detail::engine {

void Graph::versionError(const VersionRecord &root, int64_t expected,
                         const Shape &sizes, const Node *op, NodePtr saved,
                         bool viewRead) {
  std::string msg = "one of the variables needed for gradient computation "
                    "has been modified by an inplace operation: [" +
                    torchType(root.dtype, saved ? saved.get() : op) + " " +
                    layout::formatList(sizes) + "]";
  std::string fn = viewRead ? "AsStridedBackward0" : gradFnName(saved);
  // (PyTorch's text: "..., which is output 0 of XBackward0, is at ..."
  // with a grad_fn, "...] is at ..." without.)
  if (!fn.empty())
    msg += ", which is output 0 of " + fn + ",";
  msg += " is at version " + std::to_string(root.version) +
         "; expected version " + std::to_string(expected) +
         " instead. Hint: enable anomaly detection to find the operation "
         "that failed to compute its gradient, with "
         "torch.autograd.set_detect_anomaly(True).";
  if (op && is_anomaly_enabled())
    msg += "\n  the forward op that saved it was recorded at " +
           formatLoc(op->loc);
  std::string hint = "compute out of place instead (a = a + 1 rather than "
                     "a.add_(1))";
  if (const SourceLoc *at = root.writeLocs.madeAfter(expected))
    hint = "it was modified in place at " + formatLoc(*at) + "; " + hint;
  fail(msg, hint, loc);
}

void Graph::check(const NodePtr &n) {
  // Backward formulas PyTorch refuses on a bool operand (a cast by
  // promotion here, found when recorded): pow's `exponent - 1` for the
  // base's gradient, atan2's `-self` for `other`'s.
  struct BoolOperandRule {
    const char *op;
    size_t gradOf;         // the input whose gradient needs the formula
    bool Node::*boolInput; // the flag recorded for the bool operand
    const char *message, *hint;
  };
  static const BoolOperandRule boolRules[] = {
      {"pow", 0, &Node::boolExponent,
       "Subtraction, the `-` operator, with a bool tensor is not "
       "supported. If you are trying to invert a mask, use the `~` or "
       "`logical_not()` operator instead.",
       "convert the exponent to a floating dtype before pow"},
      {"atan2", 1, &Node::boolSelf,
       "Negation, the `-` operator, on a bool tensor is not supported. "
       "If you are trying to invert a mask, use the `~` or "
       "`logical_not()` operator instead.",
       "convert the first operand to a floating dtype before atan2"}};
  for (const BoolOperandRule &r : boolRules)
    if (std::string_view(n->name) == r.op && n->gradIn().size() == 2 &&
        !n->gradIn()[r.gradOf].noGrad && (*n).*r.boolInput)
      fail(r.message, r.hint, loc);
  // CopySlices of a write through a view with an element at two positions
  // (fill_ and zero_ take one): PyTorch's backward refuses it.
  if (n->op == Op::Write && n->viewWrite && n->overlapWrite)
    fail("unsupported operation: more than one element of the written-to "
         "tensor refers to a single memory location. Please clone() the "
         "tensor before performing the operation.",
         "write through a view whose elements are distinct (clone() the "
         "expanded view first)",
         loc);
  // PyTorch 1.13 records floor_divide's result as requiring grad but has
  // no derivative for it.
  if (std::string_view(n->name) == "floor_divide")
    fail("derivative for aten::floor_divide is not implemented",
         "floor_divide is piecewise constant: detach() its operands, or "
         "compute it under a NoGradGuard",
         loc);
  // (CopySlices releases the op it wraps: a second pass always fails.)
  // A create_graph gradient's copy of a forward op is that op in PyTorch's
  // graph: freed when it is (Node::recomputes).
  auto freed = [](const Node &m) {
    return m.gradFreed && (!m.saved.empty() || (m.op == Op::Write &&
                                                m.viewWrite && !m.passHistory));
  };
  const NodePtr &forward = n->recomputes();
  if (freed(*n) || (forward && freed(*forward)))
    fail(kSecondTime, "pass retain_graph=true to the first backward()", loc);
  // (The forward op's saved tensors too: PyTorch's engine runs that op.)
  for (const Node *m : {n.get(), forward.get()}) {
    if (!m)
      continue;
    for (const Node::Saved &s : m->saved) {
      // (The root's record when no tensor refers to the root any more.)
      const VersionRecord *r = s.record.get();
      auto root = s.root.lock();
      int64_t now = root ? root->version : r ? r->version : s.version;
      if (s.version == Node::kSavedCopy || now == s.version || !r)
        continue;
      bool viewRead = s.input >= 0 &&
                      static_cast<size_t>(s.input) < m->gradIn().size() &&
                      m->gradIn()[s.input].view != nullptr;
      versionError(*r, s.version, s.sizes, m,
                   !s.node.expired() ? s.node.lock()
                   : root            ? root->current
                                     : r->current.lock(),
                   viewRead);
    }
  }
}

void Graph::addLeaf(const NodePtr &n, const std::shared_ptr<TensorImpl> &leaf) {
  if (!leafIndex.emplace(std::make_pair(n.get(), leaf.get()), leafArgs.size())
           .second)
    return;
  if (!n->buffer) {
    // The version the leaf's readers read, computed now (an older one
    // than the storage's current version gets a buffer of its own).
    if (leaf->root->current != n)
      evaluateNode(n, loc);
    else
      evaluate({leaf.get()}, loc);
  }
  leafArgs.push_back({n, leaf});
}

void Graph::visit(const Operand &start) {
  std::vector<std::pair<NodePtr, size_t>> stack; // (op, next input)
  auto reachNode = [&](const NodePtr &n, bool constant) {
    if (constant && n->buffer) {
      if (isConst.insert(n.get()).second)
        constArgs.push_back(n);
      return;
    }
    if (!constant && checked.insert(n.get()).second)
      toCheck.push_back(n);
    if (isOp.insert(n.get()).second)
      stack.push_back({n, 0});
  };
  auto reach = [&](const Operand &in) {
    if (auto leaf = leafOfEdge(in)) {
      addLeaf(in.node, leaf);
      return;
    }
    bool constant = constantEdgeToNoLeaf(in);
    // A pending constant read at an offset (the mini-batch of a normalized
    // dataset kept pending, `norm.narrow(0, k, B)`) is evaluated first:
    // the read is then of an argument's window, and the offset is not in
    // the gradient program (one program for every k, not one each).
    if (constant && !in.node->buffer && in.layout.offset != 0 &&
        in.node->op != Op::Fill && !in.node->requiresGrad)
      evaluateNode(in.node, loc);
    if (in.history && !constant) // the value, then the history
      reachNode(in.node, true);
    // (A constant edge reads the value: a dead leaf edge with a history
    // too.)
    reachNode(constant ? in.node : historyOf(in), constant);
  };
  reach(start);
  while (!stack.empty()) {
    auto &[n, next] = stack.back();
    const auto &inputs = n->requiresGrad ? n->gradIn() : n->inputs;
    if (next < inputs.size()) {
      Operand in = inputs[next++];
      reach(in);
      continue;
    }
    ops.push_back(std::move(n));
    stack.pop_back();
  }
}

void GradientRun::collect() {
  start = std::chrono::steady_clock::now();
  numOutputs = seeds ? seeds->size() : outputs.size();
  if (gradOutputs.empty())
    gradOutputs.resize(numOutputs);
  if (gradOutputs.size() != numOutputs)
    fail("grad_outputs must have the same length as outputs", "", loc);
  // Each output's sizes and dtype.
  if (seeds)
    for (const Operand &e : *seeds) {
      g.visit(e);
      outEdges.push_back(e);
      outSizes.push_back(e.layout.sizes);
      outTypes.push_back(e.node->dtype);
    }
  for (size_t i = 0; i < outputs.size() && !seeds; ++i)
    visitOutput(i);
  sortOps();
  findReached();
}

void GradientRun::visitOutput(size_t i) {
  const TensorImpl &o = implOf(outputs[i], loc);
  outSizes.push_back(o.layout.sizes);
  outTypes.push_back(o.dtype);
  // PyTorch reads the output's grad_fn first: a view made in no-grad
  // mode whose base was written since is refused, whatever the mode.
  checkViewRead(o, loc, true);
  if (!requiresGradOf(o))
    fail("element " + std::to_string(i) +
             " of tensors does not require grad and does not have a "
             "grad_fn",
         "call requires_grad_() on the leaves before computing it", loc);
  if (!gradOutputs[i].defined()) {
    // Implicitly 1 (passed below without evaluating a ones() program).
    if (o.layout.numel() != 1)
      fail("grad can be implicitly created only for scalar outputs",
           "pass the gradient: y.backward(strata::ones_like(y))", loc);
  } else if (gradOutputs[i].sizes() != o.layout.sizes) {
    fail("Mismatch in shape: grad_output[" + std::to_string(i) +
             "] has a shape of " + layout::formatList(gradOutputs[i].sizes()) +
             " and output[" + std::to_string(i) + "] has a shape of " +
             layout::formatList(o.layout.sizes) + ".",
         "", loc);
  }
  Operand edge = operandOf(o);
  edge.noGrad = false; // (backward in no-grad mode differentiates too)
  // (A view keeps the grad_fn it was given when its base stops requiring
  // grad, or when a view below it has none (made in no-grad mode):
  // PyTorch runs it, accumulating nothing.)
  if ((!edge.leaf.lock() && !edge.node->requiresGrad && !edge.view) ||
      (!edge.view && gradGoesNowhere(o, nullptr)))
    fail("element " + std::to_string(i) +
             " of tensors does not require grad and does not have a "
             "grad_fn",
         "its value was last written in no-grad mode", loc);
  g.visit(edge);
  outEdges.push_back(std::move(edge));
}

void GradientRun::sortOps() {
  // A constant op the walk queued may have been evaluated since (a leaf's
  // data computed by addLeaf), its inputs dropped: its value is an argument.
  std::erase_if(g.ops, [&](const NodePtr &n) {
    if (n->requiresGrad || !n->buffer)
      return false;
    g.isOp.erase(n.get());
    if (g.isConst.insert(n.get()).second)
      g.constArgs.push_back(n);
    return true;
  });
  auto bySeq = [](const NodePtr &a, const NodePtr &b) {
    return a->seq < b->seq;
  };
  std::sort(g.constArgs.begin(), g.constArgs.end(), bySeq);
  std::sort(g.ops.begin(), g.ops.end(), bySeq);
}

void GradientRun::findReached() {
  // The edges a gradient reaches from the outputs: through the history of
  // ops requiring grad only (a leaf read only through `x > 0`, a detach()
  // or a no-grad op gets none, as in PyTorch, though its data may still
  // feed the recomputed forward).
  // A view's grad_fn is its view chain (one per view and version): the
  // chains the gradient passes through are reached too.
  auto reachEdge = [&](const Operand &in) {
    if (in.noGrad) {
      // A view whose grad_fn leads nowhere (a view of a no-grad view):
      // PyTorch runs that grad_fn (a retain_grad() hook on it fires),
      // though nothing flows on.
      if (in.cutView)
        for (const ViewChain *c = in.view.get(); c; c = c->next.get())
          if (!reachedChains.insert(c).second)
            break;
      return;
    }
    if (auto leaf = leafOfEdge(in))
      reachedLeaves.insert(leaf.get());
    else if (!constantEdgeToNoLeaf(in))
      reached.insert(historyOf(in).get());
    // A view's grad_fn gets its gradient even when nothing below it does
    // (its base stopped requiring grad): grad() with respect to it works.
    for (const ViewChain *c = in.view.get(); c; c = c->next.get())
      if (!reachedChains.insert(c).second)
        break; // (its tail is in already)
  };
  for (const Operand &e : outEdges)
    reachEdge(e);
  for (auto it = g.ops.rbegin(); it != g.ops.rend(); ++it)
    if ((*it)->requiresGrad && reached.count(it->get()))
      for (const Operand &in : (*it)->gradIn())
        reachEdge(in);
}

} // namespace strata::detail::engine
