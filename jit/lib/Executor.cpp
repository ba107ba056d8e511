//===- Executor.cpp - run a function of views and kernels -----------------===//
//
// Walks the function once: view ops only name a layout over their root's
// buffer (types are absolute), kernels get fresh result buffers (reducing
// results filled with the combiner's identity) and run on the thread pool
// when their outermost loop is not a reduction. A kernel `into` a storage
// writes a copy of the old version (so every older value stays valid).
//
//===----------------------------------------------------------------------===//
#include "JitInternal.h"
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/Jit.h"
#include "strata/Runtime/ThreadPool.h"
#include "strata/Target/LLVM/KernelToLLVM.h"
#include "strata/Transforms/KernelPasses.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace strata::jit;
using namespace strata::ir;

namespace {

DType dtypeOf(mlir::Type t) {
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (t.isInteger(1))
    return DType::Bool;
  if (t.isInteger(32))
    return DType::I32;
  return DType::I64;
}

mlir::Type elementTypeOf(mlir::Type t) {
  if (auto s = t.dyn_cast<StorageType>())
    return s.getElementType();
  return t.cast<StridedTensorType>().getElementType();
}

JitValue newBuffer(DType dtype, int64_t elements) {
  JitValue v;
  v.dtype = dtype;
  v.buffer = std::make_shared<std::vector<unsigned char>>(
      std::max<int64_t>(elements, 0) * elementSize(dtype));
  return v;
}

void fillIdentity(JitValue &v, llvm::StringRef combiner) {
  double identity = 0;
  if (combiner == "max")
    identity = v.dtype == DType::I32   ? std::numeric_limits<int32_t>::min()
               : v.dtype == DType::I64 ? -9.2233720368547758e18
                                       : -INFINITY;
  else if (combiner == "min")
    identity = v.dtype == DType::I32   ? std::numeric_limits<int32_t>::max()
               : v.dtype == DType::I64 ? 9.2233720368547748e18
                                       : INFINITY;
  if (identity == 0)
    return; // buffers start zeroed
  for (int64_t i = 0, n = v.storageElements(); i < n; ++i)
    v.setStorageAt(i, identity);
}

class Executor {
public:
  explicit Executor(const RunOptions &options) : options(options) {}

  RunResult run(mlir::func::FuncOp func, const std::vector<JitValue> &args);

private:
  bool fail(mlir::Operation *op, const std::string &message) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << op->getLoc() << ": " << message;
    error = os.str();
    return false;
  }
  bool runKernel(KernelOp kernel);
  JitValue *rootOf(mlir::Value v) {
    auto it = roots.find(getStorageRoot(v));
    return it == roots.end() ? nullptr : &it->second;
  }

  const RunOptions &options;
  llvm::DenseMap<mlir::Value, JitValue> roots;
  std::string error;
};

bool Executor::runKernel(KernelOp kernel) {
  std::vector<void *> buffers;
  for (mlir::Value in : kernel.getInputs()) {
    JitValue *root = rootOf(in);
    if (!root)
      return fail(kernel, "kernel input has no buffer");
    buffers.push_back(root->buffer->data());
  }
  for (auto [r, result] : llvm::enumerate(kernel.getResults())) {
    JitValue out;
    if (auto storage = result.getType().dyn_cast<StorageType>()) {
      JitValue *old = rootOf(kernel.getDest());
      if (!old)
        return fail(kernel, "destination has no buffer");
      out = *old;
      out.buffer = std::make_shared<std::vector<unsigned char>>(*old->buffer);
      out.isStorage = true;
      out.sizes = {storage.getSize()};
      out.strides = {1};
      out.offset = 0;
    } else {
      auto t = result.getType().cast<StridedTensorType>();
      out = newBuffer(dtypeOf(t.getElementType()), t.getNumElements());
      out.sizes.assign(t.getShape().begin(), t.getShape().end());
      out.strides.assign(t.getStrides().begin(), t.getStrides().end());
      fillIdentity(out, kernel.getCombiner(r));
    }
    buffers.push_back(out.buffer->data());
    roots[result] = std::move(out);
  }
  if (mlir::Value dest = kernel.getDest())
    buffers.push_back(rootOf(dest)->buffer->data());

  auto info = strata::codegen::getLaunchInfo(kernel);
  if (info.numPoints == 0)
    return true;
  std::string compileError;
  KernelFn fn = strata::jit::detail::getKernel(kernel, compileError);
  if (!fn)
    return fail(kernel, compileError);
  void **bufs = buffers.data();
  auto &pool = strata::runtime::ThreadPool::global();
  bool parallel = options.numThreads != 1 && info.outerParallel &&
                  pool.size() > 1 && info.numPoints >= (1 << 15) &&
                  info.outerSize > 1;
  if (!parallel) {
    fn(bufs, 0, info.outerSize);
    return true;
  }
  pool.parallelFor(info.outerSize,
                   [&](int64_t begin, int64_t end) { fn(bufs, begin, end); });
  return true;
}

RunResult Executor::run(mlir::func::FuncOp func,
                        const std::vector<JitValue> &args) {
  RunResult result;
  if (args.size() != func.getNumArguments()) {
    result.error = "expected " + std::to_string(func.getNumArguments()) +
                   " arguments, got " + std::to_string(args.size());
    return result;
  }
  for (auto [arg, value] : llvm::zip(func.getArguments(), args)) {
    mlir::Type t = arg.getType();
    int64_t need = getRootStorageSize(arg);
    if (dtypeOf(elementTypeOf(t)) != value.dtype || !value.buffer ||
        value.storageElements() < need) {
      result.error = "argument #" + std::to_string(arg.getArgNumber()) +
                     ": expected " + std::to_string(need) + " elements of " +
                     dtypeName(dtypeOf(elementTypeOf(t))) + ", got " +
                     std::to_string(value.storageElements()) + " of " +
                     dtypeName(value.dtype);
      return result;
    }
    roots[arg] = value;
  }
  for (mlir::Operation &op : func.getBody().front()) {
    if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
      if (!runKernel(kernel)) {
        result.error = error;
        return result;
      }
      continue;
    }
    if (getViewSource(&op))
      continue;
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      for (mlir::Value v : ret.getOperands()) {
        JitValue *root = rootOf(v);
        if (!root) {
          fail(&op, "returned value has no buffer");
          result.error = error;
          return result;
        }
        JitValue out = *root;
        if (auto t = v.getType().dyn_cast<StridedTensorType>()) {
          out.isStorage = false;
          out.sizes.assign(t.getShape().begin(), t.getShape().end());
          out.strides.assign(t.getStrides().begin(), t.getStrides().end());
          out.offset = t.getOffset();
        } else {
          out.isStorage = true;
          out.sizes = {out.storageElements()};
          out.strides = {1};
          out.offset = 0;
        }
        result.values.push_back(std::move(out));
      }
      result.ok = true;
      return result;
    }
    fail(&op, "'" + op.getName().getStringRef().str() +
                  "' cannot run on the JIT: run the strata pipeline and "
                  "--strata-fuse first");
    result.error = error;
    return result;
  }
  result.error = "function has no return";
  return result;
}

} // namespace

RunResult strata::jit::runFunction(mlir::Operation *func,
                                   const std::vector<JitValue> &args,
                                   const RunOptions &options) {
  auto f = llvm::dyn_cast<mlir::func::FuncOp>(func);
  if (!f) {
    RunResult r;
    r.error = "runFunction expects a func.func";
    return r;
  }
  return Executor(options).run(f, args);
}

void strata::jit::loadDialects(mlir::MLIRContext &context) {
  context.loadDialect<StrataDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect, mlir::math::MathDialect>();
}

RunResult strata::jit::runSource(const std::string &source,
                                 const std::string &funcName,
                                 const std::vector<JitValue> &args,
                                 const RunOptions &options) {
  RunResult result;
  mlir::MLIRContext context;
  loadDialects(context);
  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagOS);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module) {
    result.error = "cannot parse the program: " + diagOS.str();
    return result;
  }
  mlir::PassManager pm(&context);
  strata::buildStrataPipeline(pm);
  strata::buildKernelPipeline(pm);
  int level = strata::jit::detail::debug();
  if (level >= 1)
    pm.enableTiming();
  if (level >= 2) {
    context.disableMultithreading();
    pm.enableIRPrinting();
  }
  if (mlir::failed(pm.run(*module))) {
    result.error = "the strata pipeline failed: " + diagOS.str();
    return result;
  }
  auto func = module->lookupSymbol<mlir::func::FuncOp>(funcName);
  if (!func) {
    result.error = "no function @" + funcName;
    return result;
  }
  return runFunction(func, args, options);
}
