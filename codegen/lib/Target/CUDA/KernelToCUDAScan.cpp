//===- KernelToCUDAScan.cpp - scan kernels (cumsum, cumprod) to CUDA C ----===//
//
// Assumes: a verified scan kernel (`scan_dim`), loops = its space.
// Guarantees: the same values as the CPU scan (KernelToLLVMScan.cpp): each
//   line along scan_dim combined in order, f32 results accumulated in f64.
// Algorithm: along an outer dim (or a line shorter than a warp), one
//   thread per line (a point of the other dims, grid-stride, adjacent
//   threads on adjacent points of the innermost other dim, so the reads
//   coalesce), sequential along the line with the accumulator in a
//   register. Along the innermost dim, one warp per line: each step loads
//   32 consecutive elements (coalesced), scans them across the lanes with
//   shuffles (in the accumulator type), adds the carry of the steps
//   before and broadcasts the new carry from lane 31; the additions are
//   then in a tree order within each 32, not the CPU's sequence (f32 in
//   f64 rounds the same almost always; f64 results may differ in the last
//   bits, as PyTorch's CUDA scan does). 64-bit indices throughout.
//
//===----------------------------------------------------------------------===//
#include "CudaScalarOps.h"
#include "strata/IR/StrataDialect.h"
#include "strata/Target/CUDA/KernelToCUDA.h"
#include "strata/Target/ScalarOps.h"

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
  // One warp per line along the innermost dim (32 lines... per 256).
  bool warp = dim + 1 == n && nest.sizes[dim] >= 32;
  int64_t perBlock = warp ? 8 : 256;
  out = CudaKernel();
  out.name = entry;
  out.kind = CudaKernelKind::Scan;
  out.index64 = true;
  out.numPoints = lines * nest.sizes[dim];
  out.gridX = std::max<int64_t>(
      1, std::min<int64_t>((lines + perBlock - 1) / perBlock, 65536));
  std::string src = c::prelude();
  src += "\n// kernel " + entry + ": scan along loop " + str(dim) + ", " +
         str(lines) + " lines of " + str(nest.sizes[dim]) +
         ", 64-bit indices\nextern \"C\" __global__ void "
         "__launch_bounds__(256)\n" +
         entry + "(";
  for (unsigned op = 0; op <= numIn; ++op)
    src += std::string(op ? ",\n    " : "") + (op < numIn ? "const " : "") +
           c::memoryType(types[op]) + " *__restrict__ " + name(op);
  if (warp)
    src += ") {\n  const int lane = threadIdx.x & 31;\n"
           "  for (long long p = (blockIdx.x * (long long)blockDim.x + "
           "threadIdx.x) >> 5; p < " +
           str(lines) +
           "LL; p += ((long long)gridDim.x * blockDim.x) >> 5) {\n";
  else
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
  // The combiner's identity (a scan sums or multiplies: 0 or 1) as `acc`.
  strata::codegen::CombinerIdentity id = strata::codegen::combinerIdentity(
      *k.getScanCombiner(), *strata::ir::elementDType(rt));
  std::string identity =
      "(" + acc + ")" + str(id.isFloat ? int64_t(id.value) : id.integer);
  auto combine = [&](const std::string &a, const std::string &b) {
    return a + (prod ? " * " : " + ") + b;
  };
  if (warp) {
    src += "    " + acc + " carry = " + identity + ";\n";
    src += "    for (long long j0 = 0; j0 < " + size + "; j0 += 32) {\n";
    src += "      const long long j = j0 + lane;\n";
    src += "      const long long i" + str(dim) + " = " +
           (k.getScanReverse() ? size + " - 1 - j" : std::string("j")) + ";\n";
    src += "      " + acc + " v = " + identity + ";\n";
    src += "      if (j < " + size + ") {\n";
    std::vector<std::string> args;
    for (unsigned op = 0; op < numIn; ++op) {
      src +=
          "        const " + c::scalarType(types[op]) + " a" + str(op) + " = " +
          c::fromMemory(types[op], name(op) + "[" + offset(op) + "]") + ";\n";
      args.push_back("a" + str(op));
    }
    llvm::SmallVector<std::string> yields;
    if (!c::emitBody(k.getBodyBlock(), args, "        ", src, yields, error))
      return false;
    src += "        v = (" + acc + ")(" + yields[0] + ");\n      }\n";
    src += "      for (int o = 1; o < 32; o <<= 1) {\n"
           "        const " +
           acc + " u = __shfl_up_sync(0xffffffffu, v, o);\n" +
           "        if (lane >= o)\n          v = " + combine("u", "v") +
           ";\n      }\n";
    if (k.getScanExclusive())
      src += "      " + acc + " e = __shfl_up_sync(0xffffffffu, v, 1);\n" +
             "      if (lane == 0)\n        e = " + identity + ";\n" +
             "      const " + acc + " res = " + combine("carry", "e") + ";\n";
    else
      src += "      const " + acc + " res = " + combine("carry", "v") + ";\n";
    src += "      if (j < " + size + ")\n        out0[" + offset(numIn) +
           "] = " + c::toMemory(rt, "(" + c::scalarType(rt) + ")res") + ";\n";
    src += "      carry = __shfl_sync(0xffffffffu, " + combine("carry", "v") +
           ", 31);\n    }\n  }\n}\n";
    out.source = src;
    return true;
  }
  src += "    " + acc + " acc = " + identity + ";\n";
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
