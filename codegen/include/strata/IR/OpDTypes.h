//===- OpDTypes.h - the element types each elementwise op takes -*- C++ -*-===//
//
// An elementwise op's dtype rule is declared once, in its ODS entry (the
// `dtype` of Strata_UnaryOp and Strata_BinaryOp, StrataUnaryOps.td and
// StrataOps.td): the op's type inference checks it, and the DSL asks it
// here, by the op's name, for PyTorch's promotion or refusal. MLIR-free, so
// the DSL includes it without MLIR's headers.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_OPDTYPES_H
#define STRATA_IR_OPDTYPES_H

#include <cstdint>
#include <string_view>

namespace strata::ir {

/// The element types an elementwise op takes; the result has its operands'
/// (a comparison's is i1).
enum class DTypeRule : uint8_t {
  /// f32/f64 only; the DSL converts integer and bool operands to f32 first
  /// (PyTorch promotes them: exp, div, atan2).
  Float,
  /// f32/f64 only; the DSL refuses integer and bool operands as PyTorch's
  /// kernel does ("hypot_cpu" not implemented for 'Long').
  FloatOnly,
  /// Anything but i1.
  Number,
  /// Any element type.
  Any,
  /// Integers and i1.
  Integral,
};

/// Whether `rule` takes f32/f64 operands only (Float and FloatOnly).
constexpr bool takesFloatsOnly(DTypeRule rule) {
  return rule == DTypeRule::Float || rule == DTypeRule::FloatOnly;
}

/// What the ODS entry of an elementwise unary or binary op says of its
/// element types.
struct ElementwiseDTypes {
  /// The operands' rule.
  DTypeRule rule;
  /// A comparison: the result is i1 whatever the operands are.
  bool compare;
};

/// The dtype rule of the dialect's elementwise unary or binary op `name`
/// ("atan2", no "strata." prefix); null when the dialect has no such op.
const ElementwiseDTypes *elementwiseDTypes(std::string_view name);

} // namespace strata::ir

#endif // STRATA_IR_OPDTYPES_H
