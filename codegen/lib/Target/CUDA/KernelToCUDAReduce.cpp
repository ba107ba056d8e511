//===- KernelToCUDAReduce.cpp - reductions of the CUDA emitter ------------===//
//
// Assumes: a kernel with at least one combining result (CudaEmitter.h).
// Guarantees: RowReduce (one block per output, a block-level shuffle
//   reduction) when the innermost loop reduces over >= 32 points, else
//   ColumnReduce (32 adjacent outputs per block, 8 threads along the
//   reduction, combined in shared memory); few outputs over many points
//   split the reduction into partials that `<name>_finish` combines in
//   order (deterministic, no atomics). The outermost loop's trip count is
//   `size0`, kept or reduced: the number of outputs or the reduction's
//   length and chunk are computed from it in the kernel. The split count
//   and the kind (both read the outermost size) stay in the source.
// Also the pieces the tiled-reduce kernel shares: block reductions, the
// stores of the accumulators, cascade sums (an f64 sum of f32 values that
// --strata-widen-sums marked: each thread adds its values in f32 and adds
// that partial to its f64 accumulator every kCascadeRun values and at the
// end; the block and split combinations stay f64).
//
//===----------------------------------------------------------------------===//
#include "CudaEmitter.h"
#include "strata/Transforms/KernelPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <algorithm>

using namespace strata::ir;
using namespace strata::codegen;
using namespace strata::codegen::cuda;
namespace c = strata::codegen::cuda;

/// acc<r> = the block's combination of every thread's acc<r> (in thread 0).
void Emitter::blockReduce(const std::string &ind) {
  for (unsigned r = 0; r < numRes; ++r) {
    if (k.getCombiner(r).empty())
      continue;
    std::string t = c::scalarType(types[numIn + r]);
    src += ind + "acc" + str(r) + " = strata_block_reduce<" +
           c::combinerOp(k.getCombiner(r)) + ", " + t + ">(acc" + str(r) +
           ", " + c::identity(k.getCombiner(r), types[numIn + r]) +
           ", scratch" + str(r) + ");\n";
  }
}

/// Stores each combining result's accumulator: into its result, or with
/// `splits` > 1 into partial `split` of its output.
void Emitter::storeAccumulators(const std::string &ind, int64_t splits,
                                const std::string &split) {
  for (unsigned r = 0; r < numRes; ++r) {
    if (k.getCombiner(r).empty())
      continue;
    unsigned op = numIn + r;
    std::string v = c::toMemory(types[op], "acc" + str(r));
    if (splits > 1)
      src += ind + "part" + str(r) + "[(" + offset(op) + ") * " + str(splits) +
             " + " + split + "] = " + v + ";\n";
    else
      src += ind + operandName(op) + "[" + offset(op) + "] = " + v + ";\n";
  }
}

/// Result r sums the f32 operand of a marked `arith.extf` in f64.
bool Emitter::isCascade(unsigned r) const {
  if (k.getCombiner(r) != "sum")
    return false;
  mlir::Value y = k.getBodyBlock().getTerminator()->getOperand(r);
  auto ext = y.getDefiningOp<mlir::arith::ExtFOp>();
  return ext && ext->hasAttr(strata::kCascadeAttrName) &&
         ext.getIn().getType().isF32() && ext.getType().isF64();
}

/// The f32 partials of the cascade sums and their run counter.
void Emitter::declareCascade(const std::string &ind) {
  bool any = false;
  for (unsigned r = 0; r < numRes; ++r)
    if (isCascade(r)) {
      src += ind + "float cacc" + str(r) + " = 0.0f;\n";
      any = true;
    }
  if (any)
    src += ind + "int crun = 0;\n";
}

/// acc<r> combined with the yielded `v`; a cascade sum adds the f32 value
/// (`v` is its exact f64 widening) to its partial, and after the last
/// cascade sum of the kernel every kCascadeRun points the partials join
/// their accumulators.
void Emitter::accumulate(const std::string &ind, unsigned r,
                         const std::string &v) {
  std::string a = "acc" + str(r);
  if (!isCascade(r)) {
    src += ind + a + " = " + c::combine(k.getCombiner(r), a, v) + ";\n";
    return;
  }
  std::string p = "cacc" + str(r);
  src += ind + p + " = " + p + " + (float)" + v + ";\n";
  for (unsigned q = r + 1; q < numRes; ++q)
    if (isCascade(q))
      return;
  src += ind + "if (++crun == " + str(kCascadeRun) + ") {\n";
  flushCascade(ind + "  ");
  src += ind + "  crun = 0;\n" + ind + "}\n";
}

/// acc<r> += cacc<r>, cacc<r> = 0 for every cascade sum.
void Emitter::flushCascade(const std::string &ind) {
  for (unsigned r = 0; r < numRes; ++r)
    if (isCascade(r))
      src += ind + "acc" + str(r) + " = acc" + str(r) + " + (double)cacc" +
             str(r) + ";\n" + ind + "cacc" + str(r) + " = 0.0f;\n";
}

/// Every combining result is a scalar (all its strides are 0).
bool Emitter::reducesToScalars() const {
  for (unsigned r = 0; r < numRes; ++r)
    if (!k.getCombiner(r).empty())
      for (int64_t st : nest.strides[numIn + r])
        if (st != 0)
          return false;
  return true;
}

void Emitter::declareOutputs(const std::string &ind) {
  if (keptOuter)
    src += ind + "const " + idx + " outputs = " + product(kept) + ";\n";
}

bool Emitter::emitReduce(std::string &error) {
  size_t n = nest.sizes.size();
  // Results with combiner `none` (sibling fusion) are written at every
  // point the loops visit, each exactly once; the others reduce.
  auto reduces = [&](unsigned r) { return !k.getCombiner(r).empty(); };
  unsigned first = 0;
  while (!reduces(first))
    ++first;
  // (A loop of one point is kept: it indexes no output. Not the
  // outermost, whose trip count the code does not know.)
  for (size_t d = 0; d < n; ++d) {
    if (nest.strides[numIn + first][d] != 0 ||
        (nest.sizes[d] == 1 && !isDynamic(d)))
      kept.push_back(d);
    else
      reduced.push_back(d);
  }
  int64_t m = productOf(kept), l = productOf(reduced);
  bool row = !reduced.empty() && reduced.back() == n - 1 && l >= 32;
  out.kind = row ? CudaKernelKind::RowReduce : CudaKernelKind::ColumnReduce;
  out.outputs = m;
  int64_t groups = row ? m : ceilDiv(m, 32);
  int64_t minSplit = row ? 4096 : 64;
  if (groups > 0 && groups < 1024 && l >= 2 * minSplit)
    out.splits = std::min(ceilDiv(2048, groups), ceilDiv(l, minSplit));
  int64_t s = out.splits, chunk = ceilDiv(l, s);
  chooseIndexWidth();
  keptOuter = dynamic && !kept.empty() && kept[0] == 0;
  bool reducedOuter = dynamic && !reduced.empty() && reduced[0] == 0;
  // The number of outputs, blocks of outputs, the reduction's length and
  // each split's chunk of it: constants, or expressions of size0.
  std::string outputs = keptOuter ? "outputs" : str(m);
  std::string blocks = !keptOuter ? str(groups * s)
                       : row      ? "outputs"
                                  : "(outputs + 31) / 32";
  if (keptOuter && s > 1)
    blocks = "(" + blocks + ") * " + str(s);
  std::string length = reducedOuter ? "length" : str(l);
  std::string chunkOf = reducedOuter ? "chunk" : str(chunk);
  const std::string ind = "      ";
  for (unsigned r = 0; r < numRes; ++r) {
    if (!reduces(r))
      continue;
    std::string t = c::scalarType(types[numIn + r]);
    src += row ? "  __shared__ " + t + " scratch" + str(r) + "[32];\n"
               : "  __shared__ " + t + " red" + str(r) + "[8][33];\n";
  }
  declareSize0();
  declareOutputs("  ");
  if (reducedOuter)
    src += "  const " + idx + " length = " + product(reduced) + ";\n  const " +
           idx + " chunk = " +
           (s > 1 ? "(length + " + str(s - 1) + ") / " + str(s) : "length") +
           ";\n";
  src += "  " + gridLoop("b", blocks, true);
  std::string g = s > 1 ? "b / " + str(s) : "b";
  src += "    const " + idx + " s = " + (s > 1 ? "b % " + str(s) : "0") + ";\n";
  if (row)
    decompose("    ", g, kept, "r");
  else {
    src += "    const " + idx + " o = " + g + " * 32 + threadIdx.x;\n";
    decompose("    ", "o", kept, "r");
  }
  src += "    const " + idx + " jEnd = min((" + idx + ")" + length + ", s * " +
         chunkOf + " + " + chunkOf + ");\n";
  for (unsigned r = 0; r < numRes; ++r)
    if (reduces(r))
      src += "    " + c::scalarType(types[numIn + r]) + " acc" + str(r) +
             " = " + c::identity(k.getCombiner(r), types[numIn + r]) + ";\n";
  declareCascade("    ");
  std::string lane = row ? "threadIdx.x" : "threadIdx.y";
  std::string step = row ? "blockDim.x" : "blockDim.y";
  std::string open = row ? "    {\n" : "    if (o < " + outputs + ") {\n";
  src += open + "      for (" + idx + " j = s * " + chunkOf + " + " + lane +
         "; j < jEnd; j += " + step + ") {\n";
  decompose(ind + "  ", "j", reduced, "q");
  std::vector<std::string> args;
  for (unsigned op = 0; op < numIn; ++op) {
    src += ind + "  const " + c::scalarType(types[op]) + " a" + str(op) +
           " = " + load(op) + ";\n";
    args.push_back("a" + str(op));
  }
  llvm::SmallVector<std::string> yields;
  if (!body(ind + "  ", args, yields, error))
    return false;
  for (unsigned r = 0; r < numRes; ++r) {
    if (reduces(r))
      accumulate(ind + "  ", r, yields[r]);
    else
      src += ind + "  " + operandName(numIn + r) + "[" + offset(numIn + r) +
             "] = " + c::toMemory(types[numIn + r], yields[r]) + ";\n";
  }
  src += "      }\n";
  flushCascade(ind);
  src += "    }\n";
  if (row) {
    blockReduce("    ");
    src += "    if (threadIdx.x == 0) {\n";
    storeAccumulators("      ", s, "s");
    src += "    }\n  }\n";
    out.blockX = 256;
  } else {
    for (unsigned r = 0; r < numRes; ++r)
      if (reduces(r))
        src += "    red" + str(r) + "[threadIdx.y][threadIdx.x] = acc" +
               str(r) + ";\n";
    src += "    __syncthreads();\n    if (threadIdx.y == 0 && o < " + outputs +
           ") {\n";
    src += "      for (int y = 1; y < blockDim.y; ++y) {\n";
    for (unsigned r = 0; r < numRes; ++r)
      if (reduces(r))
        src += "        acc" + str(r) + " = " +
               c::combine(k.getCombiner(r), "acc" + str(r),
                          "red" + str(r) + "[y][threadIdx.x]") +
               ";\n";
    src += "      }\n";
    storeAccumulators("      ", s, "s");
    src += "    }\n    __syncthreads();\n  }\n";
    out.blockX = 32;
    out.blockY = 8;
  }
  out.gridX = std::min(groups * s, kMaxGrid);
  return true;
}

/// Combines the partials of a split reduction, in order, into the results.
void Emitter::emitFinish() {
  int64_t m = out.outputs, s = out.splits;
  out.finishName = name + "_finish";
  out.finishGrid = std::min(ceilDiv(m, 256), kMaxGrid);
  src += "\nextern \"C\" __global__ void __launch_bounds__(256)\n" +
         out.finishName + "(";
  for (unsigned r = 0; r < numRes; ++r)
    src += (r ? ",\n    " : "") + std::string("const ") +
           c::memoryType(types[numIn + r]) + " *__restrict__ part" + str(r);
  for (unsigned r = 0; r < numRes; ++r)
    src += ",\n    " + c::memoryType(types[numIn + r]) + " *__restrict__ out" +
           str(r);
  src += std::string(dynamic ? ",\n    long long n0" : "") + ") {\n";
  if (keptOuter) {
    declareSize0();
    declareOutputs("  ");
  }
  src += "  " + gridLoop("o", keptOuter ? "outputs" : str(m), false);
  for (unsigned r = 0; r < numRes; ++r) {
    if (k.getCombiner(r).empty())
      continue; // written by the main kernel (its part is unused)
    mlir::Type t = types[numIn + r];
    std::string a = "acc" + str(r), p = "part" + str(r);
    src += "    " + c::scalarType(t) + " " + a + " = " +
           c::fromMemory(t, p + "[o * " + str(s) + "]") + ";\n";
    src += "    for (" + idx + " s = 1; s < " + str(s) + "; ++s)\n      " + a +
           " = " +
           c::combine(k.getCombiner(r), a,
                      c::fromMemory(t, p + "[o * " + str(s) + " + s]")) +
           ";\n";
    src += "    out" + str(r) + "[o] = " + c::toMemory(t, a) + ";\n";
  }
  src += "  }\n}\n";
}
