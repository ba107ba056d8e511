//===- Dot.cpp - the recorded trace as a Graphviz digraph -----------------===//
//
// The trace: walks from the tensors' current versions back to materialized
// storages (Impl.h's Nodes). Every edge carries the folded layout the
// consumer reads through, so a chain of views is one labelled edge, the same
// triple strata.strided_view gets after --strata-fold-views. Deterministic:
// ids follow a depth-first walk in input order.
// The autograd graph: one node per grad_fn, as AutogradWriter says.
//
//===----------------------------------------------------------------------===//
#include "strata/Autograd.h"
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

/// The autograd graph: one node per grad_fn (its PyTorch name, the user's
/// line that recorded it, the sizes it saved for backward; AccumulateGrad
/// names its leaf), plain edges from each grad_fn to its next functions.
/// Iterative: a graph of 10^6 nodes does not deepen the stack.
class AutogradWriter {
public:
  explicit AutogradWriter(std::ostringstream &os) : os_(os) {}

  std::string visit(const GradFnPtr &root) {
    if (auto it = ids_.find(root->id()); it != ids_.end())
      return it->second;
    std::string rootId = declare(*root);
    std::vector<GradFnPtr> stack{root};
    while (!stack.empty()) {
      GradFnPtr f = std::move(stack.back());
      stack.pop_back();
      const std::string from = ids_.at(f->id());
      for (const GradFnPtr &next : f->next_functions()) {
        if (!next)
          continue;
        auto it = ids_.find(next->id());
        std::string to;
        if (it != ids_.end()) {
          to = it->second;
        } else {
          to = declare(*next);
          stack.push_back(next);
        }
        edges_ += "  " + from + " -> " + to + ";\n";
      }
    }
    return rootId;
  }

  /// Edges after all nodes: the text reads nodes first.
  std::string edges() const { return edges_; }

private:
  std::string declare(const GradFn &f) {
    std::string id = "g" + std::to_string(ids_.size());
    ids_.emplace(f.id(), id);
    std::string label = f.name();
    bool leaf = f.name() == "AccumulateGrad";
    if (leaf) {
      Tensor v = f.variable();
      if (v.defined()) {
        const TensorImpl &t = *v.impl();
        label += "\\nleaf " + list(t.layout.sizes) + " " + irType(t.dtype);
        std::string where = shortLoc(t.loc);
        if (!where.empty())
          label += "\\n" + escape(where);
      }
    } else {
      std::string where = f.where();
      size_t slash = where.find_last_of('/');
      if (slash != std::string::npos)
        where = where.substr(slash + 1);
      if (!where.empty())
        label += "\\n" + escape(where);
      std::vector<Shape> saved = f.saved_sizes();
      if (!saved.empty()) {
        label += "\\nsaved:";
        for (const Shape &s : saved)
          label += " " + list(s);
      }
    }
    os_ << "  " << id << " [label=\"" << label << "\""
        << (leaf ? ", style=filled, fillcolor=lightblue" : "") << "];\n";
    return id;
  }

  std::ostringstream &os_;
  std::map<const void *, std::string> ids_;
  std::string edges_;
};

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
  if (kind == GraphKind::Autograd) {
    std::ostringstream os;
    os << "digraph autograd {\n  rankdir=BT;\n  node [fontname=\"monospace\", "
          "fontsize=10, shape=box];\n";
    AutogradWriter writer(os);
    std::string outputs;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TensorImpl &t = implOf(tensors[i], loc);
      GradFnPtr f = tensors[i].grad_fn(loc);
      if (!f && requiresGradOf(t) && isLeafOf(t)) // a leaf: its AccumulateGrad
        f = std::make_shared<GradFn>(nullptr, tensors[i].impl());
      if (!f)
        continue;
      os << "  out" << i << " [label=\"tensor " << i << "\\n"
         << list(t.layout.sizes) << " " << irType(t.dtype)
         << "\", shape=ellipse];\n";
      outputs += "  out" + std::to_string(i) + " -> " + writer.visit(f) + ";\n";
    }
    os << writer.edges() << outputs << "}\n";
    return os.str();
  }
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
