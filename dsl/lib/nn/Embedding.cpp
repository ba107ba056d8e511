//===- Embedding.cpp - functional::embedding and nn::Embedding ------------===//
//
// A lookup is weight.index_select(0, indices) viewed to indices' shape +
// [dim]: one gather kernel, O(indices x dim). Its gradient is the
// compiler's VJP of the gather, a scatter_add of the gradient rows into
// zeros (PyTorch's embedding_backward, an index_add), O(indices x dim)
// plus the zero fill of the weight's gradient. index_select checks the
// indices at the call (evaluating pending ones), with PyTorch's "index
// out of range in self".
//
// padding_idx keeps the looked-up values and cuts their gradient:
// where(index == padding_idx, rows.detach(), rows), one elementwise op
// after the gather, so the padding row's gradient stays zero as in
// PyTorch's embedding_backward. nn::Embedding's forward is the functional
// op over its weight.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "strata/Autograd.h"

#include "strata/nn/Layers.h"
#include <algorithm>

using namespace strata;
using namespace strata::nn;

namespace {

/// padding_idx in [0, rows), or PyTorch's assertion message.
std::optional<int64_t> wrapPaddingIdx(std::optional<int64_t> padding,
                                      int64_t rows, const SourceLoc &loc) {
  if (!padding)
    return std::nullopt;
  if (*padding >= rows || *padding < -rows)
    throw Error("Padding_idx must be within num_embeddings",
                "padding_idx is in [-num_embeddings, num_embeddings) (" +
                    std::to_string(*padding) + " given, " +
                    std::to_string(rows) + " rows)",
                loc);
  return *padding < 0 ? *padding + rows : *padding;
}

} // namespace

Tensor functional::embedding(const Tensor &input, const Tensor &weight,
                             const EmbeddingFuncOptions &options,
                             SourceLoc loc) {
  if (weight.dim(loc) != 2)
    throw Error("'weight' must be 2-D",
                "weight is (num_embeddings, embedding_dim); got " +
                    internal::shapeString(weight.sizes(loc)),
                loc);
  std::optional<int64_t> padding =
      wrapPaddingIdx(options.padding_idx(), weight.size(0, loc), loc);
  DType t = input.dtype(loc);
  if (t != DType::I64 && t != DType::I32)
    throw Error(std::string("Expected tensor for argument #1 'indices' to "
                            "have one of the following scalar types: Long, "
                            "Int; but got torch.") +
                    internal::scalarTypeName(t) +
                    "Tensor instead (while checking arguments for "
                    "embedding)",
                "indices are integers: indices.to(kInt64)", loc);
  Tensor flat = input.reshape({input.numel(loc)}, loc);
  Tensor rows = weight.index_select(0, flat, loc);
  if (padding) {
    Tensor isPadding = flat.eq(full({}, *padding, TensorOptions(t), loc), loc)
                           .unsqueeze(1, loc);
    rows = where(isPadding, rows.detach(loc), rows, loc);
  }
  Shape shape = input.sizes(loc);
  shape.push_back(weight.size(1, loc));
  // A view, so its grad_fn is ViewBackward0 (PyTorch's EmbeddingBackward0).
  return rows.view(shape, loc);
}

EmbeddingImpl::EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim,
                             SourceLoc loc)
    : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim), loc) {}

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions &options, SourceLoc loc)
    : Module("Embedding"), options(options) {
  if (options.num_embeddings() < 0 || options.embedding_dim() < 0)
    throw Error("Embedding: Trying to create tensor with negative dimension " +
                    std::to_string(std::min(options.num_embeddings(),
                                            options.embedding_dim())),
                "num_embeddings and embedding_dim are >= 0", loc);
  this->options.padding_idx(
      wrapPaddingIdx(options.padding_idx(), options.num_embeddings(), loc));
  weight = register_parameter(
      "weight",
      zeros({options.num_embeddings(), options.embedding_dim()}, {}, loc), true,
      loc);
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  NoGradGuard noGrad;
  weight.copy_(randn(weight.sizes()));
  if (options.padding_idx())
    weight.select(0, *options.padding_idx()).fill_(0);
  weight.eval();
}

Tensor EmbeddingImpl::forward(const Tensor &indices, SourceLoc loc) {
  return functional::embedding(
      indices, weight,
      functional::EmbeddingFuncOptions().padding_idx(options.padding_idx()),
      loc);
}
