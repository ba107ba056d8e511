//===- RefInterop.cpp - JitValue <-> reference::RefValue ------------------===//
#include "strata/JIT/RefInterop.h"
#include "strata/IR/StrataDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

using namespace strata;
using namespace strata::jit;

JitValue strata::jit::fromRefValue(const reference::RefValue &value) {
  DType d = strata::ir::elementDType(value.elementType).value_or(DType::I64);
  JitValue v = JitValue::strided(d, value.layout.sizes, value.layout.strides,
                                 value.layout.offset, value.buffer->data);
  v.isStorage = value.isStorage;
  return v;
}

reference::RefValue strata::jit::toRefValue(const JitValue &value,
                                            mlir::MLIRContext &context) {
  mlir::Type t = strata::ir::elementTypeOf(value.dtype, &context);
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
