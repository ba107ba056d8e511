//===- Layers.h - torch::nn's layers (Linear, GELU, ...) --------*- C++ -*-===//
//
// torch::nn's layers with LibTorch's names: each `XImpl` is the module and
// `X` its ModuleHolder (`nn::Linear fc(64, 10); fc(x); fc->weight`). Their
// forward() calls the functions of strata/nn/Functional.h; initialization
// follows PyTorch 1.13's reset_parameters() with strata's generator
// (strata::manual_seed), so the distributions match PyTorch's and the
// values do not.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_NN_LAYERS_H
#define STRATA_NN_LAYERS_H

#include "strata/Arg.h"
#include "strata/Function.h"
#include "strata/nn/Functional.h"
#include "strata/nn/Module.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata {
namespace nn {

/// Options of Linear (torch::nn::LinearOptions).
struct LinearOptions {
  /// A layer from `in_features` to `out_features`.
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  /// Size of each input sample.
  STRATA_ARG(int64_t, in_features);
  /// Size of each output sample.
  STRATA_ARG(int64_t, out_features);
  /// Whether the layer adds a learned bias.
  STRATA_ARG(bool, bias) = true;
};

/// y = x W^T + b. W (out, in) is kaiming_uniform(a = sqrt(5)), i.e.
/// U(-1/sqrt(in), 1/sqrt(in)), and b U(-1/sqrt(in), 1/sqrt(in)), as
/// PyTorch's reset_parameters().
class LinearImpl : public Module {
public:
  /// A layer from `in_features` to `out_features`, with bias.
  LinearImpl(int64_t in_features, int64_t out_features,
             SourceLoc loc = SourceLoc::current());
  /// A layer with `options`.
  explicit LinearImpl(const LinearOptions &options,
                      SourceLoc loc = SourceLoc::current());
  /// Draws new weights and bias (PyTorch's reset_parameters).
  void reset_parameters();
  /// x (..., in) -> (..., out). A last dim other than in_features throws
  /// PyTorch's "mat1 and mat2 shapes cannot be multiplied (4x3 and 5x10)".
  Tensor forward(const Tensor &input, SourceLoc loc = SourceLoc::current());
  /// The options it was made with.
  LinearOptions options;
  /// (out_features, in_features).
  Tensor weight;
  /// (out_features), or undefined without bias.
  Tensor bias;
};
/// The ModuleHolder of LinearImpl (torch::nn::Linear).
using Linear = ModuleHolder<LinearImpl>;

/// Options of Embedding (torch::nn::EmbeddingOptions).
struct EmbeddingOptions {
  /// A table of `num_embeddings` rows of `embedding_dim` values.
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  /// Rows in the table (indices are in [0, num_embeddings)).
  STRATA_ARG(int64_t, num_embeddings);
  /// Values per row.
  STRATA_ARG(int64_t, embedding_dim);
  /// A row (negative: counted from the end) initialized to zeros whose
  /// lookups pass no gradient to it; unset: none.
  STRATA_ARG(std::optional<int64_t>, padding_idx);
};

/// A lookup table: forward(indices) is functional::embedding(indices,
/// weight, padding_idx), with the indices' shape plus embedding_dim.
/// weight is N(0, 1) as in PyTorch (its padding_idx row zeros).
class EmbeddingImpl : public Module {
public:
  /// A table of num_embeddings x embedding_dim.
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim,
                SourceLoc loc = SourceLoc::current());
  /// A table with `options`.
  explicit EmbeddingImpl(const EmbeddingOptions &options,
                         SourceLoc loc = SourceLoc::current());
  /// Draws a new table from N(0, 1) and zeroes the padding_idx row.
  void reset_parameters();
  /// The rows of `indices` (int64 or int32; values in [0, num_embeddings):
  /// checked when the indices are already computed).
  Tensor forward(const Tensor &indices, SourceLoc loc = SourceLoc::current());
  /// The options it was made with.
  EmbeddingOptions options;
  /// (num_embeddings, embedding_dim).
  Tensor weight;
};
/// The ModuleHolder of EmbeddingImpl (torch::nn::Embedding).
using Embedding = ModuleHolder<EmbeddingImpl>;

/// max(x, 0) (torch::nn::ReLU); no parameters.
class ReLUImpl : public Module {
public:
  /// The layer.
  ReLUImpl();
  /// x.relu().
  Tensor forward(const Tensor &input, SourceLoc loc = SourceLoc::current());
};
/// The ModuleHolder of ReLUImpl (torch::nn::ReLU).
using ReLU = ModuleHolder<ReLUImpl>;

/// Options of GELU (torch::nn::GELUOptions).
struct GELUOptions {
  /// approximate "none".
  GELUOptions() = default;
  /// "none" (x * Phi(x) through erf, PyTorch's default) or "tanh" (the
  /// tanh approximation); another string throws at forward, as PyTorch.
  STRATA_ARG(std::string, approximate) = "none";
};

/// x * Phi(x) (torch::nn::GELU); no parameters.
class GELUImpl : public Module {
public:
  /// The layer; `GELU(GELUOptions().approximate("tanh"))` for the tanh form.
  explicit GELUImpl(const GELUOptions &options = {});
  /// x.gelu(options.approximate()) (floating-point x).
  Tensor forward(const Tensor &input, SourceLoc loc = SourceLoc::current());
  /// The options it was made with.
  GELUOptions options;
};
/// The ModuleHolder of GELUImpl (torch::nn::GELU).
using GELU = ModuleHolder<GELUImpl>;

/// Options of Dropout (torch::nn::DropoutOptions).
struct DropoutOptions {
  /// p = 0.5.
  DropoutOptions() = default;
  /// Probability `p`: `nn::Dropout(0.2)`.
  DropoutOptions(double p) : p_(p) {}
  /// The probability of zeroing an element, in [0, 1].
  STRATA_ARG(double, p) = 0.5;
};

/// functional::dropout in training mode, the identity in eval mode.
class DropoutImpl : public Module {
public:
  /// p = 0.5 (a p outside [0, 1] throws PyTorch's message).
  explicit DropoutImpl(const DropoutOptions &options = {},
                       SourceLoc loc = SourceLoc::current());
  /// Masked and scaled by 1 / (1 - p) when is_training(); else `input`.
  Tensor forward(const Tensor &input, SourceLoc loc = SourceLoc::current());
  /// The options it was made with.
  DropoutOptions options;
};
/// The ModuleHolder of DropoutImpl (torch::nn::Dropout).
using Dropout = ModuleHolder<DropoutImpl>;

/// Options of LayerNorm (torch::nn::LayerNormOptions).
struct LayerNormOptions {
  /// Normalizes over trailing dims of sizes `normalized_shape`.
  LayerNormOptions(Shape normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  /// The sizes of the trailing dims normalized over.
  STRATA_ARG(Shape, normalized_shape);
  /// Added to the variance before the square root.
  STRATA_ARG(double, eps) = 1e-5;
  /// Whether to learn a scale (ones) and shift (zeros) per element.
  STRATA_ARG(bool, elementwise_affine) = true;
};

/// (x - mean) / sqrt(var + eps) * weight + bias over the trailing dims
/// (biased variance, as PyTorch).
class LayerNormImpl : public Module {
public:
  /// Normalizes over trailing dims of `options.normalized_shape()`.
  explicit LayerNormImpl(const LayerNormOptions &options,
                         SourceLoc loc = SourceLoc::current());
  /// weight = 1, bias = 0.
  void reset_parameters();
  /// The input normalized (same shape); its trailing dims must be
  /// normalized_shape.
  Tensor forward(const Tensor &input, SourceLoc loc = SourceLoc::current());
  /// The options it was made with.
  LayerNormOptions options;
  /// normalized_shape, or undefined without elementwise_affine.
  Tensor weight;
  /// normalized_shape, or undefined without elementwise_affine.
  Tensor bias;
};
/// The ModuleHolder of LayerNormImpl (torch::nn::LayerNorm).
using LayerNorm = ModuleHolder<LayerNormImpl>;

/// Whether M is a module holder (nn::Linear) or a shared_ptr to a module:
/// what Sequential takes.
template <typename M, typename = void> struct IsModuleArg : std::false_type {};
/// A holder: it has ptr().
template <typename M>
struct IsModuleArg<M, std::void_t<decltype(std::declval<M>().ptr())>>
    : std::true_type {};
/// A shared_ptr to a Module.
template <typename M>
struct IsModuleArg<std::shared_ptr<M>, void> : std::is_base_of<Module, M> {};

/// Modules applied in order (torch::nn::Sequential); children are named
/// "0", "1", ..., as in PyTorch, so parameters are "0.weight", "2.bias".
class SequentialImpl : public Module {
public:
  /// An empty sequence.
  SequentialImpl();
  /// The modules given (holders such as nn::Linear, or shared_ptrs to
  /// modules with a `Tensor forward(const Tensor &)`).
  template <typename... Ms, typename = std::enable_if_t<
                                (sizeof...(Ms) > 0) &&
                                (IsModuleArg<std::decay_t<Ms>>::value && ...)>>
  explicit SequentialImpl(Ms &&...modules) : SequentialImpl() {
    (push_back(std::forward<Ms>(modules)), ...);
  }
  /// Appends a holder (nn::Linear(...)) or a shared_ptr to a module.
  template <typename M> void push_back(M &&module) {
    auto p = pointerOf(std::forward<M>(module));
    append(p, [p](const Tensor &x, SourceLoc loc) {
      return callForward(*p, x, loc);
    });
  }
  /// Each module's forward in turn.
  Tensor forward(const Tensor &input, SourceLoc loc = SourceLoc::current());
  /// The number of modules.
  size_t size() const { return forwards_.size(); }
  /// Module `index` (std::out_of_range past the end, as vector::at).
  std::shared_ptr<Module> operator[](size_t index) const;

private:
  template <typename Impl>
  static std::shared_ptr<Impl> pointerOf(const ModuleHolder<Impl> &h) {
    return h.ptr();
  }
  template <typename Impl>
  static std::shared_ptr<Impl> pointerOf(std::shared_ptr<Impl> p) {
    return p;
  }
  void append(std::shared_ptr<Module> module,
              Function<Tensor(const Tensor &, SourceLoc)> forward);
  std::vector<Function<Tensor(const Tensor &, SourceLoc)>> forwards_;
};
/// The ModuleHolder of SequentialImpl (torch::nn::Sequential).
using Sequential = ModuleHolder<SequentialImpl>;

} // namespace nn
} // namespace strata

#endif // STRATA_NN_LAYERS_H
