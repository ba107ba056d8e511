//===- Pipeline.cpp - the one ordered list of strata passes --------------===//
#include "strata/Runtime/Settings.h"
#include "strata/Transforms/KernelPasses.h"
#include "strata/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <cstdlib>
#include <string>

namespace strata {
namespace detail {
// registerFoldViews(), registerMaterializeCopies() and a
// registerStrataPasses() that calls both.
#define GEN_PASS_REGISTRATION
#include "strata/Transforms/Passes.h.inc"
} // namespace detail
} // namespace strata

namespace {
/// `--strata-pipeline=remarks=true`.
struct PipelineCLOptions : mlir::PassPipelineOptions<PipelineCLOptions> {
  Option<bool> remarks{*this, "remarks",
                       llvm::cl::desc("Report every copy kept, with its "
                                      "reason and location"),
                       llvm::cl::init(false)};
  Option<bool> kernels{*this, "kernels",
                       llvm::cl::desc("Continue through fuse and coalesce to "
                                      "strata.kernel ops, as the JIT does"),
                       llvm::cl::init(false)};
};
} // namespace

// The order, and why:
//  1. canonicalize: local cleanups first (identity views, permute/transpose
//     and expand chains, dead ops), so the later passes see fewer ops;
//  2. fold-views: every chain becomes one strided_view of its root, so a
//     copy's users are one hop away and a copying reshape reads its input
//     directly;
//  3. materialize-copies: needs 2 (it decides each copy from its uses and
//     their views) and must come before fusion/lowering, which expect every
//     reshape to be a view or an explicit contiguous;
//  4. canonicalize: folds the views that 3 created or exposed
//     (strided_view of a view of a fresh copy -> strided_view of the copy)
//     and removes what became dead;
//  5. cse: merges identical strided_views of one root (different chains that
//     reached the same layout); compute ops allocate, so they never merge;
//  6. (formKernels) widen-sums: f32 sums accumulate in f64 (before fuse, so
//     the casts it adds fuse like any elementwise op);
//  7. (formKernels) fuse: needs every view folded and every copy explicit;
//     it groups elementwise chains and a trailing reduction into kernels;
//  8. (formKernels) split-kernels: cuts kernels longer than 512 scalar ops
//     into pieces (compile time stays linear in the program; repeated
//     pieces are one kernel, compiled once);
//  9. (formKernels) coalesce: reorders and merges the loops of the kernels
//     fuse and split-kernels made.
void strata::buildStrataPipeline(mlir::OpPassManager &pm,
                                 const PipelineOptions &options) {
  bool onFunctions = pm.getOpName() &&
                     *pm.getOpName() == mlir::func::FuncOp::getOperationName();
  mlir::OpPassManager &fpm = onFunctions ? pm : pm.nest<mlir::func::FuncOp>();
  MaterializeCopiesOptions copies;
  copies.emitRemarks = options.copyRemarks;
  fpm.addPass(createDifferentiate()); // only functions marked strata.wrt
  fpm.addPass(mlir::createCanonicalizerPass());
  fpm.addPass(createFoldViews());
  fpm.addPass(createMaterializeCopies(copies));
  fpm.addPass(mlir::createCanonicalizerPass());
  fpm.addPass(mlir::createCSEPass());
  if (!options.formKernels)
    return;
  // STRATA_FUSE_SIBLINGS=0 turns sibling fusion off (for comparisons).
  FuseOptions fuse;
  fuse.siblings = strata::runtime::settings::fuseSiblings();
  fpm.addPass(createWidenSums());
  fpm.addPass(createFuse(fuse));
  fpm.addPass(createSplitKernels());
  fpm.addPass(createCoalesce());
}

void strata::registerStrataPasses() {
  detail::registerStrataPasses();
  mlir::PassPipelineRegistration<PipelineCLOptions>(
      "strata-pipeline",
      "The strata pipeline (kernels=true: through fuse and coalesce, as the "
      "JIT runs it)",
      [](mlir::OpPassManager &pm, const PipelineCLOptions &cl) {
        PipelineOptions options;
        options.copyRemarks = cl.remarks;
        options.formKernels = cl.kernels;
        buildStrataPipeline(pm, options);
      });
}
