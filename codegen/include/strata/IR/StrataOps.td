//===- StrataOps.td - strata view, compute and write ops ---*- tablegen -*-===//
//
// Every op of the strata dialect. Result types are inferred by the layout
// algebra (InferTypeOpInterface), so the verifier of each op is the algebra.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_STRATAOPS_TD
#define STRATA_IR_STRATAOPS_TD

include "strata/IR/StrataTypes.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ViewLikeInterface.td"
include "strata/IR/StrataAutodiffInterface.td"
include "strata/IR/StrataElementwiseInterface.td"

//===----------------------------------------------------------------------===//
// View ops: metadata only, the result aliases the operand's storage root.
//===----------------------------------------------------------------------===//

class Strata_ViewLikeOp<string mnemonic, list<Trait> traits = []>
    : Strata_Op<mnemonic, !listconcat(traits, [Pure, ViewLikeOpInterface,
          DeclareOpInterfaceMethods<InferTypeOpInterface>])> {
  let results = (outs Strata_Tensor:$result);
  let hasFolder = 1;
  code viewExtra = [{
    ::mlir::Value getViewSource() { return getInput(); }
  }];
  let extraClassDeclaration = viewExtra;
}

def Strata_ViewOp : Strata_ViewLikeOp<"view"> {
  let summary = "Reinterpret the shape without moving data (PyTorch view)";
  let description = [{
    PyTorch's `view`: the result shares the storage; strides follow
    computeStride. One size may be `-1`. When the input's strides cannot
    express the shape, the op is invalid ("view size is not compatible with
    input tensor's size and stride ... Use .reshape(...) instead").

    ```mlir
    %v = strata.view %a as [12]
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<12xf32, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, DenseI64ArrayAttr:$shape);
  let assemblyFormat = "$input `as` $shape attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Strata_PermuteOp : Strata_ViewLikeOp<"permute"> {
  let summary = "Reorder dimensions";
  let description = [{
    ```mlir
    %p = strata.permute %a dims [1, 0]
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, DenseI64ArrayAttr:$dims);
  let assemblyFormat = "$input `dims` $dims attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasCanonicalizer = 1;
}

def Strata_TransposeOp : Strata_ViewLikeOp<"transpose"> {
  let summary = "Swap two dimensions";
  let description = [{
    ```mlir
    %t = strata.transpose %a dims 0, 1
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, I64Attr:$dim0, I64Attr:$dim1);
  let assemblyFormat = "$input `dims` $dim0 `,` $dim1 attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasCanonicalizer = 1;
}

def Strata_SliceOp : Strata_ViewLikeOp<"slice"> {
  let summary = "Python slicing start:end:step along one dimension";
  let description = [{
    Bounds follow Python: negative values count from the end and both are
    clamped to `[0, size]`; a missing bound means the whole range. The step
    must be positive.

    ```mlir
    %s = strata.slice %x dim 0 start 2 end 5 step 1
        : !strata.tensor<10xi32, strided<[1], offset: 0>>
        -> !strata.tensor<3xi32, strided<[1], offset: 2>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, I64Attr:$dim,
                       OptionalAttr<I64Attr>:$start, OptionalAttr<I64Attr>:$end,
                       I64Attr:$step);
  let assemblyFormat = [{
    $input `dim` $dim (`start` $start^)? (`end` $end^)? `step` $step attr-dict
    `:` qualified(type($input)) `->` qualified(type($result))
  }];
}

def Strata_SelectOp : Strata_ViewLikeOp<"select"> {
  let summary = "Index one dimension, removing it";
  let description = [{
    ```mlir
    %r = strata.select %a dim 0 index 1
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<4xf32, strided<[1], offset: 4>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, I64Attr:$dim, I64Attr:$index);
  let assemblyFormat = "$input `dim` $dim `index` $index attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Strata_NarrowOp : Strata_ViewLikeOp<"narrow"> {
  let summary = "A contiguous range [start, start+length) of one dimension";
  let description = [{
    ```mlir
    %n = strata.narrow %a dim 1 start 1 length 2
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<3x2xf32, strided<[4, 1], offset: 1>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, I64Attr:$dim, I64Attr:$start,
                       I64Attr:$length);
  let assemblyFormat = "$input `dim` $dim `start` $start `length` $length attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Strata_ExpandOp : Strata_ViewLikeOp<"expand"> {
  let summary = "Broadcast size-1 dimensions with stride 0";
  let description = [{
    `-1` keeps a size; new leading dimensions may be added. Expanded
    dimensions get stride 0: no memory is allocated.

    ```mlir
    %e = strata.expand %b to [3, 4]
        : !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<3x4xf32, strided<[0, 1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, DenseI64ArrayAttr:$shape);
  let assemblyFormat = "$input `to` $shape attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Strata_SqueezeOp : Strata_ViewLikeOp<"squeeze"> {
  let summary = "Remove size-1 dimensions (all, or the listed ones)";
  let description = [{
    ```mlir
    %q = strata.squeeze %a dims [1]
        : !strata.tensor<3x1x4xf32, strided<[4, 4, 1], offset: 0>>
        -> !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, OptionalAttr<DenseI64ArrayAttr>:$dims);
  let assemblyFormat = "$input (`dims` $dims^)? attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Strata_UnsqueezeOp : Strata_ViewLikeOp<"unsqueeze"> {
  let summary = "Insert a size-1 dimension";
  let description = [{
    The new dimension gets PyTorch's stride (`sizes[d] * strides[d]`, or 1
    at the end).

    ```mlir
    %u = strata.unsqueeze %a dim 1
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<3x1x4xf32, strided<[4, 4, 1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, I64Attr:$dim);
  let assemblyFormat = "$input `dim` $dim attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Strata_AsStridedOp : Strata_ViewLikeOp<"as_strided"> {
  let summary = "Any sizes, strides and absolute offset over the storage root";
  let description = [{
    The offset is absolute within the storage root of the input (as in
    PyTorch); every addressed element must lie inside the root.

    ```mlir
    %w = strata.as_strided %x sizes [3] strides [1] offset 2
        : !strata.tensor<10xi32, strided<[1], offset: 0>>
        -> !strata.tensor<3xi32, strided<[1], offset: 2>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, DenseI64ArrayAttr:$sizes,
                       DenseI64ArrayAttr:$strides, I64Attr:$offset);
  let assemblyFormat = [{
    $input `sizes` $sizes `strides` $strides `offset` $offset attr-dict
    `:` qualified(type($input)) `->` qualified(type($result))
  }];
}

def Strata_DiagonalOp : Strata_ViewLikeOp<"diagonal"> {
  let summary = "The diagonal of two dimensions, moved to the end";
  let description = [{
    ```mlir
    %d = strata.diagonal %a offset 1 dims 0, 1
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<3xf32, strided<[5], offset: 1>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, I64Attr:$offset, I64Attr:$dim1,
                       I64Attr:$dim2);
  let assemblyFormat = "$input `offset` $offset `dims` $dim1 `,` $dim2 attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Strata_UnfoldOp : Strata_ViewLikeOp<"unfold"> {
  let summary = "Sliding windows of one dimension (may overlap)";
  let description = [{
    ```mlir
    %w = strata.unfold %x dim 0 size 3 step 1
        : !strata.tensor<5xf32, strided<[1], offset: 0>>
        -> !strata.tensor<3x3xf32, strided<[1, 1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, I64Attr:$dim, I64Attr:$size,
                       I64Attr:$step);
  let assemblyFormat = "$input `dim` $dim `size` $size `step` $step attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Strata_FlipOp : Strata_ViewLikeOp<"flip"> {
  let summary = "Reverse dimensions with negative strides";
  let description = [{
    A deliberate extension over PyTorch (which copies): flipping is a view
    with negative strides and the offset at the first element.

    ```mlir
    %f = strata.flip %x dims [0]
        : !strata.tensor<5xf32, strided<[1], offset: 0>>
        -> !strata.tensor<5xf32, strided<[-1], offset: 4>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, DenseI64ArrayAttr:$dims);
  let assemblyFormat = "$input `dims` $dims attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Strata_StridedViewOp : Strata_Op<"strided_view", [Pure]> {
  let summary = "The folded form of a view chain: one layout over a root";
  let description = [{
    The result's type holds the whole (sizes, strides, offset) triple,
    absolute within the storage root of the source. The source is a storage
    value or a tensor (whose root is then used). `--strata-fold-views`
    rewrites every chain of view ops into one `strided_view`.

    ```mlir
    %v = strata.strided_view %s : !strata.storage<12xf32>
        -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_TensorOrStorage:$source);
  let results = (outs Strata_Tensor:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// View-or-copy ops: a view when strides allow it, else a fresh tensor.
//===----------------------------------------------------------------------===//

class Strata_MaybeViewOp<string mnemonic>
    : Strata_Op<mnemonic, [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// True when the result is a view of the input (no copy needed).
    bool isView();
  }];
}

def Strata_ReshapeOp : Strata_MaybeViewOp<"reshape"> {
  let summary = "view when strides allow it, otherwise a contiguous copy";
  let description = [{
    The result type says which: the view's layout, or a fresh contiguous
    layout at offset 0. `--strata-materialize-copies` turns the copying form
    into `strata.contiguous` followed by `strata.view`.

    ```mlir
    %r = strata.reshape %t as [12]
        : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
        -> !strata.tensor<12xf32, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, DenseI64ArrayAttr:$shape);
  let assemblyFormat = "$input `as` $shape attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Strata_FlattenOp : Strata_MaybeViewOp<"flatten"> {
  let summary = "Merge dimensions start..end (a reshape)";
  let description = [{
    ```mlir
    %f = strata.flatten %a dims 0 to 1
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<12xf32, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, I64Attr:$start_dim, I64Attr:$end_dim);
  let assemblyFormat = "$input `dims` $start_dim `to` $end_dim attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

def Strata_ContiguousOp : Strata_MaybeViewOp<"contiguous"> {
  let summary = "The input itself when contiguous, else a contiguous copy";
  let description = [{
    As in PyTorch, `contiguous()` of an already-contiguous tensor is that
    tensor (same type, same storage); otherwise a fresh row-major copy.

    ```mlir
    %c = strata.contiguous %t
        : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
        -> !strata.tensor<4x3xf32, strided<[3, 1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

//===----------------------------------------------------------------------===//
// Compute ops: each result is a fresh tensor (its own root, offset 0) whose
// layout the layout algebra infers from the operands as PyTorch allocates
// it: elementwise results as TensorIterator (the first operand leading),
// copy and cast with preserve_format, the others contiguous.
//===----------------------------------------------------------------------===//

def Strata_CopyOp : Strata_Op<"copy", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "A fresh copy (clone, preserve_format)";
  let description = [{
    PyTorch's `clone()`: a non-overlapping and dense input's strides are
    kept (offset 0); any other input gets dense strides in its stride order
    (`strata.contiguous` is the row-major copy).

    ```mlir
    %c = strata.copy %a
        : !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
        -> !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
}

include "strata/IR/StrataUnaryOps.td"

/// `scalar` and `reference` are as in StrataUnaryOps.td with `in` (both
/// operands' scalars, or doubles) for `x`; compare ops need neither.
/// `rule` is the operands' ::strata::ir::DTypeRule (strata/IR/OpDTypes.h):
/// Any, Number (not bool), Float (f32/f64; the DSL casts integers to f32
/// first, as PyTorch promotes), FloatOnly (f32/f64; the DSL refuses
/// integers, as PyTorch's kernel), Integral (integers and bool). The type
/// inference and the DSL both read it. The VJP of a binary op is its
/// `rule(XOp, ...)` in StrataVJP.cpp (attached to the op by its presence).
class Strata_BinaryOp<string mnemonic, string what, string rule = "Any",
                      bit compare = 0>
    : Strata_Op<mnemonic, [DeclareOpInterfaceMethods<InferTypeOpInterface>,
                           DeclareOpInterfaceMethods<Strata_ElementwiseOpInterface>]> {
  let summary = "Elementwise " # what # " with broadcasting";
  let description = [{
    Both operands have the same element type (insert `strata.cast` to mix
    types); shapes broadcast as in PyTorch, read with their own strides.
    The result is a fresh tensor}] #
    !if(compare, " of `i1`", "") # [{ laid out as PyTorch's TensorIterator
    lays it out: the dims ordered by the operands' strides, the first
    operand deciding (`(a.t() + b)` has `a.t()`'s strides).

    ```mlir
    %c = strata.}] # mnemonic # [{ %a, %b
        : !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>,
          !strata.tensor<1x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<3x4x}] # !if(compare, "i1", "f32") #
        [{, strided<[4, 1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$lhs, Strata_Tensor:$rhs);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs)) `->` qualified(type($result))";
  // Unset, they stop the build with what to write (not a missing return
  // in generated code): an elementwise op needs both.
  code scalar = [{
    static_assert(sizeof(::mlir::Value) == 0, "strata: this elementwise op's "
        "ODS entry has no `let scalar`: write its formula with ScalarBuilder "
        "`s` (docs/design.md, the op recipe)");
  }];
  code reference = [{
    static_assert(sizeof(double) == 0, "strata: this elementwise op's ODS "
        "entry has no `let reference`: write its value in double for the "
        "reference evaluator (docs/design.md, the op recipe)");
  }];
  let extraClassDeclaration = [{
    /// The element types the op takes (strata::ir::elementwiseDTypes).
    static constexpr ::strata::ir::DTypeRule kDTypeRule =
        ::strata::ir::DTypeRule::}] # rule # [{;
    /// Whether the result is i1 (a comparison).
    static constexpr bool kCompare = }] # !if(compare, "true", "false") # [{;
  }];
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, ::std::optional<::mlir::Location> location,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attributes,
        ::mlir::RegionRange regions,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return ::strata::ir::inferBinaryType(location, getOperationName(),
                                           operands, kDTypeRule, kCompare,
                                           inferred, attributes);
    }
    ::mlir::Value $cppClass::buildScalar(::strata::ir::ScalarBuilder &s,
                                         ::llvm::ArrayRef<::mlir::Value> in) {
      ::mlir::Type t = in.back().getType();
      bool isF = t.isa<::mlir::FloatType>(), i1 = t.isInteger(1);
      (void)isF, (void)i1;
      }] # !if(compare, "return s.compare(\"" # mnemonic # "\", in[0], in[1]);",
               scalar) # [{
    }
    double $cppClass::evalScalar(::llvm::ArrayRef<double> in) {
      }] # reference # [{
    }
  }];
}

def Strata_AddOp : Strata_BinaryOp<"add", "addition"> {
  let scalar = [{
    if (i1) // PyTorch: true + true is true
      return s.create<arith::OrIOp>(in[0], in[1]);
    return isF ? s.create<arith::AddFOp>(in[0], in[1])
               : s.create<arith::AddIOp>(in[0], in[1]);
  }];
  let reference = [{ return in[0] + in[1]; }];
}
def Strata_SubOp : Strata_BinaryOp<"sub", "subtraction", "Number"> {
  let scalar = [{
    return isF ? s.create<arith::SubFOp>(in[0], in[1])
               : s.create<arith::SubIOp>(in[0], in[1]);
  }];
  let reference = [{ return in[0] - in[1]; }];
}
def Strata_MulOp : Strata_BinaryOp<"mul", "multiplication"> {
  let scalar = [{
    if (i1)
      return s.create<arith::AndIOp>(in[0], in[1]);
    return isF ? s.create<arith::MulFOp>(in[0], in[1])
               : s.create<arith::MulIOp>(in[0], in[1]);
  }];
  let reference = [{ return in[0] * in[1]; }];
}
def Strata_DivOp : Strata_BinaryOp<"div", "division", "Float"> {
  let scalar = [{ return s.create<arith::DivFOp>(in[0], in[1]); }];
  let reference = [{ return in[0] / in[1]; }];
}
def Strata_PowOp : Strata_BinaryOp<"pow", "power", "Number"> {
  let description = [{
    Elementwise power with broadcasting, as the other binary ops (both
    operands of one element type, except below; laid out as PyTorch's
    TensorIterator lays out a binary op). An exponent that is a C++ number
    is PyTorch's pow(Tensor, Scalar): a unary TensorIterator (the result is
    laid out from `lhs` alone). It is a 0-d `strata.fill` (a constant, whose value may select the code: 0.5 is
    sqrt, 2 a product) or, with `scalar_exponent`, any 0-d tensor (a
    program argument: one compiled program for every value). A
    `scalar_exponent` of an `f32` base may be `f64`: the exponent as
    PyTorch's double Scalar, where f32 cannot hold it; the power is then
    computed in f64 and rounded once.

    ```mlir
    %p = strata.pow %x, %e {scalar_exponent}
        : !strata.tensor<8xf32, strided<[1], offset: 0>>,
          !strata.tensor<f64, strided<[], offset: 0>>
        -> !strata.tensor<8xf32, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$lhs, Strata_Tensor:$rhs,
                       UnitAttr:$scalar_exponent);
  let scalar = [{ return s.pow(getOperation(), in[0], in[1]); }];
  let reference = [{ return std::pow(in[0], in[1]); }];
}
def Strata_MaximumOp : Strata_BinaryOp<"maximum", "maximum"> {
  let scalar = [{
    if (isF)
      return s.create<arith::MaxFOp>(in[0], in[1]);
    return i1 ? s.create<arith::MaxUIOp>(in[0], in[1])
              : s.create<arith::MaxSIOp>(in[0], in[1]);
  }];
  let reference = [{
    return std::isnan(in[0]) || std::isnan(in[1]) ? NAN
                                                  : std::max(in[0], in[1]);
  }];
}
def Strata_MinimumOp : Strata_BinaryOp<"minimum", "minimum"> {
  let scalar = [{
    if (isF)
      return s.create<arith::MinFOp>(in[0], in[1]);
    return i1 ? s.create<arith::MinUIOp>(in[0], in[1])
              : s.create<arith::MinSIOp>(in[0], in[1]);
  }];
  let reference = [{
    return std::isnan(in[0]) || std::isnan(in[1]) ? NAN
                                                  : std::min(in[0], in[1]);
  }];
}
def Strata_Atan2Op : Strata_BinaryOp<"atan2", "arctangent of lhs / rhs",
                                     "Float"> {
  let scalar = [{ return s.create<math::Atan2Op>(in[0], in[1]); }];
  let reference = [{ return std::atan2(in[0], in[1]); }];
}
def Strata_HypotOp : Strata_BinaryOp<"hypot", "sqrt(lhs^2 + rhs^2)",
                                     "FloatOnly"> {
  let scalar = [{ return s.hypot(in[0], in[1]); }];
  let reference = [{ return std::hypot(in[0], in[1]); }];
}
def Strata_LogaddexpOp : Strata_BinaryOp<"logaddexp", "log(exp(lhs) + exp(rhs))",
                                         "FloatOnly"> {
  let scalar = [{ return s.logaddexp(in[0], in[1]); }];
  let reference = [{ return ::strata::ir::referenceLogaddexp(in[0], in[1]); }];
}
/// The division family's integer forms never trap: a zero divisor gives 0
/// (NumPy's value; PyTorch raises ZeroDivisionError, which the DSL does
/// for a zero number) and INT_MIN by -1 wraps (PyTorch's CPU kernels trap).
def Strata_FmodOp : Strata_BinaryOp<"fmod", "C fmod (the sign of lhs)",
                                    "Number"> {
  let scalar = [{ return s.fmod(in[0], in[1]); }];
  let reference = [{
    bool ints = getType().getElementType().isa<IntegerType>();
    return ::strata::ir::referenceFmod(in[0], in[1], ints);
  }];
}
def Strata_RemainderOp : Strata_BinaryOp<"remainder",
                                         "Python modulo (the sign of rhs)",
                                         "Number"> {
  let scalar = [{ return s.remainder(in[0], in[1]); }];
  let reference = [{
    bool ints = getType().getElementType().isa<IntegerType>();
    return ::strata::ir::referenceRemainder(in[0], in[1], ints);
  }];
}
def Strata_FloorDivideOp : Strata_BinaryOp<"floor_divide",
                                           "division rounded down", "Number"> {
  let scalar = [{ return s.floorDivide(in[0], in[1]); }];
  let reference = [{
    bool ints = getType().getElementType().isa<IntegerType>();
    return ::strata::ir::referenceFloorDivide(in[0], in[1], ints);
  }];
}
def Strata_EqOp : Strata_BinaryOp<"eq", "==", "Any", 1> {
  let reference = [{ return in[0] == in[1]; }];
}
def Strata_NeOp : Strata_BinaryOp<"ne", "!=", "Any", 1> {
  let reference = [{ return in[0] != in[1]; }];
}
def Strata_LtOp : Strata_BinaryOp<"lt", "<", "Any", 1> {
  let reference = [{ return in[0] < in[1]; }];
}
def Strata_LeOp : Strata_BinaryOp<"le", "<=", "Any", 1> {
  let reference = [{ return in[0] <= in[1]; }];
}
def Strata_GtOp : Strata_BinaryOp<"gt", ">", "Any", 1> {
  let reference = [{ return in[0] > in[1]; }];
}
def Strata_GeOp : Strata_BinaryOp<"ge", ">=", "Any", 1> {
  let reference = [{ return in[0] >= in[1]; }];
}
def Strata_BitwiseAndOp : Strata_BinaryOp<"bitwise_and", "bitwise and",
                                          "Integral"> {
  let scalar = [{ return s.create<arith::AndIOp>(in[0], in[1]); }];
  let reference = [{
    return static_cast<double>(static_cast<int64_t>(in[0]) &
                               static_cast<int64_t>(in[1]));
  }];
}
def Strata_BitwiseOrOp : Strata_BinaryOp<"bitwise_or", "bitwise or",
                                         "Integral"> {
  let scalar = [{ return s.create<arith::OrIOp>(in[0], in[1]); }];
  let reference = [{
    return static_cast<double>(static_cast<int64_t>(in[0]) |
                               static_cast<int64_t>(in[1]));
  }];
}
def Strata_BitwiseXorOp : Strata_BinaryOp<"bitwise_xor", "bitwise xor",
                                          "Integral"> {
  let scalar = [{ return s.create<arith::XOrIOp>(in[0], in[1]); }];
  let reference = [{
    return static_cast<double>(static_cast<int64_t>(in[0]) ^
                               static_cast<int64_t>(in[1]));
  }];
}

def Strata_WhereOp : Strata_Op<"where", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Strata_ElementwiseOpInterface>]> {
  let summary = "Select elementwise: cond ? a : b, with broadcasting";
  let description = [{
    ```mlir
    %r = strata.where %c, %a, %b
        : !strata.tensor<4xi1, strided<[1], offset: 0>>,
          !strata.tensor<4xf32, strided<[1], offset: 0>>,
          !strata.tensor<f32, strided<[], offset: 0>>
        -> !strata.tensor<4xf32, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$cond, Strata_Tensor:$lhs, Strata_Tensor:$rhs);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = [{
    $cond `,` $lhs `,` $rhs attr-dict `:` qualified(type($cond)) `,` qualified(type($lhs)) `,`
    qualified(type($rhs)) `->` qualified(type($result))
  }];
  let extraClassDefinition = [{
    ::mlir::Value $cppClass::buildScalar(::strata::ir::ScalarBuilder &s,
                                         ::llvm::ArrayRef<::mlir::Value> in) {
      return s.select(in[0], in[1], in[2]);
    }
    double $cppClass::evalScalar(::llvm::ArrayRef<double> in) {
      return in[0] != 0 ? in[1] : in[2];
    }
  }];
}

def Strata_LerpOp : Strata_Op<"lerp", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Strata_ElementwiseOpInterface>]> {
  let summary = "Linear interpolation from start to end by weight";
  let description = [{
    PyTorch 1.13's lerp: `start + weight * (end - start)` where weight < 0.5,
    else `end - (end - start) * (1 - weight)` (exact at both ends), each a
    fused multiply-add (one rounding) as PyTorch's kernels compute it. Three
    floating-point operands of one dtype that broadcast; a number weight
    is a 0-d `strata.fill`.

    ```mlir
    %r = strata.lerp %a, %b, %w
        : !strata.tensor<4xf32, strided<[1], offset: 0>>,
          !strata.tensor<4xf32, strided<[1], offset: 0>>,
          !strata.tensor<f32, strided<[], offset: 0>>
        -> !strata.tensor<4xf32, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$start, Strata_Tensor:$end,
                       Strata_Tensor:$weight);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = [{
    $start `,` $end `,` $weight attr-dict `:` qualified(type($start)) `,`
    qualified(type($end)) `,` qualified(type($weight)) `->` qualified(type($result))
  }];
  let extraClassDefinition = [{
    ::mlir::Value $cppClass::buildScalar(::strata::ir::ScalarBuilder &s,
                                         ::llvm::ArrayRef<::mlir::Value> in) {
      return s.lerp(in[0], in[1], in[2]);
    }
    double $cppClass::evalScalar(::llvm::ArrayRef<double> in) {
      return ::strata::ir::referenceLerp(in[0], in[1], in[2]);
    }
  }];
}

def Strata_FmaOp : Strata_Op<"fma", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<Strata_ElementwiseOpInterface>]> {
  let summary = "Fused multiply-add: a * b + c, rounded once";
  let description = [{
    PyTorch 1.13's CPU kernels of `add(self, other, alpha)` (and sub, which
    is add by -alpha) compute `vec::fmadd(other, alpha, self)`, and their
    scalar loops are compiled with contraction, so `self + alpha * other`
    is one fused multiply-add everywhere; `addcmul` is
    `fma(value * t1, t2, self)`. The DSL records those forms as this op
    (a number alpha is a 0-d `strata.fill`). Three floating-point operands
    of one dtype that broadcast.

    ```mlir
    %r = strata.fma %b, %alpha, %a
        : !strata.tensor<4xf32, strided<[1], offset: 0>>,
          !strata.tensor<f32, strided<[], offset: 0>>,
          !strata.tensor<4xf32, strided<[1], offset: 0>>
        -> !strata.tensor<4xf32, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$lhs, Strata_Tensor:$rhs,
                       Strata_Tensor:$addend);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $addend attr-dict `:` qualified(type($lhs)) `,`
    qualified(type($rhs)) `,` qualified(type($addend)) `->` qualified(type($result))
  }];
  let extraClassDefinition = [{
    ::mlir::Value $cppClass::buildScalar(::strata::ir::ScalarBuilder &s,
                                         ::llvm::ArrayRef<::mlir::Value> in) {
      return s.create<::mlir::math::FmaOp>(in[0], in[1], in[2]);
    }
    // In double: an f32 product is exact there, so this rounds the sum
    // (twice for f32, as the reference's other ops).
    double $cppClass::evalScalar(::llvm::ArrayRef<double> in) {
      return std::fma(in[0], in[1], in[2]);
    }
  }];
}

def Strata_CastOp : Strata_Op<"cast", [
    DeclareOpInterfaceMethods<Strata_ElementwiseOpInterface>]> {
  let summary = "Convert the element type (PyTorch's to(dtype))";
  let description = [{
    The result is a fresh tensor of the same shape with the result type's
    element type and the input's layout as `strata.copy` keeps it
    (preserve_format). Float to integer truncates toward zero; to `i1`
    tests `!= 0`.

    ```mlir
    %d = strata.cast %a
        : !strata.tensor<4xi32, strided<[1], offset: 0>>
        -> !strata.tensor<4xf32, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::Value $cppClass::buildScalar(::strata::ir::ScalarBuilder &s,
                                         ::llvm::ArrayRef<::mlir::Value> in) {
      return s.cast(getOperation(), in[0]);
    }
    // The rounding to the result dtype, which the store does; a float out
    // of an integer type's range (or NaN) gives its minimum, as PyTorch's
    // CPU kernels (x86's integer indefinite; ScalarBuilder::convert).
    double $cppClass::evalScalar(::llvm::ArrayRef<double> in) {
      ::mlir::Type from = getInput().getType()
                              .cast<::strata::ir::StridedTensorType>()
                              .getElementType();
      ::mlir::Type to = getResult().getType()
                            .cast<::strata::ir::StridedTensorType>()
                            .getElementType();
      if (from.isa<::mlir::FloatType>() && to.isa<::mlir::IntegerType>() &&
          !to.isInteger(1)) {
        double lim = std::ldexp(1.0, to.getIntOrFloatBitWidth() - 1);
        if (!(in[0] >= -lim && in[0] < lim))
          return -lim;
      }
      return in[0];
    }
  }];
}

class Strata_ReduceOp<string mnemonic, string what>
    : Strata_Op<mnemonic, [DeclareOpInterfaceMethods<InferTypeOpInterface>,
                           Strata_ReductionOpInterface]> {
  let summary = what # " over dimensions (all when none are listed)";
  let description = [{
    Reduces over `dims` (all dimensions when empty); `keepdim` keeps them
    with size 1. Integer and `i1` inputs of `sum` and `prod` produce
    `i64`, as in PyTorch; `mean` needs a floating-point input.

    ```mlir
    %s = strata.}] # mnemonic # [{ %a dims [1] keepdim
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>
        -> !strata.tensor<3x1xf32, strided<[1, 1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keepdim);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = [{
    $input `dims` $dims (`keepdim` $keepdim^)? attr-dict `:` qualified(type($input))
    `->` qualified(type($result))
  }];
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, ::std::optional<::mlir::Location> location,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attributes,
        ::mlir::RegionRange regions,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      Adaptor adaptor(operands, attributes, regions);
      return ::strata::ir::inferReduceType(location, getOperationName(),
                                           adaptor.getInput(), adaptor.getDims(),
                                           adaptor.getKeepdim(), inferred);
    }
  }];
}

def Strata_SumOp : Strata_ReduceOp<"sum", "Sum">;
def Strata_MeanOp : Strata_ReduceOp<"mean", "Mean">;
def Strata_AmaxOp : Strata_ReduceOp<"amax", "Maximum">;
def Strata_AminOp : Strata_ReduceOp<"amin", "Minimum">;
def Strata_ProdOp : Strata_ReduceOp<"prod", "Product">;

def Strata_MatmulOp : Strata_Op<"matmul", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Matrix product with PyTorch's matmul shape rules";
  let description = [{
    1-D and 2-D operands as in `torch.matmul`, and batched operands whose
    leading dimensions broadcast.

    ```mlir
    %c = strata.matmul %a, %b
        : !strata.tensor<3x4xf32, strided<[4, 1], offset: 0>>,
          !strata.tensor<4x5xf32, strided<[1, 4], offset: 0>>
        -> !strata.tensor<3x5xf32, strided<[5, 1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_Tensor:$lhs, Strata_Tensor:$rhs);
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs)) `->` qualified(type($result))";
}

def Strata_FillOp : Strata_Op<"fill", []> {
  let summary = "A fresh tensor with every element equal to a value";
  let description = [{
    A 0-d `fill` is how scalars enter a program (`x * 2`).

    ```mlir
    %two = strata.fill 2.0 : !strata.tensor<f32, strided<[], offset: 0>>
    %big = strata.fill 9007199254740993 : !strata.tensor<i64, strided<[], offset: 0>>
    ```

    The value is an `f64` attribute, or an `i64` one, which integer and
    bool tensors take exactly (an `f64` value converts as `strata.cast`).
  }];
  let arguments = (ins AnyAttrOf<[F64Attr, I64Attr]>:$value);
  let extraClassDeclaration = [{
    /// The value as a double (rounded for an i64 beyond 2^53).
    double getValueAsDouble();
  }];
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = "custom<ScalarValue>($value) attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Strata_ArangeOp : Strata_Op<"arange", []> {
  let summary = "start, start + step, ... (the size comes from the type)";
  let description = [{
    ```mlir
    %x = strata.arange start 0.0 step 1.0
        : !strata.tensor<12xf32, strided<[1], offset: 0>>
    %i = strata.arange start 9007199254740992 step 1
        : !strata.tensor<4xi64, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins AnyAttrOf<[F64Attr, I64Attr]>:$start,
                       AnyAttrOf<[F64Attr, I64Attr]>:$step);
  let extraClassDeclaration = [{
    /// start and step as doubles.
    double getStartAsDouble();
    double getStepAsDouble();
    /// True when start and step are i64: element i is start + i * step,
    /// computed exactly in i64 (PyTorch's integer arange).
    bool isIntegral();
  }];
  let results = (outs Res<Strata_Tensor, "a fresh tensor", [MemAlloc]>:$result);
  let assemblyFormat = "`start` custom<ScalarValue>($start) `step` custom<ScalarValue>($step) attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// In-place writes, recorded functionally.
//===----------------------------------------------------------------------===//

def Strata_WriteOp : Strata_Op<"write", [Pure]> {
  let summary = "Write through a view: a new version of its storage root";
  let description = [{
    The functional form of an in-place op (`dest.copy_(src)`, `dest.add_(..)`
    recorded as `add` then `write`): the result is a new version of the
    storage root of `dest` in which the elements `dest` addresses hold
    `src` (broadcast to `dest`'s shape). Later reads of any view of that
    storage are `strided_view`s of the new version. Writing through a view in
    which several elements share one memory location (stride 0 with size > 1)
    is invalid, as in PyTorch.

    ```mlir
    %s1 = strata.write %v into %d
        : !strata.tensor<f32, strided<[], offset: 0>>,
          !strata.tensor<3xf32, strided<[1], offset: 2>>
        -> !strata.storage<12xf32>
    ```
  }];
  let arguments = (ins Strata_Tensor:$src, Strata_Tensor:$dest);
  let results = (outs Strata_Storage:$result);
  let assemblyFormat = "$src `into` $dest attr-dict `:` qualified(type($src)) `,` qualified(type($dest)) `->` qualified(type($result))";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Autograd markers: read by strata-differentiate, which removes them.
//===----------------------------------------------------------------------===//

def Strata_DetachOp : Strata_Op<"detach", [Pure, SameOperandsAndResultType]> {
  let summary = "The input's value, through which no gradient flows";
  let description = [{
    PyTorch's `detach()` inside a program that is differentiated: the
    forward value is the input; `strata-differentiate` propagates no
    gradient through it (the input is a constant to what reads the result)
    and then replaces the result by the input. Outside a function marked
    `strata.wrt` the pass only removes it.

    ```mlir
    %d = strata.detach %y : !strata.tensor<3xf32, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_TensorOrStorage:$input);
  let results = (outs Strata_TensorOrStorage:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($result))";
}

def Strata_RecordedOp : Strata_Op<"recorded", [Pure, SameOperandsAndResultType]> {
  let summary = "A value computed before, differentiated as its recomputation";
  let description = [{
    How a backward program uses what the forward already computed: the
    result's value is `value` (an argument holding the recorded result);
    its gradient flows into `recompute`, the op that computed it re-emitted
    from its inputs. After building the gradient, `strata-differentiate`
    replaces every use of `recompute` and of the result by `value`, so a
    rule that reads the op's result (exp, sqrt, tanh, ...) reads the value
    saved by the forward, and the recomputation is dead code unless nothing
    recorded it (PyTorch's saved tensors, without recomputing the forward).
    With `value_only`, only the result is replaced: `recompute` is another
    value whose other uses stay (an untracked in-place write, invisible to
    autograd: its new version passes its gradient to the old version).

    ```mlir
    %e = strata.exp %x : !strata.tensor<3xf32, strided<[1], offset: 0>>
        -> !strata.tensor<3xf32, strided<[1], offset: 0>>
    %r = strata.recorded %e as %saved
        : !strata.tensor<3xf32, strided<[1], offset: 0>>
    ```
  }];
  let arguments = (ins Strata_TensorOrStorage:$recompute,
                       Strata_TensorOrStorage:$value,
                       UnitAttr:$value_only);
  let results = (outs Strata_TensorOrStorage:$result);
  let assemblyFormat = "$recompute `as` $value attr-dict `:` qualified(type($result))";
}

include "strata/IR/StrataScanOps.td"
include "strata/IR/StrataIndexOps.td"
include "strata/IR/StrataKernelOps.td"

#endif // STRATA_IR_STRATAOPS_TD
