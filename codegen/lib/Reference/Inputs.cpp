//===- Inputs.cpp - the reference evaluator's generated inputs -----------===//
//
// InputGenerator (strata/Reference/Evaluator.h): arange or random inputs,
// rounded to each element type, for the evaluator and the JIT alike.
//
//===----------------------------------------------------------------------===//
#include "strata/Reference/Evaluator.h"

#include "Checked.h"

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

uint64_t InputGenerator::next() {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double InputGenerator::element(int64_t i, Type elementType) {
  if (kind == InputKind::Arange)
    return elementType.isInteger(1) ? static_cast<double>(i % 2)
                                    : static_cast<double>(i);
  if (elementType.isInteger(1))
    return static_cast<double>(next() >> 63);
  if (elementType.isa<IntegerType>())
    return static_cast<double>(static_cast<int64_t>(next() % 11) - 5);
  return -2.0 + 4.0 * (static_cast<double>(next() >> 11) * 0x1p-53);
}

FailureOr<RefValue> InputGenerator::makeArgument(Type type,
                                                 std::string &whyNot) {
  Type elementType;
  int64_t size = 0;
  auto tensor = type.dyn_cast<StridedTensorType>();
  if (auto s = type.dyn_cast<StorageType>()) {
    elementType = s.getElementType();
    size = s.getSize();
  } else if (tensor) {
    // layout::requiredStorageSize, after checking that it can't overflow.
    elementType = tensor.getElementType();
    std::optional<int64_t> n = checkedNumel(tensor.getShape());
    auto range = n && *n > 0 ? checkedRange(tensor.getLayout()) : std::nullopt;
    if (!n || (*n > 0 && (!range || range->second == INT64_MAX))) {
      whyNot = "its layout addresses storage indices beyond int64";
      return failure();
    }
    if (*n > 0 && range->first < 0) {
      // A negative stride from offset 0: no storage can hold it.
      whyNot = "its layout addresses storage index " +
               std::to_string(range->first) + ", before the storage's start";
      return failure();
    }
    if (*n > kMaxElements) {
      whyNot = "its " + std::to_string(*n) +
               " elements are more than the limit of " +
               std::to_string(kMaxElements);
      return failure();
    }
    size = layout::requiredStorageSize(tensor.getLayout());
  } else {
    whyNot = "expected a strata storage or tensor";
    return failure();
  }
  if (size > kMaxElements) {
    whyNot = "its storage of " + std::to_string(size) +
             " elements is more than the limit of " +
             std::to_string(kMaxElements);
    return failure();
  }
  std::vector<double> data;
  for (int64_t i = 0; i < size; ++i)
    data.push_back(element(i, elementType));
  RefValue v = RefValue::storage(elementType, std::move(data));
  if (tensor) {
    v.layout = tensor.getLayout();
    v.isStorage = false;
  }
  return v;
}
