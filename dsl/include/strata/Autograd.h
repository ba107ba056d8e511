//===- Autograd.h - reverse mode with PyTorch's names -----------*- C++ -*-===//
//
// Tensors that require grad record a graph (grad_fn); backward() emits the
// recorded program reaching the requested leaves as one IR function marked
// `strata.wrt`, differentiated by the compiler (--strata-differentiate) and
// run through the JIT, cached by structure like every program.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_AUTOGRAD_H
#define STRATA_AUTOGRAD_H

#include "strata/Function.h"
#include "strata/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace strata {
namespace detail {
/// A version of a storage in the recorded trace (dsl/lib/Impl.h).
struct Node;
/// A view op a read went through, linked to the view it was applied to
/// (dsl/lib/Impl.h).
struct ViewChain;
} // namespace detail

/// A node of the autograd graph (below).
class GradFn;
/// Shared handle to a node of the autograd graph (null: none).
using GradFnPtr = std::shared_ptr<GradFn>;

/// A node of the autograd graph, named as PyTorch names it (MulBackward0,
/// SumBackward0, ..., TBackward0 for a view made by t(), AccumulateGrad for
/// a leaf).
class GradFn {
public:
  /// PyTorch's class name ("MulBackward0", "AccumulateGrad").
  const std::string &name() const { return name_; }
  /// The functions the gradient flows to, one per input (null for an input
  /// that does not require grad), as PyTorch's next_functions.
  std::vector<GradFnPtr> next_functions() const;
  /// "file:line" of the forward op that recorded it ("" for AccumulateGrad).
  std::string where() const;
  /// Identity of the graph node (two handles to one node compare equal).
  const void *id() const;
  /// Sizes of the tensors the forward op saved for backward (PyTorch's
  /// saved tensors: both operands of a mul, the result of an exp, ...).
  std::vector<Shape> saved_sizes() const;
  /// For AccumulateGrad: the leaf whose .grad() it accumulates into.
  Tensor variable() const;

  /// For the implementation.
  GradFn(std::shared_ptr<detail::Node> node,
         std::weak_ptr<detail::TensorImpl> leaf);
  /// For the implementation: the node of view op `view` applied (through
  /// the rest of its chain) to version `node`, the data of `leaf` if set.
  GradFn(std::shared_ptr<detail::Node> node,
         std::shared_ptr<const detail::ViewChain> view,
         std::weak_ptr<detail::TensorImpl> leaf = {});

private:
  std::shared_ptr<detail::Node> node_;
  std::weak_ptr<detail::TensorImpl> leaf_;
  std::shared_ptr<const detail::ViewChain> view_;
  std::string name_;
};

/// The chain of grad_fn names behind `t`, one line per path from t's
/// grad_fn to a leaf: "AddBackward0 -> MeanBackward0 -> ... -> AccumulateGrad".
std::string format_graph(const Tensor &t);

/// Gradients of `outputs` with respect to `inputs` (PyTorch's
/// torch.autograd.grad): nothing accumulates into .grad(). `grad_outputs`
/// may be empty when every output is a scalar. With `create_graph`, the
/// gradients are recorded as a graph of their own, functions of the inputs
/// (and of `grad_outputs`) that can be differentiated again.
/// `retain_graph` defaults to `create_graph` (PyTorch's and LibTorch's).
std::vector<Tensor> grad(const std::vector<Tensor> &outputs,
                         const std::vector<Tensor> &inputs,
                         const std::vector<Tensor> &grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false,
                         SourceLoc loc = SourceLoc::current());

/// Gradient programs compiled so far (a backward of a structure seen
/// before reuses its compiled program).
int64_t backward_compiles();
/// Segments run so far by backwards of long graphs, each one gradient
/// program (docs/design.md, "Deep programs"); 0 while every backward ran
/// as one program.
int64_t backward_segments();
/// Gradient programs run so far from the template a program of their
/// structure left (built not again: docs/design.md, "Gradient
/// templates").
int64_t backward_templates();

/// Whether ops record the autograd graph (false inside a NoGradGuard).
bool is_grad_enabled();

/// Disables recording while alive (torch::NoGradGuard).
class NoGradGuard {
public:
  /// Disables grad mode.
  NoGradGuard();
  /// Restores the previous mode.
  ~NoGradGuard();
  /// Not copyable: one guard per scope.
  NoGradGuard(const NoGradGuard &) = delete;
  /// Not copyable: one guard per scope.
  NoGradGuard &operator=(const NoGradGuard &) = delete;

private:
  bool previous_;
};

/// Sets grad mode while alive (torch::AutoGradMode): AutoGradMode(true)
/// records the graph inside a NoGradGuard's scope.
class AutoGradMode {
public:
  /// Sets grad mode to `enabled`.
  explicit AutoGradMode(bool enabled);
  /// Restores the previous mode.
  ~AutoGradMode();
  /// Not copyable: one guard per scope.
  AutoGradMode(const AutoGradMode &) = delete;
  /// Not copyable: one guard per scope.
  AutoGradMode &operator=(const AutoGradMode &) = delete;

private:
  bool previous_;
};

/// Receives strata's warnings (PyTorch's UserWarnings): the message and the
/// "file:line" of the user's call.
using WarningHandler =
    Function<void(const std::string &message, const std::string &where)>;
/// Replaces the warning handler; an empty one restores the default, which
/// prints "file:line: UserWarning: message" on stderr once per message and
/// line (as Python's default warning filter does).
void set_warning_handler(WarningHandler handler);

/// Anomaly mode: backward errors also name the forward op's source line.
void set_detect_anomaly(bool enabled);
/// Whether anomaly mode is on.
bool is_anomaly_enabled();

/// A user-supplied analytic gradient for gradcheck (a custom Function's
/// backward): the gradient of each input given the gradient of the output.
using VJPFunction = Function<std::vector<Tensor>(
    const std::vector<Tensor> &inputs, const Tensor &grad_output)>;

/// What gradcheck found.
struct GradcheckResult {
  /// Every element within atol + rtol * |numeric|.
  bool ok = true;
  /// The worst element by relative error (a failing one when the check
  /// fails): input number, flat element index, output element.
  int64_t input = -1, index = -1, output = -1;
  /// The worst element's analytic and numeric derivative.
  double analytic = 0, numeric = 0;
  /// |analytic - numeric| / max(|analytic|, |numeric|); 0 where both are 0.
  double relative_error = 0;
  /// A one-line report of the worst element.
  std::string message;
};

/// Options of gradcheck.
struct GradcheckOptions {
  /// Finite-difference step, absolute and relative tolerance (PyTorch's
  /// gradcheck defaults).
  double eps = 1e-6, atol = 1e-5, rtol = 1e-3;
  /// When set, the analytic gradient comes from it instead of autograd.
  VJPFunction analytic;
};

/// Compares autograd's Jacobian of `fn` at `inputs` (converted to float64)
/// with central finite differences; reports the worst element.
GradcheckResult
gradcheck(const Function<Tensor(const std::vector<Tensor> &)> &fn,
          const std::vector<Tensor> &inputs,
          const GradcheckOptions &options = {},
          SourceLoc loc = SourceLoc::current());

} // namespace strata

#endif // STRATA_AUTOGRAD_H
