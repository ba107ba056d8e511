//===- Dot.cpp - the recorded trace as a Graphviz digraph -----------------===//
//
// Walks the trace from the tensors' current versions back to materialized
// storages (Impl.h's Nodes). Every edge carries the folded layout the
// consumer reads through, so a chain of views is one labelled edge, the same
// triple strata.strided_view gets after --strata-fold-views. Deterministic:
// ids follow a depth-first walk in input order.
//
//===----------------------------------------------------------------------===//
#include "strata/Graph.h"

#include "Impl.h"

#include <fstream>
#include <map>
#include <sstream>

using namespace strata;
using namespace strata::detail;

namespace {
std::string list(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

std::string layoutLabel(const layout::Layout &l) {
  return list(l.sizes) + " strides " + list(l.strides) + " offset " +
         std::to_string(l.offset);
}

std::string escape(const std::string &s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\')
      r += '\\';
    r += c;
  }
  return r;
}

std::string shortLoc(const SourceLoc &loc) {
  std::string file = loc.file_name() ? loc.file_name() : "";
  size_t slash = file.find_last_of('/');
  if (slash != std::string::npos)
    file = file.substr(slash + 1);
  return file.empty() ? "" : file + ":" + std::to_string(loc.line());
}

const char *kindName(const Node &n) {
  if (n.name && *n.name)
    return n.name;
  switch (n.op) {
  case Op::Leaf:
    return "storage";
  case Op::Write:
    return "write";
  case Op::Fill:
    return "fill";
  case Op::Arange:
    return "arange";
  case Op::Copy:
    return "copy";
  default:
    return "op";
  }
}

class TraceWriter {
public:
  explicit TraceWriter(std::ostringstream &os) : os_(os) {}

  /// The id of `n`, emitting it and everything it reads first.
  std::string visit(const Node &n) {
    auto it = ids_.find(&n);
    if (it != ids_.end())
      return it->second;
    std::vector<std::string> inputs;
    for (const Operand &in : n.inputs)
      inputs.push_back(visit(*in.node));
    std::string id = "n" + std::to_string(ids_.size());
    ids_[&n] = id;
    std::string label = std::string(kindName(n)) + " : " + irType(n.dtype);
    if (n.isStorageValue())
      label += "\\nstorage of " + std::to_string(n.rootNumel);
    else
      label += "\\n" + list(n.sizes);
    std::string where = shortLoc(n.loc);
    if (!where.empty())
      label += "\\n" + escape(where);
    bool done = n.buffer != nullptr;
    os_ << "  " << id << " [label=\"" << label
        << "\", shape=" << (n.isStorageValue() ? "cylinder" : "box")
        << (done ? ", style=filled, fillcolor=lightgrey" : "") << "];\n";
    for (size_t i = 0; i < n.inputs.size(); ++i)
      os_ << "  " << inputs[i] << " -> " << id << " [label=\""
          << layoutLabel(n.inputs[i].layout) << "\"];\n";
    return id;
  }

private:
  std::ostringstream &os_;
  std::map<const Node *, std::string> ids_;
};
} // namespace

std::string strata::to_dot(const std::vector<Tensor> &tensors, GraphKind kind,
                           SourceLoc loc) {
  if (kind == GraphKind::Autograd)
    return detail::autogradDot(tensors);
  std::ostringstream os;
  os << "digraph strata {\n  rankdir=TB;\n  node [fontname=\"monospace\", "
        "fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n";
  TraceWriter writer(os);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorImpl &t = implOf(tensors[i], loc);
    std::string from = writer.visit(*t.root->current);
    std::string label = "tensor " + std::to_string(i) + " : " +
                        irType(t.dtype) + "\\n" + layoutLabel(t.layout);
    if (t.viewOp)
      label += std::string("\\nlast view: ") + t.viewOp;
    os << "  t" << i << " [label=\"" << label
       << "\", shape=ellipse, color=blue];\n";
    os << "  " << from << " -> t" << i << " [style=dashed];\n";
  }
  os << "}\n";
  return os.str();
}

void strata::save_dot(const std::vector<Tensor> &tensors,
                      const std::string &path, GraphKind kind, SourceLoc loc) {
  std::string text = to_dot(tensors, kind, loc);
  std::ofstream out(path);
  if (!out || !(out << text) || !out.flush())
    fail("save_dot: cannot write '" + path + "'",
         "check that the directory exists and is writable", loc);
}
