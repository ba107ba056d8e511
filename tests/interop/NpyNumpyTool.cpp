//===- NpyNumpyTool.cpp - strata's side of the NumPy .npy exchange test ---===//
//
// Driven by npy_numpy_check.py (the `npy-numpy` test):
//   strata-npy-numpy write DIR    saves one .npy file per case of the table
//                                 below (every dtype, C and Fortran order,
//                                 views saved logically); the script checks
//                                 each with numpy.load against its own
//                                 formula for the same case.
//   strata-npy-numpy dump FILE    loads FILE with strata::load and prints
//                                 dtype, sizes, strides and the values in
//                                 logical order, for the script to compare
//                                 with what numpy wrote.
// Any strata::Error is printed and exits 1.
//
//===----------------------------------------------------------------------===//
#include "strata/strata.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

using namespace strata;

namespace {

/// The tensors strata writes; npy_numpy_check.py holds the same names with
/// numpy's formula for each.
std::vector<std::pair<const char *, std::function<Tensor()>>> writeCases() {
  return {
      {"f32_c",
       [] {
         return arange(24, kFloat32).reshape({2, 3, 4}) * 0.5 - 3;
       }},
      {"f64_c",
       [] {
         return arange(12, kFloat64).reshape({3, 4}) / 8;
       }},
      {"i32_c", [] { return arange(10, kInt32) - 5; }},
      {"i64_c",
       [] {
         return arange(6, kInt64).reshape({2, 3}) * int64_t{3000000000};
       }},
      {"bool_compare_fortran",
       [] {
         return arange(12).reshape({3, 4}).t() > 5;
       }},
      {"f64_fortran",
       [] {
         return arange(12, kFloat64).reshape({3, 4}).t();
       }},
      {"i32_fortran_3d",
       [] {
         return arange(24, kInt32).reshape({2, 3, 4}).permute({2, 1, 0});
       }},
      {"bool_fortran",
       [] {
         return (arange(6).reshape({2, 3}) >= 2).t();
       }},
      {"f32_strided_flipped",
       [] {
         return arange(40, kFloat32)
             .reshape({5, 8})
             .slice(1, 1, 7, 2)
             .flip({0});
       }},
      {"i64_offset",
       [] {
         return arange(30, kInt64)
             .reshape({5, 6})
             .narrow(0, 2, 2)
             .narrow(1, 1, 4);
       }},
      {"f64_expanded",
       [] {
         return arange(3, kFloat64).reshape({3, 1}).expand({3, 4});
       }},
      {"f32_diagonal",
       [] {
         return arange(16, kFloat32).reshape({4, 4}).diagonal();
       }},
      {"f32_scalar_view", [] { return arange(4, kFloat32)[2]; }},
      {"f64_scalar_sum", [] { return arange(5, kFloat64).sum(); }},
      {"f32_empty",
       [] {
         return zeros({0, 3}, kFloat32);
       }},
      {"f64_special", [] { return (arange(3, kFloat64) - 1) / 0.0; }},
  };
}

void printShape(const char *name, const Shape &s) {
  std::printf("%s", name);
  for (int64_t v : s)
    std::printf(" %" PRId64, v);
  std::printf("\n");
}

void dump(const std::string &path) {
  Tensor t = load(path);
  std::printf("dtype %s\n", toString(t.dtype()).c_str());
  printShape("sizes", t.sizes());
  printShape("strides", t.strides());
  std::printf("values");
  switch (t.dtype()) {
  case kFloat32:
    for (float v : t.to_vector<float>())
      std::printf(" %.17g", static_cast<double>(v));
    break;
  case kFloat64:
    for (double v : t.to_vector<double>())
      std::printf(" %.17g", v);
    break;
  case kInt32:
  case kInt64:
    for (int64_t v : t.to_vector<int64_t>())
      std::printf(" %" PRId64, v);
    break;
  case kBool:
    for (bool v : t.to_vector<bool>())
      std::printf(" %d", v ? 1 : 0);
    break;
  }
  std::printf("\n");
}

int usage() {
  std::fprintf(stderr, "usage: strata-npy-numpy write DIR | dump FILE...\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    return usage();
  try {
    if (std::strcmp(argv[1], "write") == 0 && argc == 3) {
      for (auto &[name, make] : writeCases())
        save(make(), std::string(argv[2]) + "/" + name + ".npy");
      return 0;
    }
    if (std::strcmp(argv[1], "dump") == 0) {
      for (int i = 2; i < argc; ++i) {
        std::printf("file %s\n", argv[i]);
        dump(argv[i]);
      }
      return 0;
    }
  } catch (const Error &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return usage();
}
