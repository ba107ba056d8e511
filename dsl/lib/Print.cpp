//===- Print.cpp - PyTorch's tensor repr and explain() --------------------===//
//
// toString() is a port of PyTorch 1.13's torch/_tensor_str.py with the
// default print options (precision 4, threshold 1000, edgeitems 3,
// linewidth 80): the formatter's int/sci modes and width come from the
// nonzero finite values of the (summarized) data, rows break at 80 columns,
// and the suffixes (device, dtype, grad_fn / requires_grad) wrap as
// _add_suffixes wraps them. tests/unit/dsl/PrintTest.cpp compares it byte
// for byte with PyTorch's output (scripts/gen_print_golden.py).
//
//===----------------------------------------------------------------------===//
#include "Impl.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

using namespace strata;
using namespace strata::detail;

namespace {

constexpr int64_t kThreshold = 1000, kEdgeItems = 3, kLineWidth = 80;
constexpr int kPrecision = 4;

/// The printed elements of a tensor, as PyTorch's tolist() gives them:
/// doubles for floating dtypes, exact int64 otherwise, for the ascending
/// row-major flat indices `at` (all, or a summary's edge items).
struct Values {
  bool floating;
  std::vector<int64_t> at;
  std::vector<double> f;
  std::vector<int64_t> i;
  size_t pos(int64_t k) const {
    return std::lower_bound(at.begin(), at.end(), k) - at.begin();
  }
  double real(int64_t k) const { return f[pos(k)]; }
  int64_t integer(int64_t k) const { return i[pos(k)]; }
};

/// Python's "{:.Nf}" / "{:.Ne}" of a double (nan never signed, as Python).
std::string pyFormat(double v, char conv, int precision) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[512];
  char spec[16];
  snprintf(spec, sizeof spec, "%%.%d%c", precision, conv);
  snprintf(buf, sizeof buf, spec, v);
  return buf;
}

/// PyTorch's _Formatter over the flat element indices `shown`.
class Formatter {
public:
  Formatter(DType dtype, const Values &values,
            const std::vector<int64_t> &shown)
      : dtype_(dtype), values_(values) {
    if (!values.floating) {
      for (int64_t k : shown)
        maxWidth_ = std::max(maxWidth_, plain(k).size());
      return;
    }
    std::vector<double> finite;
    for (int64_t k : shown) {
      double v = values.real(k);
      if (std::isfinite(v) && v != 0)
        finite.push_back(v);
    }
    if (finite.empty())
      return;
    double maxAbs = 0, minAbs = INFINITY;
    for (double v : finite) {
      maxAbs = std::max(maxAbs, std::fabs(v));
      minAbs = std::min(minAbs, std::fabs(v));
      if (v != std::ceil(v))
        intMode_ = false;
    }
    if (intMode_) {
      sciMode_ = maxAbs / minAbs > 1000.0 || maxAbs > 1.0e8;
      for (double v : finite)
        maxWidth_ =
            std::max(maxWidth_, sciMode_ ? pyFormat(v, 'e', kPrecision).size()
                                         : pyFormat(v, 'f', 0).size() + 1);
    } else {
      sciMode_ = maxAbs / minAbs > 1000.0 || maxAbs > 1.0e8 || minAbs < 1.0e-4;
      for (double v : finite)
        maxWidth_ = std::max(
            maxWidth_, pyFormat(v, sciMode_ ? 'e' : 'f', kPrecision).size());
    }
  }

  size_t width() const { return maxWidth_; }

  /// Element `k` padded on the left to the width (never cut).
  std::string format(int64_t k) const {
    std::string r;
    if (!values_.floating) {
      r = plain(k);
    } else {
      double v = values_.real(k);
      if (sciMode_)
        r = pyFormat(v, 'e', kPrecision);
      else if (intMode_) {
        r = pyFormat(v, 'f', 0);
        if (std::isfinite(v))
          r += ".";
      } else
        r = pyFormat(v, 'f', kPrecision);
    }
    if (r.size() < maxWidth_)
      r.insert(0, maxWidth_ - r.size(), ' ');
    return r;
  }

private:
  std::string plain(int64_t k) const {
    if (dtype_ == DType::Bool)
      return values_.integer(k) ? "True" : "False";
    return std::to_string(values_.integer(k));
  }

  DType dtype_;
  const Values &values_;
  bool intMode_ = true, sciMode_ = false;
  size_t maxWidth_ = 1;
};

/// _tensor_str_with_formatter and get_summarized_data over a row-major
/// element list.
class Printer {
public:
  Printer(const Shape &sizes, bool summarize)
      : sizes_(sizes), summarize_(summarize) {
    strides_.assign(sizes.size(), 1);
    for (size_t d = sizes.size(); d-- > 1;)
      strides_[d - 1] = strides_[d] * sizes[d];
  }

  /// The flat indices of the elements printed (get_summarized_data).
  void shown(size_t d, int64_t base, std::vector<int64_t> &out) const {
    if (d == sizes_.size()) {
      out.push_back(base);
      return;
    }
    for (int64_t i : rows(d))
      shown(d + 1, base + i * strides_[d], out);
  }

  std::string print(const Formatter &fmt, size_t d, int64_t base,
                    int64_t indent) const {
    if (d == sizes_.size())
      return fmt.format(base);
    std::vector<int64_t> idx = rows(d);
    bool cut = static_cast<int64_t>(idx.size()) < sizes_[d];
    if (d + 1 == sizes_.size())
      return vector(fmt, base, idx, cut, indent);
    std::string sep = "," + std::string(sizes_.size() - d - 1, '\n') +
                      std::string(indent + 1, ' ');
    std::string out = "[";
    for (size_t j = 0; j < idx.size(); ++j) {
      if (j)
        out += sep;
      if (cut && j == static_cast<size_t>(kEdgeItems))
        out += "..." + sep;
      out += print(fmt, d + 1, base + idx[j] * strides_[d], indent + 1);
    }
    return out + "]";
  }

private:
  /// The rows of dim `d` printed: all, or the edge items when summarizing.
  std::vector<int64_t> rows(size_t d) const {
    std::vector<int64_t> r;
    int64_t n = sizes_[d];
    if (summarize_ && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i)
        r.push_back(i);
      for (int64_t i = n - kEdgeItems; i < n; ++i)
        r.push_back(i);
    } else {
      for (int64_t i = 0; i < n; ++i)
        r.push_back(i);
    }
    return r;
  }

  /// _vector_str: as many elements per line as fit in the line width.
  std::string vector(const Formatter &fmt, int64_t base,
                     const std::vector<int64_t> &idx, bool cut,
                     int64_t indent) const {
    int64_t elementLength = static_cast<int64_t>(fmt.width()) + 2;
    int64_t perLine =
        std::max<int64_t>(1, (kLineWidth - indent) / elementLength);
    std::vector<std::string> data;
    for (size_t j = 0; j < idx.size(); ++j) {
      if (cut && j == static_cast<size_t>(kEdgeItems))
        data.push_back(" ...");
      data.push_back(fmt.format(base + idx[j] * strides_.back()));
    }
    std::string out = "[";
    for (size_t j = 0; j < data.size(); ++j) {
      if (j)
        out += j % perLine ? ", " : ",\n" + std::string(indent + 1, ' ');
      out += data[j];
    }
    return out + "]";
  }

  const Shape &sizes_;
  std::vector<int64_t> strides_;
  bool summarize_;
};

/// _add_suffixes: ", suffix" while the last line stays within the width.
std::string addSuffixes(std::string text,
                        const std::vector<std::string> &suffixes,
                        int64_t indent) {
  size_t nl = text.rfind('\n');
  int64_t lastLine = static_cast<int64_t>(text.size()) -
                     (nl == std::string::npos ? -1 : static_cast<int64_t>(nl)) +
                     1;
  for (const std::string &s : suffixes) {
    int64_t len = static_cast<int64_t>(s.size());
    if (lastLine + len + 2 > kLineWidth) {
      text += ",\n" + std::string(indent, ' ') + s;
      lastLine = indent + len;
    } else {
      text += ", " + s;
      lastLine += len + 2;
    }
  }
  return text + ")";
}

} // namespace

std::string Tensor::toString(SourceLoc loc) const {
  const TensorImpl &t = implOf(*this, loc);
  const std::string prefix = "tensor(";
  const int64_t indent = static_cast<int64_t>(prefix.size());
  int64_t numel = t.layout.numel();
  std::vector<std::string> suffixes;
  if (t.root->current->device == kDevCUDA)
    suffixes.push_back("device='cuda:0'");
  std::string body;
  if (numel == 0) {
    // As NumPy: the shape unless it is (0,); the dtype unless float32.
    if (t.layout.dim() != 1) {
      std::string size = "size=(";
      for (size_t i = 0; i < t.layout.sizes.size(); ++i)
        size += (i ? ", " : "") + std::to_string(t.layout.sizes[i]);
      suffixes.push_back(size + (t.layout.sizes.size() == 1 ? ",)" : ")"));
    }
    if (t.dtype != DType::F32)
      suffixes.push_back("dtype=" + strata::toString(t.dtype));
    body = "[]";
  } else {
    if (t.dtype != DType::F32 && t.dtype != DType::I64 &&
        t.dtype != DType::Bool)
      suffixes.push_back("dtype=" + strata::toString(t.dtype));
    Printer printer(t.layout.sizes, numel > kThreshold);
    std::vector<int64_t> shown;
    printer.shown(0, 0, shown);
    // Only the printed elements are read (a summary of 3e9 reads 36 of
    // them). Integers print from their int64 values: a double would round
    // 2^53 + 1.
    Values values{isFloatingPoint(t.dtype), shown, {}, {}};
    if (values.floating)
      values.f = elementsAt<double>(*this, shown, loc);
    else
      values.i = elementsAt<int64_t>(*this, shown, loc);
    Formatter fmt(t.dtype, values, shown);
    body = printer.print(fmt, 0, 0, indent);
  }
  if (GradFnPtr f = grad_fn(loc))
    suffixes.push_back("grad_fn=<" + f->name() + ">");
  else if (requiresGradOf(t))
    suffixes.push_back("requires_grad=True");
  return addSuffixes(prefix + body, suffixes, indent);
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
  // grad_fn as PyTorch's: none for a leaf (its gradient accumulates).
  std::string gradFn = "none";
  if (GradFnPtr f = grad_fn(loc))
    gradFn = f->name() + (f->where().empty() ? "" : " (" + f->where() + ")");
  else if (requiresGradOf(t) && isLeafOf(t))
    gradFn = "none (a leaf: backward accumulates into .grad())";
  os << "  autograd:     requires_grad "
     << (requiresGradOf(t) ? "true" : "false") << ", leaf " << yes(isLeafOf(t))
     << ", grad_fn " << gradFn << ", version " << root.version << "\n";
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
