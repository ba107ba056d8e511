//===- Golden.h - reads tests/nn/nn_golden.txt (gen_nn_golden.py) ---------===//
#ifndef STRATA_TESTS_NN_GOLDEN_H
#define STRATA_TESTS_NN_GOLDEN_H

#include <strata/strata.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace golden {

/// One case: its tensors by key ("in0", "out", "grad0", "after2_1", ...).
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

/// Every case of the file, in order.
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
    strata::Shape sizes(rank);
    for (auto &d : sizes)
      s >> d;
    s >> colon;
    if (dtype == "i64") {
      std::vector<int64_t> v;
      for (int64_t x; s >> x;)
        v.push_back(x);
      cases.back().tensors[key] = rank ? strata::from_vector(v, sizes)
                                       : strata::from_vector(v).view({});
    } else {
      std::vector<double> v;
      for (std::string x; s >> x;)
        v.push_back(std::strtod(x.c_str(), nullptr)); // subnormals too
      // from_vector's empty sizes mean 1-D: a 0-d tensor is a view.
      strata::Tensor t = rank ? strata::from_vector(v, sizes)
                              : strata::from_vector(v).view({});
      cases.back().tensors[key] =
          dtype == "f32" ? t.to(strata::kFloat32).eval() : t;
    }
  }
  return cases;
}

} // namespace golden

#endif // STRATA_TESTS_NN_GOLDEN_H
