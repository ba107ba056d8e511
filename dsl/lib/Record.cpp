//===- Record.cpp - a recorded op's result --------------------------------===//
//
// makeResult: a recorded compute node made a tensor over a fresh storage
// root (its strides, device, depth, autograd, and a reader of its inputs'
// roots); and the node alone (finishNode), for a value an in-place op
// writes at once, which no tensor ever shows (inPlaceNumber, OpsCopy.cpp).
//
//===----------------------------------------------------------------------===//
#include "Impl.h"

#include <algorithm>
#include <array>
#include <numeric>

using namespace strata;
using namespace strata::detail;

void strata::detail::pruneReaders(StorageRoot &root) {
  std::erase_if(root.readers, [&root](const std::weak_ptr<Node> &w) {
    NodePtr r = w.lock();
    if (!r || r->buffer)
      return true;
    if (!root.home)
      return false; // (takeHomes may make an older version the home)
    // An older pending version never takes the home buffer (runSlice).
    return std::none_of(
        r->inputs.begin(), r->inputs.end(), [&root](const Operand &in) {
          return (in.node == root.current ||
                  (in.node->buffer && in.node->buffer == root.home)) &&
                 in.node->root.lock().get() == &root;
        });
  });
  root.readersPruneAt = std::max<size_t>(32, 2 * root.readers.size());
}

namespace {
/// Registers `node` as a reader of every root it reads.
void registerReader(const NodePtr &node) {
  for (const Operand &in : node->inputs) {
    auto root = in.node->root.lock();
    if (!root)
      continue;
    auto &readers = root->readers;
    if (readers.size() >= root->readersPruneAt)
      pruneReaders(*root); // (n live readers cost O(n), not O(n^2))
    // (Whether the last reader is `node`, by owner: no atomic lock().)
    if (readers.empty() || readers.back().owner_before(node) ||
        node.owner_before(readers.back()))
      readers.push_back(node);
  }
}

Shape recordedStrides(const Node &n) {
  // The common case without copying the inputs' layouts: an elementwise op
  // over contiguous inputs of the result's shape has a contiguous result
  // (elementwiseResult's first rule; a layout is contiguous exactly when
  // its strides' magnitudes are, and a pow exponent it would drop is then
  // 0-d and contiguous too).
  if ((n.op == Op::Unary || n.op == Op::Binary || n.op == Op::Where) &&
      !n.inputs.empty() &&
      std::all_of(n.inputs.begin(), n.inputs.end(), [&](const Operand &in) {
        return in.layout.sizes == n.sizes && layout::isContiguous(in.layout);
      }))
    return layout::contiguousStrides(n.sizes);
  // (Up to four operands' layouts on the stack: `x * 2` allocates none.)
  std::array<layout::Layout, 4> few;
  std::vector<layout::Layout> many(n.inputs.size() > 4 ? n.inputs.size() : 0);
  std::span<layout::Layout> ins(many.empty() ? few.data() : many.data(),
                                n.inputs.size());
  for (size_t i = 0; i < ins.size(); ++i)
    ins[i] = n.inputs[i].layout;
  return strata::detail::resultStrides(n, ins);
}
} // namespace

bool strata::detail::finishNode(const NodePtr &node, const SourceLoc &loc,
                                bool requiresGrad,
                                const std::shared_ptr<StorageRoot> &root) {
  setDepth(*node);
  node->strides = recordedStrides(*node);
  if (!node->inputs.empty()) {
    // A 0-d CPU tensor joins an op on cuda:0 as a number would (PyTorch's
    // CPU scalars: `cuda_t * torch.tensor(2.5)` runs on the GPU).
    int8_t device = kDevAny;
    bool cpuScalar = false;
    for (const Operand &in : node->inputs) {
      if (in.node->device == kDevCPU && in.layout.sizes.empty())
        cpuScalar = true;
      else
        device = joinDevices(device, in.node->device, loc);
    }
    node->device = device == kDevAny && cpuScalar ? kDevCPU : device;
  }
  node->rootNumel = std::accumulate(node->sizes.begin(), node->sizes.end(),
                                    int64_t{1}, std::multiplies<int64_t>());
  if (root)
    node->root = root;
  node->loc = loc;
  // As PyTorch: only floating-point results take part in autograd (`x > 0`,
  // `x.to(kInt64)` are constants to backward).
  requiresGrad = requiresGrad && gradEnabled() && isFloatingPoint(node->dtype);
  if (requiresGrad)
    recordGradNode(*node);
  registerReader(node);
  return requiresGrad;
}

Tensor strata::detail::makeResult(NodePtr node, const SourceLoc &loc,
                                  bool requiresGrad) {
  TraceLock lock;
  auto root = std::make_shared<StorageRoot>();
  root->dtype = node->dtype; // (what a saved result's record copies)
  requiresGrad = finishNode(node, loc, requiresGrad, root);
  root->numel = node->rootNumel;
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = node->dtype;
  impl->layout = node->resultLayout();
  impl->origin = node->name;
  impl->loc = loc;
  impl->requiresGrad = requiresGrad;
  impl->isLeaf = !requiresGrad;
  root->current = std::move(node);
  impl->root = std::move(root);
  cutDeepChain(*impl, loc);
  return Tensor(std::move(impl));
}
