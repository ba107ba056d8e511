//===- strata-run.cpp - run the functions of a strata IR file -------------===//
//
// strata-run FILE.mlir|- [--entry=NAME] [--engine=reference|jit|cuda]
//            [--inputs=arange|random] [--seed=N] [--print-inputs]
//
// Parses and verifies the file, then runs every func.func in it, in order
// (or only --entry), on generated inputs, and prints each function's
// results in the stable format of strata/Reference/Evaluator.h:
//
//   func @chain
//   result 0: f32 sizes [3] strides [4] offset 1
//     [1, 5, 9]
//
// --engine=jit lowers the module with the JIT's pipeline (buildStrataPipeline
// then fuse and coalesce), compiles every kernel and runs it natively on the
// same inputs, printing in the same format, so the two engines' outputs can
// be compared line by line.
//
// Exit status: 0 on success, 1 on any parse, verify, option or evaluation
// error (the diagnostics go to stderr).
//
//===----------------------------------------------------------------------===//
#include "../ToolVersion.h"
#include "strata/IR/Parse.h"
#include "strata/IR/StrataDialect.h"
#include "strata/JIT/CudaJit.h"
#include "strata/JIT/Jit.h"
#include "strata/JIT/RefInterop.h"
#include "strata/Reference/Evaluator.h"
#include "strata/Transforms/KernelPasses.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;
namespace ref = strata::reference;

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir file>"),
                                          cl::init("-"));
static cl::opt<std::string>
    entry("entry", cl::desc("Run only the function with this name"),
          cl::value_desc("name"));
static cl::opt<std::string>
    engine("engine",
           cl::desc("Execution engine: 'reference' (the double-precision "
                    "oracle), 'jit' (native kernels through LLVM) or 'cuda' "
                    "(CUDA kernels through NVRTC on GPU 0)"),
           cl::init("reference"));
static cl::opt<ref::InputKind>
    inputs("inputs", cl::desc("How arguments are filled"),
           cl::values(clEnumValN(ref::InputKind::Arange, "arange",
                                 "element i of each argument's storage is i"),
                      clEnumValN(ref::InputKind::Random, "random",
                                 "seeded SplitMix64 values (see --seed)")),
           cl::init(ref::InputKind::Arange));
static cl::opt<uint64_t>
    seed("seed", cl::desc("Seed of --inputs=random (per function)"),
         cl::init(0));
static cl::opt<bool> printInputs("print-inputs",
                                 cl::desc("Also print each function's inputs"),
                                 cl::init(false));

/// Runs one function on fresh inputs and prints its results. With the jit
/// engine, `lowered` is the same function after the JIT's pipeline.
static LogicalResult runFunction(func::FuncOp func, func::FuncOp lowered) {
  // Flushed so that a diagnostic on stderr follows the function it is about.
  llvm::outs() << "func @" << func.getSymName() << "\n";
  llvm::outs().flush();
  ref::InputGenerator generator(inputs, seed);
  std::vector<ref::RefValue> args;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    std::string whyNot;
    FailureOr<ref::RefValue> arg = generator.makeArgument(type, whyNot);
    if (failed(arg))
      return func.emitError() << "strata-run: cannot make an input for "
                                 "argument "
                              << i << " of type " << type << ": " << whyNot;
    if (printInputs)
      ref::printValue(llvm::outs(), "arg " + std::to_string(i), *arg);
    args.push_back(std::move(*arg));
  }
  if (lowered) {
    std::vector<strata::jit::JitValue> jitArgs;
    for (const ref::RefValue &arg : args)
      jitArgs.push_back(strata::jit::fromRefValue(arg));
    strata::jit::RunResult run =
        engine == "cuda" ? strata::jit::runFunctionCuda(lowered, jitArgs)
                         : strata::jit::runFunction(lowered, jitArgs);
    if (!run.ok)
      return func.emitError()
             << "strata-run: the " << engine << " engine failed: " << run.error;
    for (auto [i, value] : llvm::enumerate(run.values))
      ref::printValue(llvm::outs(), "result " + std::to_string(i),
                      strata::jit::toRefValue(value, *func.getContext()));
    return success();
  }
  FailureOr<std::vector<ref::RefValue>> results = ref::evaluate(func, args);
  if (failed(results))
    return failure();
  for (auto [i, value] : llvm::enumerate(*results))
    ref::printValue(llvm::outs(), "result " + std::to_string(i), value);
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  strata::tools::setVersionPrinter("strata-run");
  cl::ParseCommandLineOptions(argc, argv, "strata IR runner\n");

  if (engine != "reference" && engine != "jit" && engine != "cuda") {
    llvm::errs() << "strata-run: unknown --engine=" << engine
                 << "; the available engines are 'reference' and 'jit' (and "
                    "'cuda' with a GPU)\n";
    return 1;
  }

  std::string error;
  auto file = openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << "strata-run: " << error << "\n";
    return 1;
  }
  MLIRContext context;
  // Diagnostics point at the source line; a generic-form dump of the op
  // would only repeat it.
  context.printOpOnDiagnostic(false);
  context.loadDialect<strata::ir::StrataDialect, func::FuncDialect>();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  // Parsing verifies the module; failures have been reported by `handler`.
  OwningOpRef<ModuleOp> module =
      strata::ir::parseSourceFile(sourceMgr, &context);
  if (!module)
    return 1;

  // The jit engine runs a lowered copy; inputs still come from the original
  // signature (the pipeline keeps every type), so both engines see the same
  // arguments.
  OwningOpRef<ModuleOp> lowered;
  if (engine == "jit" || engine == "cuda") {
    strata::jit::loadDialects(context);
    lowered = module->clone();
    PassManager pm(&context);
    strata::buildStrataPipeline(pm, {.formKernels = true});
    if (failed(pm.run(*lowered)))
      return 1;
  }

  bool found = false;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (func.isExternal() || (!entry.empty() && func.getSymName() != entry))
      continue;
    found = true;
    func::FuncOp loweredFunc;
    if (lowered)
      loweredFunc = lowered->lookupSymbol<func::FuncOp>(func.getSymName());
    if (failed(runFunction(func, loweredFunc)))
      return 1;
  }
  if (!entry.empty() && !found) {
    llvm::errs() << "strata-run: no function named '" << entry
                 << "' in the input\n";
    return 1;
  }
  return 0;
}
