//===- CudaEmitter.h - the strata.kernel to CUDA C emitter -------*- C++
//-*-===//
//
// Private to codegen/lib/Target/CUDA, shared by the emitter's two files:
// KernelToCUDA.cpp (the choice of kind, pointwise, vectorized and tiled
// kernels, the entry) and KernelToCUDAReduce.cpp (row and column
// reductions, block reductions, cascade sums, the finish kernel). See the
// top of KernelToCUDA.cpp for the algorithm.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_CODEGEN_TARGET_CUDA_CUDAEMITTER_H
#define STRATA_CODEGEN_TARGET_CUDA_CUDAEMITTER_H

#include "CudaScalarOps.h"
#include "strata/IR/StrataDialect.h"
#include "strata/Target/CUDA/KernelToCUDA.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace strata::codegen::cuda {

constexpr int64_t kMaxGrid = 65536;
constexpr int64_t kTile = 32;
/// Blocks (hence partials) of a TiledReduce kernel at most.
constexpr int64_t kMaxTiledReduceBlocks = 512;
/// f32 additions per thread between two f64 additions of a cascade sum.
constexpr int64_t kCascadeRun = 64;

inline std::string str(int64_t v) { return std::to_string(v); }
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Emits one strata.kernel (not a scan) as CUDA C (KernelToCUDA.h's ABI).
class Emitter {
public:
  Emitter(ir::KernelOp kernel, CudaKernel &out)
      : k(kernel), out(out), nest(kernel.getLoopNest()) {}
  bool run(const std::string &name, std::string &error);

private:
  std::string operandName(unsigned op) const {
    if (op < numIn)
      return "in" + str(op);
    if (op < numIn + numRes)
      return "out" + str(op - numIn);
    return "dest";
  }
  /// Whether loop `d`'s trip count is the run-time `size0` (the entry's
  /// `n0`), not a constant.
  bool isDynamic(size_t d) const { return dynamic && d == 0; }
  /// Dynamic inner sizes (KernelToCUDADynamic.cpp): whether loop `d`'s trip
  /// count (`sz<d>`), a stride `s` (`st<op>_<d>`) and the offsets
  /// (`off<op>`)
  /// are parameters; their C expressions; the parameters and their locals.
  bool dynSize(size_t d) const {
    return innerDynamic && d > 0 && nest.sizes[d] != 1;
  }
  bool dynStride(int64_t st) const {
    return innerDynamic && st != 0 && st != 1 && st != -1;
  }
  std::string sizeOf(size_t d) const {
    return isDynamic(d) ? "size0"
           : dynSize(d) ? "sz" + str(d)
                        : str(nest.sizes[d]);
  }
  void planInnerDims();
  /// The body's size values (a mean's count) as `long long sv<j>`
  /// parameters after the dims: their names, and their values appended to
  /// out.dimArgs by addSizeValues (none with dynamic shapes off).
  std::vector<std::string> sizeValueNames;
  std::vector<int64_t> sizeValueArgs;
  void planSizeValues();
  /// Appends parameter `d<name>` (local `name`) of value `value`.
  void addInnerDim(const std::string &name, int64_t value);
  void declareInnerDim(const std::string &name);
  void declareInnerDims();
  /// The `long long` parameters after the pointers: n0, dims, size values.
  std::string tailParams() const;
  std::string loopsText() const;
  /// The C expression of the product of the trip counts of `dims` (with
  /// `divisor` dividing the constant part, which it must divide).
  std::string product(const std::vector<size_t> &dims,
                      int64_t divisor = 1) const;
  /// The product of the trip counts of `dims`, as launched.
  int64_t productOf(const std::vector<size_t> &dims) const;
  /// The element offset of operand `op` at loop indices i<d>.
  std::string offset(unsigned op) const;
  std::string load(unsigned op) const {
    return cuda::fromMemory(types[op],
                            operandName(op) + "[" + offset(op) + "]");
  }
  /// Lines computing i<d> for `dims` (nest order, last fastest) from `from`.
  void decompose(const std::string &ind, const std::string &from,
                 const std::vector<size_t> &dims, const char *rem);
  std::string params(bool partials) const;
  /// `const <idx> size0 = (<idx>)n0;` in a dynamic kernel's entries.
  void declareSize0();
  /// Body arguments: loaded inputs (as given) plus the loop indices.
  bool body(const std::string &ind, std::vector<std::string> args,
            llvm::SmallVectorImpl<std::string> &yields, std::string &error) {
    if (k.getIndexed())
      for (size_t d = 0; d < nest.sizes.size(); ++d)
        args.push_back("(long long)i" + str(d));
    return cuda::emitBody(k.getBodyBlock(), args, ind, src, yields, error,
                          sizeValueNames);
  }
  /// The head of a grid-stride loop of `var` over [start, bound): blocks
  /// (`perBlock`) or threads.
  std::string gridLoop(const std::string &var, const std::string &bound,
                       bool perBlock, const std::string &start = "") const;
  bool vectorizable() const;
  int tiledLoop() const;
  /// One point per thread: loads, the body and the stores at i<d>.
  bool emitPoint(const std::string &ind, std::string &error);
  bool emitPointwise(bool vector, std::string &error);
  bool emitTiled(size_t t, bool reduce, std::string &error);
  bool reducesToScalars() const;
  void blockReduce(const std::string &ind);
  void storeAccumulators(const std::string &ind, const std::string &splits,
                         const std::string &split);
  bool emitReduce(std::string &error);
  /// A reduction's C expressions: its number of outputs, its length, each
  /// split's chunk and the split count ("" when not split).
  struct ReduceShape {
    std::string outputs, length, chunk, splits;
  };
  bool reduceLoop(bool row, const ReduceShape &shape, std::string &error);
  bool isCascade(unsigned r) const;
  void declareCascade(const std::string &ind);
  void accumulate(const std::string &ind, unsigned r, const std::string &v);
  void flushCascade(const std::string &ind);
  /// Lines of a reduction's entries defining `outputs` when the outermost
  /// loop is kept (KernelToCUDAReduce.cpp).
  void declareOutputs(const std::string &ind);
  void emitFinish();
  void chooseIndexWidth();

  mutable ir::KernelOp k;
  CudaKernel &out;
  ir::KernelOp::LoopNest nest;
  std::vector<mlir::Type> types;
  unsigned numIn = 0, numRes = 0;
  bool hasDest = false;
  /// The outermost trip count is the entry's parameter `n0` (every kind
  /// but scans, when there is a loop): it is in no line of the source.
  bool dynamic = false;
  /// A pointwise or vectorized kernel of two loops or more whose inner
  /// sizes, strides and offsets are parameters (dimNames, out.dimArgs).
  bool innerDynamic = false;
  std::vector<std::string> dimNames;
  /// A reduction's kept loops have a run-time size (`outputs` is computed).
  bool keptDynamic = false;
  /// A dynamic reduction whose innermost loop is reduced: both the row and
  /// the column loops, chosen by parameter `rowmode`.
  bool either = false;
  std::string idx = "int", src, name;
  std::vector<size_t> kept, reduced; // reductions: loops by result stride
};

} // namespace strata::codegen::cuda

#endif // STRATA_CODEGEN_TARGET_CUDA_CUDAEMITTER_H
