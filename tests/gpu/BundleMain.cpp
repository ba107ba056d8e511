//===- BundleMain.cpp - the programs of tests/gpu/run.sh in one binary ----===//
//
// strata-gpu (built with STRATA_STATIC_LLVM=ON by tests/gpu/make-bundle.sh)
// holds strata-run, strata-unit-cuda, strata-gpu-dsl-smoke,
// strata-bench-cuda and strata-fuzz-programs, compiled from their own
// sources with `main` renamed: one copy of the statically linked LLVM and
// MLIR (about 40 MiB) instead of five. It runs the program named by its own
// name (the bundle's bin/ has a link per program) or by its first argument:
//
//   strata-run --engine=jit f.mlir     strata-gpu strata-run --engine=jit
//   f.mlir
//
// The two GoogleTest programs share the binary's tests: strata-unit-cuda
// runs all but DslCuda.*, strata-gpu-dsl-smoke only DslCuda.* (a
// --gtest_filter given on the command line narrows that further).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

int strataRunMain(int argc, char **argv);
int strataBenchCudaMain(int argc, char **argv);
int strataFuzzProgramsMain(int argc, char **argv);

namespace {

constexpr const char *kSmokeTests = "DslCuda.*";

/// Runs the GoogleTest tests of one program: `smoke` (DslCuda.*) or the
/// rest. The user's --gtest_filter, if any, is combined with that choice.
int runTests(int argc, char **argv, bool smoke) {
  testing::InitGoogleTest(&argc, argv);
  std::string filter = GTEST_FLAG_GET(filter);
  size_t dash = filter.find('-');
  std::string positive = filter.substr(0, dash);
  std::string negative =
      dash == std::string::npos ? "" : filter.substr(dash + 1);
  if (smoke) {
    // Only a catch-all is narrowed to the smoke tests; a pattern of the
    // user's names tests and is kept.
    if (positive.empty() || positive == "*")
      positive = kSmokeTests;
  } else {
    if (positive.empty())
      positive = "*";
    negative += std::string(negative.empty() ? "" : ":") + kSmokeTests;
  }
  GTEST_FLAG_SET(filter, positive + (negative.empty() ? "" : "-" + negative));
  return RUN_ALL_TESTS();
}

int usage() {
  std::fprintf(stderr,
               "usage: strata-gpu PROGRAM [ARGS...], or run it through a link "
               "named PROGRAM;\nPROGRAM is one of strata-run, "
               "strata-unit-cuda, strata-gpu-dsl-smoke, strata-bench-cuda, "
               "strata-fuzz-programs\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  const char *slash = std::strrchr(argv[0], '/');
  std::string name = slash ? slash + 1 : argv[0];
  if (name == "strata-gpu") {
    if (argc < 2)
      return usage();
    name = argv[1];
    // The program sees itself as argv[0]: drop "strata-gpu".
    ++argv;
    --argc;
  }
  if (name == "strata-run")
    return strataRunMain(argc, argv);
  if (name == "strata-bench-cuda")
    return strataBenchCudaMain(argc, argv);
  if (name == "strata-fuzz-programs")
    return strataFuzzProgramsMain(argc, argv);
  if (name == "strata-unit-cuda")
    return runTests(argc, argv, /*smoke=*/false);
  if (name == "strata-gpu-dsl-smoke")
    return runTests(argc, argv, /*smoke=*/true);
  std::fprintf(stderr, "strata-gpu: unknown program '%s'\n", name.c_str());
  return usage();
}
