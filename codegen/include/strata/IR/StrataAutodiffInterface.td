//===- StrataAutodiffInterface.td - the VJP op interface ---*- tablegen -*-===//
//
// Each differentiable strata op declares its vector-Jacobian product through
// this interface; `--strata-differentiate` calls it in reverse program order.
// The models live in codegen/lib/IR/StrataVJP.cpp and are attached to the
// ops when the dialect is loaded.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_STRATAAUTODIFFINTERFACE_TD
#define STRATA_IR_STRATAAUTODIFFINTERFACE_TD

include "mlir/IR/OpBase.td"

def Strata_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let description = [{
    Reverse-mode rule of one op. Given the gradient of each result (a null
    value for a result nothing depends on), the op builds IR, at the
    builder's insertion point, for the gradient it contributes to values
    defined before it, and appends `(target, gradient)` pairs. A target is
    usually an operand, but may be any earlier value: a write contributes
    to the storage root of its destination (the elements it did not
    overwrite). Gradients of tensors have the target's shape (any layout);
    gradients of storages are 1-D tensors of the storage's element count.
    Contributions to the same target are summed by the pass.
  }];
  let cppNamespace = "::strata::ir";
  let methods = [
    InterfaceMethod<
      "Builds the gradient contributions of this op.",
      "::mlir::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::strata::ir::GradContributions &":$contributions)>
  ];
}

#endif // STRATA_IR_STRATAAUTODIFFINTERFACE_TD
