//===- KernelToCUDA.cpp - strata.kernel to CUDA C -------------------------===//
//
// Assumes: a verified strata.kernel (coalesced or not) with a static loop
//   nest; its body holds the arith/math ops CudaScalarOps handles.
// Guarantees: one deterministic CUDA C translation unit with the ABI of
//   KernelToCUDA.h and the launch shape the runtime must use; the same
//   values as the CPU kernels (KernelToLLVM) up to float summation order.
//   The outermost loop's trip count is the entry's last parameter `n0`
//   (every kind but scans): kernels that differ only in it have the same
//   source, hence one PTX (cudaKernelCodeKey). What the emitter decides
//   from that size stays in the source: the kind, 32- or 64-bit indices,
//   whether a reduction splits (a one-loop reduction's split count); two
//   loops or more: inner sizes, strides and offsets are parameters too
//   (KernelToCUDADynamic.cpp), and a reduction's split count and kind.
// Algorithm: pick one of five shapes from the loop nest alone:
//   * reductions (KernelToCUDAReduce.cpp): RowReduce (one block per
//     output) when the innermost loop reduces over >= 32 points, else
//     ColumnReduce (32 adjacent outputs per block); few outputs over many
//     points split the reduction and `<name>_finish` combines the
//     partials in order.
//   * Tiled: operands disagree on the unit-stride loop (transposed access):
//     32x32 tiles staged through shared memory so both sides coalesce.
//     TiledReduce is the same walk for a kernel whose reductions are all
//     to scalars (a training step's loss beside its transposed gradients):
//     each thread combines the points it computes, each block combines its
//     threads into one partial, and `<name>_finish` combines the partials.
//   * Vectorized: every operand is unit-stride or broadcast along the
//     innermost loop and 16-byte aligned: 4 points per thread; when the
//     innermost loop is the outermost (one loop), the last n0 % 4 points
//     one per thread after the vectors.
//   * Pointwise otherwise. All loops are grid-stride; indices are 32-bit
//     unless some size or offset needs 64.
//   * Scan kernels (`scan_dim`, cumsum/cumprod) go to KernelToCUDAScan.cpp.
//
//===----------------------------------------------------------------------===//
#include "strata/Target/CUDA/KernelToCUDA.h"
#include "CudaEmitter.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

using namespace strata::ir;
using namespace strata::codegen;
using namespace strata::codegen::cuda;
namespace c = strata::codegen::cuda;

std::string Emitter::product(const std::vector<size_t> &dims,
                             int64_t divisor) const {
  int64_t constant = 1;
  std::string vars; // run-time factors, each followed by " * "
  for (size_t d : dims) {
    if (isDynamic(d) || dynSize(d))
      vars += sizeOf(d) + " * ";
    else
      constant *= nest.sizes[d];
  }
  if (vars.empty())
    return str(constant / divisor);
  vars.resize(vars.size() - 3);
  if (constant % divisor != 0) // (a dynamic innermost size divides)
    return "(" + (constant == 1 ? vars : vars + " * " + str(constant)) +
           ") / " + str(divisor);
  constant /= divisor;
  return constant == 1 ? vars : vars + " * " + str(constant);
}

int64_t Emitter::productOf(const std::vector<size_t> &dims) const {
  int64_t p = 1;
  for (size_t d : dims)
    p *= nest.sizes[d];
  return p;
}

std::string Emitter::offset(unsigned op) const {
  std::string s = innerDynamic       ? "off" + str(op)
                  : nest.offsets[op] ? str(nest.offsets[op])
                                     : "";
  for (size_t d = 0; d < nest.sizes.size(); ++d) {
    int64_t st = nest.strides[op][d];
    if (st == 0 || (nest.sizes[d] == 1 && !isDynamic(d)))
      continue;
    std::string term = "i" + str(d);
    if (dynStride(st)) {
      st = 1; // (signed: added)
      term += " * st" + str(op) + "_" + str(d);
    } else if (std::abs(st) != 1) {
      term += " * " + str(std::abs(st));
    }
    if (s.empty())
      s = st < 0 ? "-" + term : term;
    else
      s += (st < 0 ? " - " : " + ") + term;
  }
  return s.empty() ? "0" : s;
}

void Emitter::decompose(const std::string &ind, const std::string &from,
                        const std::vector<size_t> &dims, const char *rem) {
  if (dims.empty())
    return;
  if (dims.size() == 1) {
    src += ind + "const " + idx + " i" + str(dims[0]) + " = " + from + ";\n";
    return;
  }
  src += ind + idx + " " + rem + " = " + from + ";\n";
  // (The first loop takes what is left: the outermost size is not read.)
  for (size_t j = dims.size(); j-- > 1;) {
    std::string s = sizeOf(dims[j]);
    src += ind + "const " + idx + " i" + str(dims[j]) + " = " + rem + " % " +
           s + ";\n" + ind + rem + " /= " + s + ";\n";
  }
  src += ind + "const " + idx + " i" + str(dims[0]) + " = " + rem + ";\n";
}

std::string Emitter::params(bool partials) const {
  std::string s;
  for (unsigned op = 0; op < types.size(); ++op) {
    bool isDest = hasDest && op + 1 == types.size();
    s += s.empty() ? "" : ",\n    ";
    if (isDest)
      s += "const void *__restrict__ dest";
    else
      s += std::string(op < numIn ? "const " : "") + c::memoryType(types[op]) +
           " *__restrict__ " + operandName(op);
  }
  if (partials)
    for (unsigned r = 0; r < numRes; ++r)
      s += ",\n    " + c::memoryType(types[numIn + r]) + " *__restrict__ part" +
           str(r);
  return s + tailParams();
}

void Emitter::declareSize0() {
  if (dynamic)
    src += "  const " + idx + " size0 = (" + idx + ")n0;\n";
}

std::string Emitter::gridLoop(const std::string &var, const std::string &bound,
                              bool perBlock, const std::string &start) const {
  if (perBlock)
    return "for (" + idx + " " + var + " = blockIdx.x; " + var + " < " + bound +
           "; " + var + " += gridDim.x) {\n";
  return "for (" + idx + " " + var + " = " +
         (start.empty() ? "" : start + " + ") + "blockIdx.x * (" + idx +
         ")blockDim.x + threadIdx.x; " + var + " < " + bound + "; " + var +
         " += (" + idx + ")gridDim.x * blockDim.x) {\n";
}

void Emitter::chooseIndexWidth() {
  const int64_t limit = (int64_t(1) << 31) - (int64_t(1) << 25);
  bool wide = out.numPoints >= limit || out.outputs * out.splits >= limit;
  for (size_t op = 0; op < nest.strides.size(); ++op) {
    int64_t reach = std::abs(nest.offsets[op]);
    for (size_t d = 0; d < nest.sizes.size(); ++d)
      reach += std::abs(nest.strides[op][d]) *
               std::max<int64_t>(nest.sizes[d] - 1, 0);
    wide |= reach >= limit;
  }
  out.index64 = wide;
  idx = wide ? "long long" : "int";
}

bool Emitter::vectorizable() const {
  size_t n = nest.sizes.size();
  // (One loop: its last n0 % 4 points are a scalar tail.)
  if (n == 0 || k.getIndexed() || k.getIndexMap() ||
      (n > 1 && nest.sizes[n - 1] % 4 != 0))
    return false;
  bool someUnit = false;
  for (unsigned op = 0; op < nest.strides.size(); ++op) {
    if (hasDest && op + 1 == nest.strides.size())
      continue; // never accessed
    const auto &st = nest.strides[op];
    if (st[n - 1] == 0)
      continue;
    if (st[n - 1] != 1 || nest.offsets[op] % 4 != 0)
      return false;
    for (size_t d = 0; d + 1 < n; ++d)
      if (st[d] % 4 != 0)
        return false;
    someUnit = true;
  }
  return someUnit;
}

/// The loop to tile with the innermost one, or -1 (same rule as the CPU).
int Emitter::tiledLoop() const {
  size_t n = nest.sizes.size();
  if (n < 2 || k.getIndexed() || k.getIndexMap() || nest.sizes[n - 1] <= 16)
    return -1;
  size_t inner = n - 1, numOps = types.size() - (hasDest ? 1 : 0);
  bool someUnit = false;
  for (size_t op = 0; op < numOps; ++op)
    someUnit |= std::abs(nest.strides[op][inner]) == 1;
  for (size_t t = inner; someUnit && t-- > 0;) {
    if (nest.sizes[t] < 2)
      continue;
    int64_t shared = 0;
    bool staged = false;
    for (size_t op = 0; op < numOps; ++op)
      if (std::abs(nest.strides[op][t]) == 1 &&
          std::abs(nest.strides[op][inner]) > 1) {
        staged = true;
        shared += kTile * (kTile + 1) * c::memoryBytes(types[op]);
      }
    if (staged)
      return shared <= 40 * 1024 ? static_cast<int>(t) : -1;
  }
  return -1;
}

bool Emitter::emitPoint(const std::string &ind, std::string &error) {
  std::vector<std::string> args;
  // index_map (CudaIndexMap.cpp): the indexed operand after its index.
  auto map = k.getIndexMap();
  int mapped = map ? static_cast<int>((*map)[0]) : -1;
  auto at = [&](unsigned op) {
    return static_cast<int>(op) == mapped
               ? c::indexedOffset(*map, offset(op), "a" + str((*map)[1]))
               : offset(op);
  };
  for (unsigned pass = 0; pass < 2; ++pass)
    for (unsigned op = 0; op < numIn; ++op)
      if ((static_cast<int>(op) == mapped) == (pass == 1))
        src += ind + "const " + c::scalarType(types[op]) + " a" + str(op) +
               " = " +
               c::fromMemory(types[op], operandName(op) + "[" + at(op) + "]") +
               ";\n";
  for (unsigned op = 0; op < numIn; ++op)
    args.push_back("a" + str(op));
  llvm::SmallVector<std::string> yields;
  if (!body(ind, args, yields, error))
    return false;
  for (unsigned r = 0; r < numRes; ++r) {
    unsigned op = numIn + r;
    std::string element = operandName(op) + "[" + at(op) + "]";
    src += ind +
           (static_cast<int>(op) == mapped
                ? c::indexedStore(*map, types[op], element, yields[r])
                : element + " = " + c::toMemory(types[op], yields[r]) + ";") +
           "\n";
  }
  return true;
}

bool Emitter::emitPointwise(bool vector, std::string &error) {
  size_t n = nest.sizes.size();
  std::vector<size_t> dims(n);
  std::iota(dims.begin(), dims.end(), 0);
  const std::string ind = "    ";
  declareSize0();
  declareInnerDims();
  if (!vector) {
    src += "  " + gridLoop("p", product(dims), false);
    decompose(ind, "p", dims, "r");
    if (!emitPoint(ind, error))
      return false;
    src += "  }\n";
    return true;
  }
  // Four points per thread: unit-stride operands move as one vector,
  // broadcast ones are loaded once. One loop (the innermost is the
  // outermost): the vectors cover size0 / 4 * 4 points, then the tail.
  bool tail = n == 1;
  src += "  " + gridLoop("p", tail ? "size0 / 4" : product(dims, 4), false);
  decompose(ind, "p * 4", dims, "r");
  std::vector<std::string> args;
  for (unsigned op = 0; op < numIn; ++op) {
    std::string mt = c::memoryType(types[op]), a = "a" + str(op);
    if (nest.strides[op][n - 1] == 0) {
      src += ind + "const " + c::scalarType(types[op]) + " " + a + " = " +
             load(op) + ";\n";
      args.push_back(a);
      continue;
    }
    src += ind + "const StrataVec4<" + mt + "> " + a +
           " = *reinterpret_cast<const StrataVec4<" + mt + "> *>(" +
           operandName(op) + " + " + offset(op) + ");\n";
    args.push_back(c::fromMemory(types[op], a + ".v[l]"));
  }
  for (unsigned r = 0; r < numRes; ++r)
    src += ind + "StrataVec4<" + c::memoryType(types[numIn + r]) + "> o" +
           str(r) + ";\n";
  src += ind + "#pragma unroll\n" + ind + "for (int l = 0; l < 4; ++l) {\n";
  llvm::SmallVector<std::string> yields;
  if (!body(ind + "  ", args, yields, error))
    return false;
  for (unsigned r = 0; r < numRes; ++r)
    src += ind + "  o" + str(r) +
           ".v[l] = " + c::toMemory(types[numIn + r], yields[r]) + ";\n";
  src += ind + "}\n";
  for (unsigned r = 0; r < numRes; ++r) {
    std::string mt = c::memoryType(types[numIn + r]);
    src += ind + "*reinterpret_cast<StrataVec4<" + mt + "> *>(" +
           operandName(numIn + r) + " + " + offset(numIn + r) + ") = o" +
           str(r) + ";\n";
  }
  src += "  }\n";
  if (!tail)
    return true;
  src += "  " + gridLoop("p", "size0", false, "size0 / 4 * 4");
  decompose(ind, "p", dims, "r");
  if (!emitPoint(ind, error))
    return false;
  src += "  }\n";
  return true;
}

bool Emitter::emitTiled(size_t t, bool reduce, std::string &error) {
  size_t n = nest.sizes.size(), inner = n - 1;
  int64_t tilesT = ceilDiv(nest.sizes[t], kTile);
  int64_t tilesI = ceilDiv(nest.sizes[inner], kTile);
  auto reduces = [&](unsigned r) {
    return reduce && !k.getCombiner(r).empty();
  };
  std::vector<size_t> rest;
  int64_t restSize = 1;
  for (size_t d = 0; d < n; ++d)
    if (d != t && d != inner) {
      rest.push_back(d);
      restSize *= nest.sizes[d];
    }
  auto isStaged = [&](unsigned op) {
    return std::abs(nest.strides[op][t]) == 1 &&
           std::abs(nest.strides[op][inner]) > 1;
  };
  for (unsigned op = 0; op < numIn + numRes; ++op)
    if (isStaged(op))
      src += "  __shared__ " + c::memoryType(types[op]) + " tile_" +
             operandName(op) + "[32][33];\n";
  int64_t tiles = restSize * tilesT * tilesI;
  int64_t blocks = reduce ? std::min(tiles, kMaxTiledReduceBlocks) : 0;
  for (unsigned r = 0; r < numRes; ++r) {
    if (!reduces(r))
      continue;
    std::string ty = c::scalarType(types[numIn + r]);
    src += "  __shared__ " + ty + " scratch" + str(r) + "[32];\n";
    src += "  " + ty + " acc" + str(r) + " = " +
           c::identity(k.getCombiner(r), types[numIn + r]) + ";\n";
  }
  if (reduce)
    declareCascade("  ");
  std::string it = "i" + str(t), ii = "i" + str(inner);
  std::string st = isDynamic(t) ? "size0" : str(nest.sizes[t]);
  std::string si = str(nest.sizes[inner]);
  // size0 is the tiled loop's (its tiles counted in the kernel) or the
  // outermost of the rest.
  declareSize0();
  std::string tilesAlongT = isDynamic(t) ? "tilesT" : str(tilesT);
  if (isDynamic(t))
    src += "  const " + idx + " tilesT = (size0 + 31) / 32;\n";
  std::string allTiles = isDynamic(t) ? "tilesT * " + str(restSize * tilesI)
                         : !rest.empty() && isDynamic(rest[0])
                             ? product(rest) + " * " + str(tilesT * tilesI)
                             : str(tiles);
  src += "  " + gridLoop("b", allTiles, true);
  src += "    " + idx + " r = b;\n";
  src += "    const " + idx + " j0 = r % " + str(tilesI) + " * 32;\n";
  src += "    r /= " + str(tilesI) + ";\n";
  src += "    const " + idx + " t0 = r % " + tilesAlongT + " * 32;\n";
  src += "    r /= " + tilesAlongT + ";\n";
  decompose("    ", "r", rest, "q");
  // Phase 1: staged inputs, threadIdx.x along loop t (coalesced for them).
  auto phase = [&](const char *what, bool xAlongT) {
    src += std::string("    // ") + what + "\n";
    src += "    for (int k = threadIdx.y; k < 32; k += blockDim.y) {\n";
    src += "      const " + idx + " " + it + " = t0 + " +
           (xAlongT ? "threadIdx.x" : "k") + ";\n";
    src += "      const " + idx + " " + ii + " = j0 + " +
           (xAlongT ? "k" : "threadIdx.x") + ";\n";
    src += "      if (" + it + " < " + st + " && " + ii + " < " + si + ") {\n";
  };
  bool stagedIn = false, stagedOut = false;
  for (unsigned op = 0; op < numIn; ++op)
    stagedIn |= isStaged(op);
  for (unsigned r = 0; r < numRes; ++r)
    stagedOut |= isStaged(numIn + r);
  if (stagedIn) {
    phase("load transposed inputs into shared memory", true);
    for (unsigned op = 0; op < numIn; ++op)
      if (isStaged(op))
        src += "        tile_" + operandName(op) +
               "[k][threadIdx.x] = " + operandName(op) + "[" + offset(op) +
               "];\n";
    src += "      }\n    }\n    __syncthreads();\n";
  }
  phase("compute, threadIdx.x along the innermost loop", false);
  std::vector<std::string> args;
  std::string ind = "        ";
  for (unsigned op = 0; op < numIn; ++op) {
    std::string v = isStaged(op)
                        ? c::fromMemory(types[op], "tile_" + operandName(op) +
                                                       "[threadIdx.x][k]")
                        : load(op);
    src += ind + "const " + c::scalarType(types[op]) + " a" + str(op) + " = " +
           v + ";\n";
    args.push_back("a" + str(op));
  }
  llvm::SmallVector<std::string> yields;
  if (!body(ind, args, yields, error))
    return false;
  for (unsigned r = 0; r < numRes; ++r) {
    unsigned op = numIn + r;
    std::string v = c::toMemory(types[op], yields[r]);
    if (reduces(r))
      accumulate(ind, r, yields[r]);
    else if (isStaged(op))
      src +=
          ind + "tile_" + operandName(op) + "[threadIdx.x][k] = " + v + ";\n";
    else
      src += ind + operandName(op) + "[" + offset(op) + "] = " + v + ";\n";
  }
  src += "      }\n    }\n";
  if (stagedOut) {
    src += "    __syncthreads();\n";
    phase("store transposed results from shared memory", true);
    for (unsigned r = 0; r < numRes; ++r)
      if (isStaged(numIn + r))
        src += "        " + operandName(numIn + r) + "[" + offset(numIn + r) +
               "] = tile_" + operandName(numIn + r) + "[k][threadIdx.x];\n";
    src += "      }\n    }\n";
  }
  if (stagedIn || stagedOut)
    src += "    __syncthreads();\n";
  src += "  }\n";
  out.blockX = 32;
  out.blockY = 8;
  out.gridX = std::min(tiles, kMaxGrid);
  if (!reduce)
    return true;
  // Each block's threads combined into one partial (or the result).
  out.gridX = blocks;
  out.outputs = 1;
  out.splits = blocks;
  flushCascade("  ");
  blockReduce("  ");
  src += "  if (threadIdx.x == 0 && threadIdx.y == 0) {\n";
  storeAccumulators("    ", blocks > 1 ? str(blocks) : "", "blockIdx.x");
  src += "  }\n";
  return true;
}

bool Emitter::run(const std::string &entry, std::string &error) {
  name = entry;
  numIn = k.getInputs().size();
  numRes = k.getNumResults();
  hasDest = static_cast<bool>(k.getDest());
  auto elementType = [](mlir::Type t) {
    if (auto s = t.dyn_cast<StorageType>())
      return s.getElementType();
    return t.cast<StridedTensorType>().getElementType();
  };
  for (mlir::Value v : k.getInputs())
    types.push_back(elementType(v.getType()));
  for (mlir::Value v : k.getResults())
    types.push_back(elementType(v.getType()));
  if (mlir::Value d = k.getDest())
    types.push_back(elementType(d.getType()));
  out = CudaKernel();
  out.name = entry;
  out.numPoints = 1;
  for (int64_t s : nest.sizes)
    out.numPoints *= s;
  dynamic = !nest.sizes.empty();
  out.outerArg = dynamic;
  out.outerSize = dynamic ? nest.sizes[0] : 0;
  bool reduces = false;
  for (unsigned r = 0; r < numRes; ++r)
    reduces |= !k.getCombiner(r).empty();
  planSizeValues();
  std::string bodySrc;
  std::swap(src, bodySrc);
  if (reduces) {
    int t = reducesToScalars() ? tiledLoop() : -1;
    if (t >= 0) {
      chooseIndexWidth();
      out.kind = CudaKernelKind::TiledReduce;
      if (!emitTiled(t, /*reduce=*/true, error))
        return false;
    } else if (!emitReduce(error)) {
      return false;
    }
  } else {
    chooseIndexWidth();
    int t = tiledLoop();
    if (t >= 0) {
      out.kind = CudaKernelKind::Tiled;
      if (!emitTiled(t, /*reduce=*/false, error))
        return false;
    } else {
      planInnerDims();
      bool vector = vectorizable();
      out.kind =
          vector ? CudaKernelKind::Vectorized : CudaKernelKind::Pointwise;
      if (!emitPointwise(vector, error))
        return false;
      int64_t work = vector ? out.numPoints / 4 : out.numPoints;
      out.gridX = std::max<int64_t>(1, std::min(ceilDiv(work, 256), kMaxGrid));
    }
  }
  std::swap(src, bodySrc);
  out.dimArgs.insert(out.dimArgs.end(), sizeValueArgs.begin(),
                     sizeValueArgs.end());
  src = c::prelude();
  // (What the code depends on, and nothing else: no outermost size.)
  src += "\n// kernel " + entry + ": " +
         (either ? "row or column reduce (rowmode)"
                 : cudaKernelKindName(out.kind)) +
         ", loops " + loopsText() + ", " +
         (dynamic ? "" : str(out.numPoints) + " points, ") +
         (out.index64 ? "64" : "32") + "-bit indices";
  if (out.splits > 1)
    src += innerDynamic ? std::string(", split (splits)")
                        : ", " + str(out.splits) + " splits per output";
  src += "\nextern \"C\" __global__ void __launch_bounds__(256)\n" + entry +
         "(" + params(out.splits > 1) + ") {\n" + bodySrc + "}\n";
  if (out.splits > 1)
    emitFinish();
  out.source = src;
  return true;
}

const char *strata::codegen::cudaKernelKindName(CudaKernelKind kind) {
  switch (kind) {
  case CudaKernelKind::Pointwise:
    return "pointwise";
  case CudaKernelKind::Vectorized:
    return "vectorized";
  case CudaKernelKind::Tiled:
    return "tiled";
  case CudaKernelKind::RowReduce:
    return "row-reduce";
  case CudaKernelKind::ColumnReduce:
    return "column-reduce";
  case CudaKernelKind::TiledReduce:
    return "tiled-reduce";
  case CudaKernelKind::Scan:
    return "scan";
  }
  return "?";
}

bool strata::codegen::emitKernelCUDA(mlir::Operation *kernelOp,
                                     const std::string &name, CudaKernel &out,
                                     std::string &error) {
  if (llvm::cast<KernelOp>(kernelOp).isScan())
    return c::emitScanKernel(kernelOp, name, out, error);
  Emitter emitter(llvm::cast<KernelOp>(kernelOp), out);
  return emitter.run(name, error);
}

std::string strata::codegen::cudaKernelCodeKey(mlir::Operation *kernelOp) {
  CudaKernel emitted;
  std::string error;
  if (!emitKernelCUDA(kernelOp, "strata_kernel", emitted, error))
    return "";
  return emitted.source;
}

// Bumped by hand for changes the source hash cannot see; the PTX cache key
// also holds a hash of this emitter's sources (jit/CMakeLists.txt).
const char *strata::codegen::cudaEmitterBuildId() {
  return "cuda-emitter-8";
} // 5: scans; 6: the outermost trip count is a parameter; 7: inner sizes,
  // strides and offsets of pointwise and vectorized kernels are parameters;
  // 8: and of reductions, with their split count and kind
