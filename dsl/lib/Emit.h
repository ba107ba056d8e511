//===- Emit.h - trace nodes as ir::Program ops -------------------*- C++
//-*-===//
//
// Internal to the DSL: how the evaluator (Eval.cpp) and the autograd engine
// (GradientRun.cpp) state trace nodes through the one program builder
// (strata/IR/ProgramBuilder.h; docs/design.md "One builder, no text").
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_DSL_LIB_EMIT_H
#define STRATA_DSL_LIB_EMIT_H

#include "Impl.h"

#include "strata/IR/ProgramBuilder.h"

#include <span>

namespace strata::detail {

/// A tensor value type of layout `l`.
inline ir::ValueType tensorType(const layout::Layout &l, DType t) {
  return ir::ValueType::tensor(l, t);
}
/// A storage value type of `n` elements.
inline ir::ValueType storageType(int64_t n, DType t) {
  return ir::ValueType::storageOf(n, t);
}
/// Where the user's code recorded it, for the program's locations.
inline ir::SourcePosition positionOf(const SourceLoc &loc) {
  return {loc.file_name(), static_cast<unsigned>(loc.line()),
          static_cast<unsigned>(loc.column())};
}
/// Appends node `n`'s op to `p`, reading `ins`, with result type
/// `result`, at position `at`: the one emitter of trace nodes (Eval.cpp,
/// the autograd engine).
ir::Program::Value emitOp(ir::Program &p, const Node &n,
                          std::span<const ir::Program::Value> ins,
                          const ir::ValueType &result, ir::SourcePosition at);
/// emitOp() at the user's line that recorded `n`, so that a diagnostic of
/// the program (a gradient program's op without a VJP) names that line.
inline ir::Program::Value emitOp(ir::Program &p, const Node &n,
                                 std::span<const ir::Program::Value> ins,
                                 const ir::ValueType &result) {
  return emitOp(p, n, ins, result, positionOf(n.loc));
}

/// Fill or arange `n` with its values read from the scalar arguments
/// `args` (0-d storages of `argType`; an arange's are its start and step):
/// a 0-d fill not `returned` is a view of its argument, any other fill
/// ones * the argument, an arange the constant form's arithmetic
/// (docs/design.md "Scalars are arguments"; SliceProgram.cpp).
ir::Program::Value emitFromArguments(ir::Program &p, const Node &n,
                                     std::span<const ir::Program::Value> args,
                                     DType argType, bool returned,
                                     ir::SourcePosition at);
/// The dtype of fill or arange `n`'s scalar arguments: a fill's own (f64
/// when `wide`: a pow exponent f32 cannot hold), an arange's start and
/// step in the type its kernel computes in (i64 exact, or f64).
DType scalarArgDType(const Node &n, bool wide = false);
/// Writes `n`'s scalar argument `which` (an arange's 0: start, 1: step),
/// in scalarArgDType(n, wide), to `p`.
void writeScalarArg(const Node &n, int which, bool wide, void *p);

} // namespace strata::detail

#endif // STRATA_DSL_LIB_EMIT_H
