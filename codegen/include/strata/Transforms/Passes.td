//===- Passes.td - strata's passes -------------------------*- tablegen -*-===//
//
// Declared here, defined one per file in codegen/lib/Transforms/, ordered by
// buildStrataPipeline (Pipeline.cpp). The canonicalizations are not a pass:
// `--canonicalize` picks them up from the dialect (Canonicalize.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TRANSFORMS_PASSES_TD
#define STRATA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldViews : Pass<"strata-fold-views", "mlir::func::FuncOp"> {
  let summary = "Fold every chain of view ops into one strided_view";
  let description = [{
    Every value produced by a view op (view, reshape or flatten that does not
    copy, permute, transpose, slice, select, narrow, expand, squeeze,
    unsqueeze, as_strided, diagonal, unfold, flip, contiguous of a contiguous
    value, strided_view of a non-root) is replaced by one
    `strata.strided_view` of its storage root with the same type, or by the
    root itself when the types are equal. Types are absolute within the root,
    so the fold is exact: the composed (sizes, strides, offset) triple is the
    result type itself. No value changes type; the pass is linear in the
    number of ops.

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
    `strata.contiguous` (the copy) + `strata.view`; a `contiguous` of a
    contiguous value disappears; a `copy` whose source already has the
    copy's layout disappears unless that would make a write land in another
    storage or make a result alias an argument or another result; a copy
    whose only consumers read strided input directly (elementwise ops,
    where, cast, reductions, matmul, copy, the source of a write) is removed
    and they read its source. With `remarks=true` every copy that stays is
    reported as a remark at its location, with its reason.

    Before:
    ```mlir
    %c = strata.contiguous %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
                             -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
    %e = strata.exp %c : ... -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
    ```
    After:
    ```mlir
    %e = strata.exp %t : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
                      -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
    ```
  }];
  let options = [
    Option<"emitRemarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for every copy kept, with its reason">
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def Differentiate : Pass<"strata-differentiate", "mlir::func::FuncOp"> {
  let summary = "Reverse mode: make a function also return its gradients";
  let description = [{
    For a function with a `strata.wrt = array<i64: ...>` attribute (or every
    function, with the `wrt` option), appends one argument per
    floating-point result (the gradient flowing into that result, PyTorch's
    `grad_outputs`) and one result per listed argument (its gradient, a
    fresh contiguous tensor; a 1-D tensor of the element count for a
    storage argument). Each op's vector-Jacobian product comes from its
    `VJPOpInterface` (codegen/lib/IR/StrataVJP*.cpp); ops are visited in
    reverse order, only those on a path from a listed argument to a result,
    and contributions to one value are summed, except where a `strata.write`
    marked `strata.inplace_op` (an in-place op through a view, PyTorch's
    CopySlices) wrote: the gradient its value's read of the written
    elements gets replaces theirs (a -0.0 stays -0.0, as PyTorch's), one
    write instead of zeros plus a scatter. The attributes are removed; the
    rest of the pipeline (fold-views, materialize-copies, fuse) then treats
    the gradient code like any other.

    Before:
    ```mlir
    func.func @f(%x: !strata.tensor<3xf32, strided<[1], offset: 0>>)
        -> !strata.tensor<3xf32, strided<[1], offset: 0>>
        attributes {strata.wrt = array<i64: 0>} {
      %y = strata.exp %x : ... -> !strata.tensor<3xf32, strided<[1], offset: 0>>
      return %y : ...
    }
    ```
    After:
    ```mlir
    func.func @f(%x: ..., %dy: !strata.tensor<3xf32, strided<[1], offset: 0>>)
        -> (!strata.tensor<3xf32, ...>, !strata.tensor<3xf32, ...>) {
      %y = strata.exp %x : ...
      %dx = strata.mul %dy, %y : ...
      return %y, %dx : ...
    }
    ```
  }];
  let options = [
    ListOption<"wrt", "wrt", "int64_t",
               "Arguments to differentiate with respect to, for functions "
               "without a strata.wrt attribute">,
    Option<"keepMarkers", "keep-markers", "bool", /*default=*/"false",
           "Keep strata.detach and strata.recorded in the result (the "
           "autograd engine's create_graph records the differentiated "
           "function as a graph of its own, where a detach still cuts)">
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

#endif // STRATA_TRANSFORMS_PASSES_TD
