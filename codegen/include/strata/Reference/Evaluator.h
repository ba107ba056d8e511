//===- Evaluator.h - the reference evaluator of strata IR -------*- C++ -*-===//
//
// The oracle every other engine is tested against. It runs a func.func of
// strata ops one element at a time, in double precision, written for
// obviousness rather than speed.
//
// Values. A storage is a flat buffer. A tensor is a buffer (its storage
// root's) plus a layout that is absolute within that buffer: element
// (i0..in-1) is buffer[offset + sum(ik * strides[k])]. View ops share the
// operand's buffer and take the layout of their result TYPE; compute ops
// (and reshape/flatten/contiguous when they copy) produce a fresh buffer in
// the layout of their result type; strata.write produces a new buffer and
// leaves the old one alone (values are immutable).
//
// Numbers. Every element is held as a double. Ops compute in double and
// round each element they store to the result's dtype (roundToElementType),
// so results look like those of a real f32 or integer kernel. i64 values
// beyond 2^53 are therefore not exact: a known limitation of the oracle.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_REFERENCE_EVALUATOR_H
#define STRATA_REFERENCE_EVALUATOR_H

#include "strata/Layout/LayoutAlgebra.h"

#include "mlir/IR/Types.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm
namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace strata::reference {

/// The elements of one storage root, in storage order.
struct Buffer {
  std::vector<double> data;
  mlir::Type elementType;
};

/// A runtime value: a storage (the whole buffer) or a tensor (a layout over
/// a buffer it may share with other values).
struct RefValue {
  std::shared_ptr<Buffer> buffer;
  /// For a storage: the contiguous 1-D layout of the whole buffer.
  layout::Layout layout;
  mlir::Type elementType;
  bool isStorage = false;

  int64_t numel() const { return layout.numel(); }
  /// The element at `index` (one index per dim; a storage takes one).
  double at(llvm::ArrayRef<int64_t> index) const;
  /// Every element in row-major order of its index.
  std::vector<double> elements() const;

  /// A storage value owning `data` (each element rounded to `elementType`).
  static RefValue storage(mlir::Type elementType, std::vector<double> data);
  /// A fresh contiguous tensor of `shape` holding `rowMajor` (rounded).
  static RefValue fresh(mlir::Type elementType, llvm::ArrayRef<int64_t> shape,
                        std::vector<double> rowMajor);
  /// A fresh tensor with `layout` (offset 0, dense: a compute result's
  /// type) holding `rowMajor` (rounded), each element at its storage index.
  static RefValue freshLaidOut(mlir::Type elementType,
                               const layout::Layout &layout,
                               std::vector<double> rowMajor);
};

/// Rounds `v` as storing it into an element of `elementType` would:
/// f32 through float; f64 unchanged; i32/i64 truncated toward zero
/// (NaN gives 0, out-of-range values saturate to the i64 range, then i32
/// wraps modulo 2^32 as a 32-bit integer kernel would); i1 is `v != 0`
/// (NaN is true, as bool(nan) in PyTorch).
double roundToElementType(double v, mlir::Type elementType);

/// The most elements one tensor or storage may have: the evaluator holds
/// every element as a double and loops over each, so larger values (which
/// would exhaust memory or time) are refused with a diagnostic instead.
constexpr int64_t kMaxElements = int64_t(1) << 26;

/// Runs `func` (which must have passed the verifier) on `args` (one per
/// argument: a storage value for a storage
/// argument, a tensor whose layout equals the argument type's layout for a
/// tensor argument). Returns the values of func.return. Unsupported ops,
/// mismatched arguments and out-of-bounds views are reported as located
/// diagnostics on the op (or on `func`), never a crash.
mlir::FailureOr<std::vector<RefValue>> evaluate(mlir::func::FuncOp func,
                                                llvm::ArrayRef<RefValue> args);

//===--- Inputs -----------------------------------------------------------===//

enum class InputKind { Arange, Random };

/// Makes function arguments. A storage argument gets a buffer of its size;
/// a tensor argument gets a buffer of layout::requiredStorageSize(its
/// layout) elements and the tensor is that layout over it.
///
/// Arange: element i of each buffer is i (i1: i % 2), so printed values of
/// views are storage indices.
///
/// Random (stable, do not change: tests depend on it): one SplitMix64
/// stream, state = seed, consumed in argument order and storage order:
///   state += 0x9E3779B97F4A7C15; z = state;
///   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
///   z = (z ^ (z >> 27)) * 0x94D049BB133111EB;  next = z ^ (z >> 31)
/// Floats: -2 + 4 * ((next >> 11) * 2^-53), in [-2, 2), then rounded to the
/// dtype. i32/i64: (int64)(next % 11) - 5, in [-5, 5]. i1: next >> 63.
/// strata-run makes a new generator (state = --seed) for each function.
class InputGenerator {
public:
  InputGenerator(InputKind kind, uint64_t seed) : kind(kind), state(seed) {}
  /// A fresh argument for a value of `type` (a strata storage or tensor
  /// type). Fails, saying why in `whyNot`, for any other type or one larger
  /// than kMaxElements.
  mlir::FailureOr<RefValue> makeArgument(mlir::Type type, std::string &whyNot);
  /// The same, for callers that need no reason.
  mlir::FailureOr<RefValue> makeArgument(mlir::Type type) {
    std::string whyNot;
    return makeArgument(type, whyNot);
  }
  /// The next SplitMix64 output (exposed so tests can pin the stream).
  uint64_t next();

private:
  double element(int64_t i, mlir::Type elementType);
  InputKind kind;
  uint64_t state;
};

//===--- Printing ---------------------------------------------------------===//
//
// `printValue(os, "result 0", v)` prints two lines:
//   result 0: f32 sizes [3] strides [4] offset 1
//     [1, 5, 9]
// or, for a storage, `result 0: storage f32 size 12` and its flat elements.
// N-d values nest brackets row-major; a bracket that directly opens (or
// closes) another is followed (preceded) by a space, `[ [0, 1], [2, 3] ]`,
// because FileCheck reads `[[` as the start of a variable. A 0-d value
// prints its scalar; a zero-size one prints `[]` at the first dim of size 0
// (`[ [], [] ]` for 2x0). Floats use "{:.6g}" (`0.5`, `-0`, `1e+06`, `nan`,
// `inf`); integers print as integers; i1 prints `true`/`false`.

/// One element as text.
std::string formatElement(double v, mlir::Type elementType);
/// The nested-bracket text of all of `v`'s elements.
std::string formatElements(const RefValue &v);
/// "f32 sizes [3] strides [4] offset 1" or "storage f32 size 12".
std::string formatDescription(const RefValue &v);
void printValue(llvm::raw_ostream &os, llvm::StringRef label,
                const RefValue &v);

} // namespace strata::reference

#endif // STRATA_REFERENCE_EVALUATOR_H
