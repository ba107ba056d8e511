//===- OpBuilders.h - what every op family records through ----*- C++ -*-===//
//
// Internal to the DSL. The ops, one file per family (OpsUnary.cpp,
// OpsBinary.cpp, OpsWhere.cpp, OpsReduce.cpp, OpsMatmul.cpp, OpsCopy.cpp),
// compute their result's shape with the layout algebra, apply PyTorch's
// type promotion (inserting casts, so the IR stays explicitly typed) and
// record one node through these builders (Ops.cpp). An in-place form
// records the op, then a write into the view (inPlace, OpsCopy.cpp), which
// makes a new version of the view's storage root.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_OPBUILDERS_H
#define STRATA_DSL_LIB_OPBUILDERS_H

#include "Impl.h"
#include "strata/IR/OpDTypes.h"

#include <initializer_list>
#include <optional>
#include <span>

namespace strata::detail {

/// An operand of a binary op: a tensor, or a scalar (wrapped number).
struct Arg {
  const Tensor *tensor = nullptr;
  std::optional<Scalar> scalar;
};

/// The dtype rule of the dialect's elementwise op `name` (its ODS entry,
/// strata/IR/OpDTypes.h); a strata bug error when the dialect has no such
/// op.
const ir::ElementwiseDTypes &dtypesOf(const char *name, const SourceLoc &loc);

/// PyTorch's result_type over tensors (dim > 0, then 0-d) and scalars.
DType resultType(std::span<const Arg> args);
/// resultType() over a braced list.
DType resultType(std::initializer_list<Arg> args);

/// Records one node of op `name` reading `inputs`, with a result of
/// `dtype` and `sizes` (laid out as the IR infers it: resultStrides), that
/// requires grad when an input does. `dims`, `keepdim` and `dimList` are a
/// reduction's.
Tensor record(Op op, const char *name, DType dtype, Shape sizes,
              std::span<const Tensor *const> inputs, const SourceLoc &loc,
              Shape dims = {}, bool keepdim = false, bool dimList = false);
/// record() over a braced list of inputs (no vector built per op).
Tensor record(Op op, const char *name, DType dtype, Shape sizes,
              std::initializer_list<const Tensor *> inputs,
              const SourceLoc &loc, Shape dims = {}, bool keepdim = false,
              bool dimList = false);

/// `t` converted to `dtype` (a strata.cast; `t` itself when it has it).
Tensor castTo(const Tensor &t, DType dtype, const SourceLoc &loc);
/// The tensor of `a` in `dtype`: a cast tensor, or a number's 0-d fill.
Tensor asTensor(const Arg &a, DType dtype, const SourceLoc &loc);
/// Sets fill node `n`'s value (`a`; `ia` and `exact` for an integer or bool
/// value, or any value of an integer dtype) for its dtype `n.dtype`.
void setFillValue(Node &n, const Scalar &value);

/// The binary ops with checks of PyTorch's own beyond their dtype rule.
/// Pow: bool refused, integers to negative integer powers, an int32
/// exponent that fits. Mod (fmod, remainder, floor_divide): bool refused
/// with PyTorch's kernel names; an integer division by a zero number
/// raises.
enum class Kind { Plain, Pow, Mod };

/// Records binary op `name` of `a` and `b` (tensors or numbers): their
/// broadcast shape, PyTorch's result type (both operands cast to it) and
/// its dtype checks and messages. The op's dtype rule is its `dtype` in
/// StrataOps.td (strata/IR/OpDTypes.h): a Float op promotes integers to
/// f32, a FloatOnly op refuses them ("<name>_cpu" not implemented), an
/// Integral op refuses floats, a comparison gives bool.
/// With `nodeOnly`, where the op is of tensor `a` and number `b` and its
/// result is of a's dtype and shape, the result's node is made as
/// finishNode makes it, set there, and no tensor is returned (an undefined
/// one): what an in-place op writes at once (inPlaceNumber); otherwise
/// `*nodeOnly` is untouched and the tensor returned.
Tensor binary(const char *name, const Arg &a, const Arg &b,
              const SourceLoc &loc, Kind kind = Kind::Plain,
              NodePtr *nodeOnly = nullptr);

/// `r` with the strides of `want` where they differ only on size-1 dims
/// (the same elements at the same places); unchanged otherwise.
Tensor sizeOneStrides(Tensor r, const layout::Layout &want);
/// `r`, computed elementwise from `xs` with numbers, laid out as PyTorch's
/// one iterator over the tensors `xs` alone (clamp is a unary
/// TensorIterator, lerp.Scalar one over start and end; strata's ops with a
/// number, a 0-d operand, take the general path, which orders size-1 dims
/// otherwise). Both address the same elements, so only the strides of
/// size-1 dims can differ: those are taken.
Tensor iteratorLayout(Tensor r, std::span<const layout::Layout> xs);

/// Writes `result`, computed from `self` (and `other`), into `self`:
/// PyTorch's checks (no partial overlap with `other`, a result type that
/// casts to self's), then recordWrite.
Tensor &inPlace(Tensor &self, const Tensor &result, const char *op,
                const SourceLoc &loc, const Tensor *other = nullptr);
/// `self.op(s)` for binary op `name` by a number (mul_, add_, ...): the
/// result's node written at once where it is of self's dtype and shape
/// (binary's nodeOnly), else inPlace.
Tensor &inPlaceNumber(Tensor &self, const char *name, const Scalar &s,
                      const char *op, const SourceLoc &loc, Kind kind);
/// PyTorch checks an in-place op before it computes anything; strata
/// computes the value first (reading the destination, which regenerates a
/// view's grad_fn), so it checks here first too.
void checkInplaceFirst(const Tensor &self, const Tensor *other, const char *op,
                       const SourceLoc &loc);

/// a * b + c rounded once (strata.fma): three tensors of one float dtype
/// that broadcast (OpsAlpha.cpp).
Tensor fusedMultiplyAdd(const Tensor &a, const Tensor &b, const Tensor &c,
                        const SourceLoc &loc);
/// self + alpha * other as PyTorch's add(alpha) kernel rounds it (one
/// fma, alpha converted to self's float dtype; other of that dtype).
Tensor addScaled(const Tensor &self, const Tensor &other, const Scalar &alpha,
                 const SourceLoc &loc);
/// addcmul(self, t1, t2, value): fma(value * t1, t2, self), as PyTorch's
/// contracted kernel (one float dtype).
Tensor addProduct(const Tensor &self, const Tensor &t1, const Tensor &t2,
                  const Scalar &value, const SourceLoc &loc);
} // namespace strata::detail

#endif // STRATA_DSL_LIB_OPBUILDERS_H
