//===- Format.cpp - the reference evaluator's printing --------------------===//
//
// Values as the tools and tests print them (formatElement, formatElements,
// formatDescription in strata/Reference/Evaluator.h).
//
//===----------------------------------------------------------------------===//
#include "strata/Reference/Evaluator.h"

#include "strata/IR/StrataDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace strata::ir;
using namespace strata::reference;
namespace layout = strata::layout;

std::string strata::reference::formatElement(double v, Type elementType) {
  if (elementType.isInteger(1))
    return v != 0 ? "true" : "false";
  if (elementType.isa<IntegerType>())
    return std::to_string(static_cast<int64_t>(v));
  // Every NaN prints "nan": x86 makes negative NaNs that fmt prints "-nan".
  return std::isnan(v) ? "nan" : fmt::format("{:.6g}", v);
}

namespace {
/// Appends the elements of dims `d..` at storage position `at` to `out`.
void formatDims(const RefValue &v, size_t d, int64_t at, std::string &out) {
  const layout::Layout &l = v.layout;
  if (d == l.sizes.size()) {
    out += formatElement(v.buffer->data[at], v.elementType);
    return;
  }
  // Space out "[[" and "]]": FileCheck reads "[[" as a variable.
  bool nested = d + 1 < l.sizes.size() && l.sizes[d] > 0;
  out += nested ? "[ " : "[";
  for (int64_t i = 0; i < l.sizes[d]; ++i) {
    if (i > 0)
      out += ", ";
    formatDims(v, d + 1, at + i * l.strides[d], out);
  }
  out += nested ? " ]" : "]";
}

/// "[a, b, c]": kept here so that the output format is this file's alone.
std::string formatInts(ArrayRef<int64_t> values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}
} // namespace

std::string strata::reference::formatElements(const RefValue &v) {
  std::string out;
  formatDims(v, 0, v.layout.offset, out);
  return out;
}

std::string strata::reference::formatDescription(const RefValue &v) {
  std::string type;
  llvm::raw_string_ostream os(type);
  v.elementType.print(os);
  os.flush();
  if (v.isStorage)
    return "storage " + type + " size " + std::to_string(v.numel());
  return type + " sizes " + formatInts(v.layout.sizes) + " strides " +
         formatInts(v.layout.strides) + " offset " +
         std::to_string(v.layout.offset);
}

void strata::reference::printValue(llvm::raw_ostream &os, StringRef label,
                                   const RefValue &v) {
  os << label << ": " << formatDescription(v) << "\n  " << formatElements(v)
     << "\n";
}
