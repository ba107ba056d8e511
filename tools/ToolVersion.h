//===- ToolVersion.h - `--version` of the strata tools ----------*- C++ -*-===//
//
// `strata-opt --version` prints strata's version and the LLVM/MLIR it was
// built with, instead of LLVM's own version banner.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TOOLS_TOOLVERSION_H
#define STRATA_TOOLS_TOOLVERSION_H

#include "strata/Version.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace strata::tools {
/// Makes `--version` print "<tool> (strata) X.Y.Z" and the LLVM version.
inline void setVersionPrinter(const char *tool) {
  static const char *name = tool;
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << name << " (strata) " << STRATA_VERSION_STRING
       << "\n  built with LLVM/MLIR " << LLVM_VERSION_STRING << "\n";
  });
}
} // namespace strata::tools

#endif // STRATA_TOOLS_TOOLVERSION_H
