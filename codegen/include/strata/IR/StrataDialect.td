//===- StrataDialect.td - the strata dialect ---------------*- tablegen -*-===//
//
// The dialect in which every strata tensor program is recorded.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_STRATADIALECT_TD
#define STRATA_IR_STRATADIALECT_TD

include "mlir/IR/OpBase.td"

def Strata_Dialect : Dialect {
  let name = "strata";
  let summary = "Strided tensor programs with layouts in their types";
  let description = [{
    Every tensor value has a static shape, an element type and a layout
    (strides and an absolute element offset into its storage root) that are
    part of its type. View ops change only the layout; compute ops produce
    fresh contiguous tensors; in-place writes produce new storage versions.
    Result layouts are computed by the layout algebra (`LayoutAlgebra.h`),
    which follows PyTorch's rules.
  }];
  let cppNamespace = "::strata::ir";
  let useDefaultTypePrinterParser = 1;
  let useFoldAPI = kEmitFoldAdaptorFolder;
  // Dialect-wide view-chain patterns (codegen/lib/Transforms/Canonicalize.cpp).
  let hasCanonicalizer = 1;
  // strata.kernel bodies are arith/math ops on scalars.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

class Strata_Op<string mnemonic, list<Trait> traits = []>
    : Op<Strata_Dialect, mnemonic, traits>;

#endif // STRATA_IR_STRATADIALECT_TD
