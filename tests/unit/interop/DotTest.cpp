//===- DotTest.cpp - to_dot draws the recorded trace ----------------------===//
#include "strata/strata.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

using namespace strata;

namespace {
int count(const std::string &s, const std::string &what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos;
       at = s.find(what, at + 1))
    ++n;
  return n;
}
/// A graph as Graphviz laid it out (`dot -Tplain`): node labels by name
/// and each edge's tokens after its endpoints.
struct Rendered {
  std::map<std::string, std::string> labels;
  std::vector<std::pair<std::string, std::string>> edges;
  std::vector<size_t> edgeTokens;
};

/// Unquotes a -Tplain token; "\n" stays the two characters.
std::string word(std::istringstream &in) {
  in >> std::ws;
  if (in.peek() != '"') {
    std::string w;
    in >> w;
    return w;
  }
  in.get();
  std::string w;
  for (char c; in.get(c) && c != '"';) {
    if (c == '\\' && in.peek() == '"')
      in.get(c);
    w += c;
  }
  return w;
}

Rendered render(const std::string &dot) {
  char path[] = "/tmp/strata-dot-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << dot;
  std::string cmd = std::string("dot -Tplain ") + path + " 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; p && (n = fread(buf, 1, sizeof buf, p)) > 0;)
    out.append(buf, n);
  int rc = p ? pclose(p) : -1;
  std::remove(path);
  EXPECT_EQ(rc, 0) << "Graphviz's dot failed (install it: "
                      "scripts/install-deps.sh):\n"
                   << out << "\n"
                   << dot;
  Rendered r;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string kind = word(in);
    if (kind == "node") {
      std::string name = word(in);
      for (int i = 0; i < 4; ++i) // x y width height
        word(in);
      r.labels[name] = word(in);
    } else if (kind == "edge") {
      std::string from = word(in), to = word(in);
      r.edges.emplace_back(from, to);
      size_t n = 0;
      while (!word(in).empty())
        ++n;
      r.edgeTokens.push_back(n);
    }
  }
  return r;
}
} // namespace

// The autograd graph as Graphviz draws it: every node one grad_fn with its
// name, the line that recorded it and its saved tensors' sizes; leaves made
// by factories have their AccumulateGrad; edges carry no label.
TEST(Dot, AutogradGraphRendersOneNodePerGradFn) {
  Tensor x = ones({2, 3}).requires_grad_();
  Tensor w = randn({2, 3}).requires_grad_();
  Tensor b = full({3}, 0.5).requires_grad_();
  // clang-format off
  Tensor m = x * w; int mulLine = __LINE__;
  // clang-format on
  Tensor y = (m.exp() + b).sum();
  Rendered r = render(to_dot({y}, GraphKind::Autograd));
  std::map<std::string, int> byName;
  std::string mulLabel, sumLabel;
  for (const auto &[name, label] : r.labels) {
    EXPECT_NE(label, name); // labelled by what it is, not by its id
    std::string first = label.substr(0, label.find("\\n"));
    ++byName[first];
    if (first == "MulBackward0")
      mulLabel = label;
    if (first == "SumBackward0")
      sumLabel = label;
  }
  EXPECT_EQ(byName["SumBackward0"], 1);
  EXPECT_EQ(byName["AddBackward0"], 1);
  EXPECT_EQ(byName["ExpBackward0"], 1);
  EXPECT_EQ(byName["MulBackward0"], 1);
  EXPECT_EQ(byName["AccumulateGrad"], 3); // x, w and b: all from factories
  EXPECT_EQ(byName["tensor 0"], 1);
  EXPECT_EQ(mulLabel, "MulBackward0\\nDotTest.cpp:" + std::to_string(mulLine) +
                          "\\nsaved: [2,3] [2,3]");
  EXPECT_NE(sumLabel.find("DotTest.cpp:"), std::string::npos) << sumLabel;
  int leaves = 0;
  for (const auto &[name, label] : r.labels)
    if (label.rfind("AccumulateGrad\\nleaf ", 0) == 0)
      ++leaves;
  EXPECT_EQ(leaves, 3);
  // out -> Sum -> Add -> {Exp, b} ; Exp -> Mul -> {x, w}
  EXPECT_EQ(r.edges.size(), 7u);
  for (size_t n : r.edgeTokens) // n, n points, style, color: no label
    EXPECT_EQ(n % 2, 1u) << n;
}

TEST(Dot, DrawsTheTraceWithFoldedLayouts) {
  Tensor x = from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor y = (x.t() * 2).exp();
  std::string dot = to_dot({y});
  EXPECT_EQ(dot.rfind("digraph strata {", 0), 0u) << dot;
  EXPECT_NE(dot.find("shape=cylinder"), std::string::npos) << dot;
  // The transposed read is one edge labelled with the folded triple.
  EXPECT_NE(dot.find("[3,2] strides [1,3] offset 0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("exp : f32"), std::string::npos) << dot;
  EXPECT_NE(dot.find("DotTest.cpp:"), std::string::npos) << dot;
  EXPECT_EQ(count(dot, "tensor 0"), 1);
  // Deterministic, and a shared input is drawn once.
  EXPECT_EQ(to_dot({y}), dot);
  std::string two = to_dot({y, y + x.t()});
  EXPECT_EQ(count(two, "shape=cylinder"), 1) << two;
  EXPECT_EQ(dot.back(), '\n');
}

TEST(Dot, AutogradGraphAndBadPath) {
  Tensor x = arange(3, kFloat32).requires_grad_();
  Tensor y = (x * 2).sum();
  std::string dot = to_dot({y}, GraphKind::Autograd);
  EXPECT_NE(dot.find("SumBackward0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("MulBackward0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("AccumulateGrad"), std::string::npos) << dot;
  EXPECT_THROW(save_dot({x}, "/nonexistent-dir/x.dot"), Error);
}
