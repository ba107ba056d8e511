//===- OpAutogradTest.cpp - each op's autograd node against PyTorch -------===//
//
// For every differentiable op of the dialect that the DSL records, under
// each pattern of its operands requiring grad: the grad_fn's name, the
// sizes of what it saves, which operands (and the result) a later in-place
// write makes backward refuse, and whether a second backward refuses, all
// against PyTorch 1.13 (tests/e2e/data/op_autograd_golden.txt, written by
// scripts/gen_op_autograd_golden.py, the same cases in the same order).
// What an op saves is derived from its VJP (dsl/lib/SavedTensors.cpp) and
// its name from its mnemonic (dsl/lib/GradFnNames.cpp): an op whose VJP
// reads otherwise than PyTorch's formula, or that PyTorch names otherwise,
// fails here. A differentiable op with no case fails too (a new op gets a
// case in both files).
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include "strata/IR/StrataAutodiff.h"
#include "strata/IR/StrataDialect.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

using namespace strata;

namespace {

/// A tensor operand: 'f' float32 (its pattern bit says whether it requires
/// grad), 'i' an int64 index (0, 1, 0, ...), 'b' a bool (true, false, ...).
struct Spec {
  char kind;
  Shape shape;
};

/// One case: the IR op it records and the DSL call over its operands.
struct Case {
  std::string name;
  std::string ir;
  std::vector<Spec> specs;
  std::function<Tensor(const std::vector<Tensor> &)> fn;
};

using Ops = const std::vector<Tensor> &;

std::vector<Case> cases() {
  const std::vector<Spec> x{{'f', {2, 3}}}, ab{{'f', {2, 1}}, {'f', {3}}};
  std::vector<Case> c;
  auto unary = [&](const char *name, Tensor (Tensor::*m)(SourceLoc) const) {
    c.push_back({name, name, x, [m](Ops o) { return (o[0].*m)({}); }});
  };
  unary("neg", &Tensor::neg);
  unary("abs", &Tensor::abs);
  unary("square", &Tensor::square);
  unary("reciprocal", &Tensor::reciprocal);
  unary("sign", &Tensor::sign);
  unary("floor", &Tensor::floor);
  unary("ceil", &Tensor::ceil);
  unary("round", &Tensor::round);
  unary("trunc", &Tensor::trunc);
  unary("exp", &Tensor::exp);
  unary("exp2", &Tensor::exp2);
  unary("expm1", &Tensor::expm1);
  unary("log", &Tensor::log);
  unary("log2", &Tensor::log2);
  unary("log10", &Tensor::log10);
  unary("log1p", &Tensor::log1p);
  unary("sqrt", &Tensor::sqrt);
  unary("rsqrt", &Tensor::rsqrt);
  unary("sin", &Tensor::sin);
  unary("cos", &Tensor::cos);
  unary("tan", &Tensor::tan);
  unary("asin", &Tensor::asin);
  unary("acos", &Tensor::acos);
  unary("atan", &Tensor::atan);
  unary("sinh", &Tensor::sinh);
  unary("cosh", &Tensor::cosh);
  unary("tanh", &Tensor::tanh);
  unary("erf", &Tensor::erf);
  unary("relu", &Tensor::relu);
  unary("sigmoid", &Tensor::sigmoid);
  c.push_back({"gelu", "gelu", x, [](Ops o) { return o[0].gelu(); }});
  unary("silu", &Tensor::silu);
  unary("softplus", &Tensor::softplus);
  c.push_back(
      {"gelu_tanh", "gelu_tanh", x, [](Ops o) { return o[0].gelu("tanh"); }});
  auto binary = [&](const char *name,
                    std::function<Tensor(const Tensor &, const Tensor &)> f) {
    c.push_back({name, name, ab, [f](Ops o) { return f(o[0], o[1]); }});
  };
  binary("add", [](auto &a, auto &b) { return a.add(b); });
  binary("sub", [](auto &a, auto &b) { return a.sub(b); });
  binary("mul", [](auto &a, auto &b) { return a.mul(b); });
  binary("div", [](auto &a, auto &b) { return a.div(b); });
  binary("pow", [](auto &a, auto &b) { return a.pow(b); });
  binary("maximum", [](auto &a, auto &b) { return maximum(a, b); });
  binary("minimum", [](auto &a, auto &b) { return minimum(a, b); });
  binary("atan2", [](auto &a, auto &b) { return a.atan2(b); });
  binary("hypot", [](auto &a, auto &b) { return a.hypot(b); });
  binary("logaddexp", [](auto &a, auto &b) { return a.logaddexp(b); });
  binary("fmod", [](auto &a, auto &b) { return a.fmod(b); });
  binary("remainder", [](auto &a, auto &b) { return a.remainder(b); });
  binary("floor_divide", [](auto &a, auto &b) { return a.floor_divide(b); });
  c.push_back({"mul_number", "mul", x, [](Ops o) { return o[0] * 2.5; }});
  c.push_back({"div_number", "div", x, [](Ops o) { return o[0] / 2.5; }});
  c.push_back({"rsub_number", "sub", x, [](Ops o) { return 2.5 - o[0]; }});
  c.push_back({"pow_number", "pow", x, [](Ops o) { return o[0].pow(2.5); }});
  c.push_back({"fmod_number", "fmod", x, [](Ops o) { return o[0].fmod(2.5); }});
  c.push_back({"remainder_number", "remainder", x,
               [](Ops o) { return o[0].remainder(2.5); }});
  c.push_back(
      {"add_alpha", "fma", ab, [](Ops o) { return o[0].add(o[1], 2.5); }});
  c.push_back(
      {"sub_alpha", "fma", ab, [](Ops o) { return o[0].sub(o[1], 2.5); }});
  c.push_back({"lerp",
               "lerp",
               {{'f', {2, 1, 1}}, {'f', {3, 1}}, {'f', {4}}},
               [](Ops o) { return o[0].lerp(o[1], o[2]); }});
  c.push_back(
      {"lerp_number", "lerp", ab, [](Ops o) { return o[0].lerp(o[1], 0.25); }});
  c.push_back({"where",
               "where",
               {{'b', {2, 1, 1}}, {'f', {3, 1}}, {'f', {4}}},
               [](Ops o) { return where(o[0], o[1], o[2]); }});
  c.push_back({"where_number", "where", {{'b', {2, 1}}, {'f', {3}}}, [](Ops o) {
                 return where(o[0], o[1], 2.5);
               }});
  c.push_back(
      {"to_double", "cast", x, [](Ops o) { return o[0].to(kFloat64); }});
  c.push_back({"clone", "copy", x, [](Ops o) { return o[0].clone(); }});
  c.push_back({"contiguous", "contiguous", x,
               [](Ops o) { return o[0].t().contiguous(); }});
  c.push_back({"sum", "sum", x, [](Ops o) { return o[0].sum(); }});
  c.push_back({"sum_dim", "sum", x, [](Ops o) { return o[0].sum({1}); }});
  c.push_back({"mean", "mean", x, [](Ops o) { return o[0].mean(); }});
  c.push_back({"mean_dim", "mean", x, [](Ops o) { return o[0].mean({1}); }});
  c.push_back({"prod", "prod", x, [](Ops o) { return o[0].prod(); }});
  c.push_back({"prod_dim", "prod", x, [](Ops o) { return o[0].prod(1); }});
  c.push_back({"amax", "amax", x, [](Ops o) { return o[0].amax({1}); }});
  c.push_back({"amin", "amin", x, [](Ops o) { return o[0].amin({1}); }});
  c.push_back({"cumsum", "scan", x, [](Ops o) { return o[0].cumsum(1); }});
  c.push_back({"cumprod", "scan", x, [](Ops o) { return o[0].cumprod(1); }});
  auto matmul = [&](const char *name, Shape a, Shape b) {
    c.push_back({name, "matmul", {{'f', a}, {'f', b}}, [](Ops o) {
                   return o[0].matmul(o[1]);
                 }});
  };
  matmul("dot", {3}, {3});
  matmul("mv", {2, 3}, {3});
  matmul("mm", {2, 3}, {3, 4});
  matmul("bmm", {5, 2, 3}, {5, 3, 4});
  c.push_back({"gather", "gather", {{'f', {2, 3}}, {'i', {2, 2}}}, [](Ops o) {
                 return o[0].gather(1, o[1]);
               }});
  c.push_back({"scatter",
               "scatter",
               {{'f', {2, 3}}, {'i', {2, 2}}, {'f', {2, 2}}},
               [](Ops o) { return o[0].scatter(1, o[1], o[2]); }});
  c.push_back({"scatter_add",
               "scatter_add",
               {{'f', {2, 3}}, {'i', {2, 2}}, {'f', {2, 2}}},
               [](Ops o) { return o[0].scatter_add(1, o[1], o[2]); }});
  // Shapes where a VJP takes a shortcut that reads nothing (a 0-d prod, a
  // cumprod over one element): PyTorch saves what it saves elsewhere.
  const std::vector<Spec> z{{'f', {}}};
  c.push_back({"exp_0d", "exp", z, [](Ops o) { return o[0].exp(); }});
  c.push_back({"mul_0d", "mul", {{'f', {}}, {'f', {}}}, [](Ops o) {
                 return o[0] * o[1];
               }});
  c.push_back({"prod_0d", "prod", z, [](Ops o) { return o[0].prod(); }});
  c.push_back({"cumprod_0d", "scan", z, [](Ops o) { return o[0].cumprod(0); }});
  c.push_back({"cumprod_size1", "scan", {{'f', {2, 1}}}, [](Ops o) {
                 return o[0].cumprod(1);
               }});
  c.push_back(
      {"amax_keepdim", "amax", x, [](Ops o) { return o[0].amax({1}, true); }});
  c.push_back(
      {"mean_keepdim", "mean", x, [](Ops o) { return o[0].mean({1}, true); }});
  c.push_back(
      {"where_0d", "where", {{'b', {}}, {'f', {}}, {'f', {}}}, [](Ops o) {
         return where(o[0], o[1], o[2]);
       }});
  return c;
}

/// The dialect's ops with a VJP that no DSL call records as an op node
/// requiring grad, and why (so none is missed by accident).
const std::map<std::string, std::string> kNotRecorded = {
    {"bitwise_not", "integer and bool results take no part in autograd"},
    {"write", "in-place writes: AutogradTest.cpp, the fuzzer"},
    {"strided_view", "the engine's own view, no DSL op"},
    {"detach", "the engine's own op, no DSL op"},
    {"recorded", "the engine's own op, no DSL op"},
    {"fill", "a constant"},
    {"arange", "a constant"}};

/// The view ops: their grad_fns are view chains, named and checked by
/// AutogradTest.cpp's ViewGradFnNames (grad_fn_golden.txt).
const std::set<std::string> kViews = {
    "view",     "permute", "transpose", "slice",     "select",
    "narrow",   "expand",  "squeeze",   "unsqueeze", "as_strided",
    "diagonal", "unfold",  "flip",      "reshape",   "flatten"};

struct Golden {
  std::string name, saved, raises, second;
};

std::map<std::string, Golden> golden() {
  std::map<std::string, Golden> g;
  std::ifstream in(STRATA_OP_AUTOGRAD_GOLDEN);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ls(line);
    std::string key, name, saved, raises, second;
    ls >> key >> name >> saved >> raises >> second;
    g[key] = {name, saved.substr(6), raises.substr(7), second.substr(7)};
  }
  return g;
}

Tensor value(const Spec &s, size_t k) {
  if (s.shape.empty()) // 0-d: the first element of the 1-element case
    return value({s.kind, {1}}, k).reshape({}).clone();
  int64_t n = 1;
  for (int64_t d : s.shape)
    n *= d;
  if (s.kind == 'i') {
    std::vector<int64_t> v(n);
    for (int64_t j = 0; j < n; ++j)
      v[j] = j % 2;
    return from_vector<int64_t>(v, s.shape);
  }
  if (s.kind == 'b') {
    std::vector<bool> v(n);
    for (int64_t j = 0; j < n; ++j)
      v[j] = j % 2 == 0;
    return from_vector<bool>(v, s.shape);
  }
  std::vector<float> v(n);
  double lo = 0.2 + 0.05 * k;
  for (int64_t j = 0; j < n; ++j)
    v[j] = static_cast<float>(n == 1 ? lo : lo + (0.8 - lo) * j / (n - 1));
  return from_vector<float>(v, s.shape);
}

/// The operands of `c` for `pattern`: those requiring grad are leaves, or
/// with `nonLeaf` `leaf * 1` (which can be written in place).
std::vector<Tensor> operands(const Case &c, const std::string &pattern,
                             bool nonLeaf) {
  std::vector<Tensor> out;
  size_t bit = 0;
  for (size_t k = 0; k < c.specs.size(); ++k) {
    Tensor t = value(c.specs[k], k);
    if (c.specs[k].kind == 'f' && pattern[bit++] == '1') {
      t.requires_grad_();
      if (nonLeaf)
        t = t * 1;
    }
    out.push_back(t);
  }
  return out;
}

char raises(const std::function<void()> &f) {
  try {
    f();
    return '0';
  } catch (const std::exception &) {
    return '1';
  }
}

std::string format(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

/// What the golden file says of `c` under `pattern`, measured in strata.
Golden measure(const Case &c, const std::string &pattern) {
  Golden m;
  std::vector<Tensor> ops = operands(c, pattern, false);
  Tensor y = c.fn(ops);
  GradFnPtr fn = y.grad_fn();
  m.name = fn ? fn->name() : "none";
  std::vector<std::string> saved;
  if (fn)
    for (const Shape &s : fn->saved_sizes())
      saved.push_back(format(s));
  std::sort(saved.begin(), saved.end());
  for (size_t i = 0; i < saved.size(); ++i)
    m.saved += (i ? ";" : "") + saved[i];
  if (m.saved.empty())
    m.saved = "-";
  for (size_t k = 0; k <= c.specs.size(); ++k) {
    std::vector<Tensor> in = operands(c, pattern, true);
    Tensor out = c.fn(in);
    Tensor &written = k < in.size() ? in[k] : out;
    if (isFloatingPoint(written.dtype()))
      written.add_(0);
    else
      written.copy_(written.clone());
    m.raises += raises([&] { out.sum().backward(); });
  }
  ops = operands(c, pattern, false);
  y = c.fn(ops);
  m.second = raises([&] { y.sum().backward(); }) == '1'
                 ? "x"
                 : std::string(1, raises([&] { y.sum().backward(); }));
  return m;
}

TEST(OpAutograd, NodesMatchPyTorch) {
  std::map<std::string, Golden> g = golden();
  size_t checked = 0;
  for (const Case &c : cases()) {
    size_t floats = std::count_if(c.specs.begin(), c.specs.end(),
                                  [](const Spec &s) { return s.kind == 'f'; });
    for (size_t bits = 1; bits < (size_t(1) << floats); ++bits) {
      std::string pattern;
      for (size_t k = floats; k-- > 0;)
        pattern += (bits >> k & 1) ? '1' : '0';
      std::string key = c.name + "/" + pattern;
      ASSERT_TRUE(g.count(key))
          << key << ": no golden line (run scripts/gen_op_autograd_golden.py)";
      Golden want = g[key], got = measure(c, pattern);
      EXPECT_EQ(got.name, want.name) << key << ": grad_fn name";
      EXPECT_EQ(got.saved, want.saved) << key << ": saved tensors' sizes";
      EXPECT_EQ(got.raises, want.raises)
          << key << ": backward raising after an in-place write to each "
          << "operand, then to the result";
      EXPECT_EQ(got.second, want.second) << key << ": second backward";
      ++checked;
    }
  }
  EXPECT_EQ(checked, g.size()) << "cases missing here that the golden has";
}

TEST(OpAutograd, EveryDifferentiableOpHasACase) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<ir::StrataDialect>();
  std::set<std::string> covered;
  for (const Case &c : cases())
    covered.insert(c.ir);
  size_t ops = 0;
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations()) {
    if (op.getDialectNamespace() != "strata" ||
        !op.hasInterface<ir::VJPOpInterface>())
      continue;
    std::string name = op.stripDialect().str();
    ++ops;
    EXPECT_TRUE(covered.count(name) || kViews.count(name) ||
                kNotRecorded.count(name))
        << "strata." << name << " has a VJP but no case: add one to "
        << "OpAutogradTest.cpp's cases() and scripts/"
        << "gen_op_autograd_golden.py, and rerun the script";
  }
  EXPECT_GT(ops, 50u);
}

} // namespace
