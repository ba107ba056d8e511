//===- DType.h - the element types and their one table ----------*- C++ -*-===//
//
// The element types of every layer: the DSL's strata::DType (kFloat32, ...)
// and the JIT's strata::jit::DType are this enum, and every size or name of
// a dtype (the IR's "f32", PyTorch's "torch.float32", "Float" and
// "torch.FloatTensor", NumPy's "<f4", C++'s "float") is read from one table
// instead of a switch in each file that prints one.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_RUNTIME_DTYPE_H
#define STRATA_RUNTIME_DTYPE_H

#include <cstdint>
#include <string_view>

namespace strata {

/// Element types.
enum class DType {
  F32,  ///< float (torch.float32)
  F64,  ///< double (torch.float64)
  I32,  ///< int32_t (torch.int32)
  I64,  ///< int64_t (torch.int64)
  Bool, ///< bool, one byte (torch.bool)
};

namespace runtime {

/// What strata knows of a dtype.
struct DTypeInfo {
  /// The dtype of this row.
  DType dtype;
  /// Bytes per element.
  int64_t size;
  /// True for F32 and F64.
  bool floating;
  /// The IR element type: "f32", "i64", "i1".
  const char *ir;
  /// The short name of messages and the JIT: "f32", "i64", "bool".
  const char *name;
  /// PyTorch's dtype: "torch.float32".
  const char *torch;
  /// PyTorch's ScalarType, as its "not implemented for" messages print it:
  /// "Float", "Long".
  const char *torchScalar;
  /// PyTorch's legacy tensor type, as its autograd messages print it:
  /// "torch.FloatTensor".
  const char *torchTensor;
  /// NumPy's array-protocol type string (little-endian): "<f4", "|b1".
  const char *numpy;
  /// The C++ type, as PyTorch's messages print it: "float", "long int".
  const char *cpp;
};

/// Every dtype, in the order of the enum.
inline constexpr DTypeInfo kDTypes[] = {
    {DType::F32, 4, true, "f32", "f32", "torch.float32", "Float",
     "torch.FloatTensor", "<f4", "float"},
    {DType::F64, 8, true, "f64", "f64", "torch.float64", "Double",
     "torch.DoubleTensor", "<f8", "double"},
    {DType::I32, 4, false, "i32", "i32", "torch.int32", "Int",
     "torch.IntTensor", "<i4", "int"},
    {DType::I64, 8, false, "i64", "i64", "torch.int64", "Long",
     "torch.LongTensor", "<i8", "long int"},
    {DType::Bool, 1, false, "i1", "bool", "torch.bool", "Bool",
     "torch.BoolTensor", "|b1", "bool"},
};

static_assert(
    [] {
      int i = 0;
      for (const DTypeInfo &info : kDTypes)
        if (static_cast<int>(info.dtype) != i++)
          return false;
      return i == static_cast<int>(DType::Bool) + 1;
    }(),
    "kDTypes lists every dtype in the order of the enum");

/// The table's row of `t`.
constexpr const DTypeInfo &dtypeInfo(DType t) {
  return kDTypes[static_cast<int>(t)];
}

/// The dtype whose NumPy type string is `descr`; false when none is.
constexpr bool dtypeOfNumpy(std::string_view descr, DType &out) {
  for (const DTypeInfo &info : kDTypes)
    if (descr == info.numpy) {
      out = info.dtype;
      return true;
    }
  return false;
}

/// The dtype whose IR element type is `name` ("f32", "i1"); false when none
/// is.
constexpr bool dtypeOfIr(std::string_view name, DType &out) {
  for (const DTypeInfo &info : kDTypes)
    if (name == info.ir) {
      out = info.dtype;
      return true;
    }
  return false;
}

} // namespace runtime

/// Bytes per element.
constexpr int64_t elementSize(DType t) { return runtime::dtypeInfo(t).size; }
/// True for F32 and F64.
constexpr bool isFloatingPoint(DType t) {
  return runtime::dtypeInfo(t).floating;
}

} // namespace strata

#endif // STRATA_RUNTIME_DTYPE_H
