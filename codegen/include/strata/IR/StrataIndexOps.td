//===- StrataIndexOps.td - gather and scatter -------------*- tablegen -*-===//
//
// The index ops (issue 20): PyTorch's gather, scatter and scatter_add along
// one dim. index_select and index_add are these with an expanded index (the
// DSL builds them so). --strata-fuse gives each its own kernel with an
// `index_map` (an indexed load or store): O(output), not the one-hot
// compare a composition would cost.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_STRATAINDEXOPS_TD
#define STRATA_IR_STRATAINDEXOPS_TD

def Strata_GatherOp : Strata_Op<"gather", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "torch.gather: input's elements at index along one dim";
  let description = [{
    `result[p] = input[p with p[dim] replaced by index[p]]` for every index
    `p` of `index` (PyTorch's gather). `index` is `i64` with the rank of
    `input` and, on every other dim, at most `input`'s size there (it may
    be a view: `index_select` is a gather of an expanded index). The
    result is fresh, contiguous, `index`'s shape and `input`'s dtype.
    An index outside `[0, input.size(dim))` is a user error the DSL raises
    before the program runs; compiled code clamps it (never reads outside
    `input`), the reference evaluator reports it.

    ```mlir
    %r = strata.gather %x, %i dim 1
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>,
          !strata.tensor<3x2xi64, strided<[2, 1], offset: 0>>
        -> !strata.tensor<3x2xf32, strided<[2, 1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, Strata_Tensor:$index,
                       I64Attr:$dim);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = [{
    $input `,` $index `dim` $dim attr-dict `:` qualified(type($input)) `,`
    qualified(type($index)) `->` qualified(type($result))
  }];
}

class Strata_ScatterLikeOp<string mnemonic, string what>
    : Strata_Op<mnemonic, [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "torch." # mnemonic # ": a copy of input with src " # what;
  let description = [{
    A fresh contiguous copy of `input` in which, for every index `p` of
    `index`, the element at `p` with `p[dim]` replaced by `index[p]` }] #
    what # [{ `src[p]` (PyTorch's }] # mnemonic # [{). `src` has `input`'s
    dtype and rank, and `index`'s sizes are at most `src`'s on every dim
    and at most `input`'s on every dim but `dim`; a 0-d `src` is one value
    for every index (scatter(dim, index, value)). Duplicate indices of
    `scatter_add` all add (in the index's row-major order on the CPU);
    those of `scatter` leave one of the values, as PyTorch's.

    ```mlir
    %r = strata.}] # mnemonic # [{ %x, %i, %s dim 0
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>,
          !strata.tensor<2x4xi64, strided<[4, 1], offset: 0>>,
          !strata.tensor<2x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, Strata_Tensor:$index,
                       Strata_Tensor:$src, I64Attr:$dim);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = [{
    $input `,` $index `,` $src `dim` $dim attr-dict `:` qualified(type($input))
    `,` qualified(type($index)) `,` qualified(type($src)) `->`
    qualified(type($result))
  }];
}

def Strata_ScatterOp : Strata_ScatterLikeOp<"scatter", "replaced by">;
def Strata_ScatterAddOp : Strata_ScatterLikeOp<"scatter_add", "plus">;

#endif // STRATA_IR_STRATAINDEXOPS_TD
