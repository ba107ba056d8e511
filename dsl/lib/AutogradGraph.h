//===- AutogradGraph.h - what the autograd files share ----------*- C++ -*-===//
//
// Helpers over the recorded autograd graph shared by Autograd.cpp (grad
// mode, edges, views' grad_fns), AutogradInplace.cpp (in-place writes),
// SavedTensors.cpp (what an op saves), GradFn.cpp (the graph as PyTorch
// shows it) and GradFnNames.cpp (PyTorch's names). Internal to the DSL.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_AUTOGRADGRAPH_H
#define STRATA_DSL_LIB_AUTOGRADGRAPH_H

#include "Impl.h"

#include <string>
#include <string_view>
#include <utility>

namespace strata::detail {

/// Whether `n` records op `name` (its IR mnemonic, Node::name).
inline bool isOp(const Node &n, const char *name) {
  return std::string_view(n.name) == name;
}

/// A differentiable view: made by a view op in grad mode, over its base's
/// storage (not detach(), not a copying reshape).
inline bool isDiffView(const TensorImpl &t) { return t.gradBase != nullptr; }

/// The tensor whose autograd history `t` shares: the base of a
/// differentiable view, else `t` (detach() starts a new one).
inline const TensorImpl &autogradIdentity(const TensorImpl &t) {
  return t.gradBase ? *t.gradBase : t;
}

/// Whether `o` reads a C++ number: a 0-d fill on no device in particular
/// (scalarTensor), maybe cast by promotion.
bool isNumber(const Operand &o);

/// Whether operand `i` of `n` is a number that PyTorch takes as a Scalar
/// argument, not as a wrapped tensor (`x * 2` saves its 2): no edge of the
/// node, no saved tensor (pow.Tensor_Scalar's exponent, pow.Scalar's base,
/// fmod/remainder.Scalar's other, lerp.Scalar's weight, rsub's number,
/// add/sub's alpha: fma's operand 1).
bool isScalarArgument(const Node &n, size_t i);

/// Whether `o` reads a bool tensor (not a number) cast by promotion.
bool boolTensorCast(const Operand &o);

/// PyTorch 1.13's grad_fn name of op node `n` (GradFnNames.cpp).
std::string gradFnNameOf(const Node &n);

/// PyTorch 1.13's grad_fn name of view op `v` (GradFnNames.cpp).
std::string viewGradFnName(const ViewChain &v);
/// The same for view op `op` with arguments `args`.
std::string viewGradFnName(std::string_view op, const Shape &args);

/// PyTorch's CreationMeta::MULTI_OUTPUT_NODE (TensorImpl::multiOutput): a
/// view that split, split_with_sizes, chunk or unbind returned in grad
/// mode, or a view of one, which no in-place op may write with grad. The
/// function (its PyTorch node), or a view of such a view:
enum : int32_t {
  kMultiOutputSplit = 1,          // SplitBackward0 (split, chunk)
  kMultiOutputSplitWithSizes = 2, // SplitWithSizesBackward0
  kMultiOutputUnbind = 3,         // UnbindBackward0
  kMultiOutputViewOf = 4,         // a view of one (its own grad_fn's name)
};
/// `t`'s kMultiOutput* (0: none) and its output number there: the field
/// holds the kind in its low 3 bits, the number above them.
inline std::pair<int32_t, int32_t> multiOutputOf(const TensorImpl &t) {
  return {t.multiOutput & 7, t.multiOutput >> 3};
}
/// PyTorch's node name of multi-output function `fn` (kMultiOutputSplit,
/// ...; null for none and for kMultiOutputViewOf).
inline const char *multiOutputName(int32_t fn) {
  static const char *const names[] = {nullptr, "SplitBackward0",
                                      "SplitWithSizesBackward0",
                                      "UnbindBackward0", nullptr};
  return fn >= 0 && fn <= kMultiOutputViewOf ? names[fn] : nullptr;
}
/// Marks `views`, just returned by a multi-output view function `fn`
/// (kMultiOutput*), as MULTI_OUTPUT_NODE when grad mode is on (made in
/// no-grad mode, they are no-grad views already).
void markMultiOutput(std::vector<Tensor> &views, int32_t fn);

} // namespace strata::detail

#endif // STRATA_DSL_LIB_AUTOGRADGRAPH_H
