//===- StrataKernelOps.td - fused kernels ------------------*- tablegen -*-===//
//
// `strata.kernel`: one iteration space, strided loads, a scalar body, an
// optional reduction, fresh contiguous results (or one strided store into an
// existing storage). Produced by --strata-fuse, annotated by
// --strata-coalesce, lowered to LLVM IR by KernelToLLVM.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_STRATAKERNELOPS_TD
#define STRATA_IR_STRATAKERNELOPS_TD

include "mlir/IR/OpBase.td"

def Strata_KernelOp : Strata_Op<"kernel", [Pure, AttrSizedOperandSegments,
                                            IsolatedFromAbove]> {
  let summary = "A fused loop nest over one iteration space";
  let description = [{
    `space` is the iteration space. Every input has exactly the shape of the
    space (broadcast dimensions have stride 0; `--strata-fuse` inserts
    `strata.strided_view`s to get there) and any layout within its storage
    root. The body receives one scalar per input (and, with `indexed`, one
    `i64` index per space dimension after them) and yields one scalar per
    result.

    Results are fresh contiguous tensors (offset 0). Without `reduce`, each
    result holds one element per point of the space in row-major order (its
    shape may be any shape of the same element count). With `reduce`, every
    result has a combiner (`sum`, `max`, `min` or `none`, one per result):
    a combining result combines the yielded values over the listed space
    dimensions and its row-major elements are the kept dimensions in order
    (keepdim or not); a `none` result holds one element per point, as
    without `reduce` (sibling fusion writes an elementwise value and a
    reduction of the same inputs in one pass).

    `result_perms` (not with `into`) gives each result its own element
    order: for every result, a permutation of the space dims, outermost
    first; the result's row-major elements run over its (kept) dims in that
    order (the identity is the default). `--strata-fuse` sets it for an
    elementwise result whose layout is not row-major (TensorIterator's
    layout of `relu(x.t())` is written in storage order and viewed with
    its strides) and when it merges sibling kernels whose spaces are
    permutations of each other, so that one pass writes each result in its
    consumer's layout (e.g. the gradients of `x` and of `w` in
    `(x.t() * w)` in one kernel).

    With `scan_dim` (and `scan_combiner` `"sum"` or `"prod"`, optional
    `scan_reverse`, `scan_exclusive`: strata.scan's flags), the one result
    holds, at each point, the combination of the yielded values along
    `scan_dim` up to that point; nothing else is allowed with it. The
    emitters run it sequentially along that dim (`--strata-coalesce` and
    sibling fusion leave it alone).

    With `into %dest`, the kernel has one yield and one result: the new
    version of the storage root of `%dest` (whose shape is the space), in
    which the elements `%dest` addresses hold the yielded values.

    `index_map = array<i64: operand, index, stride, bound, accumulate>`
    (StrataIndexOps.td's gather and scatter) makes one operand's access
    indexed: loop operand `operand` (an input, or the result of a kernel
    `into` a destination) is addressed at its layout's position plus
    `stride` times the value of input `index` (an `i64` input) at the same
    point, clamped to `[0, bound)`; that operand has stride 0 along the
    indexed dim. With `accumulate = 1` the store adds to the element
    (scatter_add). Such kernels run their loops as written (no coalescing,
    tiling or vectors) and, when they store indexed, serially on the CPU.

    `--strata-coalesce` adds `loop_sizes` (loops, outermost first) and
    `loop_strides` (for each operand in the order inputs, results, dest: its
    element stride along each loop); code generation uses them when present.

    ```mlir
    %r = strata.kernel space [4, 3] reduce [1] combiners ["sum"]
        ins(%a, %b : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>,
                     !strata.tensor<4x3xf32, strided<[0, 1], offset: 0>>) {
    ^bb0(%x: f32, %y: f32):
      %m = arith.mulf %x, %y : f32
      strata.yield %m : f32
    } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$space,
                       OptionalAttr<DenseI64ArrayAttr>:$reduce_dims,
                       OptionalAttr<StrArrayAttr>:$combiners,
                       UnitAttr:$indexed,
                       OptionalAttr<I64Attr>:$scan_dim,
                       OptionalAttr<StrAttr>:$scan_combiner,
                       UnitAttr:$scan_reverse,
                       UnitAttr:$scan_exclusive,
                       Variadic<Strata_Tensor>:$inputs,
                       Optional<Strata_Tensor>:$dest,
                       OptionalAttr<DenseI64ArrayAttr>:$result_perms,
                       OptionalAttr<DenseI64ArrayAttr>:$loop_sizes,
                       OptionalAttr<DenseI64ArrayAttr>:$loop_strides,
                       OptionalAttr<DenseI64ArrayAttr>:$index_map);
  let results = (outs Variadic<Strata_TensorOrStorage>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `space` $space (`reduce` $reduce_dims^)? (`combiners` $combiners^)?
    (`indexed` $indexed^)?
    (`ins` `(` $inputs^ `:` qualified(type($inputs)) `)`)?
    (`into` `(` $dest^ `:` qualified(type($dest)) `)`)?
    attr-dict-with-keyword $body `->` qualified(type($results))
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                   "::llvm::ArrayRef<int64_t>":$space,
                   "::mlir::ValueRange":$inputs,
                   "::mlir::Value":$dest)>
  ];
  let extraClassDeclaration = [{
    /// The loops code generation runs: sizes outermost first and, for every
    /// operand (inputs, results, dest), its element stride per loop and its
    /// element offset within its storage root.
    struct LoopNest {
      std::vector<int64_t> sizes;
      std::vector<std::vector<int64_t>> strides;
      std::vector<int64_t> offsets;
    };
    /// The coalesced loops when present, else the space as written.
    LoopNest getLoopNest();
    /// The nest as written: the space and each operand's strides in it.
    LoopNest getSpaceLoopNest();
    /// Space dimensions the results reduce over (empty without `reduce`).
    ::llvm::SmallVector<int64_t> getReducedDims();
    /// The space dims result `result`'s row-major order runs over,
    /// outermost first (`result_perms`, else the identity).
    ::llvm::SmallVector<int64_t> getResultPerm(unsigned result);
    /// "sum", "prod", "max", "min", or "" for a non-reducing result.
    ::llvm::StringRef getCombiner(unsigned result);
    /// Number of operands in loop-nest order: inputs, results, dest.
    unsigned getNumLoopOperands() {
      return getInputs().size() + getNumResults() + (getDest() ? 1 : 0);
    }
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    /// A scan kernel (`scan_dim`, from strata.scan): one result over the
    /// space whose element combines the yielded values along `scan_dim`
    /// up to its point (StrataScanOps.cpp verifies it).
    bool isScan() { return getScanDimAttr() != nullptr; }
    ::mlir::LogicalResult verifyScan();
  }];
}

def Strata_YieldOp : Strata_Op<"yield", [Pure, Terminator,
    HasParent<"KernelOp">]> {
  let summary = "The scalars one point of a kernel produces";
  let description = [{
    ```mlir
    strata.yield %v : f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // STRATA_IR_STRATAKERNELOPS_TD
