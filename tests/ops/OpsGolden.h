//===- OpsGolden.h - reads tests/ops/ops_golden.txt (gen_ops_golden.py) ---===//
#ifndef STRATA_TESTS_OPS_GOLDEN_H
#define STRATA_TESTS_OPS_GOLDEN_H

#include <strata/strata.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace opsgolden {

/// One case: its tensors by key ("in0", "out1", "gout0", "grad2", ...).
struct Case {
  std::string name;
  std::map<std::string, strata::Tensor> tensors;
  bool has(const std::string &k) const { return tensors.count(k) != 0; }
  const strata::Tensor &at(const std::string &k) const {
    auto it = tensors.find(k);
    if (it == tensors.end())
      throw std::runtime_error(name + ": no tensor '" + k + "'");
    return it->second;
  }
};

/// A case's inputs in0, in1, ... as fresh leaves (clones), those with a
/// recorded gradient (grad<k>) requiring grad.
inline std::vector<strata::Tensor> inputsOf(const Case &c) {
  std::vector<strata::Tensor> in;
  for (int k = 0; c.has("in" + std::to_string(k)); ++k) {
    strata::Tensor t = c.at("in" + std::to_string(k)).clone();
    if (c.has("grad" + std::to_string(k)))
      t.requires_grad_();
    in.push_back(t);
  }
  return in;
}

/// A tensor of `sizes` from row-major values (0-d: a view of one element).
template <typename T>
strata::Tensor make(const std::vector<T> &v, const strata::Shape &sizes) {
  if (sizes.empty())
    return strata::from_vector(v).view({});
  return strata::from_vector(v, sizes);
}

/// Every case of the file, in order (b, i32, i64, f32, f64 tensors).
inline std::vector<Case> load(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line == "end")
      continue;
    std::istringstream s(line);
    std::string key;
    s >> key;
    if (key == "case") {
      cases.emplace_back();
      s >> cases.back().name;
      continue;
    }
    std::string dtype, colon;
    int64_t rank;
    s >> dtype >> rank;
    strata::Shape sizes(static_cast<size_t>(rank));
    for (auto &d : sizes)
      s >> d;
    s >> colon;
    strata::Tensor t;
    if (dtype == "b" || dtype == "i32" || dtype == "i64") {
      std::vector<int64_t> v;
      for (int64_t x; s >> x;)
        v.push_back(x);
      if (dtype == "b") {
        std::vector<bool> b(v.begin(), v.end());
        t = make(b, sizes);
      } else if (dtype == "i32") {
        t = make(std::vector<int32_t>(v.begin(), v.end()), sizes);
      } else {
        t = make(v, sizes);
      }
    } else {
      std::vector<double> v;
      for (std::string x; s >> x;)
        v.push_back(std::strtod(x.c_str(), nullptr)); // nan, inf too
      if (dtype == "f32")
        t = make(std::vector<float>(v.begin(), v.end()), sizes);
      else
        t = make(v, sizes);
    }
    cases.back().tensors[key] = t.eval();
  }
  return cases;
}

} // namespace opsgolden

#endif // STRATA_TESTS_OPS_GOLDEN_H
