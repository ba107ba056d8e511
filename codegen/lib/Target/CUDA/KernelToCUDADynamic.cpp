//===- KernelToCUDADynamic.cpp - inner sizes as kernel parameters ---------===//
//
// Assumes: the kernel is pointwise, vectorized or a row or column
//   reduction (not tiled, not a scan), its launch shape computed from its
//   actual sizes.
// Guarantees: with dynamic shapes on (STRATA_DYNAMIC_SHAPES), a kernel of
//   two loops or more, not indexed, takes its inner trip counts (but sizes
//   of 1), its strides other than 0 and +-1 and every operand's offset as
//   `long long` parameters after `n0` (CudaKernel::dimArgs), read into
//   locals of the index type at entry, so its source — the PTX cache's key
//   — holds only its layout class (as the CPU's dynamic kernels:
//   KernelToLLVMDynamic.cpp) and what the emitter decided from the sizes
//   (the kind: vectorized needs every unit-stride operand's offset and
//   outer strides and the innermost size to be multiples of 4; 32- or
//   64-bit indices). Kernels that differ in those values only share a PTX.
//   A reduction adds its split count and kind (KernelToCUDAReduce.cpp).
//   In every kernel but scans, the body's size values (a mean's count:
//   kSizeValueAttrName) are `long long sv<j>` parameters after those,
//   converted to the constant's type where the literal was (the same
//   rounding), so a mean's division serves every count.
// Algorithm: planInnerDims names the values (dimNames, in parameter order)
//   and records them; sizeOf, dynStride and offset() (KernelToCUDA.cpp)
//   use the names; planSizeValues names the size values for emitBody.
//
//===----------------------------------------------------------------------===//
#include "CudaEmitter.h"
#include "strata/Runtime/Settings.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace strata::codegen::cuda;

void Emitter::planInnerDims() {
  size_t n = nest.sizes.size();
  innerDynamic = strata::runtime::settings::dynamicShapes() && n >= 2 &&
                 !k.getIndexed() && !k.getIndexMap();
  dimNames.clear();
  out.dimArgs.clear();
  if (!innerDynamic)
    return;
  for (size_t d = 1; d < n; ++d)
    if (dynSize(d))
      addInnerDim("sz" + str(d), nest.sizes[d]);
  for (size_t op = 0; op < nest.strides.size(); ++op)
    for (size_t d = 0; d < n; ++d)
      if (dynStride(nest.strides[op][d]))
        addInnerDim("st" + str(op) + "_" + str(d), nest.strides[op][d]);
  for (size_t op = 0; op < nest.offsets.size(); ++op)
    addInnerDim("off" + str(op), nest.offsets[op]);
}

void Emitter::addInnerDim(const std::string &name, int64_t value) {
  dimNames.push_back(name);
  out.dimArgs.push_back(value);
}

void Emitter::planSizeValues() {
  sizeValueNames.clear();
  sizeValueArgs.clear();
  if (!strata::runtime::settings::dynamicShapes())
    return;
  for (mlir::Operation &op : k.getBodyBlock()) {
    if (!isSizeValue(op))
      continue;
    double v = llvm::cast<mlir::arith::ConstantOp>(op)
                   .getValue()
                   .cast<mlir::FloatAttr>()
                   .getValueAsDouble();
    if (!(v >= 0 && v < 0x1p62 &&
          v == static_cast<double>(static_cast<int64_t>(v)))) {
      sizeValueNames.clear(); // (not a count: every one stays a literal)
      sizeValueArgs.clear();
      return;
    }
    sizeValueNames.push_back("sv" + str(sizeValueNames.size()));
    sizeValueArgs.push_back(static_cast<int64_t>(v));
  }
}

void Emitter::declareInnerDim(const std::string &d) {
  src += "  const " + idx + " " + d + " = (" + idx + ")d" + d + ";\n";
}

void Emitter::declareInnerDims() {
  for (const std::string &d : dimNames)
    declareInnerDim(d);
}

std::string Emitter::tailParams() const {
  std::string s = dynamic ? ",\n    long long n0" : "";
  for (const std::string &d : dimNames)
    s += ",\n    long long d" + d;
  for (const std::string &v : sizeValueNames)
    s += ",\n    long long " + v;
  return s;
}

std::string Emitter::loopsText() const {
  std::string s = "[";
  for (size_t d = 0; d < nest.sizes.size(); ++d)
    s += (d ? ", " : "") + (isDynamic(d) ? "n0" : sizeOf(d));
  return s + "]";
}
