//===- ProgramBuilder.h - strata IR text for JIT tests ----------*- C++ -*-===//
//
// Builds the text of a func.func of strata ops, computing every result type
// with the layout algebra (as the DSL would), so tests can state programs
// in a few lines.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TESTS_UNIT_JIT_PROGRAMBUILDER_H
#define STRATA_TESTS_UNIT_JIT_PROGRAMBUILDER_H

#include "strata/Layout/LayoutAlgebra.h"

#include <cassert>
#include <string>
#include <vector>

namespace strata::test {

namespace layout = strata::layout;

struct V {
  std::string name;
  layout::Layout l;
  std::string dt;       // f32 f64 i32 i64 i1
  int64_t rootSize = 0; // elements of the storage root
  bool isStorage = false;
};

inline std::string list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

inline std::string typeOf(const V &v) {
  if (v.isStorage)
    return "!strata.storage<" + std::to_string(v.rootSize) + "x" + v.dt + ">";
  std::string shape;
  for (int64_t s : v.l.sizes)
    shape += std::to_string(s) + "x";
  return "!strata.tensor<" + shape + v.dt + ", strided<" + list(v.l.strides) +
         ", offset: " + std::to_string(v.l.offset) + ">>";
}

class Program {
public:
  V arg(std::vector<int64_t> sizes, std::string dt = "f32") {
    layout::Layout l = layout::contiguous(sizes);
    return argLayout(l, dt);
  }
  V argLayout(layout::Layout l, std::string dt = "f32") {
    V v{"%arg" + std::to_string(args.size()), l, dt,
        layout::requiredStorageSize(l)};
    args.push_back(v);
    return v;
  }
  V storageArg(int64_t size, std::string dt = "f32") {
    V v{"%arg" + std::to_string(args.size()),
        layout::contiguous(std::vector<int64_t>{size}), dt, size, true};
    args.push_back(v);
    return v;
  }
  /// A view op whose result layout the caller computed.
  V view(const std::string &op, const V &in, const std::string &attrs,
         const layout::Result<layout::Layout> &out) {
    assert(out.ok());
    V r{fresh(), *out, in.dt, in.rootSize};
    emit(r.name + " = strata." + op + " " + in.name + " " + attrs + " : " +
         typeOf(in) + " -> " + typeOf(r));
    return r;
  }
  V transpose(const V &in, int64_t a, int64_t b) {
    return view("transpose", in,
                "dims " + std::to_string(a) + ", " + std::to_string(b),
                layout::transpose(in.l, a, b));
  }
  V slice(const V &in, int64_t dim, int64_t start, int64_t end, int64_t step) {
    return view("slice", in,
                "dim " + std::to_string(dim) + " start " +
                    std::to_string(start) + " end " + std::to_string(end) +
                    " step " + std::to_string(step),
                layout::slice(in.l, dim, start, end, step));
  }
  V flip(const V &in, std::vector<int64_t> dims) {
    return view("flip", in, "dims " + list(dims), layout::flip(in.l, dims));
  }
  V expand(const V &in, std::vector<int64_t> shape) {
    return view("expand", in, "to " + list(shape), layout::expand(in.l, shape));
  }
  V select(const V &in, int64_t dim, int64_t index) {
    return view("select", in,
                "dim " + std::to_string(dim) + " index " +
                    std::to_string(index),
                layout::select(in.l, dim, index));
  }
  V unsqueeze(const V &in, int64_t dim) {
    return view("unsqueeze", in, "dim " + std::to_string(dim),
                layout::unsqueeze(in.l, dim));
  }
  V permute(const V &in, std::vector<int64_t> dims) {
    return view("permute", in, "dims " + list(dims),
                layout::permute(in.l, dims));
  }
  V viewAs(const V &in, std::vector<int64_t> shape) {
    return view("view", in, "as " + list(shape), layout::view(in.l, shape));
  }
  /// A view of a storage value.
  V stridedView(const V &in, layout::Layout l) {
    V r{fresh(), l, in.dt, in.rootSize};
    emit(r.name + " = strata.strided_view " + in.name + " : " + typeOf(in) +
         " -> " + typeOf(r));
    return r;
  }
  /// A compute op; its result is laid out as the layout algebra says
  /// (`result`, else row-major).
  V compute(const std::string &op, std::vector<V> ins,
            std::vector<int64_t> shape, std::string dt,
            const std::string &attrs = "",
            const layout::Layout *result = nullptr) {
    V r{fresh(), result ? *result : layout::contiguous(shape), dt, 0};
    r.rootSize = layout::requiredStorageSize(r.l);
    std::string names, types;
    for (size_t i = 0; i < ins.size(); ++i) {
      names += (i ? ", " : "") + ins[i].name;
      types += (i ? ", " : "") + typeOf(ins[i]);
    }
    emit(r.name + " = strata." + op + " " + names + attrs + " : " + types +
         " -> " + typeOf(r));
    return r;
  }
  /// An elementwise op: TensorIterator's layout of the result.
  V elementwise(const std::string &op, std::vector<V> ins,
                std::vector<int64_t> shape, std::string dt) {
    std::vector<layout::Layout> ls;
    for (const V &v : ins)
      ls.push_back(v.l);
    layout::Layout l = layout::elementwiseResult(ls, shape);
    return compute(op, ins, shape, dt, "", &l);
  }
  V unary(const std::string &op, const V &in) {
    return elementwise(op, {in}, in.l.sizes, in.dt);
  }
  V binary(const std::string &op, const V &a, const V &b) {
    auto shape = layout::broadcastShapes(a.l.sizes, b.l.sizes, op.c_str());
    assert(shape.ok());
    bool cmp = op == "eq" || op == "ne" || op == "lt" || op == "le" ||
               op == "gt" || op == "ge";
    return elementwise(op, {a, b}, *shape, cmp ? "i1" : a.dt);
  }
  V where(const V &c, const V &a, const V &b) {
    auto s1 = layout::broadcastShapes(c.l.sizes, a.l.sizes, "where");
    auto s2 = layout::broadcastShapes(*s1, b.l.sizes, "where");
    return elementwise("where", {c, a, b}, *s2, a.dt);
  }
  V cast(const V &in, const std::string &dt) {
    layout::Layout l = layout::preserveFormat(in.l);
    return compute("cast", {in}, in.l.sizes, dt, "", &l);
  }
  V copy(const V &in) {
    layout::Layout l = layout::preserveFormat(in.l);
    return compute("copy", {in}, in.l.sizes, in.dt, "", &l);
  }
  V contiguous(const V &in) {
    if (layout::isContiguous(in.l)) {
      V r{fresh(), in.l, in.dt, in.rootSize};
      emit(r.name + " = strata.contiguous " + in.name + " : " + typeOf(in) +
           " -> " + typeOf(r));
      return r;
    }
    return compute("contiguous", {in}, in.l.sizes, in.dt);
  }
  V reduce(const std::string &op, const V &in, std::vector<int64_t> dims,
           bool keepdim = false) {
    auto shape = layout::reduceShape(in.l.sizes, dims, keepdim, op.c_str());
    assert(shape.ok());
    std::string dt = in.dt;
    if (op == "sum" && dt != "f32" && dt != "f64")
      dt = "i64";
    return compute(op, {in}, *shape, dt,
                   " dims " + list(dims) + (keepdim ? " keepdim" : ""));
  }
  V matmul(const V &a, const V &b, std::vector<int64_t> shape) {
    return compute("matmul", {a, b}, shape, a.dt);
  }
  V fill(double value, std::vector<int64_t> shape, const std::string &dt) {
    V r{fresh(), layout::contiguous(shape), dt, 0};
    r.rootSize = layout::requiredStorageSize(r.l);
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", value);
    std::string text = buf;
    if (text.find_first_of(".en") == std::string::npos)
      text += ".0";
    emit(r.name + " = strata.fill " + text + " : " + typeOf(r));
    return r;
  }
  V scalar(double value, const std::string &dt = "f32") {
    return fill(value, {}, dt);
  }
  V arange(double start, double step, int64_t n, const std::string &dt) {
    V r{fresh(), layout::contiguous(std::vector<int64_t>{n}), dt, n};
    emit(r.name + " = strata.arange start " + std::to_string(start) + " step " +
         std::to_string(step) + " : " + typeOf(r));
    return r;
  }
  /// dest.copy_(src): the new version of dest's root.
  V write(const V &src, const V &dest) {
    V r{fresh(), layout::contiguous(std::vector<int64_t>{dest.rootSize}),
        dest.dt, dest.rootSize, true};
    emit(r.name + " = strata.write " + src.name + " into " + dest.name + " : " +
         typeOf(src) + ", " + typeOf(dest) + " -> " + typeOf(r));
    return r;
  }

  std::string text(const std::vector<V> &results,
                   const std::string &name = "main") const {
    std::string s = "func.func @" + name + "(";
    for (size_t i = 0; i < args.size(); ++i)
      s += (i ? ", " : "") + args[i].name + ": " + typeOf(args[i]);
    s += ") -> (";
    for (size_t i = 0; i < results.size(); ++i)
      s += (i ? ", " : "") + typeOf(results[i]);
    s += ") {\n" + body + "  return ";
    for (size_t i = 0; i < results.size(); ++i)
      s += (i ? ", " : "") + results[i].name;
    s += " : ";
    for (size_t i = 0; i < results.size(); ++i)
      s += (i ? ", " : "") + typeOf(results[i]);
    return s + "\n}\n";
  }

  std::vector<V> args;

private:
  std::string fresh() { return "%v" + std::to_string(counter++); }
  void emit(const std::string &line) { body += "  " + line + "\n"; }
  std::string body;
  int counter = 0;
};

} // namespace strata::test

#endif // STRATA_TESTS_UNIT_JIT_PROGRAMBUILDER_H
