//===- ProgramModule.h - a built program as an MLIR module -------*- C++
//-*-===//
//
// The MLIR side of strata/IR/ProgramBuilder.h: an ir::Program becomes a
// module with one func.func @main, made with OpBuilder (no text).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_PROGRAMMODULE_H
#define STRATA_IR_PROGRAMMODULE_H

#include "strata/IR/ProgramBuilder.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace strata::ir {

/// `program` as a verified module in `context` (its dialects loaded here);
/// null with the verifier's diagnostics in `error` when it is not valid
/// strata IR.
mlir::OwningOpRef<mlir::ModuleOp> buildModule(const Program &program,
                                              mlir::MLIRContext &context,
                                              std::string &error);

} // namespace strata::ir

#endif // STRATA_IR_PROGRAMMODULE_H
