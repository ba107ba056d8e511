//===- Embedding.cpp - nn::Embedding as a one-hot matmul ------------------===//
//
// strata has no gather/index_select yet, so a lookup is onehot(indices) @
// weight, onehot being indices compared with an arange of the rows. The
// product is exact (each output element is one weight times 1 plus zeros)
// and its gradient, onehot^T @ grad, is PyTorch's embedding_backward (an
// index_add of the gradient rows) computed as a matmul. It costs
// O(indices x rows x dim): fine for vocabularies of thousands, wasteful
// beyond; an index op will replace it.
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
  int64_t rows = options.num_embeddings();
  if (indices.is_materialized(loc))
    for (int64_t i : indices.to_vector<int64_t>(loc))
      if (i < 0 || i >= rows)
        throw Error("index out of range in self",
                    "indices are in [0, num_embeddings) = [0, " +
                        std::to_string(rows) + ")",
                    loc);
  Tensor onehot =
      indices.unsqueeze(-1, loc)
          .eq(arange(rows, TensorOptions(t).device(indices.device(loc)), loc),
              loc)
          .to(weight.dtype(loc), loc);
  return onehot.matmul(weight, loc);
}
