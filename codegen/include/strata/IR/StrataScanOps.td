//===- StrataScanOps.td - cumulative sum and product -------*- tablegen -*-===//
//
// `strata.scan`: PyTorch's cumsum and cumprod, one O(n) op. --strata-fuse
// turns it into a `strata.kernel` with `scan_dim`; the emitters run it
// parallel over the other dims and sequentially along the scanned one.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_STRATASCANOPS_TD
#define STRATA_IR_STRATASCANOPS_TD

def Strata_ScanOp : Strata_Op<"scan", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Cumulative sum or product along one dimension";
  let description = [{
    `combiner` is `"sum"` (torch.cumsum) or `"prod"` (torch.cumprod). The
    result has the input's shape and element type and is contiguous, as in
    PyTorch; element k along `dim` combines the input's elements 0..k
    (`exclusive`: 0..k-1, the identity at 0; `reverse`: from the end,
    k..n-1 or k+1..n-1). `dim` may be negative; a 0-d tensor takes 0 or -1
    and its result is its value. Integer promotion is the DSL's (an
    explicit `strata.cast`); `i1` inputs are refused, as PyTorch's kernels
    refuse Bool. Accumulation is sequential along `dim`, in f64 for `f32`
    (PyTorch's CPU `acc_type`), so results match PyTorch's CPU bit for bit.
    `reverse` and `exclusive` are what the VJPs need (the gradient of
    cumsum is a reversed cumsum; prod's and cumprod's exclusive products).

    ```mlir
    %c = strata.scan %a dim 1 "sum"
        : !strata.tensor<3x4xf32, strided<[1, 3], offset: 0>>
        -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
    %r = strata.scan %a dim -1 "prod" reverse exclusive
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, I64Attr:$dim, StrAttr:$combiner,
                       UnitAttr:$reverse, UnitAttr:$exclusive);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = [{
    $input `dim` $dim $combiner (`reverse` $reverse^)? (`exclusive` $exclusive^)?
    attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let extraClassDeclaration = [{
    /// `dim` wrapped into [0, rank); 0 for a 0-d input.
    int64_t getWrappedDim();
  }];
}

#endif // STRATA_IR_STRATASCANOPS_TD
