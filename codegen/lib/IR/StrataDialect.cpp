//===- StrataDialect.cpp - registration of the strata dialect -------------===//
#include "strata/IR/StrataDialect.h"
#include "strata/IR/StrataAutodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata::ir;

#include "strata/IR/StrataDialect.cpp.inc"

void StrataDialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "strata/IR/StrataOps.cpp.inc"
      >();
  attachVJPModels(*getContext());
}
