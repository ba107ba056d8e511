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
//   length and chunk are computed from it in the kernel. One loop: the
//   split count and the kind (both read that size) stay in the source.
//   Two loops or more with dynamic shapes on: the inner sizes, strides and
//   offsets are parameters (KernelToCUDADynamic.cpp), and so are the split
//   count (`splits`; each split's chunk is computed from it) and, when the
//   innermost loop reduces, the kind: the source holds both the row and
//   the column loop and `rowmode` picks one (uniform: the launch's block,
//   256x1 or 32x8, is the kind's). Only whether it splits stays in the
//   source (the partial buffers and the finish kernel), with the element
//   types, combiners, index width and sizes of 1: rows of 7, 100 or 1001
//   points, or columns over any number of rows, share one source while
//   unsplit and one while split. The same rules as before choose kind and
//   split count, so the values are those of the static kernels.
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

/// Stores each combining result's accumulator: into its result, or, when
/// `splits` (the count's C expression) is set, into partial `split` of its
/// output.
void Emitter::storeAccumulators(const std::string &ind,
                                const std::string &splits,
                                const std::string &split) {
  for (unsigned r = 0; r < numRes; ++r) {
    if (k.getCombiner(r).empty())
      continue;
    unsigned op = numIn + r;
    std::string v = c::toMemory(types[op], "acc" + str(r));
    if (!splits.empty())
      src += ind + "part" + str(r) + "[(" + offset(op) + ") * " + splits +
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
  if (keptDynamic)
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
  int64_t s = out.splits;
  chooseIndexWidth();
  // Dynamic inner sizes (two loops or more): the split count and, when the
  // innermost loop is reduced, the kind are parameters too; whether the
  // reduction splits stays in the source (partial buffers, the finish).
  planInnerDims();
  either = innerDynamic && !reduced.empty() && reduced.back() == n - 1;
  if (innerDynamic && s > 1)
    addInnerDim("splits", s);
  if (either)
    addInnerDim("rowmode", row ? 1 : 0);
  auto anyDynamic = [&](const std::vector<size_t> &dims) {
    return std::any_of(dims.begin(), dims.end(),
                       [&](size_t d) { return isDynamic(d) || dynSize(d); });
  };
  keptDynamic = anyDynamic(kept);
  bool lengthDynamic = anyDynamic(reduced) || (innerDynamic && s > 1);
  for (unsigned r = 0; r < numRes; ++r) {
    if (!reduces(r))
      continue;
    std::string t = c::scalarType(types[numIn + r]);
    if (row || either)
      src += "  __shared__ " + t + " scratch" + str(r) + "[32];\n";
    if (!row || either)
      src += "  __shared__ " + t + " red" + str(r) + "[8][33];\n";
  }
  declareSize0();
  declareInnerDims();
  declareOutputs("  ");
  if (lengthDynamic)
    src += "  const " + idx + " length = " + product(reduced) + ";\n  const " +
           idx + " chunk = " +
           (s == 1         ? std::string("length")
            : innerDynamic ? std::string("(length + splits - 1) / splits")
                           : "(length + " + str(s - 1) + ") / " + str(s)) +
           ";\n";
  ReduceShape shape;
  shape.outputs = keptDynamic ? "outputs" : str(m);
  shape.length = lengthDynamic ? "length" : str(l);
  shape.chunk = lengthDynamic ? "chunk" : str(ceilDiv(l, s));
  if (s > 1)
    shape.splits = innerDynamic ? "splits" : str(s);
  if (!either) {
    if (!reduceLoop(row, shape, error))
      return false;
  } else {
    // Both loops, the launch's kind chosen by `rowmode` (uniform).
    std::string outer;
    std::swap(src, outer);
    bool ok = reduceLoop(true, shape, error);
    std::string rowLoop;
    std::swap(src, rowLoop);
    ok = ok && reduceLoop(false, shape, error);
    std::string columnLoop;
    std::swap(src, columnLoop);
    src = std::move(outer);
    if (!ok)
      return false;
    auto indent = [](const std::string &text) {
      std::string t;
      for (size_t i = 0; i < text.size(); ++i)
        t += (i == 0 || text[i - 1] == '\n' ? "  " : "") + text.substr(i, 1);
      return t;
    };
    src += "  if (rowmode) {\n" + indent(rowLoop) + "  } else {\n" +
           indent(columnLoop) + "  }\n";
  }
  out.blockX = row ? 256 : 32;
  out.blockY = row ? 1 : 8;
  out.gridX = std::min(groups * s, kMaxGrid);
  return true;
}

/// The grid-stride loop over blocks of a row (`row`) or column reduction:
/// from its head to its closing brace.
bool Emitter::reduceLoop(bool row, const ReduceShape &shape,
                         std::string &error) {
  auto reduces = [&](unsigned r) { return !k.getCombiner(r).empty(); };
  int64_t groups = row ? out.outputs : ceilDiv(out.outputs, 32);
  bool split = !shape.splits.empty();
  // The number of blocks: a constant, or an expression of the sizes.
  std::string blocks = !keptDynamic ? str(groups)
                       : row        ? "outputs"
                                    : "(outputs + 31) / 32";
  if (split)
    blocks = keptDynamic || innerDynamic ? "(" + blocks + ") * " + shape.splits
                                         : str(groups * out.splits);
  const std::string &outputs = shape.outputs, &chunkOf = shape.chunk;
  const std::string ind = "      ";
  src += "  " + gridLoop("b", blocks, true);
  std::string g = split ? "b / " + shape.splits : "b";
  src += "    const " + idx + " s = " + (split ? "b % " + shape.splits : "0") +
         ";\n";
  if (row)
    decompose("    ", g, kept, "r");
  else {
    src += "    const " + idx + " o = " + g + " * 32 + threadIdx.x;\n";
    decompose("    ", "o", kept, "r");
  }
  src += "    const " + idx + " jEnd = min((" + idx + ")" + shape.length +
         ", s * " + chunkOf + " + " + chunkOf + ");\n";
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
    storeAccumulators("      ", shape.splits, "s");
    src += "    }\n  }\n";
    return true;
  }
  for (unsigned r = 0; r < numRes; ++r)
    if (reduces(r))
      src += "    red" + str(r) + "[threadIdx.y][threadIdx.x] = acc" + str(r) +
             ";\n";
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
  storeAccumulators("      ", shape.splits, "s");
  src += "    }\n    __syncthreads();\n  }\n";
  return true;
}

/// Combines the partials of a split reduction, in order, into the results.
/// Its parameters after the pointers are the entry's (`n0`, the dims).
void Emitter::emitFinish() {
  int64_t m = out.outputs, s = out.splits;
  std::string splits = innerDynamic ? "splits" : str(s);
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
  src += tailParams() + ") {\n";
  // (Only the sizes it reads: the kept ones and the split count.)
  if (keptDynamic && isDynamic(kept[0]))
    declareSize0();
  for (size_t d : kept)
    if (dynSize(d))
      declareInnerDim("sz" + str(d));
  if (innerDynamic)
    declareInnerDim("splits");
  declareOutputs("  ");
  src += "  " + gridLoop("o", keptDynamic ? "outputs" : str(m), false);
  for (unsigned r = 0; r < numRes; ++r) {
    if (k.getCombiner(r).empty())
      continue; // written by the main kernel (its part is unused)
    mlir::Type t = types[numIn + r];
    std::string a = "acc" + str(r), p = "part" + str(r);
    src += "    " + c::scalarType(t) + " " + a + " = " +
           c::fromMemory(t, p + "[o * " + splits + "]") + ";\n";
    src += "    for (" + idx + " s = 1; s < " + splits + "; ++s)\n      " + a +
           " = " +
           c::combine(k.getCombiner(r), a,
                      c::fromMemory(t, p + "[o * " + splits + " + s]")) +
           ";\n";
    src += "    out" + str(r) + "[o] = " + c::toMemory(t, a) + ";\n";
  }
  src += "  }\n}\n";
}
