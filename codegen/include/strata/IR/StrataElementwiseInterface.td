//===- StrataElementwiseInterface.td - op families ---------*- tablegen -*-===//
//
// The families the passes, the reference evaluator and the emitters ask an
// op about, instead of keeping lists of op classes: an elementwise op knows
// its scalar formula twice (as arith/math IR for the kernel body both
// emitters read, and in double for the reference evaluator); a reduction
// is marked as such. An op is declared once, in StrataOps.td.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_STRATAELEMENTWISEINTERFACE_TD
#define STRATA_IR_STRATAELEMENTWISEINTERFACE_TD

include "mlir/IR/OpBase.td"

def Strata_ElementwiseOpInterface : OpInterface<"ElementwiseOpInterface"> {
  let description = [{
    An op whose result element at an index is a function of the operands'
    elements at that index (operands broadcast). The fuser inlines it into
    kernels and asks it for its scalar body; the reference evaluator asks it
    for the same function in double.
  }];
  let cppNamespace = "::strata::ir";
  let methods = [
    InterfaceMethod<
      "The scalar of the result, as arith/math ops built by `s`, given the "
      "operands' scalars (already of the operands' element types).",
      "::mlir::Value", "buildScalar",
      (ins "::strata::ir::ScalarBuilder &":$s,
           "::llvm::ArrayRef<::mlir::Value>":$in)>,
    InterfaceMethod<
      "The same function in double for the reference evaluator; the result "
      "is rounded to the result's element type when stored.",
      "double", "evalScalar", (ins "::llvm::ArrayRef<double>":$in)>
  ];
}

def Strata_ReductionOpInterface : OpInterface<"ReductionOpInterface"> {
  let description = [{
    A reduction of its one operand over `dims` (sum, mean, amax, amin,
    prod): the fuser ends a group with it and reads its input through its
    strides.
  }];
  let cppNamespace = "::strata::ir";
}

#endif // STRATA_IR_STRATAELEMENTWISEINTERFACE_TD
