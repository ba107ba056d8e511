//===- Core.cpp - errors, option types, tensor handles and metadata ------===//
#include "Impl.h"

#include "strata/Runtime/CudaDriver.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <sstream>

using namespace strata;
using namespace strata::detail;

//===--- Error and option types -------------------------------------------===//

std::string strata::detail::formatLoc(const SourceLoc &loc) {
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

Error::Error(const std::string &message, const std::string &hint,
             const SourceLoc &loc)
    : std::runtime_error(message + (hint.empty() ? "" : "\n  hint: " + hint) +
                         "\n  at " + formatLoc(loc)),
      message_(message), hint_(hint), where_(formatLoc(loc)) {}

void strata::detail::fail(const std::string &message, const std::string &hint,
                          const SourceLoc &loc) {
  throw Error(message, hint, loc);
}

std::string strata::toString(DType t) { return runtime::dtypeInfo(t).torch; }

const char *strata::detail::irType(DType t) { return runtime::dtypeInfo(t).ir; }

std::string Device::str() const {
  if (is_cpu())
    return "cpu";
  return index_ < 0 ? "cuda" : "cuda:" + std::to_string(index_);
}

TensorOptions TensorOptions::dtype(DType t) const {
  TensorOptions o = *this;
  o.dtype_ = t;
  return o;
}
TensorOptions TensorOptions::device(Device d) const {
  TensorOptions o = *this;
  o.device_ = d;
  return o;
}
TensorOptions TensorOptions::requires_grad(bool r) const {
  TensorOptions o = *this;
  o.requiresGrad_ = r;
  return o;
}

std::ostream &strata::operator<<(std::ostream &os, DType t) {
  return os << toString(t);
}
std::ostream &strata::operator<<(std::ostream &os, const Device &d) {
  return os << d.str();
}

//===--- Storage ----------------------------------------------------------===//

void *Storage::data_ptr(SourceLoc loc) const {
  if (root_)
    detail::settleStorage(*root_, loc);
  return buffer_ ? buffer_->data() : nullptr;
}
int64_t Storage::nbytes() const {
  return buffer_ ? static_cast<int64_t>(buffer_->nbytes()) : 0;
}
int64_t Storage::size() const { return nbytes() / elementSize_; }
Device Storage::device() const {
  return buffer_ && buffer_->device() == runtime::DeviceKind::CUDA
             ? Device::cuda(0)
             : Device::cpu();
}
long Storage::use_count() const { return buffer_.use_count(); }

//===--- The trace lock ---------------------------------------------------===//

namespace {
std::recursive_mutex &traceMutex() {
  static auto *m = new std::recursive_mutex; // outlives static destructors
  return *m;
}
/// Holds of the trace lock by this thread.
thread_local int tTraceHolds = 0;
} // namespace

TraceLock::TraceLock() { acquire(); }
TraceLock::~TraceLock() { release(); }
bool TraceLock::outermost() const { return tTraceHolds == 1; }
void TraceLock::acquire() {
  traceMutex().lock();
  ++tTraceHolds;
}
void TraceLock::release() {
  --tTraceHolds;
  traceMutex().unlock();
}

//===--- Shared helpers ---------------------------------------------------===//

void strata::detail::checkDevice(const Device &d, const SourceLoc &loc) {
  if (d.is_cpu())
    return;
  std::string error;
  if (!runtime::cuda::Driver::get(error))
    fail(error + " (asked for " + d.str() + ")",
         "CUDA tensors need an NVIDIA driver (libcuda.so.1, or "
         "$STRATA_CUDA_DRIVER) and a GPU; keep tensors on the CPU",
         loc);
  if (d.index() > 0)
    fail("no CUDA device: " + d.str() +
             " is not available (strata drives "
             "cuda:0 only)",
         "use strata::Device::cuda() (cuda:0)", loc);
}

Device strata::detail::deviceOf(int8_t device) {
  return device == kDevCUDA ? Device::cuda(0) : Device::cpu();
}

int8_t strata::detail::joinDevices(int8_t a, int8_t b, const SourceLoc &loc) {
  if (a == kDevAny || a == b)
    return b;
  if (b == kDevAny)
    return a;
  fail("Expected all tensors to be on the same device, but found at least "
       "two devices, cuda:0 and cpu!",
       "move one operand with .to(strata::Device::cuda()) or "
       ".to(strata::kCPU)",
       loc);
}

runtime::StoragePtr strata::detail::copyBuffer(const runtime::StoragePtr &src,
                                               runtime::DeviceKind device,
                                               const SourceLoc &loc) {
  std::string error;
  runtime::StoragePtr dst =
      runtime::Storage::tryCreate(src->nbytes(), error, device);
  if (!dst)
    fail(error, "free tensors you no longer need or call empty_cache()", loc);
  error = runtime::Storage::copy(*dst, 0, *src, 0, src->nbytes());
  if (!error.empty())
    fail(error, "", loc);
  return dst;
}

runtime::StoragePtr strata::detail::hostBuffer(const runtime::StoragePtr &b,
                                               const SourceLoc &loc) {
  if (!b || b->device() != runtime::DeviceKind::CUDA)
    return b;
  return copyBuffer(b, runtime::DeviceKind::CPU, loc);
}

const TensorImpl &strata::detail::implOf(const Tensor &t,
                                         const SourceLoc &loc) {
  if (!t.defined())
    fail("undefined tensor", "construct it with a factory (zeros, arange...)",
         loc);
  return *t.impl();
}

Operand strata::detail::operandOf(const TensorImpl &t) {
  Operand o;
  o.node = t.root->current;
  o.layout = t.layout;
  o.view = viewChainOf(t);
  setGradEdge(o, t);
  return o;
}

namespace {
/// The nodes whose last reference a ~Node on this thread released, waiting
/// to be destroyed by the outermost ~Node (null: none is running).
thread_local std::vector<NodePtr> *tReleased = nullptr;
} // namespace

strata::detail::Node::~Node() {
  // A node holds its inputs; destroying them from here would recurse once
  // per op of the chain. The outermost ~Node on the thread collects them
  // instead and drops them one at a time (each one's own inputs join the
  // list), so the depth stays one frame (a create_graph copy's forward op
  // too: Rare::recomputes).
  auto release = [this](std::vector<NodePtr> &into) {
    for (std::vector<Operand> *operands : // (inputs again: moved from)
         {&inputs, &gradInputs, rare ? &rare->compositeInputs : &inputs})
      for (Operand &o : *operands)
        if (o.node)
          into.push_back(std::move(o.node));
    if (rare && rare->recomputes)
      into.push_back(std::move(rare->recomputes));
  };
  if (tReleased) {
    release(*tReleased);
    return;
  }
  std::vector<NodePtr> released;
  release(released);
  tReleased = &released;
  while (!released.empty()) {
    NodePtr n = std::move(released.back());
    released.pop_back();
    n.reset(); // may append its inputs to `released`
  }
  tReleased = nullptr;
}

namespace {
/// Drops `head`, the next link of a chain of owners, iteratively: the
/// outermost call on the thread drains a list; the destructors it runs
/// (which call this again for their own next link) only append to it.
template <typename T>
void releaseChain(std::shared_ptr<T> head,
                  std::vector<std::shared_ptr<T>> *&active) {
  if (!head)
    return;
  if (active) {
    active->push_back(std::move(head));
    return;
  }
  std::vector<std::shared_ptr<T>> pending{std::move(head)};
  active = &pending;
  while (!pending.empty()) {
    std::shared_ptr<T> p = std::move(pending.back());
    pending.pop_back();
    p.reset(); // a last owner's destructor appends its next owner
  }
  active = nullptr;
}
thread_local std::vector<std::shared_ptr<TensorImpl>> *tReleasedImpls = nullptr;
thread_local std::vector<std::shared_ptr<const ViewChain>> *tReleasedChains =
    nullptr;
} // namespace

strata::detail::TensorImpl::~TensorImpl() {
  releaseChain(std::move(base), tReleasedImpls);
}

strata::detail::ViewChain::~ViewChain() {
  releaseChain(std::move(next), tReleasedChains);
}

void strata::detail::setDepth(Node &node) {
  for (const Operand &in : node.inputs)
    if (!in.node->buffer)
      node.depth = std::max(node.depth, in.node->depth + 1);
}

void strata::detail::cutDeepChain(const TensorImpl &t, const SourceLoc &loc) {
  // Not a chain requiring grad: backward re-emits it from the leaves
  // anyway, and evaluating it would write every op's result (each is
  // referenced by its consumer's kept inputs).
  const Node &n = *t.root->current;
  if (n.depth > kMaxPendingDepth && !n.requiresGrad)
    evaluate({&t}, loc);
}

Shape strata::detail::resultStrides(const Node &n,
                                    std::span<const layout::Layout> ins) {
  switch (n.op) {
  case Op::Unary:
  case Op::Binary:
  case Op::Where:
    // pow by a number (a 0-d fill, strata.fill in the IR) is PyTorch's
    // pow(Tensor, Scalar), a unary TensorIterator (StrataOps.cpp agrees).
    // (An evaluated node may have released `inputs`; its gradInputs stay.)
    if (const auto &in = n.inputs.size() == 2 ? n.inputs : n.gradIn();
        std::string_view(n.name) == "pow" && in.size() == 2 &&
        in[1].layout.dim() == 0 && in[1].node) {
      const Node *e = in[1].node.get();
      // (Numbers are on no device; a bool one is a cast of a fill. A
      // fill the user made, full({}, v), is a tensor: a binary pow.)
      if ((e->op == Op::Fill || e->op == Op::Cast) && e->device == kDevAny)
        ins = ins.first(ins.size() - 1);
    }
    return layout::elementwiseResult(ins, n.sizes).strides;
  case Op::Cast:
    return layout::preserveFormat(ins[0]).strides;
  case Op::Copy:
    if (std::string_view(n.name) == "copy")
      return layout::preserveFormat(ins[0]).strides;
    return layout::contiguousStrides(n.sizes);
  default:
    return layout::contiguousStrides(n.sizes);
  }
}

runtime::StoragePtr strata::detail::allocate(int64_t nbytes,
                                             const SourceLoc &loc) {
  std::string error;
  auto s = runtime::Storage::tryCreate(static_cast<size_t>(nbytes), error);
  if (!s)
    fail(error, "", loc);
  return s;
}

double strata::detail::loadElement(const runtime::Storage &buffer, DType dtype,
                                   int64_t i) {
  return jit::loadElement(buffer.data() + i * elementSize(dtype),
                          toJitDType(dtype));
}

//===--- Metadata ---------------------------------------------------------===//

const TensorImpl &Tensor::checked(SourceLoc loc) const {
  return implOf(*this, loc);
}
const Shape &Tensor::sizes(SourceLoc loc) const {
  return checked(loc).layout.sizes;
}
const Shape &Tensor::strides(SourceLoc loc) const {
  return checked(loc).layout.strides;
}
namespace {
/// PyTorch's IndexError for size(d)/stride(d) of a 0-d tensor (wrapDim
/// accepts dim 0 and -1 there, as reductions do).
void checkHasDims(const TensorImpl &t, int64_t d, const SourceLoc &loc) {
  if (t.layout.dim() == 0)
    fail("Dimension specified as " + std::to_string(d) +
             " but tensor has no dimensions",
         "a 0-d tensor has no sizes or strides: check dim() first", loc);
}
} // namespace

int64_t Tensor::size(int64_t d, SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  checkHasDims(t, d, loc);
  return t.layout.sizes[check(layout::wrapDim(d, t.layout.dim(), "size"), loc)];
}
int64_t Tensor::stride(int64_t d, SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  checkHasDims(t, d, loc);
  return t.layout
      .strides[check(layout::wrapDim(d, t.layout.dim(), "stride"), loc)];
}
int64_t Tensor::storage_offset(SourceLoc loc) const {
  return checked(loc).layout.offset;
}
int64_t Tensor::dim(SourceLoc loc) const { return checked(loc).layout.dim(); }
int64_t Tensor::numel(SourceLoc loc) const {
  return checked(loc).layout.numel();
}
DType Tensor::dtype(SourceLoc loc) const { return checked(loc).dtype; }
Device Tensor::device(SourceLoc loc) const {
  TraceLock lock;
  return deviceOf(checked(loc).root->current->device);
}
TensorOptions Tensor::options(SourceLoc loc) const {
  return TensorOptions(dtype(loc))
      .device(device(loc))
      .requires_grad(requires_grad(loc));
}
bool Tensor::is_contiguous(SourceLoc loc) const {
  return layout::isContiguous(checked(loc).layout);
}
int64_t Tensor::element_size(SourceLoc loc) const {
  return elementSize(dtype(loc));
}
bool Tensor::requires_grad(SourceLoc loc) const {
  const TensorImpl &t = checked(loc);
  TraceLock lock;
  return requiresGradOf(t);
}
bool Tensor::is_leaf(SourceLoc loc) const {
  const TensorImpl &t = checked(loc);
  TraceLock lock;
  checkViewRead(t, loc); // (reading is_leaf reads the grad_fn)
  viewChainOf(t);        // (and regenerates a view's)
  return isLeafOf(t);
}
int64_t Tensor::_version(SourceLoc loc) const {
  TraceLock lock;
  return checked(loc).root->version;
}
bool Tensor::is_materialized(SourceLoc loc) const {
  TraceLock lock;
  return checked(loc).root->current->buffer != nullptr;
}
Tensor &Tensor::requires_grad_(bool r, SourceLoc loc) {
  TensorImpl &t = const_cast<TensorImpl &>(implOf(*this, loc));
  TraceLock lock;
  // PyTorch tests the grad_fn field as it stands: a view's is regenerated
  // only when read, so a no-grad view written in place since is still a
  // leaf here (the next read of its grad_fn raises).
  if (!gradFnFieldIsNull(t)) {
    if (r)
      return *this; // PyTorch: already requires grad
    fail("you can only change requires_grad flags of leaf variables. If you "
         "want to use a computed variable in a subgraph that doesn't require "
         "differentiation use var_no_grad = var.detach().",
         "use detach() to get a leaf that shares the storage", loc);
  }
  if (r && !isFloatingPoint(t.dtype))
    fail("only Tensors of floating point dtype can require gradients",
         "convert with .to(strata::kFloat32) first", loc);
  // A view without a grad_fn becomes a leaf of its own (PyTorch:
  // x.view(...).requires_grad_() is a leaf; x is not), still a view of x.
  t.requiresGrad = r;
  return *this;
}

//===--- Storage and data pointer -----------------------------------------===//

Storage Tensor::storage(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  TraceLock lock;
  settleStorage(*t.root, loc);
  return Storage(t.root->home, t.dtype, t.root);
}

void *Tensor::data_ptr(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  TraceLock lock;
  settleStorage(*t.root, loc);
  if (!t.root->home || !t.root->home->data())
    return nullptr;
  return t.root->home->data() + t.layout.offset * elementSize(t.dtype);
}

const Tensor &Tensor::eval(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  TraceLock lock;
  if (!t.root->current->buffer)
    evaluate({&t}, loc);
  return *this;
}

namespace {
template <typename T> constexpr DType dtypeOfT() {
  if constexpr (std::is_same_v<T, float>)
    return DType::F32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::F64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::I32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::I64;
  else
    return DType::Bool;
}

/// Element `i` of a host buffer as T. Integer elements are read as
/// integers: through a double, int64 values beyond 2^53 would change.
template <typename T>
T elementAs(const runtime::Storage &buffer, DType dtype, int64_t i) {
  if (dtype == DType::I64 || dtype == DType::I32) {
    int64_t v;
    if (dtype == DType::I64) {
      std::memcpy(&v, buffer.data() + i * 8, 8);
    } else {
      int32_t v32;
      std::memcpy(&v32, buffer.data() + i * 4, 4);
      v = v32;
    }
    if constexpr (std::is_same_v<T, bool>)
      return v != 0;
    else
      return static_cast<T>(v);
  }
  double v = loadElement(buffer, dtype, i);
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else
    return static_cast<T>(v);
}
} // namespace

template <typename T> T *Tensor::data_ptr(SourceLoc loc) const {
  if (dtypeOfT<T>() != implOf(*this, loc).dtype)
    fail("expected scalar type " + strata::toString(dtypeOfT<T>()) +
             " but found " + strata::toString(dtype()),
         "call data_ptr<T>() with T matching dtype(), or convert with to()",
         loc);
  return static_cast<T *>(data_ptr(loc));
}

template <typename T> std::vector<T> Tensor::to_vector(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  TraceLock lock; // no write lands while the elements are copied
  eval(loc);
  std::vector<T> out;
  if (t.layout.numel() == 0)
    return out;
  out.reserve(t.layout.numel());
  runtime::StoragePtr host = hostBuffer(t.root->home, loc);
  for (int64_t i : layout::storageIndices(t.layout))
    out.push_back(elementAs<T>(*host, t.dtype, i));
  return out;
}

template <typename T> std::vector<T> Storage::to_vector(SourceLoc loc) const {
  TraceLock lock; // no write lands while the elements are copied
  if (root_)
    detail::settleStorage(*root_, loc);
  std::vector<T> out;
  int64_t n = size();
  if (n == 0)
    return out;
  out.reserve(n);
  runtime::StoragePtr host = hostBuffer(buffer_, loc);
  for (int64_t i = 0; i < n; ++i)
    out.push_back(elementAs<T>(*host, dtype_, i));
  return out;
}

template <typename T>
std::vector<T> strata::detail::elementsAt(const Tensor &tensor,
                                          const std::vector<int64_t> &flat,
                                          const SourceLoc &loc) {
  const TensorImpl &t = implOf(tensor, loc);
  TraceLock lock;
  tensor.eval(loc);
  std::vector<T> out;
  if (t.layout.numel() == 0 || flat.empty())
    return out;
  out.reserve(flat.size());
  runtime::StoragePtr host = hostBuffer(t.root->home, loc);
  const Shape &sizes = t.layout.sizes;
  for (int64_t k : flat) {
    int64_t at = t.layout.offset;
    for (size_t d = sizes.size(); d-- > 0;) {
      at += (k % sizes[d]) * t.layout.strides[d];
      k /= sizes[d];
    }
    out.push_back(elementAs<T>(*host, t.dtype, at));
  }
  return out;
}
template std::vector<double>
strata::detail::elementsAt<double>(const Tensor &, const std::vector<int64_t> &,
                                   const SourceLoc &);
template std::vector<int64_t> strata::detail::elementsAt<int64_t>(
    const Tensor &, const std::vector<int64_t> &, const SourceLoc &);

namespace {
/// LibTorch's item<T>() is item().to<T>(): a checked conversion that
/// raises "value cannot be converted to type int32_t without overflow".
template <typename T>
T checkedItem(const runtime::Storage &buffer, DType dtype, int64_t i,
              const SourceLoc &loc) {
  if constexpr (std::is_same_v<T, bool>) {
    return elementAs<T>(buffer, dtype, i);
  } else {
    // The element as a Scalar (integers exactly), checked against T's dtype.
    bool integral =
        dtype == DType::I64 || dtype == DType::I32 || dtype == DType::Bool;
    Scalar v = integral ? Scalar(elementAs<int64_t>(buffer, dtype, i))
                        : Scalar(elementAs<double>(buffer, dtype, i));
    bool fits = fitsIn(v, dtypeOfT<T>());
    if (!fits)
      fail(std::string("value cannot be converted to type ") +
               (std::is_same_v<T, int32_t> ? "int32_t"
                : std::is_same_v<T, float> ? "float"
                                           : "int64_t") +
               " without overflow",
           "read it as a wider type, e.g. item<double>()", loc);
    return elementAs<T>(buffer, dtype, i);
  }
}
} // namespace

template <typename T> T Tensor::item(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  if (t.layout.numel() != 1)
    fail("a Tensor with " + std::to_string(t.layout.numel()) +
             " elements cannot be converted to Scalar",
         "reduce it first (sum(), amax()...) or select one element", loc);
  TraceLock lock;
  eval(loc);
  if (t.root->home->device() == runtime::DeviceKind::CUDA) {
    // One element down (synchronizes the stream).
    unsigned char bytes[8] = {0};
    int64_t es = elementSize(t.dtype);
    runtime::StoragePtr one = runtime::Storage::wrapExternal(
        bytes, es, runtime::DeviceKind::CPU, nullptr);
    if (std::string error = runtime::Storage::copy(*one, 0, *t.root->home,
                                                   t.layout.offset * es, es);
        !error.empty())
      fail(error, "", loc);
    return checkedItem<T>(*one, t.dtype, 0, loc);
  }
  return checkedItem<T>(*t.root->home, t.dtype, t.layout.offset, loc);
}

#define STRATA_INSTANTIATE(T)                                                  \
  template T *Tensor::data_ptr<T>(SourceLoc) const;                            \
  template std::vector<T> Tensor::to_vector<T>(SourceLoc) const;               \
  template std::vector<T> Storage::to_vector<T>(SourceLoc) const;              \
  template T Tensor::item<T>(SourceLoc) const;
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(int32_t)
STRATA_INSTANTIATE(int64_t)
STRATA_INSTANTIATE(bool)
#undef STRATA_INSTANTIATE

const char *strata::version() { return STRATA_VERSION_STRING; }
