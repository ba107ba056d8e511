//===- SavedTensors.cpp - what an op saves for its backward ---------------===//
//
// PyTorch's saved tensors: the versions an op's backward reads, checked at
// backward against later in-place writes (BackwardGraph.cpp) and kept (a
// write over their buffer copies them first, Eval.cpp).
//
//===----------------------------------------------------------------------===//
#include "AutogradGraph.h"

using namespace strata;
using namespace strata::detail;

namespace {
/// The ops whose backward reads the result (PyTorch saves `result`).
bool savesResult(const Node &n) {
  for (const char *s : {"exp", "sqrt", "tanh", "sigmoid", "relu", "tan", "exp2",
                        "expm1", "rsqrt", "reciprocal"})
    if (isOp(n, s))
      return true;
  return false;
}

/// The unary ops whose backward reads their input (PyTorch saves `self`,
/// derivatives.yaml).
bool savesInput(const Node &n) {
  for (const char *s : {"log", "abs", "sin", "cos", "asin", "acos", "atan",
                        "sinh", "cosh", "log2", "log10", "log1p", "erf", "gelu",
                        "gelu_tanh", "silu", "softplus", "square"})
    if (isOp(n, s))
      return true;
  return false;
}

} // namespace

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
  } else if (isOp(node, "mul") || isOp(node, "matmul")) {
    if (rg(0))
      save(1);
    if (rg(1))
      save(0);
  } else if (isOp(node, "div")) {
    // `other` is in both formulas: saved whenever an input requires grad,
    // even one whose gradient goes nowhere (a view made in no-grad mode);
    // a saved input used by one formula only is saved when that gradient
    // is computed (PyTorch's should_compute_output).
    save(1);
    if (rg(1))
      save(0);
  } else if (isOp(node, "pow")) {
    save(0);
    save(1);
    // A bool exponent tensor, cast by promotion (see Node::boolExponent;
    // pow(x, False), a number, computes).
    node.boolExponent = in.size() == 2 && boolTensorCast(in[1]);
    // pow(Tensor, Tensor) and pow(Scalar, Tensor) save their result
    // whether or not the exponent's gradient is computed (PowBackward1/2).
    if (rg(1) || !isNumber(in[1]))
      saveResult();
  } else if (isOp(node, "maximum") || isOp(node, "minimum") ||
             isOp(node, "atan2")) {
    if (isOp(node, "atan2")) // a bool self cast by promotion (boolSelf)
      node.boolSelf = in.size() == 2 && boolTensorCast(in[0]);
    save(0);
    save(1);
  } else if (isOp(node, "fmod") || isOp(node, "remainder")) {
    if (rg(1)) { // other: -grad * self.div(other, rounding_mode)
      save(0);
      save(1);
    }
  } else if (isOp(node, "lerp")) {
    if (!isNumber(in[2])) { // lerp.Tensor: weight; self and end when
      save(2);              // weight's gradient (end - self) is computed
      if (rg(2)) {
        save(0);
        save(1);
      }
    }
  } else if (savesInput(node)) {
    save(0);
  } else if (isOp(node, "amax") || isOp(node, "amin") || isOp(node, "prod") ||
             isOp(node, "cumprod")) {
    save(0);
    saveResult();
  } else if (isOp(node, "where") || (isOp(node, "mean") && node.dimList)) {
    save(0); // (MeanBackward1 saves self in PyTorch 1.13)
  } else if (savesResult(node)) {
    saveResult();
  }
}
