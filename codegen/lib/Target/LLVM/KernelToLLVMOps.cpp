//===- KernelToLLVMOps.cpp - a kernel body's scalar ops to LLVM IR --------===//
//
// Assumes: the arith and math ops --strata-fuse puts in a kernel body, each
//   operand already emitted (`values`); scalars, or vectors of `lanes` of
//   them while a micro-kernel or a non-temporal loop emits the body.
// Guarantees: each op as the instructions with PyTorch's semantics on the
//   CPU: booleans (i1) order unsigned, float max/min propagate NaN, integer
//   arithmetic wraps, division and remainder take the divisor the scalar
//   body made safe, math functions are LLVM intrinsics where LLVM has one,
//   else libm calls (one per lane on vectors).
// Algorithm: one function per op family, tried in turn by emitOp; an op
//   no family takes is an error naming it.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include <optional>

using namespace strata::codegen::detail;

namespace {

using FPred = mlir::arith::CmpFPredicate;
using IPred = mlir::arith::CmpIPredicate;
using LPred = llvm::CmpInst::Predicate;

/// arith.cmpf's predicates in LLVM's (the two enums agree up to ORD only).
/// AlwaysTrue is FCMP_TRUE, the fallback.
constexpr std::pair<FPred, LPred> kFloatPredicates[] = {
    {FPred::AlwaysFalse, LPred::FCMP_FALSE},
    {FPred::OEQ, LPred::FCMP_OEQ},
    {FPred::OGT, LPred::FCMP_OGT},
    {FPred::OGE, LPred::FCMP_OGE},
    {FPred::OLT, LPred::FCMP_OLT},
    {FPred::OLE, LPred::FCMP_OLE},
    {FPred::ONE, LPred::FCMP_ONE},
    {FPred::ORD, LPred::FCMP_ORD},
    {FPred::UEQ, LPred::FCMP_UEQ},
    {FPred::UGT, LPred::FCMP_UGT},
    {FPred::UGE, LPred::FCMP_UGE},
    {FPred::ULT, LPred::FCMP_ULT},
    {FPred::ULE, LPred::FCMP_ULE},
    {FPred::UNE, LPred::FCMP_UNE},
    {FPred::UNO, LPred::FCMP_UNO}};

/// arith.cmpi's predicates in LLVM's; uge is ICMP_UGE, the fallback.
constexpr std::pair<IPred, LPred> kIntPredicates[] = {
    {IPred::eq, LPred::ICMP_EQ},   {IPred::ne, LPred::ICMP_NE},
    {IPred::slt, LPred::ICMP_SLT}, {IPred::sle, LPred::ICMP_SLE},
    {IPred::sgt, LPred::ICMP_SGT}, {IPred::sge, LPred::ICMP_SGE},
    {IPred::ult, LPred::ICMP_ULT}, {IPred::ule, LPred::ICMP_ULE},
    {IPred::ugt, LPred::ICMP_UGT}};

using I = llvm::Instruction;
/// Ops that are one LLVM instruction, by opcode: binary and unary operators
/// and casts. (remf is C's fmod; the divisions' divisors are nonzero and
/// not -1: the scalar body made them so, ScalarBuilder::safeDivisor.)
const std::pair<llvm::StringRef, unsigned> kInstructions[] = {
    {"arith.addf", I::FAdd},     {"arith.subf", I::FSub},
    {"arith.mulf", I::FMul},     {"arith.divf", I::FDiv},
    {"arith.negf", I::FNeg},     {"arith.addi", I::Add},
    {"arith.subi", I::Sub},      {"arith.muli", I::Mul},
    {"arith.ori", I::Or},        {"arith.andi", I::And},
    {"arith.xori", I::Xor},      {"arith.remf", I::FRem},
    {"arith.remsi", I::SRem},    {"arith.divsi", I::SDiv},
    {"arith.extf", I::FPExt},    {"arith.truncf", I::FPTrunc},
    {"arith.sitofp", I::SIToFP}, {"arith.uitofp", I::UIToFP},
    {"arith.fptosi", I::FPToSI}, {"arith.extsi", I::SExt},
    {"arith.extui", I::ZExt},    {"arith.trunci", I::Trunc}};

namespace In = llvm::Intrinsic;
/// The math dialect's functions LLVM has an intrinsic of (inline
/// instructions or its libm call).
const std::pair<llvm::StringRef, In::ID> kIntrinsics[] = {
    {"math.exp", In::exp},     {"math.exp2", In::exp2},
    {"math.log", In::log},     {"math.log2", In::log2},
    {"math.log10", In::log10}, {"math.sqrt", In::sqrt},
    {"math.absf", In::fabs},   {"math.sin", In::sin},
    {"math.cos", In::cos},     {"math.floor", In::floor},
    {"math.ceil", In::ceil},   {"math.roundeven", In::roundeven},
    {"math.trunc", In::trunc}};

/// The value `table` pairs with `key`, if any.
template <typename K, typename V, size_t N>
std::optional<V> find(const std::pair<K, V> (&table)[N], K key) {
  for (auto [k, v] : table)
    if (k == key)
      return v;
  return std::nullopt;
}

} // namespace

bool Emitter::emitBody(llvm::ArrayRef<Value *> args,
                       llvm::SmallVectorImpl<Value *> &yields,
                       std::string &error) {
  mlir::Block &body = k.getBodyBlock();
  for (auto [arg, v] : llvm::zip(body.getArguments(), args))
    values[arg] = v;
  for (mlir::Operation &op : body.without_terminator()) {
    Value *v = emitOp(op, error);
    if (!v)
      return false;
    values[op.getResult(0)] = v;
  }
  mlir::Operation *yield = body.getTerminator();
  for (unsigned r = 0; r < yield->getNumOperands(); ++r)
    yields.push_back(
        values.lookup(cascade[r] ? cascadeSource(r) : yield->getOperand(r)));
  return true;
}

Value *Emitter::emitOp(mlir::Operation &op, std::string &error) {
  if (auto c = llvm::dyn_cast<mlir::arith::ConstantOp>(op))
    return emitConstant(c);
  if (Value *v = emitCompare(op))
    return v;
  if (Value *v = emitInstruction(op))
    return v;
  if (Value *v = emitMinMaxSelect(op))
    return v;
  if (Value *v = emitMath(op))
    return v;
  error = "strata.kernel body: unsupported op '" +
          op.getName().getStringRef().str() + "'";
  return nullptr;
}

Value *Emitter::emitConstant(mlir::arith::ConstantOp c) {
  llvm::Type *t = valueType(c.getType());
  if (auto fa = c.getValue().dyn_cast<mlir::FloatAttr>())
    return llvm::ConstantFP::get(t, fa.getValueAsDouble());
  auto ia = c.getValue().cast<mlir::IntegerAttr>();
  return llvm::ConstantInt::get(t, ia.getValue());
}

/// arith.cmpf and arith.cmpi; null for other ops.
Value *Emitter::emitCompare(mlir::Operation &op) {
  if (auto c = llvm::dyn_cast<mlir::arith::CmpFOp>(op))
    return b.CreateFCmp(
        find(kFloatPredicates, c.getPredicate()).value_or(LPred::FCMP_TRUE),
        values.lookup(c.getLhs()), values.lookup(c.getRhs()));
  auto c = llvm::dyn_cast<mlir::arith::CmpIOp>(op);
  if (!c)
    return nullptr;
  LPred p = find(kIntPredicates, c.getPredicate()).value_or(LPred::ICMP_UGE);
  Value *x = values.lookup(c.getLhs()), *y = values.lookup(c.getRhs());
  // Booleans are 0/1 unsigned: signed i1 would order true (-1) below false.
  // (Only signed predicates have an unsigned form: eq/ne and the unsigned
  // ones stay as they are.)
  if (x->getType()->getScalarType()->isIntegerTy(1) &&
      llvm::CmpInst::isSigned(p))
    p = llvm::CmpInst::getUnsignedPredicate(p);
  return b.CreateICmp(p, x, y);
}

/// An op of kInstructions; null for other ops.
Value *Emitter::emitInstruction(mlir::Operation &op) {
  std::optional<unsigned> opcode =
      find(kInstructions, op.getName().getStringRef());
  if (!opcode)
    return nullptr;
  if (I::isCast(*opcode))
    return b.CreateCast(static_cast<I::CastOps>(*opcode), operand(op, 0),
                        valueType(op.getResult(0).getType()));
  if (I::isUnaryOp(*opcode))
    return b.CreateUnOp(static_cast<I::UnaryOps>(*opcode), operand(op, 0));
  return b.CreateBinOp(static_cast<I::BinaryOps>(*opcode), operand(op, 0),
                       operand(op, 1));
}

/// max/min (integers: booleans unsigned; floats: NaN-propagating) and
/// select; null for other ops.
Value *Emitter::emitMinMaxSelect(mlir::Operation &op) {
  // Integer max/min: whether max, whether signed.
  static const std::tuple<llvm::StringRef, bool, bool> minMax[] = {
      {"arith.maxsi", true, true},
      {"arith.minsi", false, true},
      {"arith.maxui", true, false},
      {"arith.minui", false, false}};
  llvm::StringRef name = op.getName().getStringRef();
  auto in = [&](unsigned i) { return operand(op, i); };
  for (auto [minMaxName, isMax, isSigned] : minMax)
    if (name == minMaxName)
      return integerMinMax(isMax, isSigned, in(0), in(1));
  if (name == "arith.maxf" || name == "arith.minf")
    return nanPropagating(name == "arith.maxf", in(0), in(1));
  if (name == "arith.select")
    return b.CreateSelect(in(0), in(1), in(2));
  return nullptr;
}

/// The math dialect's functions: LLVM intrinsics where LLVM has one
/// (inline instructions or its libm call), else the libm function itself;
/// null for other ops.
Value *Emitter::emitMath(mlir::Operation &op) {
  llvm::StringRef name = op.getName().getStringRef();
  if (!name.startswith("math."))
    return nullptr;
  auto in = [&](unsigned i) { return operand(op, i); };
  llvm::Type *rt = valueType(op.getResult(0).getType());
  if (auto id = find(kIntrinsics, name))
    return unaryCall(*id, in(0));
  static const llvm::StringRef libm[] = {"tanh",  "tan",   "atan", "atan2",
                                         "expm1", "log1p", "erf"};
  for (llvm::StringRef f : libm)
    if (name.drop_front(5) == f) {
      llvm::SmallVector<Value *, 2> args;
      for (unsigned i = 0; i < op.getNumOperands(); ++i)
        args.push_back(in(i));
      return libmCall((f + "f").str(), f, args);
    }
  if (name == "math.copysign")
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, in(0), in(1));
  if (name == "math.fma") // one rounding, as PyTorch's contracted kernels
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {rt}, {in(0), in(1), in(2)});
  if (name == "math.rsqrt") // 1 / sqrt(x), correctly rounded steps
    return b.CreateFDiv(llvm::ConstantFP::get(rt, 1.0),
                        unaryCall(llvm::Intrinsic::sqrt, in(0)));
  if (name == "math.powf")
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, in(0), in(1));
  if (name == "math.absi") {
    Value *neg = b.CreateSub(llvm::ConstantInt::get(rt, 0), in(0));
    return b.CreateSelect(b.CreateICmpSLT(in(0), llvm::ConstantInt::get(rt, 0)),
                          neg, in(0));
  }
  if (name == "math.ipowi")
    return integerPow(in(0), in(1));
  return nullptr;
}

/// PyTorch's powi: square-and-multiply in the integer type (wrapping on
/// overflow, as PyTorch's kernels do), and for a negative exponent 1 for
/// base 1, +-1 for base -1, else 0. Branch-free (one step per exponent bit)
/// so vector bodies take it too; a constant exponent folds away.
Value *Emitter::integerPow(Value *base, Value *exp) {
  llvm::Type *t = base->getType();
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(t, v, true); };
  unsigned bits = t->getScalarSizeInBits();
  Value *result = c(1), *a = base, *e = exp;
  for (unsigned i = 0; i + 1 < bits; ++i) {
    Value *odd = b.CreateICmpNE(b.CreateAnd(e, c(1)), c(0));
    result = b.CreateSelect(odd, b.CreateMul(result, a), result);
    a = b.CreateMul(a, a);
    e = b.CreateLShr(e, c(1));
  }
  Value *negative = b.CreateICmpSLT(exp, c(0));
  Value *oddExp = b.CreateICmpNE(b.CreateAnd(exp, c(1)), c(0));
  Value *forNegative =
      b.CreateSelect(b.CreateICmpEQ(base, c(1)), c(1),
                     b.CreateSelect(b.CreateICmpEQ(base, c(-1)),
                                    b.CreateSelect(oddExp, c(-1), c(1)), c(0)));
  return b.CreateSelect(negative, forNegative, result);
}
