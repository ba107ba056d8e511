//===- Parse.h - parse textual IR, guarding MLIR 16's parser ----*- C++ -*-===//
//
// Every strata tool that parses textual IR (strata-opt, strata-run,
// strata-translate, the JIT's executor, the pipeline fuzzer) goes through
// these functions instead of mlir::parseSource*.
//
// Why: MLIR 16's parser has a use-after-free on one error path
// (docs/reliability.md,
// tests/lit/regressions/mlir16-parser-use-after-free.mlir). A use of a value
// name that is not defined yet gets a placeholder; the placeholder outlives the
// region it is in (func.func bodies are not isolated name scopes in MLIR 16's
// parser), so a later definition of the same name - in another function, or in
// a later block - resolves it: the earlier op now uses a value of the block
// being parsed. If that block then fails to parse, the parser frees it while
// the earlier op still uses its value, and destroying the module writes into
// freed memory.
//
// The guard: a linear scan of the text that follows MLIR's name scoping and
// finds such a forward reference - a use that comes before its definition
// and lies outside the block that defines it - and reports it as a located
// error before MLIR's parser sees the text. Valid strata IR never has one
// (strata registers no branch ops: its regions are single blocks, and
// values are defined before their uses). Forward references inside one
// block (graph-like, or a use within an op's own region) are left to MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_PARSE_H
#define STRATA_IR_PARSE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <optional>
#include <string>

namespace strata::ir {

/// A forward reference MLIR 16's parser cannot survive an error after:
/// `name` used at byte `useOffset`, defined later at `defOffset`, outside
/// the block that holds the use.
struct ForwardReferenceHazard {
  size_t useOffset;
  size_t defOffset;
  std::string name;
};

/// The first hazard in `text` (one parse unit: a file, or one piece of a
/// split file), or none.
std::optional<ForwardReferenceHazard>
findForwardReferenceHazard(llvm::StringRef text);

/// Checks buffer `bufferId` of `sourceMgr` (each "// -----" piece on its own
/// when `splitInput`); on a hazard emits a located error (with a note at the
/// definition) to `context`'s diagnostic handlers and fails.
mlir::LogicalResult checkForwardReferences(const llvm::SourceMgr &sourceMgr,
                                           unsigned bufferId,
                                           mlir::MLIRContext *context,
                                           bool splitInput = false);

/// mlir::parseSourceFile<ModuleOp> of the main buffer, after the check.
mlir::OwningOpRef<mlir::ModuleOp>
parseSourceFile(const llvm::SourceMgr &sourceMgr, mlir::MLIRContext *context);

/// mlir::parseSourceString<ModuleOp>, after the check.
mlir::OwningOpRef<mlir::ModuleOp>
parseSourceString(llvm::StringRef source, mlir::MLIRContext *context,
                  llvm::StringRef bufferName = "");

} // namespace strata::ir

#endif // STRATA_IR_PARSE_H
