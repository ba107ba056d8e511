//===- ScalarOps.h - the scalar math both code generators share -*- C++ -*-===//
//
// What the CPU (Target/LLVM) and CUDA (Target/CUDA) code generators, and
// the runners that fill reducing results (jit/lib/Combiners.cpp), know
// alike, written once: the ops a strata.kernel body may hold with their C
// math library functions (ScalarOps.def), and the identity each combiner
// starts from. How each backend emits an op stays its own.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TARGET_SCALAROPS_H
#define STRATA_TARGET_SCALAROPS_H

#include "strata/Runtime/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace strata::codegen {

/// An op a kernel body may hold (ScalarOps.def).
enum class ScalarOp {
#define SCALAR_OP(Enumerator, Name, Libm) Enumerator,
#include "strata/Target/ScalarOps.def"
};

/// A row of ScalarOps.def.
struct ScalarOpInfo {
  /// The op.
  ScalarOp op;
  /// Its name in the arith or math dialect: "arith.addf".
  llvm::StringLiteral name;
  /// The C math function of its semantics (double form; floats add "f"),
  /// or "" when none.
  llvm::StringLiteral libm;
};

/// Every row, in the order of ScalarOps.def.
llvm::ArrayRef<ScalarOpInfo> scalarOps();
/// The row of the op named `name`; null when a kernel body may not hold it
/// (each backend then reports it as unsupported).
const ScalarOpInfo *scalarOpInfo(llvm::StringRef name);

/// A combiner's identity in one element type: the value a reducing result
/// of a kernel without points keeps, and every accumulator starts from.
struct CombinerIdentity {
  /// True for float types: `value` holds it, else `integer` does.
  bool isFloat;
  /// The identity of a float type: 0, 1, -inf or +inf.
  double value;
  /// The identity of an integer type or bool (0 or 1 for bool).
  int64_t integer;
};

/// The identity of `combiner` ("sum", "prod", "max" or "min") in `dtype`:
/// 0 and 1 for sum and prod; for max the lowest value (-inf, INT_MIN,
/// false), for min the highest (+inf, INT_MAX, true).
CombinerIdentity combinerIdentity(llvm::StringRef combiner, DType dtype);

} // namespace strata::codegen

#endif // STRATA_TARGET_SCALAROPS_H
