//===- OutBench.cpp - add_out against out.copy_(a + b) and PyTorch --------===//
//
// The cost of LibTorch's `_out` forms (issue 20): `add_out(y, x, b)` against
// `y.copy_(x + b)` on n-element f32 tensors, and PyTorch eager's
// `torch.add(x, b, out=y)` / `y.copy_(x + b)` in the same run
// (benchmarks/out_torch.py, /usr/bin/python3: its figures include the
// Python call, ~0.3-1 µs of the total). Two ways of running each:
//   record: the op recorded OPS times (OPS below the pending-depth cut,
//           so nothing is evaluated while timed), then y.eval(), not timed;
//   eval:   the op and y.eval() every time (a cache-hit program each).
// Median of 7 runs of the loop (after 2 warm-up runs), µs per op; the
// values of y are checked. Options: --sizes a,b (default 1,65536),
// --ops N (default 2000), --no-torch, --markdown FILE.
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

void check(const Tensor &y, float want, const char *what) {
  std::vector<float> v = y.to_vector<float>();
  for (float e : v)
    if (e != want) {
      fprintf(stderr, "out-bench: %s gave %g, expected %g\n", what, e, want);
      std::exit(1);
    }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes = {1, 65536};
  int64_t ops = 2000;
  bool torch = true;
  std::string markdown;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      sizes.clear();
      std::stringstream s(argv[++i]);
      for (std::string x; std::getline(s, x, ',');)
        sizes.push_back(std::stoll(x));
    } else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
      ops = std::stoll(argv[++i]);
    } else if (!strcmp(argv[i], "--no-torch")) {
      torch = false;
    } else if (!strcmp(argv[i], "--markdown") && i + 1 < argc) {
      markdown = argv[++i];
    } else {
      fprintf(stderr,
              "usage: %s [--sizes a,b] [--ops N] [--no-torch] "
              "[--markdown FILE]\n",
              argv[0]);
      return 2;
    }
  }
  // (form, mode, n) -> seconds per op
  std::map<std::tuple<std::string, std::string, int64_t>, double> pt;
  if (torch) {
    std::string cmd = "/usr/bin/python3 " STRATA_SOURCE_DIR
                      "/benchmarks/out_torch.py " +
                      std::to_string(ops);
    for (int64_t n : sizes)
      cmd += " " + std::to_string(n);
    if (FILE *p = popen((cmd + " 2>/dev/null").c_str(), "r")) {
      char form[16], mode[16];
      long long n;
      double s;
      while (fscanf(p, "%15s %15s %lld %lf", form, mode, &n, &s) == 4)
        pt[{form, mode, n}] = s;
      pclose(p);
    }
  }
  std::string table = "| n | form | record µs/op | record + eval µs/op | "
                      "PyTorch eager µs/op |\n|---|---|---|---|---|\n";
  printf("out-bench: %lld ops a run, median of 7 runs\n",
         static_cast<long long>(ops));
  for (int64_t n : sizes) {
    Tensor x = full({n}, 2.0f), b = full({n}, 1.0f);
    eval({x, b});
    for (std::string form : {"add_out", "copy_"}) {
      bool out = form == "add_out";
      Tensor y = zeros({n});
      y.eval();
      auto once = [&] {
        if (out)
          add_out(y, x, b);
        else
          y.copy_(x + b);
      };
      // Recording only: `ops` ops (below the pending-depth cut), timed,
      // then one evaluation of the chain, not timed.
      std::vector<double> recs;
      for (int rep = 0; rep < 9; ++rep) {
        auto s = std::chrono::steady_clock::now();
        for (int64_t i = 0; i < ops; ++i)
          once();
        auto e = std::chrono::steady_clock::now();
        y.eval();
        if (rep >= 2)
          recs.push_back(std::chrono::duration<double>(e - s).count());
      }
      std::sort(recs.begin(), recs.end());
      double rec = recs[recs.size() / 2] / static_cast<double>(ops);
      check(y, 3.0f, form.c_str());
      int64_t evalOps = ops;
      double ev = medianSeconds([&] {
                    for (int64_t i = 0; i < evalOps; ++i) {
                      once();
                      y.eval();
                    }
                  }) /
                  static_cast<double>(evalOps);
      check(y, 3.0f, form.c_str());
      auto it = pt.find({form, "eager", n});
      char line[256];
      snprintf(line, sizeof line, "| %lld | `%s` | %.3f | %.3f | %s |\n",
               static_cast<long long>(n),
               out ? "add_out(y, x, b)" : "y.copy_(x + b)", rec * 1e6, ev * 1e6,
               it == pt.end()
                   ? "-"
                   : std::to_string(it->second * 1e6).substr(0, 5).c_str());
      table += line;
      printf("%s", line);
      fflush(stdout);
    }
  }
  if (!markdown.empty())
    if (FILE *f = fopen(markdown.c_str(), "w")) {
      fputs(table.c_str(), f);
      fclose(f);
    }
  return 0;
}
