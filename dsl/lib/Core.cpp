//===- Core.cpp - errors, option types, tensor handles and metadata
//--------===//
#include "Impl.h"

#include <cstring>
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

int64_t strata::elementSize(DType t) {
  switch (t) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::Bool:
    return 1;
  }
  return 1;
}

std::string strata::toString(DType t) {
  switch (t) {
  case DType::F32:
    return "torch.float32";
  case DType::F64:
    return "torch.float64";
  case DType::I32:
    return "torch.int32";
  case DType::I64:
    return "torch.int64";
  case DType::Bool:
    return "torch.bool";
  }
  return "?";
}

bool strata::isFloatingPoint(DType t) {
  return t == DType::F32 || t == DType::F64;
}

const char *strata::detail::irType(DType t) {
  static const char *names[] = {"f32", "f64", "i32", "i64", "i1"};
  return names[static_cast<int>(t)];
}

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

void *Storage::data_ptr() const { return buffer_ ? buffer_->data() : nullptr; }
int64_t Storage::nbytes() const {
  return buffer_ ? static_cast<int64_t>(buffer_->nbytes()) : 0;
}
int64_t Storage::size() const { return nbytes() / elementSize_; }
Device Storage::device() const { return Device::cpu(); }
long Storage::use_count() const { return buffer_.use_count(); }

//===--- Shared helpers ---------------------------------------------------===//

const TensorImpl &strata::detail::implOf(const Tensor &t,
                                         const SourceLoc &loc) {
  if (!t.defined())
    fail("undefined tensor", "construct it with a factory (zeros, arange...)",
         loc);
  return *t.impl();
}

Operand strata::detail::operandOf(const TensorImpl &t) {
  return Operand{t.root->current, t.layout};
}

namespace {
/// Registers `node` as a reader of every root it reads.
void registerReader(const NodePtr &node) {
  for (const Operand &in : node->inputs) {
    auto root = in.node->root.lock();
    if (!root)
      continue;
    auto &readers = root->readers;
    if (readers.size() >= 32) { // prune dead and evaluated readers
      std::erase_if(readers, [](const std::weak_ptr<Node> &w) {
        auto n = w.lock();
        return !n || n->buffer;
      });
    }
    if (readers.empty() || readers.back().lock() != node)
      readers.push_back(node);
  }
}
} // namespace

Tensor strata::detail::makeResult(NodePtr node, const SourceLoc &loc,
                                  bool requiresGrad) {
  auto root = std::make_shared<StorageRoot>();
  root->dtype = node->dtype;
  root->numel = layout::contiguous(node->sizes).numel();
  node->rootNumel = root->numel;
  node->root = root;
  node->loc = loc;
  requiresGrad = requiresGrad && gradEnabled();
  if (requiresGrad)
    recordGradNode(*node);
  registerReader(node);
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = node->dtype;
  impl->layout = layout::contiguous(node->sizes);
  impl->origin = node->name;
  impl->loc = loc;
  impl->requiresGrad = requiresGrad;
  impl->isLeaf = !requiresGrad;
  root->current = std::move(node);
  impl->root = std::move(root);
  return Tensor(std::move(impl));
}

runtime::StoragePtr strata::detail::allocate(int64_t nbytes,
                                             const SourceLoc &loc) {
  std::string error;
  auto s = runtime::Storage::tryCreate(static_cast<size_t>(nbytes), error);
  if (!s)
    fail(error, "", loc);
  return s;
}

Tensor strata::detail::makeLeaf(runtime::StoragePtr buffer, DType dtype,
                                const Shape &sizes,
                                const TensorOptions &options,
                                const char *origin, const SourceLoc &loc) {
  if (options.device().is_cuda())
    fail("no CUDA device/support yet: cannot create a tensor on " +
             options.device().str(),
         "create it on the CPU (the default device)", loc);
  auto root = std::make_shared<StorageRoot>();
  root->dtype = dtype;
  root->numel = layout::contiguous(sizes).numel();
  auto node = std::make_shared<Node>();
  node->op = Op::Leaf;
  node->dtype = dtype;
  node->rootNumel = root->numel;
  node->buffer = buffer;
  node->root = root;
  node->loc = loc;
  root->current = node;
  root->homeSeq = node->seq;
  root->home = std::move(buffer);
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = dtype;
  impl->layout = layout::contiguous(sizes);
  impl->root = std::move(root);
  impl->requiresGrad = options.requires_grad();
  impl->origin = origin;
  impl->loc = loc;
  return Tensor(std::move(impl));
}

double strata::detail::loadElement(const runtime::Storage &buffer, DType dtype,
                                   int64_t i) {
  const unsigned char *p = buffer.data() + i * elementSize(dtype);
  switch (dtype) {
  case DType::F32: {
    float v;
    memcpy(&v, p, 4);
    return v;
  }
  case DType::F64: {
    double v;
    memcpy(&v, p, 8);
    return v;
  }
  case DType::I32: {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  case DType::Bool:
    return *p ? 1 : 0;
  }
  return 0;
}

//===--- Metadata ---------------------------------------------------------===//

const TensorImpl &Tensor::checked() const {
  return implOf(*this, SourceLoc::current());
}
const Shape &Tensor::sizes() const { return checked().layout.sizes; }
const Shape &Tensor::strides() const { return checked().layout.strides; }
int64_t Tensor::size(int64_t d, SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  return t.layout.sizes[check(layout::wrapDim(d, t.layout.dim(), "size"), loc)];
}
int64_t Tensor::stride(int64_t d, SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  return t.layout
      .strides[check(layout::wrapDim(d, t.layout.dim(), "stride"), loc)];
}
int64_t Tensor::storage_offset() const { return checked().layout.offset; }
int64_t Tensor::dim() const { return checked().layout.dim(); }
int64_t Tensor::numel() const { return checked().layout.numel(); }
DType Tensor::dtype() const { return checked().dtype; }
Device Tensor::device() const { return Device::cpu(); }
TensorOptions Tensor::options() const {
  return TensorOptions(dtype()).requires_grad(requires_grad());
}
bool Tensor::is_contiguous() const {
  return layout::isContiguous(checked().layout);
}
int64_t Tensor::element_size() const { return elementSize(dtype()); }
bool Tensor::requires_grad() const { return checked().requiresGrad; }
bool Tensor::is_leaf() const { return checked().isLeaf; }
int64_t Tensor::_version() const { return checked().root->version; }
bool Tensor::is_materialized() const {
  return checked().root->current->buffer != nullptr;
}
Tensor &Tensor::requires_grad_(bool r, SourceLoc loc) {
  TensorImpl &t = const_cast<TensorImpl &>(implOf(*this, loc));
  if (!t.isLeaf)
    fail("you can only change requires_grad flags of leaf variables.",
         "use detach() to get a leaf that shares the storage", loc);
  if (r && !isFloatingPoint(t.dtype))
    fail("only Tensors of floating point dtype can require gradients",
         "convert with .to(strata::kFloat32) first", loc);
  t.requiresGrad = r;
  return *this;
}

//===--- Storage and data pointer -----------------------------------------===//

Storage Tensor::storage(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  eval(loc);
  return Storage(t.root->home, elementSize(t.dtype));
}

void *Tensor::data_ptr(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  eval(loc);
  if (!t.root->home || !t.root->home->data())
    return nullptr;
  return t.root->home->data() + t.layout.offset * elementSize(t.dtype);
}

const Tensor &Tensor::eval(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
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
  eval(loc);
  std::vector<T> out;
  if (t.layout.numel() == 0)
    return out;
  out.reserve(t.layout.numel());
  for (int64_t i : layout::storageIndices(t.layout)) {
    double v = loadElement(*t.root->home, t.dtype, i);
    if constexpr (std::is_same_v<T, bool>)
      out.push_back(v != 0);
    else
      out.push_back(static_cast<T>(v));
  }
  return out;
}

template <typename T> T Tensor::item(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  if (t.layout.numel() != 1)
    fail("a Tensor with " + std::to_string(t.layout.numel()) +
             " elements cannot be converted to Scalar",
         "reduce it first (sum(), amax()...) or select one element", loc);
  eval(loc);
  double v = loadElement(*t.root->home, t.dtype, t.layout.offset);
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else
    return static_cast<T>(v);
}

#define STRATA_INSTANTIATE(T)                                                  \
  template T *Tensor::data_ptr<T>(SourceLoc) const;                            \
  template std::vector<T> Tensor::to_vector<T>(SourceLoc) const;               \
  template T Tensor::item<T>(SourceLoc) const;
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(int32_t)
STRATA_INSTANTIATE(int64_t)
STRATA_INSTANTIATE(bool)
#undef STRATA_INSTANTIATE

const char *strata::version() { return STRATA_VERSION_STRING; }
