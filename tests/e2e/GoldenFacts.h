//===- GoldenFacts.h - PyTorch's facts about ops, read from a file -*- C++
//-*-===//
//
// The golden files of scripts/gen_binary_golden.py,
// scripts/gen_logaddexp_golden.py and scripts/gen_unary_golden.py: one fact
// a line, `name dtype n v1 .. vn` (values as text: integers stay exact),
// `name error MESSAGE` or `name grad_fn NAME`; `#` comments. An op's e2e
// test reads its file once.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_TESTS_E2E_GOLDENFACTS_H
#define STRATA_TESTS_E2E_GOLDENFACTS_H

#include <strata/strata.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace goldenfacts {

/// One golden fact: a dtype and values, a grad_fn name, or PyTorch's error.
struct Golden {
  std::string dtype;
  std::vector<std::string> values;
  std::string error, gradFn;
};

/// Every fact of the file at `path` by name (empty, and a test failure,
/// when it cannot be read).
inline std::map<std::string, Golden> read(const char *path) {
  std::map<std::string, Golden> facts;
  std::ifstream in(path);
  if (!in)
    ADD_FAILURE() << "cannot read the golden file " << path;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ls(line);
    std::string name;
    Golden fact;
    ls >> name >> fact.dtype;
    if (fact.dtype == "error") {
      std::getline(ls >> std::ws, fact.error);
    } else if (fact.dtype == "grad_fn") {
      ls >> fact.gradFn;
    } else {
      size_t n;
      ls >> n;
      fact.values.resize(n);
      for (std::string &v : fact.values)
        ls >> v;
    }
    facts[name] = fact;
  }
  return facts;
}

/// The fact `name` of `facts`; a test failure and an empty fact if absent.
inline const Golden &find(const std::map<std::string, Golden> &facts,
                          const std::string &name) {
  auto it = facts.find(name);
  if (it == facts.end()) {
    ADD_FAILURE() << "no golden fact " << name;
    static const Golden none;
    return none;
  }
  return it->second;
}

/// The integer written as `text` (an int64 or bool value), exactly; a test
/// failure naming `where` when the text is not a whole int64 (a float's
/// "25.0" or "1e+18" would lose digits through a double).
inline int64_t exactInt(const std::string &text, const std::string &where) {
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE)
    ADD_FAILURE() << where << ": golden value '" << text
                  << "' is not an int64 written exactly";
  return static_cast<int64_t>(v);
}

/// The elements of `t` (row-major): doubles for floats, exact int64 for
/// integers and bool, as the facts compare them.
inline void elements(const strata::Tensor &t, std::vector<double> &f,
                     std::vector<int64_t> &i) {
  using strata::DType;
  strata::Tensor c = t.contiguous();
  switch (t.dtype()) {
  case DType::F32: {
    auto v = c.to_vector<float>();
    f.assign(v.begin(), v.end());
    return;
  }
  case DType::F64:
    f = c.to_vector<double>();
    return;
  case DType::I32: {
    auto v = c.to_vector<int32_t>();
    i.assign(v.begin(), v.end());
    return;
  }
  case DType::I64:
    i = c.to_vector<int64_t>();
    return;
  case DType::Bool:
    i = c.to(DType::I64).to_vector<int64_t>();
    return;
  }
}

} // namespace goldenfacts

#endif // STRATA_TESTS_E2E_GOLDENFACTS_H
