//===- RefInterop.cpp - JitValue <-> reference::RefValue ------------------===//
#include "strata/JIT/RefInterop.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

using namespace strata;
using namespace strata::jit;

JitValue strata::jit::fromRefValue(const reference::RefValue &value) {
  mlir::Type t = value.elementType;
  DType d = t.isF32()         ? DType::F32
            : t.isF64()       ? DType::F64
            : t.isInteger(1)  ? DType::Bool
            : t.isInteger(32) ? DType::I32
                              : DType::I64;
  JitValue v = JitValue::strided(d, value.layout.sizes, value.layout.strides,
                                 value.layout.offset, value.buffer->data);
  v.isStorage = value.isStorage;
  return v;
}

reference::RefValue strata::jit::toRefValue(const JitValue &value,
                                            mlir::MLIRContext &context) {
  mlir::Builder b(&context);
  mlir::Type t;
  switch (value.dtype) {
  case DType::F32:
    t = b.getF32Type();
    break;
  case DType::F64:
    t = b.getF64Type();
    break;
  case DType::I32:
    t = b.getI32Type();
    break;
  case DType::I64:
    t = b.getI64Type();
    break;
  case DType::Bool:
    t = b.getI1Type();
    break;
  }
  reference::RefValue r;
  r.buffer = std::make_shared<reference::Buffer>();
  r.buffer->elementType = t;
  for (int64_t i = 0, n = value.storageElements(); i < n; ++i)
    r.buffer->data.push_back(value.storageAt(i));
  r.layout = {value.sizes, value.strides, value.offset};
  r.elementType = t;
  r.isStorage = value.isStorage;
  return r;
}
