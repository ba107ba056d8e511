//===- TorchFuzz.cpp - strata side of the PyTorch differential fuzzer -----===//
//
// Interprets the line language of tests/fuzz/torch_fuzz.py (the driver, which
// also runs every program in PyTorch and compares) with the public strata
// DSL and prints everything a user can see. It stays alive across programs:
// stdin holds programs, each ended by a line "end"; for each, stdout gets
//
//   E <line> <message>      an op threw strata::Error (execution stops there)
//   X <line> <message>      an op threw another exception type
//   A <message>             strata::eval of every value at once threw
//   V <i> <dtype> [sizes] [strides] <offset> <alias> <rl> <n> <values>
//   V <i> <dtype> [sizes] [strides] <offset> <alias> <rl> ERR <msg>
//   M <i> <version> <grad_fn>  _version() and grad_fn()->name() ("-": none)
//   G <i> none | G <i> <dtype> [sizes] <n> <values> | G <i> ERR <msg>
//   done
//
// <alias> is the first value j <= i whose storage is_alias_of value i's
// ("-" for an empty storage); <rl> is requires_grad() and is_leaf() as two
// digits; G is every value's .grad(); values are exact text: %a hex floats,
// int64 as integers (never through double), bools 0/1; a value with more than
// 4096 elements prints every k-th element only (the driver samples alike).
//
//   strata-fuzz-torch [--plant=KIND]
// --plant puts a defect into what is reported, to show the driver catches
// it: float (one input element just past assert_close's tolerance), int
// (an integer/bool element's low bit flipped), stride, offset, storage (a
// view reported as new storage), dtype, error (a thrown error swallowed),
// grad (one gradient element off by 1%), detach (detach() ignored: the
// tensor itself); crash and hang (abort, or sleep forever, on every program
// with a sum) test the driver's recovery.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace strata;

namespace {

std::string plant;

/// An input line could not be parsed (a driver bug, reported as "X").
struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep))
    out.push_back(cur);
  return out;
}

int64_t toInt(const std::string &s) {
  size_t pos = 0;
  int64_t v = std::stoll(s, &pos);
  if (pos != s.size())
    throw ParseError("bad integer '" + s + "'");
  return v;
}

Shape toList(const std::string &s) {
  if (s.size() < 2 || s.front() != '[' || s.back() != ']')
    throw ParseError("bad list '" + s + "'");
  Shape out;
  for (const std::string &p : split(s.substr(1, s.size() - 2), ','))
    if (!p.empty())
      out.push_back(toInt(p));
  return out;
}

DType toDType(const std::string &s) {
  if (s == "f32")
    return kFloat32;
  if (s == "f64")
    return kFloat64;
  if (s == "i32")
    return kInt32;
  if (s == "i64")
    return kInt64;
  if (s == "b8")
    return kBool;
  throw ParseError("bad dtype '" + s + "'");
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::Bool:
    return "b8";
  }
  return "?";
}

bool isScalarToken(const std::string &s) { return s.rfind("s:", 0) == 0; }

/// s:i:<int64>, s:f:<hex or inf/nan>, s:b:<0|1>. Integers become a C++
/// long long, as a user's `x + 9007199254740993LL` would.
Scalar toScalar(const std::string &s) {
  if (s.size() < 5 || !isScalarToken(s))
    throw ParseError("bad scalar '" + s + "'");
  std::string v = s.substr(4);
  switch (s[2]) {
  case 'i':
    return Scalar(static_cast<long long>(toInt(v)));
  case 'f':
    return Scalar(std::strtod(v.c_str(), nullptr));
  case 'b':
    return Scalar(v == "1");
  }
  throw ParseError("bad scalar '" + s + "'");
}

std::string oneLine(std::string s) {
  for (char &c : s)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  return s;
}

std::string formatList(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

std::string formatDouble(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

/// The step of the sample the driver compares for a large value.
int64_t sampleStep(int64_t n) { return n > 4096 ? (n + 1023) / 1024 : 1; }

/// One step past torch.testing.assert_close's default tolerance.
double pastTolerance(double v, bool f32) {
  double atol = f32 ? 1e-5 : 1e-7, rtol = f32 ? 1.3e-6 : 1e-7;
  double w = v + 2 * (atol + rtol * std::fabs(v));
  return f32 ? static_cast<double>(static_cast<float>(w)) : w;
}

/// A planted value: an input one step past the strict tolerance; a
/// gradient past the driver's loosest (order-dependent) tolerance too.
double planted(double v, bool f32, bool grad) {
  if (!grad)
    return pastTolerance(v, f32);
  double w = v + 1e-2 * (1 + std::fabs(v));
  return f32 ? static_cast<double>(static_cast<float>(w)) : w;
}

/// The elements of `t` as text (sampled when large); `perturb` applies the
/// value plants to element 0.
std::string formatValues(const Tensor &t, bool perturb, bool grad) {
  int64_t n = t.numel(), step = sampleStep(n);
  std::string out = std::to_string(n) + " ";
  auto emit = [&](auto values, auto fmt) {
    for (int64_t i = 0; i < n; i += step)
      out += (i ? "," : "") + fmt(values[i], i);
  };
  bool pf = perturb && (plant == (grad ? "grad" : "float"));
  bool pi = perturb && plant == "int";
  switch (t.dtype()) {
  case DType::F32:
    emit(t.to_vector<float>(), [&](float v, int64_t i) {
      return formatDouble(pf && i == 0 ? planted(v, true, grad) : v);
    });
    break;
  case DType::F64:
    emit(t.to_vector<double>(), [&](double v, int64_t i) {
      return formatDouble(pf && i == 0 ? planted(v, false, grad) : v);
    });
    break;
  case DType::I32:
    emit(t.to_vector<int32_t>(), [&](int32_t v, int64_t i) {
      return std::to_string(pi && i == 0 ? v ^ 1 : v);
    });
    break;
  case DType::I64:
    emit(t.to_vector<int64_t>(), [&](int64_t v, int64_t i) {
      return std::to_string(pi && i == 0 ? v ^ 1 : v);
    });
    break;
  case DType::Bool:
    emit(t.to_vector<bool>(), [&](bool v, int64_t i) {
      return std::string((pi && i == 0) != v ? "1" : "0");
    });
    break;
  }
  return out;
}

/// `grad_of` of a tensor whose .grad() is undefined (PyTorch: None); the
/// driver raises there too. Reported as "E".
struct GradNone : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The values of one program and what marks them.
struct Env {
  std::vector<Tensor> values;
  std::vector<bool> isInput;
  /// Held between `no_grad` and `enable_grad` lines.
  std::unique_ptr<NoGradGuard> noGrad;

  const Tensor &ref(const std::string &tok) const {
    if (tok.size() < 2 || tok[0] != '%')
      throw ParseError("bad value '" + tok + "'");
    size_t i = static_cast<size_t>(toInt(tok.substr(1)));
    if (i >= values.size())
      throw ParseError("undefined value '" + tok + "'");
    return values[i];
  }
};

/// A binary op whose operands may each be a tensor or a scalar.
template <typename TT, typename TS, typename ST>
Tensor binaryOp(const Env &env, const std::string &a, const std::string &b,
                TT tt, TS ts, ST st) {
  if (isScalarToken(a))
    return st(toScalar(a), env.ref(b));
  if (isScalarToken(b))
    return ts(env.ref(a), toScalar(b));
  return tt(env.ref(a), env.ref(b));
}

std::optional<int64_t> optInt(const std::string &s) {
  if (s == "none")
    return std::nullopt;
  return toInt(s);
}

/// [%1,%2] -> those values.
std::vector<Tensor> toRefs(const Env &env, const std::string &s) {
  if (s.size() < 2 || s.front() != '[' || s.back() != ']')
    throw ParseError("bad list '" + s + "'");
  std::vector<Tensor> out;
  for (const std::string &p : split(s.substr(1, s.size() - 2), ','))
    if (!p.empty())
      out.push_back(env.ref(p));
  return out;
}

/// Runs a line that defines no value (backward, requires_grad_, retain_grad,
/// no_grad, enable_grad); false when `w` is not one.
bool runStatement(Env &env, const std::vector<std::string> &w) {
  if (w[0] == "backward") {
    Tensor gradient;
    bool retain = false;
    for (size_t i = 2; i < w.size(); ++i) {
      if (w[i] == "retain")
        retain = true;
      else
        gradient = env.ref(w[i]);
    }
    env.ref(w.at(1)).backward(gradient, retain);
    return true;
  }
  if (w[0] == "requires_grad_") {
    const_cast<Tensor &>(env.ref(w.at(1)))
        .requires_grad_(w.size() < 3 || w[2] == "1");
    return true;
  }
  if (w[0] == "retain_grad") {
    env.ref(w.at(1)).retain_grad();
    return true;
  }
  if (w[0] == "eval") { // evaluation points must not change any result
    env.ref(w.at(1)).eval();
    return true;
  }
  if (w[0] == "no_grad") {
    if (!env.noGrad)
      env.noGrad = std::make_unique<NoGradGuard>();
    return true;
  }
  if (w[0] == "enable_grad") {
    env.noGrad.reset();
    return true;
  }
  return false;
}

/// Runs one line; returns the values it defines (none for a statement, one
/// per input for grad, else one).
std::vector<Tensor> runLine(Env &env, const std::vector<std::string> &w);

/// The unary, clamp and bitwise ops of issue 20 (UNARY20 and BINARY20 in
/// torch_fuzz_lang.py); none for another op.
std::optional<Tensor> runUnary20(const std::string &op,
                                 const std::vector<std::string> &w, Env &env) {
  using Unary = Tensor (Tensor::*)(SourceLoc) const;
  using InPlace = Tensor &(Tensor::*)(SourceLoc);
  static const std::map<std::string, std::pair<Unary, InPlace>> unary = {
      {"sin", {&Tensor::sin, &Tensor::sin_}},
      {"cos", {&Tensor::cos, &Tensor::cos_}},
      {"tan", {&Tensor::tan, &Tensor::tan_}},
      {"asin", {&Tensor::asin, &Tensor::asin_}},
      {"acos", {&Tensor::acos, &Tensor::acos_}},
      {"atan", {&Tensor::atan, &Tensor::atan_}},
      {"sinh", {&Tensor::sinh, &Tensor::sinh_}},
      {"cosh", {&Tensor::cosh, &Tensor::cosh_}},
      {"exp2", {&Tensor::exp2, &Tensor::exp2_}},
      {"expm1", {&Tensor::expm1, &Tensor::expm1_}},
      {"log2", {&Tensor::log2, &Tensor::log2_}},
      {"log10", {&Tensor::log10, &Tensor::log10_}},
      {"log1p", {&Tensor::log1p, &Tensor::log1p_}},
      {"rsqrt", {&Tensor::rsqrt, &Tensor::rsqrt_}},
      {"reciprocal", {&Tensor::reciprocal, &Tensor::reciprocal_}},
      {"erf", {&Tensor::erf, &Tensor::erf_}},
      {"square", {&Tensor::square, &Tensor::square_}},
      {"sign", {&Tensor::sign, &Tensor::sign_}},
      {"floor", {&Tensor::floor, &Tensor::floor_}},
      {"ceil", {&Tensor::ceil, &Tensor::ceil_}},
      {"round", {&Tensor::round, &Tensor::round_}},
      {"trunc", {&Tensor::trunc, &Tensor::trunc_}},
      {"silu", {&Tensor::silu, &Tensor::silu_}},
      {"softplus", {&Tensor::softplus, nullptr}}, // PyTorch has no softplus_
      {"logical_not", {&Tensor::logical_not, &Tensor::logical_not_}},
      {"bitwise_not", {&Tensor::bitwise_not, &Tensor::bitwise_not_}}};
  auto arg = [&](size_t i) -> const std::string & { return w.at(3 + i); };
  auto T = [&](size_t i) -> const Tensor & { return env.ref(arg(i)); };
  auto mut = [&](size_t i) -> Tensor & {
    return const_cast<Tensor &>(env.ref(arg(i)));
  };
  auto bound = [&](size_t i) -> std::optional<Scalar> {
    if (arg(i) == "none")
      return std::nullopt;
    return toScalar(arg(i));
  };
  bool inPlace = op.size() > 1 && op.back() == '_';
  std::string base = inPlace ? op.substr(0, op.size() - 1) : op;
  if (auto it = unary.find(base);
      it != unary.end() && (!inPlace || it->second.second)) {
    if (inPlace)
      return (mut(0).*it->second.second)(SourceLoc::current());
    return (T(0).*it->second.first)(SourceLoc::current());
  }
  if (base == "gelu")
    return inPlace ? mut(0).gelu_(arg(1)) : T(0).gelu(arg(1));
  if (base == "clamp")
    return inPlace ? mut(0).clamp_(bound(1), bound(2))
                   : T(0).clamp(bound(1), bound(2));
  if (op == "clamp_min")
    return T(0).clamp_min(toScalar(arg(1)));
  if (op == "clamp_max")
    return T(0).clamp_max(toScalar(arg(1)));
  if (op == "nan_to_num")
    return T(0).nan_to_num();
#define STRATA_BITWISE(name)                                                   \
  if (op == #name)                                                             \
    return isScalarToken(arg(1)) ? T(0).name(toScalar(arg(1)))                 \
                                 : T(0).name(T(1));
  STRATA_BITWISE(bitwise_and)
  STRATA_BITWISE(bitwise_or)
  STRATA_BITWISE(bitwise_xor)
#undef STRATA_BITWISE
  if (op == "logical_and")
    return T(0).logical_and(T(1));
  if (op == "logical_or")
    return T(0).logical_or(T(1));
  if (op == "logical_xor")
    return T(0).logical_xor(T(1));
  // The binary and ternary ops of issue 20 (TERNARY20, isclose, allclose).
  if (base == "atan2")
    return inPlace ? mut(0).atan2_(T(1)) : T(0).atan2(T(1));
#define STRATA_DIVISION(name)                                                  \
  if (base == #name) {                                                         \
    if (isScalarToken(arg(1)))                                                 \
      return inPlace ? mut(0).name##_(toScalar(arg(1)))                        \
                     : T(0).name(toScalar(arg(1)));                            \
    return inPlace ? mut(0).name##_(T(1)) : T(0).name(T(1));                   \
  }
  STRATA_DIVISION(fmod)
  STRATA_DIVISION(remainder)
  STRATA_DIVISION(floor_divide)
#undef STRATA_DIVISION
  if (base == "lerp") {
    if (isScalarToken(arg(2)))
      return inPlace ? mut(0).lerp_(T(1), toScalar(arg(2)))
                     : T(0).lerp(T(1), toScalar(arg(2)));
    return inPlace ? mut(0).lerp_(T(1), T(2)) : T(0).lerp(T(1), T(2));
  }
  if (op == "isclose" || op == "allclose") {
    double rtol = std::strtod(arg(2).c_str(), nullptr);
    double atol = std::strtod(arg(3).c_str(), nullptr);
    bool equalNan = arg(4) == "1";
    if (op == "isclose")
      return T(0).isclose(T(1), rtol, atol, equalNan);
    return full({}, Scalar(T(0).allclose(T(1), rtol, atol, equalNan)),
                dtype(DType::Bool));
  }
  return std::nullopt;
}

/// Runs one `%i = op ...` line but grad; returns the value it defines.
Tensor runValueLine(Env &env, const std::vector<std::string> &w) {
  const std::string &op = w[2];
  auto arg = [&](size_t i) -> const std::string & { return w.at(3 + i); };
  auto T = [&](size_t i) -> const Tensor & { return env.ref(arg(i)); };
  auto I = [&](size_t i) { return toInt(arg(i)); };
  auto L = [&](size_t i) { return toList(arg(i)); };
  auto S = [&](size_t i) { return toScalar(arg(i)); };
  auto mut = [&](size_t i) -> Tensor & {
    return const_cast<Tensor &>(env.ref(arg(i)));
  };

  // Factories.
  if (op == "input") {
    DType dt = toDType(arg(0));
    Shape sizes = L(1);
    std::string data = arg(2).substr(2); // after "v:"
    std::vector<std::string> items =
        data.empty() ? std::vector<std::string>() : split(data, ',');
    bool zeroDim = sizes.empty();
    Shape shape = zeroDim ? Shape{1} : sizes;
    Tensor t;
    switch (dt) {
    case DType::F32:
    case DType::F64: {
      std::vector<double> v;
      for (auto &s : items)
        v.push_back(std::strtod(s.c_str(), nullptr));
      t = from_vector(v, shape, dtype(dt));
      break;
    }
    case DType::I32:
    case DType::I64: {
      std::vector<int64_t> v;
      for (auto &s : items)
        v.push_back(toInt(s));
      t = from_vector(v, shape, dtype(dt));
      break;
    }
    case DType::Bool: {
      std::vector<bool> v;
      for (auto &s : items)
        v.push_back(s == "1");
      t = from_vector(v, shape, dtype(dt));
      break;
    }
    }
    if (zeroDim) // not a view (in no-grad mode that would matter)
      t = t.view({}).clone();
    if (w.size() > 6 && w[6] == "rg")
      t.requires_grad_(true);
    return t;
  }
  if (op == "full") {
    TensorOptions o = arg(0) == "-" ? TensorOptions() : dtype(toDType(arg(0)));
    return full(L(1), S(2), o);
  }
  if (op == "zeros")
    return zeros(L(1), dtype(toDType(arg(0))));
  if (op == "ones")
    return ones(L(1), dtype(toDType(arg(0))));
  if (op == "arange") {
    TensorOptions o = arg(0) == "-" ? TensorOptions() : dtype(toDType(arg(0)));
    if (w.size() == 5)
      return arange(S(1), o);
    return arange(S(1), S(2), S(3), o);
  }

  // Elementwise.
  if (op == "add")
    return binaryOp(
        env, arg(0), arg(1), [](auto &a, auto &b) { return a.add(b); },
        [](auto &a, Scalar s) { return a + s; },
        [](Scalar s, auto &b) { return s + b; });
  if (op == "sub")
    return binaryOp(
        env, arg(0), arg(1), [](auto &a, auto &b) { return a.sub(b); },
        [](auto &a, Scalar s) { return a - s; },
        [](Scalar s, auto &b) { return s - b; });
  if (op == "mul")
    return binaryOp(
        env, arg(0), arg(1), [](auto &a, auto &b) { return a.mul(b); },
        [](auto &a, Scalar s) { return a * s; },
        [](Scalar s, auto &b) { return s * b; });
  if (op == "div")
    return binaryOp(
        env, arg(0), arg(1), [](auto &a, auto &b) { return a.div(b); },
        [](auto &a, Scalar s) { return a / s; },
        [](Scalar s, auto &b) { return s / b; });
  if (op == "pow") {
    if (isScalarToken(arg(1)))
      return T(0).pow(S(1));
    return T(0).pow(T(1));
  }
#define STRATA_COMPARE(name, sym)                                              \
  if (op == #name) {                                                           \
    if (isScalarToken(arg(1)))                                                 \
      return T(0) sym S(1);                                                    \
    return T(0).name(T(1));                                                    \
  }
  STRATA_COMPARE(eq, ==)
  STRATA_COMPARE(ne, !=)
  STRATA_COMPARE(lt, <)
  STRATA_COMPARE(le, <=)
  STRATA_COMPARE(gt, >)
  STRATA_COMPARE(ge, >=)
#undef STRATA_COMPARE
  if (op == "maximum")
    return maximum(T(0), T(1));
  if (op == "minimum")
    return minimum(T(0), T(1));
  if (op == "matmul")
    return T(0).matmul(T(1));
  if (op == "where")
    return where(T(0), T(1), T(2));
  if (op == "neg")
    return -T(0);
  if (op == "abs")
    return T(0).abs();
  if (op == "exp")
    return T(0).exp();
  if (op == "log")
    return T(0).log();
  if (op == "sqrt")
    return T(0).sqrt();
  if (op == "relu")
    return T(0).relu();
  if (op == "sigmoid")
    return T(0).sigmoid();
  if (op == "tanh")
    return T(0).tanh();
  if (op == "to")
    return T(0).to(toDType(arg(1)));

  // Reductions: "sum %a" reduces everything; "sum %a [dims] keepdim".
  if (op == "prod") { // "prod %a" or "prod %a [dim] keepdim"
    if (w.size() <= 4)
      return T(0).prod();
    Shape dims = L(1);
    if (dims.size() != 1)
      throw ParseError("prod takes one dim");
    return T(0).prod(dims[0], I(2) != 0);
  }
  if (op == "sum" || op == "mean" || op == "amax" || op == "amin") {
    Shape dims = w.size() > 4 ? L(1) : Shape{};
    bool keep = w.size() > 5 && I(2) != 0;
    bool all = w.size() <= 4; // sum() rather than sum(dims): SumBackward0
    if (op == "sum")
      return all ? T(0).sum() : T(0).sum(dims, keep);
    if (op == "mean")
      return all ? T(0).mean() : T(0).mean(dims, keep);
    if (op == "amax")
      return T(0).amax(dims, keep);
    return T(0).amin(dims, keep);
  }

  // Views.
  if (op == "view")
    return T(0).view(L(1));
  if (op == "reshape")
    return T(0).reshape(L(1));
  if (op == "t")
    return T(0).t();
  if (op == "transpose")
    return T(0).transpose(I(1), I(2));
  if (op == "permute")
    return T(0).permute(L(1));
  if (op == "narrow")
    return T(0).narrow(I(1), I(2), I(3));
  if (op == "select")
    return T(0).select(I(1), I(2));
  if (op == "index")
    return T(0)[I(1)];
  if (op == "slice")
    return T(0).slice(I(1), optInt(arg(2)), optInt(arg(3)), I(4));
  if (op == "expand")
    return T(0).expand(L(1));
  if (op == "expand_as")
    return T(0).expand_as(T(1));
  if (op == "squeeze")
    return w.size() > 4 ? T(0).squeeze(I(1)) : T(0).squeeze();
  if (op == "unsqueeze")
    return T(0).unsqueeze(I(1));
  if (op == "flatten")
    return T(0).flatten(I(1), I(2));
  if (op == "as_strided")
    return T(0).as_strided(L(1), L(2), optInt(arg(3)));
  if (op == "diagonal")
    return T(0).diagonal(I(1), I(2), I(3));
  if (op == "unfold")
    return T(0).unfold(I(1), I(2), I(3));
  if (op == "flip")
    return T(0).flip(L(1));
  if (op == "contiguous")
    return T(0).contiguous();
  if (op == "clone")
    return T(0).clone();
  if (op == "detach")
    return plant == "detach" ? T(0) : T(0).detach();
  if (op == "grad_of") {
    const Tensor &g = T(0).grad();
    if (!g.defined())
      throw GradNone("grad_of: .grad() is undefined");
    return g;
  }

#define STRATA_INPLACE(name)                                                   \
  if (op == #name) {                                                           \
    if (isScalarToken(arg(1)))                                                 \
      return mut(0).name(S(1));                                                \
    return mut(0).name(T(1));                                                  \
  }
  // In place: the result is the same tensor.
  STRATA_INPLACE(add_)
  STRATA_INPLACE(sub_)
  STRATA_INPLACE(mul_)
  STRATA_INPLACE(div_)
#undef STRATA_INPLACE
  if (op == "fill_")
    return mut(0).fill_(S(1));
  if (op == "zero_")
    return mut(0).zero_();
  if (op == "copy_")
    return mut(0).copy_(T(1));
  if (op == "relu_")
    return mut(0).relu_();
  // Scans: "cumsum %a dim [dt]", "cumsum_ %a dim".
  if (op == "cumsum" || op == "cumprod") {
    std::optional<DType> dt;
    if (w.size() > 5)
      dt = toDType(arg(2));
    return op == "cumsum" ? T(0).cumsum(I(1), dt) : T(0).cumprod(I(1), dt);
  }
  if (op == "cumsum_")
    return mut(0).cumsum_(I(1));
  if (op == "cumprod_")
    return mut(0).cumprod_(I(1));
  if (std::optional<Tensor> r = runUnary20(op, w, env))
    return *r;
  throw ParseError("unknown op '" + op + "'");
}

std::vector<Tensor> runLine(Env &env, const std::vector<std::string> &w) {
  if (w.empty())
    throw ParseError("empty line");
  if (runStatement(env, w))
    return {};
  if (w.size() < 3 || w[1] != "=")
    throw ParseError("expected '%i = op ...'");
  if (w[2] == "grad") {
    std::vector<Tensor> outs = toRefs(env, w.at(3)), ins = toRefs(env, w.at(4));
    bool retain = false, create = false;
    for (size_t i = 5; i < w.size(); ++i) {
      retain |= w[i] == "retain";
      create |= w[i] == "create";
    }
    // (retain_graph defaults to create_graph, as PyTorch's.)
    std::optional<bool> keep = retain   ? std::optional<bool>(true)
                               : create ? std::nullopt
                                        : std::optional<bool>(false);
    return grad(outs, ins, {}, keep, create);
  }
  return {runValueLine(env, w)};
}

void report(Env &env) {
  std::vector<Tensor> all;
  for (const Tensor &t : env.values)
    if (t.defined())
      all.push_back(t);
  try {
    eval(all);
  } catch (const std::exception &e) {
    std::cout << "A " << oneLine(e.what()) << "\n";
  }
  bool plantedValue = false, plantedMeta = false;
  std::vector<Storage> storages(env.values.size());
  for (size_t i = 0; i < env.values.size(); ++i) {
    const Tensor &t = env.values[i];
    if (!t.defined())
      continue;
    Shape strides = t.strides();
    int64_t offset = t.storage_offset();
    std::string dt = dtypeName(t.dtype());
    bool planting = env.isInput[i] && t.numel() > 0 && !plantedMeta;
    if (planting && plant == "stride" && !strides.empty()) {
      strides[0] += 1;
      plantedMeta = true;
    } else if (planting && plant == "offset") {
      offset += 1;
      plantedMeta = true;
    } else if (planting && plant == "dtype") {
      dt = t.dtype() == DType::F64 ? "f32" : "f64";
      plantedMeta = true;
    }
    std::string alias = "?", values;
    try {
      storages[i] = t.storage();
      alias = std::to_string(i);
      if (storages[i].nbytes() == 0)
        alias = "-";
      else
        for (size_t j = 0; j < i; ++j)
          if (storages[j].defined() && storages[j].is_alias_of(storages[i])) {
            alias = std::to_string(j);
            break;
          }
      if (plant == "storage" && !plantedMeta && alias != std::to_string(i) &&
          alias != "-") {
        alias = std::to_string(i);
        plantedMeta = true;
      }
      bool isFloat = isFloatingPoint(t.dtype());
      bool perturb =
          !plantedValue && env.isInput[i] && t.numel() > 0 &&
          ((plant == "float" && isFloat) || (plant == "int" && !isFloat));
      values = formatValues(t, perturb, false);
      plantedValue |= perturb;
    } catch (const std::exception &e) {
      values = "ERR " + oneLine(e.what());
    }
    std::string rl = "!"; // is_leaf reads the grad_fn, which may refuse
    try {
      rl = std::string(t.requires_grad() ? "1" : "0") +
           (t.is_leaf() ? "1" : "0");
    } catch (const std::exception &) {
    }
    std::cout << "V " << i << " " << dt << " " << formatList(t.sizes()) << " "
              << formatList(strides) << " " << offset << " " << alias << " "
              << rl << " " << values << "\n";
  }
  for (size_t i = 0; i < env.values.size(); ++i) {
    const Tensor &t = env.values[i];
    if (!t.defined())
      continue;
    std::string version = "?", name = "?";
    try {
      version = std::to_string(t._version());
    } catch (const std::exception &) {
    }
    try {
      GradFnPtr fn = t.grad_fn();
      name = fn ? fn->name() : "-";
    } catch (const std::exception &) {
    }
    std::cout << "M " << i << " " << version << " " << name << "\n";
  }
  bool plantedGrad = false;
  for (size_t i = 0; i < env.values.size(); ++i) {
    if (!env.values[i].defined())
      continue;
    std::cout << "G " << i << " ";
    try {
      const Tensor &g = env.values[i].grad();
      if (!g.defined()) {
        std::cout << "none\n";
        continue;
      }
      bool perturb = !plantedGrad && g.numel() > 0;
      std::string values = formatValues(g, perturb, true);
      plantedGrad |= perturb;
      std::cout << dtypeName(g.dtype()) << " " << formatList(g.sizes()) << " "
                << values << "\n";
    } catch (const std::exception &e) {
      std::cout << "ERR " << oneLine(e.what()) << "\n";
    }
  }
}

void runProgram(const std::vector<std::string> &lines) {
  // The recovery plants: the driver must restart the runner and go on.
  for (const std::string &l : lines)
    if (l.find(" = sum ") != std::string::npos) {
      if (plant == "crash")
        std::abort();
      if (plant == "hang")
        for (;;)
          std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  Env env;
  for (size_t n = 0; n < lines.size(); ++n) {
    std::vector<std::string> w;
    for (const std::string &tok : split(lines[n], ' '))
      if (!tok.empty())
        w.push_back(tok);
    try {
      for (const Tensor &t : runLine(env, w)) {
        env.values.push_back(t);
        env.isInput.push_back(w[2] == "input");
      }
    } catch (const Error &e) {
      if (plant != "error")
        std::cout << "E " << n << " " << oneLine(e.message()) << "\n";
      break;
    } catch (const GradNone &e) {
      if (plant != "error")
        std::cout << "E " << n << " " << e.what() << "\n";
      break;
    } catch (const std::exception &e) {
      if (plant != "error")
        std::cout << "X " << n << " " << oneLine(e.what()) << "\n";
      break;
    }
  }
  env.noGrad.reset(); // PyTorch reports in grad mode too
  report(env);
}

} // namespace

int main(int argc, char **argv) {
  // --twice: each program runs twice and the second run is reported, so
  // every backward of it finds the template of its gradient program the
  // first left (GradientTemplate.cpp) and is compared with PyTorch.
  bool twice = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strncmp(argv[i], "--plant=", 8)) {
      plant = argv[i] + 8;
    } else if (!std::strcmp(argv[i], "--twice")) {
      twice = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--plant=KIND] [--twice]  (programs on stdin)\n",
                   argv[0]);
      return 2;
    }
  }
  set_warning_handler([](const std::string &, const std::string &) {});
  set_program_cache_capacity(32);
  std::ios::sync_with_stdio(false);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "end") {
      if (twice) {
        std::ostringstream first;
        std::streambuf *out = std::cout.rdbuf(first.rdbuf());
        runProgram(lines);
        std::cout.rdbuf(out);
      }
      runProgram(lines);
      std::cout << "done" << std::endl;
      lines.clear();
    } else if (!line.empty() && line[0] != '#') {
      lines.push_back(line);
    }
  }
  return 0;
}
