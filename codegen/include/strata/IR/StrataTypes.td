//===- StrataTypes.td - strata tensor and storage types ----*- tablegen -*-===//
//
// The tensor type carries shape, element type and layout; the storage type is
// a flat typed buffer (element type and element count, no shape).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_STRATATYPES_TD
#define STRATA_IR_STRATATYPES_TD

include "strata/IR/StrataDialect.td"
include "mlir/IR/AttrTypeBase.td"

class Strata_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Strata_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Strata_TensorType : Strata_Type<"StridedTensor", "tensor"> {
  let summary = "A strided view of a storage root";
  let description = [{
    A tensor of static shape whose elements live in a storage root:
    element `(i0, ..., in-1)` is `storage[offset + sum(ik * strides[k])]`.
    Strides may be 0 (broadcast) or negative (flip); the offset is absolute
    within the root.

    ```mlir
    !strata.tensor<4x3xf32, strided<[1, 4], offset: 0>>
    !strata.tensor<f32, strided<[], offset: 5>>   // a 0-d tensor
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        ArrayRefParameter<"int64_t">:$strides,
                        "int64_t":$offset);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::Type":$elementType,
                                        "const ::strata::layout::Layout &":$layout), [{
      return $_get(elementType.getContext(), layout.sizes, elementType,
                   layout.strides, layout.offset);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The (sizes, strides, offset) triple of the layout algebra.
    ::strata::layout::Layout getLayout() const;
    /// A fresh contiguous tensor (offset 0) of `shape`.
    static StridedTensorType getContiguous(::mlir::Type elementType,
                                           ::llvm::ArrayRef<int64_t> shape);
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const;
    bool isContiguous() const;
    /// The same layout with another element type.
    StridedTensorType withElementType(::mlir::Type elementType) const;
  }];
}

def Strata_StorageType : Strata_Type<"Storage", "storage"> {
  let summary = "A flat typed buffer: element type and element count";
  let description = [{
    The storage root that tensors view. It knows its element count and
    element type, not a shape.

    ```mlir
    !strata.storage<12xf32>
    ```
  }];
  let parameters = (ins "int64_t":$size, "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Strata_Tensor : Type<CPred<"::llvm::isa<::strata::ir::StridedTensorType>($_self)">,
                         "strata tensor", "::strata::ir::StridedTensorType">;
def Strata_Storage : Type<CPred<"::llvm::isa<::strata::ir::StorageType>($_self)">,
                          "strata storage", "::strata::ir::StorageType">;
def Strata_TensorOrStorage : AnyTypeOf<[Strata_Tensor, Strata_Storage]>;

#endif // STRATA_IR_STRATATYPES_TD
