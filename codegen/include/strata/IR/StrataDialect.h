//===- StrataDialect.h - the strata dialect, types and ops ------*- C++ -*-===//
//
// Include this to use the strata dialect. Not a public (dsl) header: it pulls
// in MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_STRATADIALECT_H
#define STRATA_IR_STRATADIALECT_H

#include "strata/IR/OpDTypes.h"
#include "strata/Layout/LayoutAlgebra.h"
#include "strata/Runtime/DType.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <optional>
#include <utility>

#include "strata/IR/StrataDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "strata/IR/StrataTypes.h.inc"

namespace strata::ir {
struct ScalarBuilder;

/// The (target, gradient) pairs a VJP rule contributes.
using GradContributions =
    llvm::SmallVectorImpl<std::pair<mlir::Value, mlir::Value>>;

// Shared result-type inference of the elementwise and reduction op families
// (defined in StrataOps.cpp, called from ODS-generated code): `rule` is the
// op's `dtype` (strata/IR/OpDTypes.h).
mlir::LogicalResult inferUnaryType(std::optional<mlir::Location> loc,
                                   llvm::StringRef opName,
                                   mlir::ValueRange operands, DTypeRule rule,
                                   llvm::SmallVectorImpl<mlir::Type> &inferred);
mlir::LogicalResult inferBinaryType(std::optional<mlir::Location> loc,
                                    llvm::StringRef opName,
                                    mlir::ValueRange operands, DTypeRule rule,
                                    bool isCompare,
                                    llvm::SmallVectorImpl<mlir::Type> &inferred,
                                    mlir::DictionaryAttr attributes = {});
mlir::LogicalResult
inferReduceType(std::optional<mlir::Location> loc, llvm::StringRef opName,
                mlir::Value input, llvm::ArrayRef<int64_t> dims, bool keepdim,
                llvm::SmallVectorImpl<mlir::Type> &inferred);
} // namespace strata::ir

// The op families ops declare in ODS (VJP rules, elementwise and reduction).
// MLIR 16's generated interface models forward every method with an `impl`
// parameter they do not use (LLVM builds itself with -Wno-unused-parameter);
// the warning is silenced for the generated code only (issue 19).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "strata/IR/StrataAutodiffInterface.h.inc"
#include "strata/IR/StrataElementwiseInterface.h.inc"
#pragma GCC diagnostic pop

#define GET_OP_CLASSES
#include "strata/IR/StrataOps.h.inc"

namespace mlir {
class OpBuilder;
} // namespace mlir

namespace strata::ir {
/// On a `strata.scan` of a `strata.cast` of a float tensor (cumsum/cumprod
/// with a dtype argument): its gradient is computed in the cast's source
/// dtype and given to the source (PyTorch's `grad.to(self.scalar_type())`).
inline constexpr llvm::StringLiteral kScanGradInSourceAttrName =
    "strata.scan_grad_in_source";
/// The storage root a tensor value addresses: the first value reached by
/// walking view ops back (a storage value, or a tensor that is not a view).
mlir::Value getStorageRoot(mlir::Value tensor);
/// `x` when `view` reads `strata.write x into d` exactly as written: `d`
/// addresses every element of its storage once, `x`, `d` and the view
/// have one type (a whole in-place write read back) and the view is only
/// read (no write's destination, no view's source); null otherwise.
mlir::Value wholeWriteValue(StridedViewOp view);
/// The element count of the root's storage: a storage type's size, or the
/// extent a root tensor's own layout needs.
int64_t getRootStorageSize(mlir::Value root);
/// The operand a view op reads when `op` is a view (including reshape,
/// flatten and contiguous when they do not copy); null otherwise.
mlir::Value getViewSource(mlir::Operation *op);
/// The type of `strata.cast` of `input` to `element`, and of `strata.copy`
/// (to(dtype) and clone() with preserve_format): the layout algebra's
/// preserveFormat of the input's layout.
StridedTensorType preserveFormatType(StridedTensorType input,
                                     mlir::Type element);
/// A fresh row-major copy of `v` (offset 0, its own root): `strata.copy`
/// when `v` is contiguous already, else `strata.contiguous`.
mlir::Value createContiguousCopy(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value v);
/// "f32", "i64", "bool" ... for messages.
std::string dtypeName(mlir::Type elementType);
/// The dtype of an element type, or of the elements of a storage or tensor
/// type; none for a type strata has no dtype for.
std::optional<DType> elementDType(mlir::Type type);
/// The element type of `dtype` (f32, ..., i1).
mlir::Type elementTypeOf(DType dtype, mlir::MLIRContext *context);
/// A kernel that is one matrix product per point of its other dims: two
/// f32 or f64 inputs, a body yielding their product, one result summing it
/// over one dim (--strata-fuse's kernel for strata.matmul). A tuned BLAS
/// runs it (jit/lib/Gemm.cpp), so sibling fusion leaves it alone.
bool isMatrixProduct(KernelOp kernel);
/// Checks a kernel's `index_map` (StrataIndexOps.cpp); success without one.
mlir::LogicalResult verifyIndexMap(KernelOp kernel);
} // namespace strata::ir

#endif // STRATA_IR_STRATADIALECT_H
