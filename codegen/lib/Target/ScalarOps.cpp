//===- ScalarOps.cpp - the scalar math both code generators share ---------===//
//
// strata/Target/ScalarOps.h: the table of ScalarOps.def, looked up by name,
// and the combiners' identities.
//
//===----------------------------------------------------------------------===//
#include "strata/Target/ScalarOps.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <limits>

using namespace strata;
using namespace strata::codegen;

namespace {

constexpr ScalarOpInfo kScalarOps[] = {
#define SCALAR_OP(Enumerator, Name, Libm) {ScalarOp::Enumerator, Name, Libm},
#include "strata/Target/ScalarOps.def"
};

/// The lowest and highest value of integer type T.
template <typename T> CombinerIdentity extreme(bool lowest) {
  return {false, 0.0,
          lowest ? int64_t(std::numeric_limits<T>::lowest())
                 : int64_t(std::numeric_limits<T>::max())};
}

} // namespace

llvm::ArrayRef<ScalarOpInfo> codegen::scalarOps() { return kScalarOps; }

const ScalarOpInfo *codegen::scalarOpInfo(llvm::StringRef name) {
  static const llvm::StringMap<const ScalarOpInfo *> byName = [] {
    llvm::StringMap<const ScalarOpInfo *> m;
    for (const ScalarOpInfo &info : kScalarOps)
      m[info.name] = &info;
    return m;
  }();
  return byName.lookup(name);
}

CombinerIdentity codegen::combinerIdentity(llvm::StringRef combiner,
                                           DType dtype) {
  bool floating = runtime::dtypeInfo(dtype).floating;
  if (combiner == "sum" || combiner == "prod") {
    int64_t one = combiner == "prod";
    return {floating, double(one), one};
  }
  bool isMax = combiner == "max";
  if (floating)
    return {true, isMax ? -INFINITY : INFINITY, 0};
  switch (dtype) {
  case DType::I32:
    return extreme<int32_t>(isMax);
  case DType::I64:
    return extreme<int64_t>(isMax);
  default: // bool: false < true
    return extreme<bool>(isMax);
  }
}
