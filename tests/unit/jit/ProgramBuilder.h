//===- ProgramBuilder.h - strata programs for JIT tests ---------*- C++ -*-===//
//
// Builds a func.func of strata ops on the project's builder
// (strata/IR/ProgramBuilder.h), computing every result type with the layout
// algebra (as the DSL does), so tests can state programs in a few lines.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TESTS_UNIT_JIT_PROGRAMBUILDER_H
#define STRATA_TESTS_UNIT_JIT_PROGRAMBUILDER_H

#include "strata/IR/ProgramBuilder.h"
#include "strata/Layout/LayoutAlgebra.h"

#include <cassert>
#include <string>
#include <vector>

namespace strata::test {

namespace layout = strata::layout;

struct V {
  ir::Program::Value id = -1;
  layout::Layout l;
  std::string dt;       // f32 f64 i32 i64 i1
  int64_t rootSize = 0; // elements of the storage root
  bool isStorage = false;
};

inline ir::Element element(const std::string &dt) {
  ir::Element e = ir::Element::F32;
  bool known = runtime::dtypeOfIr(dt, e);
  assert(known && "unknown element type");
  (void)known;
  return e;
}

inline ir::ValueType typeOf(const V &v) {
  if (v.isStorage)
    return ir::ValueType::storageOf(v.rootSize, element(v.dt));
  return ir::ValueType::tensor(v.l, element(v.dt));
}

/// A test's program, on the project's one builder (strata/IR/ProgramBuilder.h).
class Program {
public:
  V arg(std::vector<int64_t> sizes, std::string dt = "f32") {
    layout::Layout l = layout::contiguous(sizes);
    return argLayout(l, dt);
  }
  V argLayout(layout::Layout l, std::string dt = "f32") {
    V v{-1, l, dt, layout::requiredStorageSize(l)};
    v.id = p.argument(typeOf(v));
    args.push_back(v);
    return v;
  }
  V storageArg(int64_t size, std::string dt = "f32") {
    V v{-1, layout::contiguous(std::vector<int64_t>{size}), dt, size, true};
    v.id = p.argument(typeOf(v));
    args.push_back(v);
    return v;
  }
  /// A view op whose result layout the caller computed.
  V view(const std::string &op, const V &in, std::vector<ir::Attribute> attrs,
         const layout::Result<layout::Layout> &out) {
    assert(out.ok());
    V r{-1, *out, in.dt, in.rootSize};
    r.id = p.op(ir::internName(op), {in.id}, typeOf(r), std::move(attrs));
    return r;
  }
  V transpose(const V &in, int64_t a, int64_t b) {
    return view("transpose", in,
                {ir::Attribute::i64("dim0", a), ir::Attribute::i64("dim1", b)},
                layout::transpose(in.l, a, b));
  }
  V slice(const V &in, int64_t dim, int64_t start, int64_t end, int64_t step) {
    return view(
        "slice", in,
        {ir::Attribute::i64("dim", dim), ir::Attribute::i64("start", start),
         ir::Attribute::i64("end", end), ir::Attribute::i64("step", step)},
        layout::slice(in.l, dim, start, end, step));
  }
  V flip(const V &in, std::vector<int64_t> dims) {
    return view("flip", in, {ir::Attribute::array("dims", dims)},
                layout::flip(in.l, dims));
  }
  V expand(const V &in, std::vector<int64_t> shape) {
    return view("expand", in, {ir::Attribute::array("shape", shape)},
                layout::expand(in.l, shape));
  }
  V select(const V &in, int64_t dim, int64_t index) {
    return view(
        "select", in,
        {ir::Attribute::i64("dim", dim), ir::Attribute::i64("index", index)},
        layout::select(in.l, dim, index));
  }
  V unsqueeze(const V &in, int64_t dim) {
    return view("unsqueeze", in, {ir::Attribute::i64("dim", dim)},
                layout::unsqueeze(in.l, dim));
  }
  V permute(const V &in, std::vector<int64_t> dims) {
    return view("permute", in, {ir::Attribute::array("dims", dims)},
                layout::permute(in.l, dims));
  }
  V viewAs(const V &in, std::vector<int64_t> shape) {
    return view("view", in, {ir::Attribute::array("shape", shape)},
                layout::view(in.l, shape));
  }
  /// A view of a storage value.
  V stridedView(const V &in, layout::Layout l) {
    V r{-1, l, in.dt, in.rootSize};
    r.id = p.stridedView(in.id, l);
    return r;
  }
  /// A compute op; its result is laid out as the layout algebra says
  /// (`result`, else row-major).
  V compute(const std::string &op, std::vector<V> ins,
            std::vector<int64_t> shape, std::string dt,
            std::vector<ir::Attribute> attrs = {},
            const layout::Layout *result = nullptr) {
    V r{-1, result ? *result : layout::contiguous(shape), dt, 0};
    r.rootSize = layout::requiredStorageSize(r.l);
    std::vector<ir::Program::Value> ids;
    for (const V &in : ins)
      ids.push_back(in.id);
    r.id = p.op(ir::internName(op), ids, typeOf(r), std::move(attrs));
    return r;
  }
  /// An elementwise op: TensorIterator's layout of the result.
  V elementwise(const std::string &op, std::vector<V> ins,
                std::vector<int64_t> shape, std::string dt) {
    std::vector<layout::Layout> ls;
    for (const V &v : ins)
      ls.push_back(v.l);
    layout::Layout l = layout::elementwiseResult(ls, shape);
    return compute(op, ins, shape, dt, {}, &l);
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
    return compute("cast", {in}, in.l.sizes, dt, {}, &l);
  }
  V copy(const V &in) {
    layout::Layout l = layout::preserveFormat(in.l);
    return compute("copy", {in}, in.l.sizes, in.dt, {}, &l);
  }
  V contiguous(const V &in) {
    if (layout::isContiguous(in.l))
      return compute("contiguous", {in}, in.l.sizes, in.dt, {}, &in.l);
    return compute("contiguous", {in}, in.l.sizes, in.dt);
  }
  V reduce(const std::string &op, const V &in, std::vector<int64_t> dims,
           bool keepdim = false) {
    auto shape = layout::reduceShape(in.l.sizes, dims, keepdim, op.c_str());
    assert(shape.ok());
    std::string dt = in.dt;
    if (op == "sum" && dt != "f32" && dt != "f64")
      dt = "i64";
    std::vector<ir::Attribute> attrs{ir::Attribute::array("dims", dims)};
    if (keepdim)
      attrs.push_back(ir::Attribute::unit("keepdim"));
    return compute(op, {in}, *shape, dt, std::move(attrs));
  }
  V matmul(const V &a, const V &b, std::vector<int64_t> shape) {
    return compute("matmul", {a, b}, shape, a.dt);
  }
  V fill(double value, std::vector<int64_t> shape, const std::string &dt) {
    return compute("fill", {}, shape, dt, {ir::Attribute::f64("value", value)});
  }
  V scalar(double value, const std::string &dt = "f32") {
    return fill(value, {}, dt);
  }
  V arange(double start, double step, int64_t n, const std::string &dt) {
    return compute(
        "arange", {}, {n}, dt,
        {ir::Attribute::f64("start", start), ir::Attribute::f64("step", step)});
  }
  /// dest.copy_(src): the new version of dest's root.
  V write(const V &src, const V &dest) {
    V r{-1, layout::contiguous(std::vector<int64_t>{dest.rootSize}), dest.dt,
        dest.rootSize, true};
    r.id = p.op("write", {src.id, dest.id}, typeOf(r));
    return r;
  }

  /// The program returning `results`, as textual IR (a module holding
  /// func.func @main).
  std::string text(const std::vector<V> &results) const {
    ir::Program q = p;
    std::vector<ir::Program::Value> ids;
    for (const V &r : results)
      ids.push_back(r.id);
    q.returns(ids);
    return q.print(false);
  }

  std::vector<V> args;

private:
  ir::Program p;
};

} // namespace strata::test

#endif // STRATA_TESTS_UNIT_JIT_PROGRAMBUILDER_H
