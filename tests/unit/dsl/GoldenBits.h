//===- GoldenBits.h - PyTorch's results as bits, read from a golden file --===//
//
// EdgeParityTest.cpp and RoundingParityTest.cpp compare strata's results
// with PyTorch 1.13's, which scripts/gen_edge_parity_golden.py and
// scripts/gen_rounding_parity_golden.py write one case a line:
// `name | kind | values`, the values as bits (f32 and f64 in hex, int64
// and bool in decimal), an error's message or a list of names.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TESTS_UNIT_DSL_GOLDENBITS_H
#define STRATA_TESTS_UNIT_DSL_GOLDENBITS_H

#include "strata/strata.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace golden {

/// PyTorch's result of a case: its kind ("f32", "f64", "i64", "bool",
/// "ok", "err", "name") and its values as the golden file spells them.
struct Golden {
  std::string kind;
  std::vector<std::string> values;
  std::string text; // an error's message
};

/// The cases of golden file `path` by name.
inline std::map<std::string, Golden> readGolden(const char *path) {
  std::map<std::string, Golden> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    size_t a = line.find(" | "), b = line.find(" | ", a + 3);
    if (a == std::string::npos || b == std::string::npos)
      continue;
    Golden g;
    g.kind = line.substr(a + 3, b - a - 3);
    g.text = line.substr(b + 3);
    std::istringstream values(g.text);
    for (std::string v; values >> v;)
      g.values.push_back(v);
    out[line.substr(0, a)] = g;
  }
  return out;
}

/// The golden file's spelling of strata's result `r`.
inline std::pair<std::string, std::vector<std::string>>
spell(const strata::Tensor &r) {
  using namespace strata;
  Tensor t = r.detach().contiguous().reshape({-1});
  std::vector<std::string> out;
  char buf[32];
  switch (t.dtype()) {
  case kFloat32:
    for (float v : t.to_vector<float>()) {
      std::snprintf(buf, sizeof buf, "%08x", std::bit_cast<uint32_t>(v));
      out.push_back(buf);
    }
    return {"f32", out};
  case kFloat64:
    for (double v : t.to_vector<double>()) {
      std::snprintf(
          buf, sizeof buf, "%016llx",
          static_cast<unsigned long long>(std::bit_cast<uint64_t>(v)));
      out.push_back(buf);
    }
    return {"f64", out};
  case kBool:
    for (int64_t v : t.to(kInt64).to_vector<int64_t>())
      out.push_back(std::to_string(v));
    return {"bool", out};
  default:
    for (int64_t v : t.to_vector<int64_t>())
      out.push_back(std::to_string(v));
    return {"i64", out};
  }
}

/// A case: strata's twin of one PyTorch program.
using Case = std::function<strata::Tensor()>;

/// Runs `cases` against `golden`: bit for bit, or the error.
inline void
expectCases(const std::map<std::string, Golden> &golden,
            const std::vector<std::pair<std::string, Case>> &cases) {
  ASSERT_FALSE(golden.empty()) << "no golden file";
  for (const auto &[name, run] : cases) {
    auto it = golden.find(name);
    ASSERT_NE(it, golden.end()) << name << ": not in the golden file";
    const Golden &want = it->second;
    std::string error;
    std::pair<std::string, std::vector<std::string>> got;
    try {
      strata::Tensor r = run();
      got = r.defined()
                ? spell(r)
                : std::pair<std::string, std::vector<std::string>>{"ok", {}};
    } catch (const strata::Error &e) {
      error = e.message();
    }
    if (want.kind == "err") {
      EXPECT_NE(error.find(want.text), std::string::npos)
          << name << ": PyTorch raises \"" << want.text << "\", strata "
          << (error.empty() ? "ran" : "raised \"" + error + "\"");
      continue;
    }
    ASSERT_TRUE(error.empty()) << name << ": " << error;
    EXPECT_EQ(got.first, want.kind) << name;
    EXPECT_EQ(got.second, want.values) << name;
  }
}

/// n dyadic numbers k / 4096, k in [-2^19, 2^19), from the generators' LCG.
inline std::vector<float> dyadic(int n, uint64_t seed) {
  std::vector<float> out;
  uint64_t s = seed;
  for (int i = 0; i < n; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    int64_t k = static_cast<int64_t>((s >> 33) % (1u << 20)) - (1 << 19);
    out.push_back(static_cast<float>(k) / 4096.0f);
  }
  return out;
}

} // namespace golden

#endif // STRATA_TESTS_UNIT_DSL_GOLDENBITS_H
