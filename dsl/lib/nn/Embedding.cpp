//===- Embedding.cpp - nn::Embedding as an index_select -------------------===//
//
// A lookup is weight.index_select(0, indices) viewed to indices' shape +
// [dim]: one gather kernel, O(indices x dim). Its gradient is the
// compiler's VJP of the gather, a scatter_add of the gradient rows into
// zeros (PyTorch's embedding_backward, an index_add), O(indices x dim)
// plus the zero fill of the weight's gradient. index_select checks the
// indices at the call (evaluating pending ones), with PyTorch's "index
// out of range in self".
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include "strata/Autograd.h"
#include "strata/nn/Layers.h"

using namespace strata;
using namespace strata::nn;

EmbeddingImpl::EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim,
                             SourceLoc loc)
    : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim), loc) {}

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions &options, SourceLoc loc)
    : Module("Embedding"), options(options) {
  weight = register_parameter(
      "weight", zeros({options.num_embeddings(), options.embedding_dim()}),
      true, loc);
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  NoGradGuard noGrad;
  weight.copy_(randn(weight.sizes()));
  weight.eval();
}

Tensor EmbeddingImpl::forward(const Tensor &indices, SourceLoc loc) {
  DType t = indices.dtype(loc);
  if (t != DType::I64 && t != DType::I32)
    throw Error(std::string("Expected tensor for argument #1 'indices' to "
                            "have one of the following scalar types: Long, "
                            "Int; but got torch.") +
                    internal::scalarTypeName(t) +
                    "Tensor instead (while checking arguments for "
                    "embedding)",
                "indices are integers: indices.to(kInt64)", loc);
  Shape shape = indices.sizes(loc);
  shape.push_back(options.embedding_dim());
  return weight.index_select(0, indices.reshape({indices.numel(loc)}, loc), loc)
      .view(shape, loc);
}
