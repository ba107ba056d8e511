//===- SavedTensors.cpp - what an op saves for its backward ---------------===//
//
// PyTorch's saved tensors: the versions an op's backward reads, checked at
// backward against later in-place writes (BackwardGraph.cpp) and kept (a
// write over their buffer copies them first, Eval.cpp). Which inputs and
// whether the result an op saves comes from its VJP, asked once per op
// what each operand's gradient reads (ir::vjpReads, building it on
// placeholders), with PyTorch's rule for when a read input is saved: the
// VJP is the one place that says what a gradient reads.
//
//===----------------------------------------------------------------------===//
#include "AutogradGraph.h"
#include "Emit.h"
#include "Eval.h"

#include "strata/IR/ProgramModule.h"
#include "strata/IR/StrataAutodiff.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

using namespace strata;
using namespace strata::detail;

void strata::detail::saveInput(Node &node, const Operand &input, int index) {
  // PyTorch saves the tensor the user passed, before type promotion
  // (maximum(f32, i32) saves the int tensor): an in-place write to it
  // is caught though the op read a cast of it.
  const Operand *o = &input;
  while (o->node->op == Op::Cast && !o->node->userCast &&
         !o->node->inputs.empty())
    o = &o->node->inputs[0];
  if (auto r = o->node->root.lock()) {
    node.saved.push_back(
        {r, r->version, o->layout.sizes, recordOf(*r), {}, index});
    o->node->keepData = true;
    input.node->keepData = true;
  } else if (o->node->op == Op::Fill) {
    // A number (numberOperand, Ops.cpp: a fill with no storage root, never
    // written) is saved as its version 0, as the wrapped-number tensor
    // PyTorch saves (`x * 2` saves the 2). No version record: it has no
    // versions to check (Graph::check).
    node.saved.push_back({{}, 0, o->layout.sizes, nullptr, {}, index});
    o->node->keepData = true;
    input.node->keepData = true;
  }
}

std::shared_ptr<const VersionRecord>
strata::detail::recordOf(StorageRoot &root) {
  if (!root.record) {
    root.record = std::make_shared<VersionRecord>();
    root.record->version = root.version;
    root.record->current = root.current;
    root.record->dtype = root.dtype;
    root.record->writeLocs = root.writeLocs;
  }
  return root.record;
}

void strata::detail::setGradWeight(Node &node) {
  constexpr int64_t kCap = int64_t(1) << 40;
  int64_t w = 1;
  // The graph's structure below, hashed as recorded (a tree's hash: what
  // backwardInSegments needs to tell a structure whose views' offsets
  // change from run to run without walking it; no numbers' values, which
  // are arguments), and apart the offsets of the reads of a part of a
  // version computed with grad (0 where there is none).
  uint64_t shape = 0xcbf29ce484222325ull, offsets = shape;
  bool viewed = false;
  mixHash(shape, static_cast<uint64_t>(node.op));
  mixHash(shape, std::hash<std::string_view>()(node.name));
  mixHash(shape, static_cast<uint64_t>(node.dtype) | uint64_t(node.keepdim)
                                                         << 8);
  mixHash(shape, node.sizes);
  mixHash(shape, node.strides);
  mixHash(shape, node.dims());
  for (const Operand &in : node.gradIn()) {
    bool grad = !in.noGrad && in.node->requiresGrad;
    mixHash(shape, grad ? in.node->gradShape : 1 + uint64_t(in.noGrad));
    mixHash(shape, in.layout.sizes);
    mixHash(shape, in.layout.strides);
    if (!grad)
      continue;
    w = std::min(kCap, w + in.node->gradWeight);
    mixHash(offsets, in.node->gradOffsets);
    viewed = viewed || in.node->gradOffsets;
    if (in.node->op != Op::Leaf &&
        (in.layout.offset != 0 || in.layout.numel() < in.node->rootNumel)) {
      mixHash(offsets, static_cast<uint64_t>(in.layout.offset));
      viewed = true;
    }
  }
  node.gradWeight = w;
  node.gradShape = shape;
  node.gradOffsets = viewed ? offsets | 1 : 0;
}

namespace {
/// What the VJP of a node's op reads (ir::VJPReads): per operand, whether
/// it gets a gradient and what that gradient is computed from.
struct OpReads {
  std::vector<bool> differentiated;
  std::vector<uint64_t> reads;
};
constexpr uint64_t kResult = uint64_t(1) << ir::VJPReads::kResultBit;

/// The probe's sizes for a value of rank `rank`: 2 in each dim. What a VJP
/// reads is the op's, not the shapes': no size-1 dim or single element for
/// a shortcut to skip the reads on (cumprod's, prod's of a 0-d tensor;
/// PyTorch saves the same for every shape).
Shape probeSizes(size_t rank) { return Shape(rank, 2); }

/// Node `n`'s op alone, over arguments of probe sizes (an op of 0-d
/// operands only probed as one of [2]s; a 0-d operand beside others stays
/// 0-d, as a number or scatter's value may be).
ir::Program probeProgram(const Node &n) {
  bool allZeroD = !n.inputs.empty();
  for (const Operand &in : n.inputs)
    allZeroD &= in.layout.sizes.empty();
  auto rank = [&](size_t r) { return allZeroD ? std::max<size_t>(r, 1) : r; };
  ir::Program p;
  std::vector<ir::Program::Value> args;
  std::vector<Shape> sizes;
  for (const Operand &in : n.inputs) {
    sizes.push_back(probeSizes(rank(in.layout.sizes.size())));
    args.push_back(p.argument(
        tensorType(layout::contiguous(sizes.back()), in.node->dtype)));
  }
  Shape out = probeSizes(rank(n.sizes.size()));
  if (n.op == Op::Reduce && !sizes.empty()) {
    auto reduced = layout::reduceShape(sizes[0], n.dims(), n.keepdim, n.name);
    out = reduced ? *reduced : out;
  }
  ir::ValueType result = tensorType(layout::contiguous(out), n.dtype);
  p.returns({emitOp(p, n, args, result)});
  return p;
}

/// Asks the VJP of `n`'s op what it reads (StrataVJPReads.cpp), building
/// it once on placeholders; null where the op has no VJP.
std::shared_ptr<const OpReads> probeReads(const Node &n) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const OpReads>> byProgram;
  ir::Program p = probeProgram(n);
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, fresh] = byProgram.emplace(p.key(), nullptr);
  if (!fresh)
    return it->second;
  static mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module = ir::buildModule(p, context, error);
  if (!module) {
    // (Never silently nothing saved: the probe's shapes must make any op.)
    byProgram.erase(it);
    fail("strata could not build the VJP of " + std::string(n.name) +
             " to ask what it saves for backward: " + error,
         "this is a strata bug", n.loc);
  }
  mlir::Operation *op = nullptr;
  module->walk([&](mlir::Operation *o) {
    if (!op && llvm::isa<ir::VJPOpInterface>(o))
      op = o;
  });
  if (!op)
    return nullptr;
  mlir::FailureOr<ir::VJPReads> reads = ir::vjpReads(op);
  if (mlir::failed(reads))
    return nullptr;
  auto r = std::make_shared<OpReads>();
  r->differentiated.assign(reads->differentiated.begin(),
                           reads->differentiated.end());
  r->reads.assign(reads->reads.begin(), reads->reads.end());
  it->second = r;
  return r;
}

/// What the VJP of `n`'s op reads: asked once per op and operand ranks and
/// dtypes (a thread's own cache first: recording takes no lock).
std::shared_ptr<const OpReads> readsOf(const Node &n) {
  std::string key(n.name);
  key += static_cast<char>(n.op);
  for (const Operand &in : n.inputs) {
    key += static_cast<char>(in.layout.sizes.size());
    key += static_cast<char>(in.node->dtype);
  }
  key += static_cast<char>(n.sizes.size());
  key += static_cast<char>(n.dtype);
  for (int64_t d : n.dims())
    key += static_cast<char>(d);
  key += n.keepdim ? 'k' : '-';
  key += n.scanGradInSource ? 's' : '-';
  thread_local std::unordered_map<std::string, std::shared_ptr<const OpReads>>
      seen;
  auto it = seen.find(key);
  if (it == seen.end())
    it = seen.emplace(std::move(key), probeReads(n)).first;
  return it->second;
}

/// Where PyTorch 1.13's formula reads what strata's VJP does not:
/// div's gradient of `other` reads `self` (-grad * self / other^2) where
/// the VJP reads the result (self / other); MeanBackward1 and
/// GatherBackward0 save `self` (for its numel, for its sizes) where the VJP
/// reads only shapes.
void pytorchReads(const Node &n, llvm::SmallVectorImpl<uint64_t> &reads) {
  if (isOp(n, "div") && reads.size() == 2 && (reads[1] & kResult))
    reads[1] = (reads[1] & ~kResult) | 1;
  if (((isOp(n, "mean") && n.dimList) || isOp(n, "gather")) && !reads.empty())
    reads[0] |= 1;
}

} // namespace

void strata::detail::recordGradNode(Node &node) {
  node.requiresGrad = true;
  node.gradSharesInputs = true;
  setGradWeight(node);
  const std::vector<Operand> &in = node.inputs;
  // Flags for formulas PyTorch refuses on a bool operand (GradientRun's
  // checks): pow's exponent, atan2's self, cast by promotion.
  if (isOp(node, "pow"))
    node.boolExponent = in.size() == 2 && boolTensorCast(in[1]);
  if (isOp(node, "atan2"))
    node.boolSelf = in.size() == 2 && boolTensorCast(in[0]);
  std::shared_ptr<const OpReads> probed = readsOf(node);
  if (!probed || probed->reads.size() != in.size())
    return;
  // PyTorch's saved tensors, by its autograd codegen's rule over each
  // formula (derivatives.yaml), the formulas being the VJP's: a value some
  // input's formula reads is saved; but where the op has several inputs
  // with a derivative and only one formula reads an input, that input is
  // saved only when that gradient is computed (should_compute_output: x * 2
  // saves the 2, not x). A result is saved whenever a formula reads it; a
  // Scalar argument never (isScalarArgument).
  // (Small vectors on the stack: recording an op allocates little.)
  llvm::SmallVector<uint64_t, 4> reads(probed->reads.begin(),
                                       probed->reads.end());
  pytorchReads(node, reads);
  auto rg = [&](size_t i) { // PyTorch's should_compute_output(i)
    return !in[i].noGrad || in[i].cutView;
  };
  llvm::SmallVector<size_t, 4> withFormula;
  for (size_t i = 0; i < in.size(); ++i)
    if (probed->differentiated[i] && !isScalarArgument(node, i))
      withFormula.push_back(i);
  uint64_t readByAny = 0;
  for (size_t i : withFormula)
    readByAny |= reads[i];
  for (size_t j = 0; j < in.size(); ++j) {
    llvm::SmallVector<size_t, 4> readers;
    for (size_t i : withFormula)
      if (reads[i] >> j & 1)
        readers.push_back(i);
    if (readers.empty() || isScalarArgument(node, j))
      continue;
    // (A single input with a formula is saved even when its gradient is
    // not computed: a view whose gradient goes nowhere, as PyTorch.)
    if (withFormula.size() == 1 || readers.size() > 1 || rg(readers[0]))
      saveInput(node, in[j], static_cast<int>(j));
  }
  if (readByAny & kResult) {
    auto root = node.root.lock();
    node.saved.push_back({node.root, 0, node.sizes,
                          root ? recordOf(*root) : nullptr,
                          node.weak_from_this()});
    node.keepData = true;
  }
}
