//===- Print.cpp - PyTorch's tensor repr and explain()
//---------------------===//
#include "Impl.h"

#include <cmath>
#include <cstdio>
#include <sstream>

using namespace strata;
using namespace strata::detail;

namespace {

/// PyTorch's _Formatter: integral floats as "1.", else 4 decimals, or
/// scientific when the magnitudes span too much.
struct Formatter {
  DType dtype;
  bool intMode = true, sciMode = false;
  size_t width = 1;

  Formatter(DType dtype, const std::vector<double> &values) : dtype(dtype) {
    if (isFloatingPoint(dtype)) {
      double maxAbs = 0, minAbs = INFINITY;
      for (double v : values) {
        if (!std::isfinite(v))
          continue;
        if (v != std::floor(v))
          intMode = false;
        double a = std::fabs(v);
        if (a != 0) {
          maxAbs = std::max(maxAbs, a);
          minAbs = std::min(minAbs, a);
        }
      }
      if (minAbs != INFINITY)
        sciMode =
            intMode ? maxAbs > 1e8
                    : (maxAbs / minAbs > 1000 || maxAbs > 1e8 || minAbs < 1e-4);
    }
    for (double v : values)
      width = std::max(width, format(v).size());
  }

  std::string format(double v) const {
    char buf[64];
    switch (dtype) {
    case DType::Bool:
      return v != 0 ? "True" : "False";
    case DType::I32:
    case DType::I64:
      snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
      return buf;
    default:
      break;
    }
    if (std::isnan(v))
      return "nan";
    if (std::isinf(v))
      return v > 0 ? "inf" : "-inf";
    if (sciMode)
      snprintf(buf, sizeof buf, "%.4e", v);
    else if (intMode)
      snprintf(buf, sizeof buf, "%.0f.", v);
    else
      snprintf(buf, sizeof buf, "%.4f", v);
    return buf;
  }
  std::string padded(double v) const {
    std::string s = format(v);
    return std::string(width - std::min(width, s.size()), ' ') + s;
  }
};

struct Printer {
  /// Each element formatted and padded (integers from their exact values).
  const std::vector<std::string> &cells;
  const Shape &sizes;
  bool summarize;
  std::string out;

  /// Elements of dim `d` starting at flat index `base` (row-major).
  void print(size_t d, int64_t base, int64_t stride, int indent) {
    int64_t n = sizes[d];
    int64_t inner = stride / (n ? n : 1);
    out += "[";
    auto item = [&](int64_t i) {
      if (d + 1 == sizes.size())
        out += cells[base + i];
      else
        print(d + 1, base + i * inner, inner, indent + 1);
    };
    std::string sep = d + 1 == sizes.size()
                          ? ", "
                          : "," + std::string(sizes.size() - d - 1, '\n') +
                                std::string(indent + 1, ' ');
    for (int64_t i = 0; i < n; ++i) {
      if (summarize && n > 6 && i == 3) {
        out += "..." + sep;
        i = n - 3;
      }
      if (i)
        out += sep;
      item(i);
    }
    out += "]";
  }
};

} // namespace

std::string Tensor::toString(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  // Integers print from their int64 values: a double would round 2^53 + 1.
  bool integral = t.dtype == DType::I32 || t.dtype == DType::I64;
  std::vector<double> values;
  std::vector<std::string> cells;
  if (integral) {
    for (int64_t v : to_vector<int64_t>(loc))
      cells.push_back(std::to_string(v));
  } else {
    values = to_vector<double>(loc);
  }
  std::string suffix;
  if (t.root->current->device == kDevCUDA)
    suffix += ", device='cuda:0'";
  // PyTorch names every dtype but f32 of an empty tensor (its values cannot
  // tell), and otherwise every dtype but f32, i64 and bool.
  if (t.dtype != DType::F32 &&
      (t.layout.numel() == 0 ||
       (t.dtype != DType::I64 && t.dtype != DType::Bool)))
    suffix += ", dtype=" + strata::toString(t.dtype);
  if (t.requiresGrad)
    suffix += ", requires_grad=True";
  if (t.layout.numel() == 0) {
    std::string size;
    if (t.layout.dim() != 1) {
      size = ", size=(";
      for (size_t i = 0; i < t.layout.sizes.size(); ++i)
        size += (i ? ", " : "") + std::to_string(t.layout.sizes[i]);
      size += t.layout.sizes.size() == 1 ? ",)" : ")";
    }
    return "tensor([]" + size + suffix + ")";
  }
  if (!integral) {
    Formatter fmt(t.dtype, values);
    for (double v : values)
      cells.push_back(fmt.format(v));
  }
  size_t width = 1;
  for (const std::string &c : cells)
    width = std::max(width, c.size());
  if (t.layout.dim() == 0)
    return "tensor(" + cells[0] + suffix + ")";
  for (std::string &c : cells)
    c.insert(0, width - c.size(), ' ');
  Printer p{cells, t.layout.sizes, cells.size() > 1000, ""};
  p.print(0, 0, static_cast<int64_t>(cells.size()), 7);
  return "tensor(" + p.out + suffix + ")";
}

std::ostream &strata::operator<<(std::ostream &os, const Tensor &t) {
  // An operator takes no source location: errors of the evaluation name
  // where the tensor was made, the user's line (never this file).
  // An undefined tensor prints as LibTorch's does.
  if (!t.defined())
    return os << "[ Tensor (undefined) ]";
  return os << t.toString(t.impl()->loc);
}

namespace {
std::string hexPtr(const void *p) {
  char buf[32];
  snprintf(buf, sizeof buf, "%p", p);
  return buf;
}
std::string yes(bool b) { return b ? "yes" : "no"; }
} // namespace

std::string Tensor::explain(SourceLoc loc) const {
  const TensorImpl &t = checked(loc);
  const StorageRoot &root = *t.root;
  int64_t es = elementSize(t.dtype);
  std::ostringstream os;
  bool ready = root.home != nullptr && root.current->buffer != nullptr;
  os << "Tensor of " << strata::toString(t.dtype) << ", made at "
     << formatLoc(t.loc) << "\n";
  os << "  storage:      ";
  if (root.home)
    os << hexPtr(root.home->data()) << ", ";
  else
    os << "not allocated yet (pending), ";
  os << root.numel * es << " bytes = " << root.numel << " elements x " << es
     << " bytes; shared by " << t.root.use_count() << " tensor(s); version "
     << root.version << "\n";
  os << "  data pointer: ";
  if (root.home)
    os << hexPtr(root.home->data() + t.layout.offset * es) << " = ";
  os << "storage + offset " << t.layout.offset << " x " << es << " bytes ("
     << t.layout.offset * es << " bytes)\n";
  os << "  sizes/strides: sizes " << layout::formatList(t.layout.sizes)
     << ", strides " << layout::formatList(t.layout.strides)
     << ", contiguous: " << yes(layout::isContiguous(t.layout)) << "\n";
  os << "  autograd:     requires_grad " << (t.requiresGrad ? "true" : "false")
     << ", leaf " << yes(t.isLeaf) << ", grad_fn none, version " << root.version
     << "\n";
  std::vector<const TensorImpl *> chain;
  for (const TensorImpl *p = &t; p; p = p->base.get())
    chain.push_back(p);
  os << "  view chain:   " << chain.back()->origin << " at "
     << formatLoc(chain.back()->loc);
  for (size_t i = chain.size() - 1; i-- > 0;)
    os << "\n             -> " << chain[i]->viewOp << "("
       << (chain[i]->viewArgs.empty() ? ""
                                      : layout::formatList(chain[i]->viewArgs))
       << ") at " << formatLoc(chain[i]->loc);
  os << "\n  folded:       one strided view (sizes "
     << layout::formatList(t.layout.sizes) << ", strides "
     << layout::formatList(t.layout.strides) << ", offset " << t.layout.offset
     << ") of the " << root.numel << "-element storage\n";
  os << "  cost:         ";
  if (ready)
    os << "none: the storage is computed; this view moved no data";
  else if (root.current->op == Op::Copy)
    os << "a copy (one kernel writing a fresh contiguous storage) when "
          "evaluated";
  else if (root.current->op == Op::Write)
    os << "a kernel writing into the existing storage (in-place op) when "
          "evaluated";
  else
    os << "a kernel (`" << root.current->name
       << "`, fused with the other pending ops it reads) when evaluated";
  os << "\n";
  return os.str();
}
