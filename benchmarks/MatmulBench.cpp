//===- MatmulBench.cpp - matmul GFLOP/s against PyTorch and NumPy ---------===//
//
// n x n x n products through the fluent API (`a.matmul(b)`, evaluated; the
// program is prepared once), f32 and f64, beside PyTorch eager and NumPy
// (both on a tuned BLAS) in the same run (benchmarks/matmul_torch.py):
// median of 7 runs after 2 warm-up runs. strata runs a product through
// OpenBLAS where it is loaded (jit/lib/Gemm.cpp); run it with
// STRATA_BLAS=0 for the compiled kernel (`--label kernels`).
// Options: --sizes a,b,c (default 128,256,512,1024), --no-torch,
// --label NAME, --markdown FILE.
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace strata;

namespace {

template <typename F> double medianSeconds(F &&f, int reps = 7) {
  f();
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto s = std::chrono::steady_clock::now();
    f();
    t.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - s)
            .count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

unsigned threadsUsed() {
  if (const char *env = std::getenv("STRATA_NUM_THREADS"))
    if (int n = std::atoi(env); n > 0)
      return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes = {128, 256, 512, 1024};
  bool torch = true;
  std::string label = "strata", markdown;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      sizes.clear();
      std::stringstream s(argv[++i]);
      for (std::string x; std::getline(s, x, ',');)
        sizes.push_back(std::stoll(x));
    } else if (!strcmp(argv[i], "--no-torch")) {
      torch = false;
    } else if (!strcmp(argv[i], "--label") && i + 1 < argc) {
      label = argv[++i];
    } else if (!strcmp(argv[i], "--markdown") && i + 1 < argc) {
      markdown = argv[++i];
    } else {
      fprintf(stderr,
              "usage: %s [--sizes a,b] [--no-torch] [--label L] "
              "[--markdown FILE]\n",
              argv[0]);
      return 2;
    }
  }
  unsigned threads = threadsUsed();
  // (library, dtype, n) -> seconds
  std::map<std::tuple<std::string, std::string, int64_t>, double> other;
  if (torch) {
    std::string cmd = "OPENBLAS_NUM_THREADS=" + std::to_string(threads) +
                      " /usr/bin/python3 " STRATA_SOURCE_DIR
                      "/benchmarks/matmul_torch.py " +
                      std::to_string(threads);
    for (int64_t n : sizes)
      cmd += " " + std::to_string(n);
    if (FILE *p = popen((cmd + " 2>/dev/null").c_str(), "r")) {
      char lib[16], dt[8];
      long long n;
      double s;
      while (fscanf(p, "%15s %7s %lld %lf", lib, dt, &n, &s) == 4)
        other[{lib, dt, n}] = s;
      pclose(p);
    }
  }
  std::string table =
      "| dtype | n | " + label +
      " ms | GFLOP/s | PyTorch ms | NumPy ms | strata / PyTorch time |\n"
      "|---|---|---|---|---|---|---|\n";
  printf("matmul n x n x n, %u threads (%s)\n", threads, label.c_str());
  for (std::string dt : {"f32", "f64"})
    for (int64_t n : sizes) {
      DType dtype = dt == "f32" ? kFloat32 : kFloat64;
      Tensor a = randn({n, n}, dtype), b = randn({n, n}, dtype);
      a.eval();
      b.eval();
      double s = medianSeconds([&] { a.matmul(b).eval(); });
      double gflops = 2.0 * n * n * n / s * 1e-9;
      auto find = [&](const char *lib) {
        auto it = other.find({lib, dt, n});
        return it == other.end() ? -1.0 : it->second;
      };
      double pt = find("torch"), np = find("numpy");
      char line[256];
      snprintf(line, sizeof line,
               "| %s | %lld | %.3f | %.1f | %s | %s | %s |\n", dt.c_str(),
               static_cast<long long>(n), s * 1e3, gflops,
               pt < 0 ? "-" : std::to_string(pt * 1e3).substr(0, 7).c_str(),
               np < 0 ? "-" : std::to_string(np * 1e3).substr(0, 7).c_str(),
               pt < 0 ? "-" : std::to_string(s / pt).substr(0, 5).c_str());
      table += line;
      printf("%s", line);
      fflush(stdout);
    }
  if (!markdown.empty())
    if (FILE *f = fopen(markdown.c_str(), "w")) {
      fputs(table.c_str(), f);
      fclose(f);
    }
  return 0;
}
