//===- ProgramBuilder.cpp - strata programs built op by op ----------------===//
//
// The record (ProgramBuilder.h), its key, and its module through OpBuilder
// (ProgramModule.h).
//
//===----------------------------------------------------------------------===//
#include "strata/IR/ProgramModule.h"
#include "strata/IR/StrataDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <mutex>
#include <set>

using namespace strata::ir;

const char *strata::ir::internName(std::string_view name) {
  static std::mutex mutex;
  static auto *names = new std::set<std::string, std::less<>>;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = names->find(name);
  if (it == names->end())
    it = names->emplace(name).first;
  return it->c_str();
}

namespace {

void push(std::string &key, int64_t v) {
  key.append(reinterpret_cast<const char *>(&v), sizeof v);
}
void pushList(std::string &key, std::span<const int64_t> s) {
  push(key, static_cast<int64_t>(s.size()));
  key.append(reinterpret_cast<const char *>(s.data()), s.size() * 8);
}
void pushName(std::string &key, const char *name) {
  size_t n = strlen(name);
  push(key, static_cast<int64_t>(n));
  key.append(name, n);
}

} // namespace

void Program::pushType(const ValueType &t) {
  push(keyBytes, static_cast<int64_t>(t.element) | (t.storage ? 16 : 0));
  if (t.storage) {
    push(keyBytes, t.extent);
    return;
  }
  pushList(keyBytes, t.layout.sizes);
  pushList(keyBytes, t.layout.strides);
  push(keyBytes, t.layout.offset);
}

void Program::pushAttribute(const Attribute &a) {
  pushName(keyBytes, a.name);
  push(keyBytes, static_cast<int64_t>(a.kind));
  switch (a.kind) {
  case Attribute::Kind::I64:
    push(keyBytes, a.i);
    break;
  case Attribute::Kind::F64: {
    int64_t bits;
    memcpy(&bits, &a.f, 8);
    push(keyBytes, bits);
    break;
  }
  case Attribute::Kind::I64Array:
    pushList(keyBytes, a.list);
    break;
  case Attribute::Kind::Unit:
    break;
  case Attribute::Kind::String:
    push(keyBytes, static_cast<int64_t>(a.s.size()));
    keyBytes += a.s;
    break;
  }
}

Program::Value Program::argument(const ValueType &t) {
  Value v = static_cast<Value>(types.size());
  types.push_back(t);
  args.push_back(v);
  push(keyBytes, -1);
  pushType(t);
  return v;
}

Program::Value Program::op(const char *name, std::span<const Value> operands,
                           const ValueType &result,
                           std::vector<Attribute> attributes,
                           SourcePosition at) {
  Value v = static_cast<Value>(types.size());
  types.push_back(result);
  Op o;
  o.name = name;
  o.result = v;
  o.first = static_cast<uint32_t>(operandList.size());
  o.count = static_cast<uint32_t>(operands.size());
  operandList.insert(operandList.end(), operands.begin(), operands.end());
  pushName(keyBytes, name);
  push(keyBytes, static_cast<int64_t>(operands.size()));
  for (Value in : operands)
    push(keyBytes, in);
  pushType(result);
  push(keyBytes, static_cast<int64_t>(attributes.size()));
  for (const Attribute &a : attributes)
    pushAttribute(a);
  o.attributes = std::move(attributes);
  o.at = at;
  ops.push_back(std::move(o));
  return v;
}

Program::Value Program::stridedView(Value v, const layout::Layout &l,
                                    SourcePosition at) {
  return op("strided_view", {v}, ValueType::tensor(l, types[v].element), {},
            at);
}

void Program::returns(std::vector<Value> values) {
  push(keyBytes, -2);
  for (Value v : values)
    push(keyBytes, v);
  rets = std::move(values);
}

void Program::functionAttribute(Attribute a) {
  push(keyBytes, -3);
  pushAttribute(a);
  funcAttrs.push_back(std::move(a));
}

namespace {

mlir::Type typeOf(mlir::MLIRContext &ctx, const ValueType &t) {
  mlir::Type e = elementTypeOf(t.element, &ctx);
  if (t.storage)
    return StorageType::get(&ctx, t.extent, e);
  return StridedTensorType::get(&ctx, t.layout.sizes, e, t.layout.strides,
                                t.layout.offset);
}

mlir::Attribute attributeOf(mlir::Builder &b, const Attribute &a) {
  switch (a.kind) {
  case Attribute::Kind::I64:
    return b.getI64IntegerAttr(a.i);
  case Attribute::Kind::F64:
    return b.getF64FloatAttr(a.f);
  case Attribute::Kind::I64Array:
    return b.getDenseI64ArrayAttr(a.list);
  case Attribute::Kind::Unit:
    return b.getUnitAttr();
  case Attribute::Kind::String:
    return b.getStringAttr(a.s);
  }
  return {};
}

} // namespace

namespace {

/// `program` as a module, not verified; null where an op is unknown.
mlir::OwningOpRef<mlir::ModuleOp>
build(const Program &program, mlir::MLIRContext &context, std::string &error) {
  context.getOrLoadDialect<StrataDialect>();
  context.getOrLoadDialect<mlir::func::FuncDialect>();
  mlir::OpBuilder b(&context);
  mlir::Location unknown = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(unknown);
  b.setInsertionPointToEnd(module->getBody());

  llvm::SmallVector<mlir::Type> argTypes, resultTypes;
  for (Program::Value a : program.arguments())
    argTypes.push_back(typeOf(context, program.type(a)));
  for (Program::Value r : program.results())
    resultTypes.push_back(typeOf(context, program.type(r)));
  auto func = b.create<mlir::func::FuncOp>(
      unknown, "main", b.getFunctionType(argTypes, resultTypes));
  for (const Attribute &a : program.functionAttributes())
    func->setAttr(a.name, attributeOf(b, a));
  mlir::Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);

  // Each value's MLIR value, by number.
  std::vector<mlir::Value> values(program.numArguments() + program.numOps());
  for (size_t i = 0; i < program.arguments().size(); ++i)
    values[program.arguments()[i]] = entry->getArgument(i);
  llvm::DenseMap<const char *, mlir::OperationName> names;
  llvm::DenseMap<const char *, mlir::StringAttr> files;
  for (const Program::Op &o : program.opList()) {
    auto name = names.find(o.name);
    if (name == names.end()) {
      mlir::OperationName n(std::string("strata.") + o.name, &context);
      if (!n.isRegistered()) {
        error = std::string("no op strata.") + o.name;
        return {};
      }
      name = names.try_emplace(o.name, n).first;
    }
    mlir::Location loc = unknown;
    if (o.at.file) {
      auto [file, first] = files.try_emplace(o.at.file, mlir::StringAttr());
      if (first)
        file->second = b.getStringAttr(o.at.file);
      loc = mlir::FileLineColLoc::get(file->second, o.at.line, o.at.column);
    }
    mlir::OperationState state(loc, name->second);
    for (Program::Value in : program.operandsOf(o))
      state.operands.push_back(values[in]);
    state.types.push_back(typeOf(context, program.type(o.result)));
    for (const Attribute &a : o.attributes)
      state.addAttribute(a.name, attributeOf(b, a));
    values[o.result] = b.create(state)->getResult(0);
  }
  llvm::SmallVector<mlir::Value> rets;
  for (Program::Value r : program.results())
    rets.push_back(values[r]);
  b.create<mlir::func::ReturnOp>(unknown, rets);
  return module;
}

/// Verifies `module`; its diagnostics in `error` when it is not valid.
bool verified(mlir::ModuleOp module, std::string &error) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  {
    mlir::ScopedDiagnosticHandler handler(
        module.getContext(), [&](mlir::Diagnostic &d) {
          os << d.getLocation() << ": " << d << "\n";
          for (const mlir::Diagnostic &note : d.getNotes())
            os << "  note: " << note << "\n";
          return mlir::success();
        });
    if (mlir::failed(mlir::verify(module))) {
      error = "the program is not valid strata IR: " + os.str();
      return false;
    }
  }
  return true;
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp>
strata::ir::buildModule(const Program &program, mlir::MLIRContext &context,
                        std::string &error) {
  mlir::OwningOpRef<mlir::ModuleOp> module = build(program, context, error);
  if (!module || !verified(*module, error))
    return {};
  return module;
}

std::string Program::print(bool locations) const {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module = build(*this, context, error);
  if (!module)
    return "// " + error + "\n";
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  if (locations)
    flags.enableDebugInfo();
  // (An invalid program prints in generic form, after its diagnostics.)
  if (!verified(*module, error)) {
    os << "// " << error << "\n";
    flags.printGenericOpForm();
  }
  module->print(os, flags);
  return os.str();
}
