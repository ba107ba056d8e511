//===- KernelToCUDAScan.cpp - scan kernels (cumsum, cumprod) to CUDA C ----===//
//
// Assumes: a verified scan kernel (`scan_dim`), loops = its space.
// Guarantees: the same values as the CPU scan (KernelToLLVMScan.cpp): each
//   line along scan_dim combined in order, f32 results accumulated in f64.
// Algorithm: one thread per line (a point of the other dims, grid-stride,
//   adjacent threads on adjacent points of the innermost other dim, so a
//   scan along an outer dim reads coalesced), sequential along the line
//   with the accumulator in a register. 64-bit indices throughout.
//
//===----------------------------------------------------------------------===//
#include "CudaScalarOps.h"
#include "strata/IR/StrataDialect.h"
#include "strata/Target/CUDA/KernelToCUDA.h"

#include <algorithm>
#include <cstdlib>

using namespace strata::ir;
namespace c = strata::codegen::cuda;

namespace {
mlir::Type elementOf(mlir::Value v) {
  return v.getType().cast<StridedTensorType>().getElementType();
}
} // namespace

bool strata::codegen::cuda::emitScanKernel(mlir::Operation *kernelOp,
                                           const std::string &entry,
                                           CudaKernel &out,
                                           std::string &error) {
  auto k = llvm::cast<KernelOp>(kernelOp);
  KernelOp::LoopNest nest = k.getLoopNest();
  size_t n = nest.sizes.size(), dim = static_cast<size_t>(*k.getScanDim());
  unsigned numIn = k.getInputs().size();
  std::vector<mlir::Type> types;
  for (mlir::Value v : k.getInputs())
    types.push_back(elementOf(v));
  types.push_back(elementOf(k.getResult(0)));
  mlir::Type rt = types.back();
  bool prod = *k.getScanCombiner() == "prod";
  std::string acc = rt.isF32() ? "double" : c::scalarType(rt);
  auto str = [](int64_t v) { return std::to_string(v); };
  auto name = [&](unsigned op) {
    return op < numIn ? "in" + str(op) : std::string("out0");
  };
  auto offset = [&](unsigned op) {
    std::string s = str(nest.offsets[op]);
    for (size_t d = 0; d < n; ++d)
      if (int64_t st = nest.strides[op][d])
        s += " + i" + str(d) + " * " + str(st) + "LL";
    return s;
  };
  std::vector<size_t> others;
  int64_t lines = 1;
  for (size_t d = 0; d < n; ++d)
    if (d != dim) {
      others.push_back(d);
      lines *= nest.sizes[d];
    }
  out = CudaKernel();
  out.name = entry;
  out.kind = CudaKernelKind::Scan;
  out.index64 = true;
  out.numPoints = lines * nest.sizes[dim];
  out.gridX =
      std::max<int64_t>(1, std::min<int64_t>((lines + 255) / 256, 65536));
  std::string src = c::prelude();
  src += "\n// kernel " + entry + ": scan along loop " + str(dim) + ", " +
         str(lines) + " lines of " + str(nest.sizes[dim]) +
         ", 64-bit indices\nextern \"C\" __global__ void "
         "__launch_bounds__(256)\n" +
         entry + "(";
  for (unsigned op = 0; op <= numIn; ++op)
    src += std::string(op ? ",\n    " : "") + (op < numIn ? "const " : "") +
           c::memoryType(types[op]) + " *__restrict__ " + name(op);
  src += ") {\n  for (long long p = blockIdx.x * (long long)blockDim.x + "
         "threadIdx.x; p < " +
         str(lines) + "LL; p += (long long)gridDim.x * blockDim.x) {\n";
  src += "    long long r = p;\n";
  for (size_t j = others.size(); j-- > 0;) {
    size_t d = others[j];
    // (an empty space is never launched; its text still compiles)
    std::string n = str(std::max<int64_t>(nest.sizes[d], 1)) + "LL";
    src += "    const long long i" + str(d) + " = r % " + n + ";\n";
    if (j > 0)
      src += "    r /= " + n + ";\n";
  }
  std::string size = str(nest.sizes[dim]) + "LL";
  src += "    " + acc + " acc = (" + acc + ")" + (prod ? "1" : "0") + ";\n";
  src += "    for (long long j = 0; j < " + size + "; ++j) {\n";
  src += "      const long long i" + str(dim) + " = " +
         (k.getScanReverse() ? size + " - 1 - j" : std::string("j")) + ";\n";
  std::vector<std::string> args;
  for (unsigned op = 0; op < numIn; ++op) {
    src += "      const " + c::scalarType(types[op]) + " a" + str(op) + " = " +
           c::fromMemory(types[op], name(op) + "[" + offset(op) + "]") + ";\n";
    args.push_back("a" + str(op));
  }
  llvm::SmallVector<std::string> yields;
  if (!c::emitBody(k.getBodyBlock(), args, "      ", src, yields, error))
    return false;
  std::string step = prod ? "acc * (" + acc + ")(" + yields[0] + ")"
                          : "acc + (" + acc + ")(" + yields[0] + ")";
  std::string store = "      out0[" + offset(numIn) + "] = " +
                      c::toMemory(rt, "(" + c::scalarType(rt) + ")acc") + ";\n";
  if (k.getScanExclusive())
    src += store + "      acc = " + step + ";\n";
  else
    src += "      acc = " + step + ";\n" + store;
  src += "    }\n  }\n}\n";
  out.source = src;
  return true;
}
