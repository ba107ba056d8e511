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

} // namespace strata::detail

#endif // STRATA_DSL_LIB_EMIT_H
