//===- Plan.h - a function as steps over buffer slots, any backend -*- C++
//-*-===//
//
// The device-independent prepared form of a lowered function: one buffer
// slot per storage root (arguments, then kernel results), one step per
// kernel (its input, result and destination slots, whether its write may
// go in place) and the return. Built once per program structure and device;
// a backend contributes only what differs: how a kernel is compiled (a
// KernelCompiler filling Step::kernel) and how the steps run (runCpu in
// Executor.cpp, runCuda in CudaExecutor.cpp). No step walks or prints IR.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_JIT_LIB_PLAN_H
#define STRATA_JIT_LIB_PLAN_H

#include "strata/IR/StrataDialect.h"
#include "strata/JIT/CudaJit.h"
#include "strata/JIT/Jit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace strata::jit::detail {

/// The runtime dtype of an element type (or of a storage's/tensor's).
DType dtypeOf(mlir::Type t);

/// One result buffer a kernel creates.
struct ResultSpec {
  unsigned slot;
  bool isStorage;
  DType dtype;
  int64_t elements; // tensors only
  std::vector<int64_t> sizes, strides;
  std::string combiner;
};

/// What a backend compiled for one kernel (CpuKernel, CudaLoaded).
struct BackendKernel {
  virtual ~BackendKernel() = default;
};

/// One step of a function: a kernel call or the return.
struct Step {
  // Kernel.
  /// The backend's compiled kernel (null: nothing to run, e.g. no points).
  std::shared_ptr<const BackendKernel> kernel;
  std::vector<unsigned> inputSlots;
  std::vector<ResultSpec> results;
  int destSlot = -1;
  /// The old version of dest is dead after this step and no input reads it
  /// through an overlapping, different layout: the write may go in place
  /// (for an argument slot: only when the caller donated it).
  bool inPlace = false;
  /// The kernel's iteration space is empty (its results are only filled).
  bool noPoints = false;
  // Return.
  bool isReturn = false;
  struct Returned {
    unsigned slot;
    bool isStorage;
    std::vector<int64_t> sizes, strides;
    int64_t offset;
  };
  std::vector<Returned> returned;
};

struct ArgSpec {
  DType dtype;
  int64_t need;
};

class Plan;
/// A backend's compiler: fills `step.kernel` for `kernel` (and may count a
/// BLAS call in `plan`); false and `error` when it cannot.
using KernelCompiler = std::function<bool(ir::KernelOp kernel, Step &step,
                                          Plan &plan, std::string &error)>;

/// A function flattened into steps over buffer slots, with every kernel
/// compiled by one backend.
class Plan {
public:
  std::vector<ArgSpec> args;
  std::vector<Step> steps;
  unsigned numSlots = 0;
  int numKernels = 0;
  int numBlasKernels = 0; // of them, run by BLAS (CPU)
  std::string error;      // set when the function cannot run

  void build(mlir::func::FuncOp func, const KernelCompiler &compile);
  /// Checks `values` against the arguments; the message, or "".
  std::string checkArguments(const std::vector<JitValue> &values) const;
  /// Whether write `step` may reuse its destination's buffer, as far as
  /// the plan knows: a version the plan made, or an argument `donated`
  /// (each backend adds its own conditions).
  bool destinationDonated(const Step &step,
                          const std::vector<bool> &donated) const {
    if (step.destSlot >= static_cast<int>(args.size()))
      return true;
    return step.destSlot >= 0 &&
           static_cast<size_t>(step.destSlot) < donated.size() &&
           donated[step.destSlot];
  }

private:
  bool fail(mlir::Operation *op, const std::string &message);
  int slotOf(mlir::Value v) const;
  bool addKernel(ir::KernelOp kernel, const KernelCompiler &compile);
  void markDeadWrites();
  llvm::DenseMap<mlir::Value, unsigned> slots;
};

/// The CPU backend (Executor.cpp): ORC-compiled kernels or BLAS calls on
/// the thread pool.
bool compileCpu(ir::KernelOp kernel, Step &step, Plan &plan,
                std::string &error);
RunResult runCpu(const Plan &plan, const std::vector<JitValue> &args,
                 const RunOptions &options);

/// The CUDA backend (CudaExecutor.cpp): NVRTC-compiled kernels launched on
/// the driver's stream. Without CUDA in the build, a compile fails saying so.
bool compileCuda(ir::KernelOp kernel, Step &step, Plan &plan,
                 std::string &error);
RunResult runCuda(const Plan &plan, const std::vector<JitValue> &args,
                  const CudaRunOptions &options);

} // namespace strata::jit::detail

#endif // STRATA_JIT_LIB_PLAN_H
