//===- Passes.td - strata's passes -------------------------*- tablegen -*-===//
#ifndef STRATA_TRANSFORMS_PASSES_TD
#define STRATA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldViews : Pass<"strata-fold-views", "mlir::func::FuncOp"> {
  let summary = "Fold every chain of view ops into one strided_view";
  let description = [{
    Every value produced by a view op (view, reshape or flatten that does not
    copy, permute, transpose, slice, select, narrow, expand, squeeze,
    unsqueeze, as_strided, diagonal, unfold, flip, contiguous of a contiguous
    value) is replaced by one `strata.strided_view` of its storage root with
    the same type. Types are absolute within the root, so the fold is exact:
    the composed (sizes, strides, offset) triple is the result type itself.

    Before:
    ```mlir
    %t = strata.transpose %a dims 0, 1 : ... -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
    %s = strata.slice %t dim 0 start 1 step 2 : ... -> !strata.tensor<2x3xf32, strided<[2, 4], offset: 1>>
    ```
    After:
    ```mlir
    %s = strata.strided_view %a : ... -> !strata.tensor<2x3xf32, strided<[2, 4], offset: 1>>
    ```
  }];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def MaterializeCopies : Pass<"strata-materialize-copies", "mlir::func::FuncOp"> {
  let summary = "Insert copies only where strides cannot express a view";
  let description = [{
    A `reshape`/`flatten` that strides cannot express becomes
    `strata.contiguous` + `strata.view`; a `contiguous` or `copy` of an
    already-contiguous value disappears; a copy whose only consumers read
    strided input directly (elementwise ops, reductions) is removed. Every
    copy that stays is reported as a remark with its reason and the user
    location it came from (`--strata-remarks` or `-mlir-print-...`).
  }];
  let options = [
    Option<"emitRemarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for every copy kept, with its reason">
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

#endif // STRATA_TRANSFORMS_PASSES_TD
