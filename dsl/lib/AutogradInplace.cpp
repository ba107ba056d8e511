//===- AutogradInplace.cpp - in-place writes under autograd ---------------===//
//
// PyTorch's checks before an in-place write (a leaf, a view made in no-grad
// mode) and what a write records after: the saved originals it must not
// invalidate, the history it rebases (CopySlices through a view), or the
// old history it continues when untracked.
//
//===----------------------------------------------------------------------===//
#include "AutogradGraph.h"

using namespace strata;
using namespace strata::detail;

namespace {

/// PyTorch's handle_view_on_rebase for a view of CreationMeta
/// MULTI_OUTPUT_NODE: written in place itself, or read (`indirect`) after
/// its base or another view of it was. `op` prefixes a direct write's
/// message, as the other in-place checks.
[[noreturn]] void refuseMultiOutputView(const TensorImpl &t, bool indirect,
                                        const char *op, const SourceLoc &loc) {
  std::string what =
      indirect ? "its base or another view of its base has been" : "is being";
  auto [fn, outputNr] = multiOutputOf(t);
  std::string msg = op ? std::string(op) + ": " : std::string();
  // (The grad_fn the view was given when made: none when made of a tensor
  // that did not require grad, which PyTorch words as no-grad mode.)
  if (!t.viewGradFn)
    msg += "A view was created in no_grad mode and " + what +
           " modified inplace with grad mode enabled.";
  else if (fn == kMultiOutputViewOf)
    msg += "Output 0 of " + viewGradFnName(t.viewOp, t.viewArgs) +
           " is a view and " + what + " modified inplace.";
  else
    msg += "Output " + std::to_string(outputNr) + " of " + multiOutputName(fn) +
           " is a view and " + what + " modified inplace.";
  fail(msg + " This view is the output of a function that returns multiple "
             "views. Such functions do not allow the output views to be "
             "modified inplace. You should replace the inplace operation by "
             "an out-of-place one.",
       indirect ? "take the views again (split/unbind/chunk) after the "
                  "in-place write"
                : "use the out-of-place op (y = part.mul(2)), or write into "
                  "a clone() of the view, or into the base it was split from",
       loc);
}

} // namespace

void strata::detail::markMultiOutput(std::vector<Tensor> &views, int32_t fn) {
  if (!gradEnabled())
    return;
  for (size_t i = 0; i < views.size(); ++i) {
    TensorImpl &v = *views[i].impl();
    v.multiOutput = fn | static_cast<int32_t>(i) << 3;
    // A chain made with the view (viewChainOf) is shown as PyTorch's node.
    if (v.viewChain && !v.viewChain->shownAs) {
      auto shown = std::make_shared<ViewChain>(*v.viewChain);
      shown->shownAs = multiOutputName(fn);
      v.viewChain = std::move(shown);
    }
  }
}

void strata::detail::checkViewRead(const TensorImpl &t, const SourceLoc &loc,
                                   bool anyMode) {
  if (!(gradEnabled() || anyMode) || !isDiffView(t) ||
      t.root->version == t.viewVersion)
    return;
  // (PyTorch reads such a view's grad_fn only when it has one or its base
  // requires grad.)
  if (t.multiOutput && (t.viewGradFn || t.gradBase->requiresGrad))
    refuseMultiOutputView(t, /*indirect=*/true, nullptr, loc);
  if (!t.noGradView || !t.gradBase->requiresGrad)
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

void strata::detail::checkInplace(const TensorImpl &dest, bool valueGrad,
                                  const char *op, const SourceLoc &loc) {
  if (!gradEnabled())
    return;
  bool destGrad = requiresGradOf(dest);
  if (!destGrad && !valueGrad)
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
  if (isDiffView(dest) && dest.multiOutput)
    refuseMultiOutputView(dest, /*indirect=*/false, op, loc);
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

void strata::detail::recordGradWrite(const TensorImpl &dest, Node &value,
                                     bool valueGrad, Node &write,
                                     const char *op, const SourceLoc &loc) {
  (void)loc;
  write.inplaceOp = op;
  // The op computing the written value read the old version of dest: as
  // PyTorch, that original value is saved as a copy (the old version stays
  // immutable in the trace and keeps its data), so no later write
  // invalidates it. An op saving its result saved what is now dest's new
  // version: writing dest again does (a.exp_(); a.add_(1) cannot backward).
  for (Node *v = &value; v;) {
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
  if (!gradEnabled() || !(valueGrad || requiresGradOf(dest))) {
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
