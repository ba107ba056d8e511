//===- AutogradHooks.cpp - hooks after a leaf's gradient accumulates ------===//
//
// PyTorch 2.1's Tensor.register_post_accumulate_grad_hook: a leaf's hooks
// run once per backward(), after its gradient was added into .grad. The
// engine runs them as soon as the gradient is final: inside the gradient
// program, between its kernels (GradientHooks.cpp, over the JIT's
// RunOptions::onReturnReady), after the segment that last adds to it
// (SegmentedBackward.cpp), or after the program (CUDA, create_graph).
// DistributedDataParallel starts a bucket's all_reduce from them, so the
// communication overlaps the rest of backward. docs/design.md, "Hooks
// after accumulation".
//
//===----------------------------------------------------------------------===//
#include "AutogradEngine.h"

#include <algorithm>
#include <exception>
#include <optional>

using namespace strata;
using namespace strata::detail;

unsigned
Tensor::register_post_accumulate_grad_hook(Function<void(const Tensor &)> hook,
                                           SourceLoc loc) const {
  auto &t = const_cast<TensorImpl &>(implOf(*this, loc));
  TraceLock lock;
  // (PyTorch's messages.)
  if (!requiresGradOf(t))
    fail("cannot register a hook on a tensor that doesn't require gradient",
         "call requires_grad_() on the leaf first", loc);
  if (!isLeafOf(t))
    fail("post accumulate grad hooks cannot be registered on non-leaf "
         "tensors",
         "register it on the leaf (a parameter); a non-leaf accumulates no "
         ".grad",
         loc);
  if (!hook)
    fail("register_post_accumulate_grad_hook: expected a hook, but got an "
         "empty function",
         "pass a callable taking the tensor", loc);
  if (!t.autograd)
    t.autograd = std::make_shared<AutogradMeta>();
  static unsigned next = 0; // (under the trace lock)
  t.autograd->hooks.push_back({next, std::move(hook)});
  return next++;
}

void Tensor::remove_post_accumulate_grad_hook(unsigned handle,
                                              SourceLoc loc) const {
  auto &t = const_cast<TensorImpl &>(implOf(*this, loc));
  TraceLock lock;
  if (t.autograd)
    std::erase_if(t.autograd->hooks,
                  [&](const auto &h) { return h.first == handle; });
}

namespace strata::detail::engine {

bool hasPostAccumulateHooks(const TensorImpl &t) {
  return t.autograd && !t.autograd->hooks.empty() && isLeafOf(t);
}

void runPostAccumulateHooks(const std::shared_ptr<TensorImpl> &t,
                            const SourceLoc &loc) {
  if (!hasPostAccumulateHooks(*t))
    return;
  // (A copy: a hook may register or remove hooks.)
  auto hooks = t->autograd->hooks;
  Tensor leaf(t);
  for (auto &[handle, hook] : hooks) {
    std::string what;
    try {
      hook(leaf);
      continue;
    } catch (const Error &e) {
      what = e.message() + (e.where().empty() ? "" : " (at " + e.where() + ")");
    } catch (const std::exception &e) {
      what = e.what();
    } catch (...) {
      what = "an exception that is not a std::exception";
    }
    std::string sizes;
    for (int64_t s : t->layout.sizes)
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(s);
    fail("a post-accumulate-grad hook of a leaf of sizes [" + sizes +
             "] threw: " + what,
         "backward() stopped there: the leaves whose hooks ran have their "
         "gradients accumulated, the others keep theirs",
         loc);
  }
}

} // namespace strata::detail::engine
