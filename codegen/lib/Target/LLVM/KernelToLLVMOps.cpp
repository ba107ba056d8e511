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
// Algorithm: emitOp looks the op up in ScalarOps.def (an op not there is
//   an error naming it) and switches over every ScalarOp: one instruction
//   (kInstructions), an intrinsic (kIntrinsics), the table's libm function,
//   or a few lines of its own.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "llvm/Support/ErrorHandling.h"

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
using S = strata::codegen::ScalarOp;
/// Ops that are one LLVM instruction, by opcode: binary and unary operators
/// and casts. (remf is C's fmod; the divisions' divisors are nonzero and
/// not -1: the scalar body made them so, ScalarBuilder::safeDivisor.)
constexpr std::pair<S, unsigned> kInstructions[] = {
    {S::AddF, I::FAdd},      {S::SubF, I::FSub},     {S::MulF, I::FMul},
    {S::DivF, I::FDiv},      {S::NegF, I::FNeg},     {S::AddI, I::Add},
    {S::SubI, I::Sub},       {S::MulI, I::Mul},      {S::OrI, I::Or},
    {S::AndI, I::And},       {S::XOrI, I::Xor},      {S::RemF, I::FRem},
    {S::RemSI, I::SRem},     {S::DivSI, I::SDiv},    {S::ExtF, I::FPExt},
    {S::TruncF, I::FPTrunc}, {S::SIToFP, I::SIToFP}, {S::UIToFP, I::UIToFP},
    {S::FPToSI, I::FPToSI},  {S::ExtSI, I::SExt},    {S::ExtUI, I::ZExt},
    {S::TruncI, I::Trunc}};

namespace In = llvm::Intrinsic;
/// The math functions LLVM has an intrinsic of (inline instructions or its
/// libm call); the others of ScalarOps.def with a libm function call it.
constexpr std::pair<S, In::ID> kIntrinsics[] = {
    {S::Exp, In::exp},     {S::Exp2, In::exp2},   {S::Log, In::log},
    {S::Log2, In::log2},   {S::Log10, In::log10}, {S::Sqrt, In::sqrt},
    {S::AbsF, In::fabs},   {S::Sin, In::sin},     {S::Cos, In::cos},
    {S::Floor, In::floor}, {S::Ceil, In::ceil},   {S::RoundEven, In::roundeven},
    {S::Trunc, In::trunc}};

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
  const ScalarOpInfo *info = scalarOpInfo(op.getName().getStringRef());
  if (!info) {
    error = "strata.kernel body: unsupported op '" +
            op.getName().getStringRef().str() + "'";
    return nullptr;
  }
  auto in = [&](unsigned i) { return operand(op, i); };
  llvm::Type *rt = valueType(op.getResult(0).getType());
  switch (info->op) {
  case S::Constant:
    return emitConstant(llvm::cast<mlir::arith::ConstantOp>(op));
  case S::CmpF:
    return b.CreateFCmp(find(kFloatPredicates,
                             llvm::cast<mlir::arith::CmpFOp>(op).getPredicate())
                            .value_or(LPred::FCMP_TRUE),
                        in(0), in(1));
  case S::CmpI:
    return emitIntCompare(llvm::cast<mlir::arith::CmpIOp>(op));
  case S::AddF:
  case S::SubF:
  case S::MulF:
  case S::DivF:
  case S::NegF:
  case S::RemF:
  case S::AddI:
  case S::SubI:
  case S::MulI:
  case S::DivSI:
  case S::RemSI:
  case S::AndI:
  case S::OrI:
  case S::XOrI:
  case S::ExtF:
  case S::TruncF:
  case S::SIToFP:
  case S::UIToFP:
  case S::FPToSI:
  case S::ExtSI:
  case S::ExtUI:
  case S::TruncI:
    return emitInstruction(op, *find(kInstructions, info->op));
  case S::MaxF:
  case S::MinF:
    return nanPropagating(info->op == S::MaxF, in(0), in(1));
  case S::MaxSI:
  case S::MinSI:
  case S::MaxUI:
  case S::MinUI:
    return integerMinMax(info->op == S::MaxSI || info->op == S::MaxUI,
                         info->op == S::MaxSI || info->op == S::MinSI, in(0),
                         in(1));
  case S::Select:
    return b.CreateSelect(in(0), in(1), in(2));
  case S::Exp:
  case S::Exp2:
  case S::Log:
  case S::Log2:
  case S::Log10:
  case S::Sqrt:
  case S::AbsF:
  case S::Sin:
  case S::Cos:
  case S::Floor:
  case S::Ceil:
  case S::RoundEven:
  case S::Trunc:
    return unaryCall(*find(kIntrinsics, info->op), in(0));
  case S::ExpM1:
  case S::Log1P:
  case S::Tan:
  case S::Atan:
  case S::Atan2:
  case S::Tanh:
  case S::Erf: { // no intrinsic: the libm function (one call per lane)
    llvm::SmallVector<Value *, 2> args;
    for (unsigned i = 0; i < op.getNumOperands(); ++i)
      args.push_back(in(i));
    return libmCall((info->libm + "f").str(), info->libm, args);
  }
  case S::CopySign:
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, in(0), in(1));
  case S::Fma: // one rounding, as PyTorch's contracted kernels
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {rt}, {in(0), in(1), in(2)});
  case S::Rsqrt: // 1 / sqrt(x), correctly rounded steps
    return b.CreateFDiv(llvm::ConstantFP::get(rt, 1.0),
                        unaryCall(llvm::Intrinsic::sqrt, in(0)));
  case S::PowF:
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, in(0), in(1));
  case S::AbsI: {
    Value *neg = b.CreateSub(llvm::ConstantInt::get(rt, 0), in(0));
    return b.CreateSelect(b.CreateICmpSLT(in(0), llvm::ConstantInt::get(rt, 0)),
                          neg, in(0));
  }
  case S::IPowI:
    return integerPow(in(0), in(1));
  }
  llvm_unreachable("every ScalarOp has a case");
}

Value *Emitter::emitConstant(mlir::arith::ConstantOp c) {
  if (Value *v = sizeValues.lookup(c.getOperation())) // (loaded from %dims)
    return lanes ? b.CreateVectorSplat(lanes, v) : v;
  llvm::Type *t = valueType(c.getType());
  if (auto fa = c.getValue().dyn_cast<mlir::FloatAttr>())
    return llvm::ConstantFP::get(t, fa.getValueAsDouble());
  auto ia = c.getValue().cast<mlir::IntegerAttr>();
  return llvm::ConstantInt::get(t, ia.getValue());
}

/// arith.cmpi.
Value *Emitter::emitIntCompare(mlir::arith::CmpIOp c) {
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

/// An op of kInstructions, as its instruction `opcode`.
Value *Emitter::emitInstruction(mlir::Operation &op, unsigned opcode) {
  if (I::isCast(opcode))
    return b.CreateCast(static_cast<I::CastOps>(opcode), operand(op, 0),
                        valueType(op.getResult(0).getType()));
  if (I::isUnaryOp(opcode))
    return b.CreateUnOp(static_cast<I::UnaryOps>(opcode), operand(op, 0));
  return b.CreateBinOp(static_cast<I::BinaryOps>(opcode), operand(op, 0),
                       operand(op, 1));
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
