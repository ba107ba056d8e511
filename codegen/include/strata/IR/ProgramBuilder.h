//===- ProgramBuilder.h - strata programs built op by op, MLIR-free -*- C++
//-*-===//
//
// How the DSL's evaluator, the autograd engine and the tests make a strata
// program: one func.func @main of strata ops, stated op by op with typed
// operands, result types and attributes. No MLIR header is needed to build
// one, and no text is printed or parsed: the program is a compact record
// (ops, operand ids, layouts, attributes) that
//
//  - is its own cache key: key() is every op, operand, type and attribute
//    in order (not source locations), so a program cache keys on what was
//    built, without printing it;
//  - becomes MLIR through OpBuilder (buildModule, strata/IR/ProgramModule.h)
//    when a program is prepared, and again when a prepared program is
//    lowered anew (a CUDA run, a dump): it is small and self-contained;
//  - prints as textual IR for dumps, tools and error messages (print()).
//
// Values are numbered in order of definition (an argument may be added
// between ops: the function's arguments are those, in their order); each
// knows its type, so emitters ask a value its layout instead of keeping
// type strings beside names.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_IR_PROGRAMBUILDER_H
#define STRATA_IR_PROGRAMBUILDER_H

#include "strata/Layout/LayoutAlgebra.h"
#include "strata/Runtime/DType.h"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata::ir {

/// The element types of strata's tensors and storages: the one dtype
/// table's (strata/Runtime/DType.h).
using Element = DType;
/// A name that lives as long as the process, for ops named at run time
/// (tests, tools): the same pointer for equal names.
const char *internName(std::string_view name);

/// The type of a program value: a storage root (element count) or a strided
/// tensor (a layout into its storage).
struct ValueType {
  bool storage = false;
  Element element = Element::F32;
  /// A storage's element count.
  int64_t extent = 0;
  /// A tensor's sizes, strides and offset.
  layout::Layout layout;

  static ValueType tensor(const layout::Layout &l, Element e) {
    return {false, e, 0, l};
  }
  static ValueType storageOf(int64_t extent, Element e) {
    return {true, e, extent, {}};
  }
  bool operator==(const ValueType &) const = default;
};

/// An op's attribute, by its ODS name.
struct Attribute {
  enum class Kind : uint8_t { I64, F64, I64Array, Unit, String };
  const char *name = "";
  Kind kind = Kind::Unit;
  int64_t i = 0;
  double f = 0;
  std::vector<int64_t> list;
  std::string s;

  static Attribute i64(const char *name, int64_t v) {
    return {name, Kind::I64, v, 0, {}, {}};
  }
  static Attribute f64(const char *name, double v) {
    return {name, Kind::F64, 0, v, {}, {}};
  }
  static Attribute array(const char *name, std::vector<int64_t> v) {
    return {name, Kind::I64Array, 0, 0, std::move(v), {}};
  }
  static Attribute unit(const char *name) {
    return {name, Kind::Unit, 0, 0, {}, {}};
  }
  static Attribute string(const char *name, std::string v) {
    return {name, Kind::String, 0, 0, {}, std::move(v)};
  }
};

/// Where the user's code made an op (a std::source_location's parts; the
/// file name must outlive the program: a literal).
struct SourcePosition {
  const char *file = nullptr;
  unsigned line = 0;
  unsigned column = 0;
};

/// A func.func @main being built, and then built: see the file comment.
class Program {
public:
  /// A value: its number, in order of definition.
  using Value = int32_t;

  /// Appends an argument of type `t`.
  Value argument(const ValueType &t);
  /// Appends op `strata.<name>` (`name` a literal, e.g. "add") of
  /// `operands` with one result of type `result`.
  Value op(const char *name, std::span<const Value> operands,
           const ValueType &result, std::vector<Attribute> attributes = {},
           SourcePosition at = {});
  Value op(const char *name, std::initializer_list<Value> operands,
           const ValueType &result, std::vector<Attribute> attributes = {},
           SourcePosition at = {}) {
    return op(name, std::span<const Value>(operands.begin(), operands.size()),
              result, std::move(attributes), at);
  }
  /// `strata.strided_view` of `v` as `l` (a tensor of v's element type).
  Value stridedView(Value v, const layout::Layout &l, SourcePosition at = {});
  /// The function returns `values`.
  void returns(std::vector<Value> values);
  /// An attribute of the function itself (e.g. strata.wrt).
  void functionAttribute(Attribute a);

  const ValueType &type(Value v) const { return types[v]; }
  size_t numArguments() const { return args.size(); }
  size_t numOps() const { return ops.size(); }
  bool empty() const { return ops.empty() && types.empty(); }

  /// The program's structure as bytes: equal keys, equal programs (up to
  /// source locations).
  const std::string &key() const { return keyBytes; }
  /// The program as textual IR (built into a context of its own; with
  /// source locations when `locations`).
  std::string print(bool locations = true) const;

  /// What buildModule reads.
  struct Op {
    const char *name;
    Value result = 0;
    /// Operands: [first, first + count) of `operandList`.
    uint32_t first = 0;
    uint32_t count = 0;
    std::vector<Attribute> attributes;
    SourcePosition at;
  };
  const std::vector<Op> &opList() const { return ops; }
  std::span<const Value> operandsOf(const Op &o) const {
    return {operandList.data() + o.first, o.count};
  }
  const std::vector<Value> &arguments() const { return args; }
  const std::vector<Value> &results() const { return rets; }
  const std::vector<Attribute> &functionAttributes() const { return funcAttrs; }

private:
  void pushType(const ValueType &t);
  void pushAttribute(const Attribute &a);

  std::vector<ValueType> types;
  std::vector<Value> args;
  std::vector<Op> ops;
  std::vector<Value> operandList;
  std::vector<Value> rets;
  std::vector<Attribute> funcAttrs;
  std::string keyBytes;
};

} // namespace strata::ir

#endif // STRATA_IR_PROGRAMBUILDER_H
