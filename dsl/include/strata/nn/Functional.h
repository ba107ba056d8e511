//===- Functional.h - torch::nn::functional: losses, softmax, dropout -*- C++
//-*-===//
//
// The composite ops of torch::nn::functional, written over strata's public
// tensor ops: each is a few recorded elementwise ops and reductions that the
// compiler fuses, and its gradient comes from differentiating that
// composition (no hand-written backward). Names, options, defaults and
// error messages are LibTorch 1.13's:
//
//   namespace F = strata::nn::functional;
//   Tensor loss = F::cross_entropy(logits, target,
//       F::CrossEntropyFuncOptions().label_smoothing(0.1));
//
// Class indices become a one-hot mask by comparing them with an `arange`
// (strata has no gather yet), so cross_entropy and nll_loss cost O(N*C)
// elementwise work, which a fused kernel does in one pass over the logits.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_NN_FUNCTIONAL_H
#define STRATA_NN_FUNCTIONAL_H

#include "strata/Arg.h"
#include "strata/Tensor.h"

#include <cstdint>
#include <optional>

namespace strata {
namespace nn {

/// How a loss reduces its per-element values (LibTorch's torch::kNone,
/// torch::kMean, torch::kSum).
enum class Reduction {
  None, ///< the per-element losses
  Mean, ///< their (weighted) mean
  Sum,  ///< their sum
};

} // namespace nn

/// No reduction: a loss per element (torch::kNone).
inline constexpr nn::Reduction kNone = nn::Reduction::None;
/// The mean of the per-element losses (torch::kMean).
inline constexpr nn::Reduction kMean = nn::Reduction::Mean;
/// The sum of the per-element losses (torch::kSum).
inline constexpr nn::Reduction kSum = nn::Reduction::Sum;

namespace nn {
namespace functional {

/// exp(x) / sum(exp(x)) along `dim`, computed as exp(x - max) / sum(...) so
/// large inputs do not overflow. Floating-point inputs only.
Tensor softmax(const Tensor &input, int64_t dim,
               SourceLoc loc = SourceLoc::current());

/// log(softmax(x)) along `dim`, computed as (x - max) - log(sum(exp(x -
/// max))): finite for any finite input, where log(softmax(x)) underflows.
Tensor log_softmax(const Tensor &input, int64_t dim,
                   SourceLoc loc = SourceLoc::current());

/// strata::one_hot (torch::nn::functional::one_hot).
Tensor one_hot(const Tensor &tensor, int64_t num_classes = -1,
               SourceLoc loc = SourceLoc::current());

/// Options of nll_loss (torch::nn::functional::NLLLossFuncOptions).
struct NLLLossFuncOptions {
  /// Mean reduction.
  NLLLossFuncOptions() = default;
  /// The given reduction: `F::nll_loss(a, b, kSum)`.
  NLLLossFuncOptions(Reduction r) : reduction_(r) {}
  /// A weight per class (1-D, C elements); undefined: every class 1.
  STRATA_ARG(Tensor, weight);
  /// Targets equal to it contribute nothing (nor to the mean's divisor).
  STRATA_ARG(int64_t, ignore_index) = -100;
  /// Mean (weighted by the targets' class weights), sum or none.
  STRATA_ARG(Reduction, reduction) = Reduction::Mean;
};

/// The negative log likelihood of class-index targets: -input[n, target[n]]
/// (times the class weight). `input` holds log-probabilities, (C), (N, C) or
/// (N, C, d1, ...); `target` int64 class indices, () / (N) / (N, d1, ...).
/// Targets outside [0, C) other than ignore_index throw when the target is
/// already computed ("Target 7 is out of bounds."); a pending target is not
/// evaluated for the check and such a target then contributes 0.
Tensor nll_loss(const Tensor &input, const Tensor &target,
                const NLLLossFuncOptions &options = {},
                SourceLoc loc = SourceLoc::current());

/// Options of cross_entropy (torch::nn::functional::CrossEntropyFuncOptions).
struct CrossEntropyFuncOptions {
  /// Mean reduction.
  CrossEntropyFuncOptions() = default;
  /// The given reduction: `F::cross_entropy(a, b, kSum)`.
  CrossEntropyFuncOptions(Reduction r) : reduction_(r) {}
  /// A weight per class (1-D, C elements); undefined: every class 1.
  STRATA_ARG(Tensor, weight);
  /// Class-index targets equal to it contribute nothing (not supported with
  /// class-probability targets, as in PyTorch).
  STRATA_ARG(int64_t, ignore_index) = -100;
  /// Mean, sum or none.
  STRATA_ARG(Reduction, reduction) = Reduction::Mean;
  /// In [0, 1]: the target becomes (1 - s) * target + s / C (uniform mix).
  STRATA_ARG(double, label_smoothing) = 0.0;
};

/// Cross entropy between logits `input` ((C), (N, C) or (N, C, d1, ...)) and
/// either class indices (int64, the input's shape without the class dim) or
/// class probabilities (floating point, the input's shape), as
/// torch::nn::functional::cross_entropy: log_softmax over the class dim,
/// then nll_loss (indices) or -sum(target * log_softmax) (probabilities),
/// with PyTorch's label-smoothing and weighting rules.
Tensor cross_entropy(const Tensor &input, const Tensor &target,
                     const CrossEntropyFuncOptions &options = {},
                     SourceLoc loc = SourceLoc::current());

/// Options of mse_loss (torch::nn::functional::MSELossFuncOptions).
struct MSELossFuncOptions {
  /// Mean reduction.
  MSELossFuncOptions() = default;
  /// The given reduction: `F::mse_loss(a, b, kSum)`.
  MSELossFuncOptions(Reduction r) : reduction_(r) {}
  /// Mean, sum or none.
  STRATA_ARG(Reduction, reduction) = Reduction::Mean;
};

/// (input - target)^2, reduced; the two broadcast together.
Tensor mse_loss(const Tensor &input, const Tensor &target,
                const MSELossFuncOptions &options = {},
                SourceLoc loc = SourceLoc::current());

/// Options of l1_loss (torch::nn::functional::L1LossFuncOptions).
struct L1LossFuncOptions {
  /// Mean reduction.
  L1LossFuncOptions() = default;
  /// The given reduction: `F::l1_loss(a, b, kSum)`.
  L1LossFuncOptions(Reduction r) : reduction_(r) {}
  /// Mean, sum or none.
  STRATA_ARG(Reduction, reduction) = Reduction::Mean;
};

/// |input - target|, reduced; the two broadcast together.
Tensor l1_loss(const Tensor &input, const Tensor &target,
               const L1LossFuncOptions &options = {},
               SourceLoc loc = SourceLoc::current());

/// Options of binary_cross_entropy_with_logits
/// (torch::nn::functional::BinaryCrossEntropyWithLogitsFuncOptions).
struct BinaryCrossEntropyWithLogitsFuncOptions {
  /// Mean reduction.
  BinaryCrossEntropyWithLogitsFuncOptions() = default;
  /// The given reduction: `F::binary_cross_entropy_with_logits(a, b, kSum)`.
  BinaryCrossEntropyWithLogitsFuncOptions(Reduction r) : reduction_(r) {}
  /// A weight per element (broadcast to the input); undefined: 1.
  STRATA_ARG(Tensor, weight);
  /// A weight of the positive term per class (broadcast); undefined: 1.
  STRATA_ARG(Tensor, pos_weight);
  /// Mean, sum or none.
  STRATA_ARG(Reduction, reduction) = Reduction::Mean;
};

/// -[t * log(sigmoid(x)) + (1 - t) * log(1 - sigmoid(x))] for logits x and
/// targets t of the same shape, in PyTorch's stable form
/// (1 - t) x + m + log(e^-m + e^(-x-m)) with m = max(-x, 0), which never
/// takes the log of 0 and never overflows the exp.
Tensor binary_cross_entropy_with_logits(
    const Tensor &input, const Tensor &target,
    const BinaryCrossEntropyWithLogitsFuncOptions &options = {},
    SourceLoc loc = SourceLoc::current());

/// Options of dropout (torch::nn::functional::DropoutFuncOptions).
struct DropoutFuncOptions {
  /// p = 0.5.
  DropoutFuncOptions() = default;
  /// The given probability: `F::dropout(x, 0.2)`.
  DropoutFuncOptions(double p) : p_(p) {}
  /// The probability of zeroing an element, in [0, 1].
  STRATA_ARG(double, p) = 0.5;
  /// Off: the input is returned unchanged (evaluation mode).
  STRATA_ARG(bool, training) = true;
};

/// Zeroes each element with probability p (a mask drawn from strata's
/// generator, strata::manual_seed) and scales the rest by 1 / (1 - p), so
/// the expectation is unchanged; p = 1 gives zeros. Not training: `input`.
Tensor dropout(const Tensor &input, const DropoutFuncOptions &options = {},
               SourceLoc loc = SourceLoc::current());

/// input.matmul(weight.t()) + bias: weight is (out, in), bias (out) or
/// undefined.
Tensor linear(const Tensor &input, const Tensor &weight,
              const Tensor &bias = Tensor(),
              SourceLoc loc = SourceLoc::current());

/// Options of embedding (torch::nn::functional::EmbeddingFuncOptions).
struct EmbeddingFuncOptions {
  /// No padding row.
  EmbeddingFuncOptions() = default;
  /// A row of weight (negative: counted from the end) whose lookups pass
  /// no gradient to it (PyTorch's padding_idx); unset: none.
  STRATA_ARG(std::optional<int64_t>, padding_idx);
};

/// The rows of `weight` ((num_embeddings, embedding_dim)) at `input`
/// (int64 or int32 indices of any shape): input's shape plus embedding_dim.
/// An index_select of weight, one gather kernel (indices checked at the
/// call, evaluated if pending); its gradient adds the gradient rows into
/// weight's, except at padding_idx.
Tensor embedding(const Tensor &input, const Tensor &weight,
                 const EmbeddingFuncOptions &options = {},
                 SourceLoc loc = SourceLoc::current());

/// Options of layer_norm (torch::nn::functional::LayerNormFuncOptions).
struct LayerNormFuncOptions {
  /// Normalizes over trailing dims of sizes `normalized_shape`.
  LayerNormFuncOptions(Shape normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  /// The sizes of the trailing dims normalized over.
  STRATA_ARG(Shape, normalized_shape);
  /// Scale after normalizing (normalized_shape); undefined: none.
  STRATA_ARG(Tensor, weight);
  /// Shift after scaling (normalized_shape); undefined: none.
  STRATA_ARG(Tensor, bias);
  /// Added to the variance before the square root.
  STRATA_ARG(double, eps) = 1e-5;
};

/// (x - mean) / sqrt(var + eps) * weight + bias, with the mean and the
/// biased variance over the trailing dims of sizes normalized_shape.
Tensor layer_norm(const Tensor &input, const LayerNormFuncOptions &options,
                  SourceLoc loc = SourceLoc::current());

} // namespace functional
} // namespace nn
} // namespace strata

#endif // STRATA_NN_FUNCTIONAL_H
