//===- KernelPasses.td - fusion and loop coalescing passes -*- tablegen -*-===//
#ifndef STRATA_TRANSFORMS_KERNELPASSES_TD
#define STRATA_TRANSFORMS_KERNELPASSES_TD

include "mlir/Pass/PassBase.td"

def WidenSums : Pass<"strata-widen-sums", "mlir::func::FuncOp"> {
  let summary = "Accumulate f32 sums and means in f64";
  let description = [{
    Every f32 `sum`/`mean` becomes `cast(f64 sum(cast(x)))`. After fusion the
    widening cast is inside the reduction kernel, so each accumulator
    (registers, chunk privates, outer-dim read-modify-writes, CUDA partials)
    is f64 and the result rounds once; the narrowing cast joins the
    consumers' kernel (its own kernel only where the sum is returned). Why:
    PyTorch's cascade sum keeps 10^7 additions within a few roundings; a
    running f32 sum is percents off. matmul keeps f32 accumulation, as BLAS.
    The widening cast carries `{strata.cascade}` (kept by fuse on the body's
    `arith.extf`): the emitters may add f32 partials over bounded runs into
    the f64 accumulator (cascade summation, f32 vector speed).

    Before:
    ```mlir
    %s = strata.sum %x dims [] : !strata.tensor<8xf32, ...> -> !strata.tensor<f32, ...>
    ```
    After:
    ```mlir
    %w = strata.cast %x {strata.cascade} : !strata.tensor<8xf32, ...> -> !strata.tensor<8xf64, ...>
    %t = strata.sum %w dims [] : !strata.tensor<8xf64, ...> -> !strata.tensor<f64, ...>
    %s = strata.cast %t : !strata.tensor<f64, ...> -> !strata.tensor<f32, ...>
    ```
  }];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def Fuse : Pass<"strata-fuse", "mlir::func::FuncOp"> {
  let summary = "Group compute ops into strata.kernel ops";
  let description = [{
    Elementwise chains (unary, binary, compare, where, cast; 0-d fills become
    constants) with broadcasting, plus an optional trailing reduction, become
    one `strata.kernel` per group. A value used more than once, by a
    non-elementwise op, or returned is written once by its own kernel.
    copy/contiguous/reshape copies, fills, arange, matmul and writes become
    kernels too. Afterwards the function holds only views, kernels and the
    return.

    Then sibling fusion (option `siblings`, on by default) merges kernels
    that read the same inputs over the same space up to a permutation:
    one kernel reads the shared inputs once and writes every result, each
    in its own order (`result_perms`); a reduction may carry elementwise
    results (combiner `none`).

    Before:
    ```mlir
    %m = strata.mul %a, %two : ...
    %r = strata.add %m, %b : ...
    ```
    After:
    ```mlir
    %r = strata.kernel space [4] ins(%a, %b : ...) {
    ^bb0(%x: f32, %y: f32):
      %c = arith.constant 2.0 : f32
      %m = arith.mulf %x, %c : f32
      %s = arith.addf %m, %y : f32
      strata.yield %s : f32
    } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
    ```
  }];
  let options = [
    Option<"siblings", "siblings", "bool", /*default=*/"true",
           "Merge sibling kernels that read the same inputs">
  ];
  let dependentDialects = ["::strata::ir::StrataDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def SplitKernels : Pass<"strata-split-kernels", "mlir::func::FuncOp"> {
  let summary = "Cut kernels whose body is longer than max-ops into pieces";
  let description = [{
    A kernel whose body holds more than `max-ops` scalar ops (constants
    and the yield not counted) becomes a chain of kernels over the same
    space: each piece computes the next `max-ops` ops in body order and
    writes the values later pieces use as contiguous tensors over the
    space; the last piece keeps the results, reduction, result orders and
    destination. Why: compiling one long basic block costs more than
    linear time in LLVM's code generator, and the pieces of a program of
    repeated structure are one kernel, compiled once.

    Before (`max-ops=2`):
    ```mlir
    %r = strata.kernel space [4] ins(%a : ...) {
    ^bb0(%x: f32):
      %0 = arith.addf %x, %x : f32
      %1 = arith.mulf %0, %0 : f32
      %2 = arith.subf %1, %x : f32
      strata.yield %2 : f32
    } -> ...
    ```
    After:
    ```mlir
    %p = strata.kernel space [4] ins(%a : ...) {
    ^bb0(%x: f32):
      %0 = arith.addf %x, %x : f32
      %1 = arith.mulf %0, %0 : f32
      strata.yield %1 : f32
    } -> !strata.tensor<4xf32, strided<[1], offset: 0>>
    %r = strata.kernel space [4] ins(%p, %a : ...) {
    ^bb0(%y: f32, %x: f32):
      %2 = arith.subf %y, %x : f32
      strata.yield %2 : f32
    } -> ...
    ```
  }];
  let options = [
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"512",
           "The most scalar ops one kernel body may hold">,
    Option<"maxInputs", "max-inputs", "int64_t", /*default=*/"32",
           "The most values from outside a piece that one piece may read">
  ];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

def Coalesce : Pass<"strata-coalesce", "mlir::func::FuncOp"> {
  let summary = "Reorder and merge kernel loops as TensorIterator does";
  let description = [{
    For every `strata.kernel`: drops size-1 loops, orders loops so that the
    innermost one has the smallest stride for the first operand that tells
    them apart (results first, then inputs; stride 0 never decides), and
    merges neighbouring loops that are contiguous for every operand. The
    result is recorded as `loop_sizes` / `loop_strides`.

    Before: `strata.kernel space [4, 3] ins(%a : <4x3, strided<[1, 4]>>)`
    After: `... {loop_sizes = array<i64: 12>, loop_strides = array<i64: 1, 1>}`
    (the transposed copy gets loops [3, 4] with the input unit-stride inner).
  }];
  let dependentDialects = ["::strata::ir::StrataDialect"];
}

#endif // STRATA_TRANSFORMS_KERNELPASSES_TD
