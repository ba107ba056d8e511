//===- ClassificationLoss.cpp - nll_loss and cross_entropy ----------------===//
//
// PyTorch 1.13's LossNLL.cpp written over strata's ops. A class-index
// target selects input[n, target[n]] through a one-hot mask (the target
// compared with an arange of the classes, broadcast along the class dim)
// and a sum over the class dim: strata has no gather yet, and the mask,
// the select and the sum fuse into one pass over the input. `where`
// selects rather than multiplies, so a -inf log-probability of another
// class never turns into NaN (0 * -inf).
//
// The reductions follow PyTorch exactly: nll_loss's mean divides by the
// summed class weights of the targets that are not ignore_index (all
// ignored: 0/0 = NaN, as PyTorch); label smoothing mixes in
// -sum_c(log p_c) / C with the same divisor; class-probability targets
// divide by N * d1 * ... (numel / C).
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <vector>

using namespace strata;
using namespace strata::nn;
using namespace strata::nn::internal;

namespace {

/// The class dim of an input of rank `rank`: 0 for (C), else 1.
int64_t classDim(int64_t rank) { return rank == 1 ? 0 : 1; }

/// Sizes 1 except `size` at `dim`, for broadcasting a per-class vector.
Shape alongDim(int64_t rank, int64_t dim, int64_t size) {
  Shape s(static_cast<size_t>(rank), 1);
  s[static_cast<size_t>(dim)] = size;
  return s;
}

/// PyTorch's check of a per-class weight vector.
void checkWeight(const Tensor &weight, int64_t classes, const SourceLoc &loc) {
  if (!weight.defined())
    return;
  if (weight.dim(loc) != 1 || weight.numel(loc) != classes)
    throw Error("weight tensor should be defined either for all " +
                    std::to_string(classes) +
                    " classes or no classes but got weight tensor of shape: " +
                    shapeString(weight.sizes(loc)),
                "give one weight per class (a 1-D tensor of C elements)", loc);
}

/// nll_loss_nd's checks of a class-index target against the input.
void checkIndexTarget(const Tensor &input, const Tensor &target,
                      const SourceLoc &loc) {
  int64_t rank = input.dim(loc);
  const Shape &in = input.sizes(loc), &tg = target.sizes(loc);
  if (rank < 1)
    throw Error("Expected 1 or more dimensions (got 0)",
                "the input holds a score per class: (C), (N, C) or "
                "(N, C, d1, ...)",
                loc);
  if (rank != 1 && !tg.empty() && in[0] != tg[0])
    throw Error("Expected input batch_size (" + std::to_string(in[0]) +
                    ") to match target batch_size (" + std::to_string(tg[0]) +
                    ").",
                "give one class index per sample: target of shape (N) for "
                "input (N, C)",
                loc);
  Shape want = in;
  want.erase(want.begin() + classDim(rank));
  if (tg != want) {
    if (rank <= 2)
      throw Error(rank == 2 && tg.size() > 1
                      ? "0D or 1D target tensor expected, multi-target not "
                        "supported"
                      : "size mismatch (got input: " + shapeString(in) +
                            ", target: " + shapeString(tg) + ")",
                  "the target is the input's shape without the class dim", loc);
    throw Error("Expected target size " + shapeString(want) + ", got " +
                    shapeString(tg),
                "the target is the input's shape without the class dim", loc);
  }
  if (target.dtype(loc) != DType::I64)
    throw Error(std::string("expected scalar type Long but found ") +
                    scalarTypeName(target.dtype(loc)),
                "class indices are int64: target.to(kInt64); for class "
                "probabilities give a floating-point target of the input's "
                "shape",
                loc);
  if (!isFloatingPoint(input.dtype(loc)))
    throw Error(std::string("\"nll_loss_out_frame\" not implemented for '") +
                    scalarTypeName(input.dtype(loc)) + "'",
                "convert the input to a floating-point dtype first", loc);
}

/// PyTorch's "Target 7 is out of bounds." for a target whose values exist
/// already (a loaded or computed tensor, or a view of one). A pending
/// target is not evaluated just to be checked: that would split the
/// program the loss belongs to.
void checkTargetValues(const Tensor &target, int64_t classes,
                       int64_t ignoreIndex, const SourceLoc &loc) {
  if (!target.is_materialized(loc))
    return;
  for (int64_t t : target.to_vector<int64_t>(loc))
    if (t != ignoreIndex && (t < 0 || t >= classes))
      throw Error("Target " + std::to_string(t) + " is out of bounds.",
                  "class indices are in [0, C) (or ignore_index)", loc);
}

/// Class-index targets and what the losses read of them. Each method
/// records its expression afresh: an expression read by two kernels would
/// be written to memory by one and read back by the other, while recorded
/// once per use it is recomputed inside each kernel that reads it (a
/// comparison and a select per element, cheaper than the traffic and the
/// extra kernel).
struct Targets {
  Tensor target;      ///< the class indices (N, d1, ...)
  Tensor classIds;    ///< arange(C) viewed along the class dim
  Tensor classWeight; ///< weight viewed along the class dim, or undefined
  Tensor like;        ///< a tensor of the loss's dtype and device
  int64_t ignoreIndex, classDim;
  SourceLoc loc;

  Tensor zero() const { return scalarLike(like, 0, loc); }
  /// target == c along the class dim (bool, the input's shape).
  Tensor onehot() const {
    return target.unsqueeze(classDim, loc).eq(classIds, loc);
  }
  /// target == ignore_index (bool, the target's shape).
  Tensor ignored() const { return target == Scalar(ignoreIndex, loc); }
  /// input[n, target[n], d1, ...] (the target's shape).
  Tensor pick(const Tensor &input) const {
    return where(onehot(), input, zero(), loc).sum({classDim}, false, loc);
  }
  /// weight[target[n]] (1 without class weights), 0 where ignored.
  Tensor weight() const {
    Tensor w = classWeight.defined()
                   ? where(onehot(), classWeight, zero(), loc)
                         .sum({classDim}, false, loc)
                   : scalarLike(like, 1, loc).expand(target.sizes(loc), loc);
    return where(ignored(), zero(), w, loc);
  }
};

Targets targetsOf(const Tensor &input, const Tensor &target,
                  const Tensor &classWeight, int64_t ignoreIndex,
                  const SourceLoc &loc) {
  int64_t rank = input.dim(loc), cd = classDim(rank);
  int64_t classes = input.size(cd, loc);
  Targets t{
      target,
      arange(classes, TensorOptions(DType::I64).device(input.device(loc)), loc)
          .view(alongDim(rank, cd, classes), loc),
      classWeight.defined() ? classWeight.to(input.dtype(loc), loc)
                                  .view(alongDim(rank, cd, classes), loc)
                            : Tensor(),
      input,
      ignoreIndex,
      cd,
      loc};
  return t;
}

/// The per-element loss -picked * weight (0 where ignored) and its
/// reduction (nll_loss's rules).
Tensor reduceNll(const Targets &t, const Tensor &picked, Reduction r) {
  const SourceLoc &loc = t.loc;
  // where, not a product with the 0 weight: an ignored -inf stays out.
  Tensor loss =
      where(t.ignored(), t.zero(), picked.mul(t.weight(), loc).neg(loc), loc);
  switch (r) {
  case Reduction::None:
    return loss;
  case Reduction::Sum:
    return loss.sum({}, false, loc);
  case Reduction::Mean:
    break;
  }
  return loss.sum({}, false, loc).div(t.weight().sum({}, false, loc), loc);
}

/// log_softmax(x) along dim as (x - max) - log(sum(exp(x - max))): the two
/// reductions once, the elementwise part afresh per use (see Targets).
struct LogSoftmax {
  Tensor x, max, logSumExp;
  SourceLoc loc;
  Tensor operator()() const { return x.sub(max, loc).sub(logSumExp, loc); }
};

LogSoftmax logSoftmaxOf(const Tensor &x, int64_t dim, const SourceLoc &loc) {
  dim = softmaxDim(x, dim, "log_softmax", loc);
  Tensor max = x.detach(loc).amax({dim}, true, loc);
  Tensor lse = x.sub(max, loc).exp(loc).sum({dim}, true, loc).log(loc);
  return {x, max, lse, loc};
}

Tensor crossEntropyProbabilities(const Tensor &input, const Tensor &target,
                                 const functional::CrossEntropyFuncOptions &o,
                                 const SourceLoc &loc) {
  if (!isFloatingPoint(target.dtype(loc)))
    throw Error(std::string("Expected floating point type for target with "
                            "class probabilities, got ") +
                    scalarTypeName(target.dtype(loc)),
                "class indices are int64 of the input's shape without the "
                "class dim; probabilities are floats of the input's shape",
                loc);
  if (o.ignore_index() >= 0)
    throw Error("ignore_index is not supported for floating point target",
                "leave ignore_index negative (the default -100) with class "
                "probabilities",
                loc);
  int64_t rank = input.dim(loc), cd = classDim(rank);
  int64_t classes = input.size(cd, loc);
  checkWeight(o.weight(), classes, loc);
  Tensor logp = logSoftmaxOf(input, cd, loc)();
  Tensor t = target;
  if (o.label_smoothing() > 0)
    t = t * Scalar(1 - o.label_smoothing(), loc) +
        Scalar(o.label_smoothing() / classes, loc);
  Tensor prod = logp.mul(t, loc);
  if (o.weight().defined())
    prod = prod.mul(o.weight()
                        .to(input.dtype(loc), loc)
                        .view(alongDim(rank, cd, classes), loc),
                    loc);
  switch (o.reduction()) {
  case Reduction::None:
    return prod.sum({cd}, false, loc).neg(loc);
  case Reduction::Sum:
    return prod.sum({}, false, loc).neg(loc);
  case Reduction::Mean:
    break;
  }
  return prod.sum({}, false, loc).neg(loc) /
         Scalar(input.numel(loc) / classes, loc);
}

} // namespace

Tensor strata::nn::functional::nll_loss(const Tensor &input,
                                        const Tensor &target,
                                        const NLLLossFuncOptions &options,
                                        SourceLoc loc) {
  checkIndexTarget(input, target, loc);
  int64_t classes = input.size(classDim(input.dim(loc)), loc);
  checkWeight(options.weight(), classes, loc);
  checkTargetValues(target, classes, options.ignore_index(), loc);
  Targets t =
      targetsOf(input, target, options.weight(), options.ignore_index(), loc);
  return reduceNll(t, t.pick(input), options.reduction());
}

Tensor
strata::nn::functional::cross_entropy(const Tensor &input, const Tensor &target,
                                      const CrossEntropyFuncOptions &options,
                                      SourceLoc loc) {
  double smoothing = options.label_smoothing();
  if (!(smoothing >= 0 && smoothing <= 1))
    throw Error("label_smoothing must be between 0.0 and 1.0. Got: " +
                    formatDouble(smoothing),
                "a smoothing in [0, 1] (0 turns it off)", loc);
  if (input.sizes(loc) == target.sizes(loc))
    return crossEntropyProbabilities(input, target, options, loc);
  checkIndexTarget(input, target, loc);
  int64_t cd = classDim(input.dim(loc));
  int64_t classes = input.size(cd, loc);
  checkWeight(options.weight(), classes, loc);
  checkTargetValues(target, classes, options.ignore_index(), loc);
  LogSoftmax logp = logSoftmaxOf(input, cd, loc);
  Targets t =
      targetsOf(input, target, options.weight(), options.ignore_index(), loc);
  Tensor nll = reduceNll(t, t.pick(logp()), options.reduction());
  if (smoothing <= 0)
    return nll;
  // PyTorch's cross_entropy_loss_label_smoothing: the uniform part is
  // -sum_c(w_c log p_c), zero where ignored, reduced with nll's divisor.
  Tensor weighted = logp();
  if (t.classWeight.defined())
    weighted = weighted.mul(t.classWeight, loc);
  Tensor smooth = where(t.ignored(), t.zero(),
                        weighted.sum({cd}, false, loc).neg(loc), loc);
  Tensor ret;
  switch (options.reduction()) {
  case Reduction::None:
    ret = smooth;
    break;
  case Reduction::Sum:
    ret = smooth.sum({}, false, loc);
    break;
  case Reduction::Mean:
    ret = smooth.sum({}, false, loc).div(t.weight().sum({}, false, loc), loc);
    break;
  }
  return nll * Scalar(1 - smoothing, loc) +
         ret * Scalar(smoothing / classes, loc);
}
