//===- LinearCost.cpp - cost against program length, beside PyTorch eager ===//
//
// `make bench`: seven workloads of n ops, n = 10^2 .. 10^5, each timed
// from the first recorded op to the checked result, compiles included
// (the run starts with an empty disk cache unless STRATA_CACHE_DIR is set;
// the sizes run in increasing order in one process, so a larger size may
// reuse kernels a smaller one compiled, as a long-running program would):
//   (a) chain    y = x; n times y = y * 0.5 or y + 1 (alternating);
//   (b) add_     x.add_(1) n times, then read x;
//   (c) eval     n independent outputs x + i, one eval() of all;
//   (d) backward y = x; n times y = y * c (c = 1 - 1/n), y.sum().backward();
//   (e) backward_ h = x * 1; n times h.mul_(c) or h.add_(0.001), alternating
//       (in-place writes with history), h.sum().backward();
//   (f) read_    (e) with h read (and checked) every 100 writes;
//   (g) grad_    (e) by grad({h.sum()}, {x}).
// Every result is checked against the same recurrence computed in the
// program (or its closed form), so speed never hides a wrong answer.
// PyTorch eager (/usr/bin/python3 with torch) runs the same workloads in
// the same run (benchmarks/linear_cost_torch.py). Reports wall and CPU
// seconds (on a shared machine wall time includes other processes' turns),
// µs per op and the log-log slope of time against n (targets: <= 5 µs/op
// at 10^5, slope <= 1.1). Arguments: the largest n (default 100000),
// --min N (default 100), or --sizes N,N,... (in that order, one process);
// --only WORKLOAD, --no-torch, --markdown FILE; --repeat R runs each size R
// times (later steps printed below its row); --read-every K: (f)'s reads.
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace strata;

namespace {

constexpr int64_t kElems = 16; // small tensors: the cost is per op

/// Process CPU seconds (all threads): on a shared machine wall time also
/// counts other processes' turns, CPU time only this one's work.
double cpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/// Wall-clock and CPU seconds of one call of `f`.
struct Times {
  double wall, cpu;
};
Times seconds(const std::function<void()> &f) {
  auto t0 = std::chrono::steady_clock::now();
  double c0 = cpuNow();
  f();
  double c1 = cpuNow();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count(),
          c1 - c0};
}

bool close(double got, double want, double rel = 1e-4) {
  return std::fabs(got - want) <= rel * std::max(1.0, std::fabs(want));
}

[[noreturn]] void wrong(const char *what, int64_t n, double got, double want) {
  fprintf(stderr, "linear-cost: %s at n=%lld: got %.9g, expected %.9g\n", what,
          static_cast<long long>(n), got, want);
  exit(1);
}

void chain(int64_t n) {
  Tensor x = arange(kElems).to(kFloat32);
  Tensor y = x;
  for (int64_t i = 0; i < n; ++i)
    y = (i % 2 == 0) ? y * 0.5 : y + 1.0;
  std::vector<float> got = y.to_vector<float>();
  for (int64_t e = 0; e < kElems; ++e) {
    float want = static_cast<float>(e);
    for (int64_t i = 0; i < n; ++i)
      want = (i % 2 == 0) ? want * 0.5f : want + 1.0f;
    if (!close(got[e], want))
      wrong("chain", n, got[e], want);
  }
}

void addInPlace(int64_t n) {
  Tensor x = zeros({kElems});
  for (int64_t i = 0; i < n; ++i)
    x.add_(1);
  std::vector<float> got = x.to_vector<float>();
  for (float v : got)
    if (v != static_cast<float>(n))
      wrong("add_", n, v, static_cast<double>(n));
}

void wideEval(int64_t n) {
  Tensor x = arange(kElems).to(kFloat32);
  std::vector<Tensor> outs;
  outs.reserve(n);
  for (int64_t i = 0; i < n; ++i)
    outs.push_back(x + static_cast<double>(i));
  eval(outs);
  for (int64_t i = 0; i < n; i += std::max<int64_t>(1, n / 97)) {
    std::vector<float> got = outs[i].to_vector<float>();
    for (int64_t e = 0; e < kElems; ++e)
      if (got[e] != static_cast<float>(e + i))
        wrong("eval", n, got[e], static_cast<double>(e + i));
  }
}

void backward(int64_t n) {
  double c = 1.0 - 1.0 / static_cast<double>(n);
  Tensor x = ones({kElems}, TensorOptions().requires_grad(true));
  Tensor y = x;
  for (int64_t i = 0; i < n; ++i)
    y = y * c;
  y.sum().backward();
  std::vector<float> got = x.grad().to_vector<float>();
  float want = 1.0f;
  for (int64_t i = 0; i < n; ++i)
    want *= static_cast<float>(c);
  for (float v : got)
    if (!close(v, want, 1e-3))
      wrong("backward", n, v, want);
}

/// h = x * 1; n times h.mul_(c) or h.add_(d) (alternating), with history,
/// then the gradient of h.sum() with respect to x: in-place writes inside
/// the differentiated graph. With `readEvery`, h is read every that many
/// writes (a loop that logs its state), each read checked against the
/// recurrence: the versions read are evaluated, then written over; with
/// `byGrad`, the gradient is grad({h.sum()}, {x}), else backward().
void inPlaceChain(int64_t n, const char *name, int64_t readEvery, bool byGrad) {
  const double c = 1.0 - 1.0 / static_cast<double>(n), d = 0.001;
  Tensor x = ones({kElems}, TensorOptions().requires_grad(true));
  Tensor h = x * 1.0;
  float value = 1.0f;
  for (int64_t i = 0; i < n; ++i) {
    (i % 2 == 0) ? h.mul_(c) : h.add_(d);
    value = (i % 2 == 0) ? value * static_cast<float>(c)
                         : value + static_cast<float>(d);
    if (readEvery > 0 && (i + 1) % readEvery == 0)
      if (float got = h.to_vector<float>()[0]; !close(got, value, 1e-3))
        wrong(name, n, got, value);
  }
  Tensor g;
  if (byGrad) {
    g = grad({h.sum()}, {x})[0];
  } else {
    h.sum().backward();
    g = x.grad();
  }
  float want = 1.0f;
  for (int64_t i = 0; i < n; i += 2)
    want *= static_cast<float>(c);
  for (float v : g.to_vector<float>())
    if (!close(v, want, 1e-3))
      wrong(name, n, v, want);
}

int64_t gReadEvery = 100; // --read-every: (f)'s reads
void backwardInPlace(int64_t n) { inPlaceChain(n, "backward_", 0, false); }
void readInPlace(int64_t n) { inPlaceChain(n, "read_", gReadEvery, false); }
void gradInPlace(int64_t n) { inPlaceChain(n, "grad_", 0, true); }

struct Workload {
  const char *name;
  const char *what;
  void (*run)(int64_t);
};
const Workload kWorkloads[] = {
    {"chain", "(a) chain of n ops y * 0.5, y + 1", chain},
    {"add_", "(b) n pending x.add_(1), then read", addInPlace},
    {"eval", "(c) eval() of n outputs x + i", wideEval},
    {"backward", "(d) backward of an n-step chain", backward},
    {"backward_", "(e) backward through n in-place ops", backwardInPlace},
    {"read_", "(f) (e) read every 100 ops (--read-every)", readInPlace},
    {"grad_", "(g) (e) by grad() instead of backward()", gradInPlace},
};

/// PyTorch's seconds per (workload, n): benchmarks/linear_cost_torch.py.
std::map<std::pair<std::string, int64_t>, double>
torchTimes(const std::string &script, const std::string &sizes,
           const std::string &only) {
  std::map<std::pair<std::string, int64_t>, double> times;
  std::string cmd = "/usr/bin/python3 " + script + " " + sizes + " " +
                    (only.empty() ? "-" : only) + " " +
                    std::to_string(gReadEvery);
  FILE *p = popen(cmd.c_str(), "r");
  if (!p)
    return times;
  char name[64];
  long long n;
  double s;
  while (fscanf(p, "%63s %lld %lf", name, &n, &s) == 3)
    times[{name, n}] = s;
  pclose(p);
  return times;
}

} // namespace

int main(int argc, char **argv) {
  int64_t minN = 100, maxN = 100000;
  std::string markdown, only, sizeList;
  bool withTorch = true;
  int repeat = 1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--markdown") && i + 1 < argc)
      markdown = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else if (!strcmp(argv[i], "--min") && i + 1 < argc)
      minN = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
      sizeList = argv[++i];
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
      repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--read-every") && i + 1 < argc)
      gReadEvery = std::max(1LL, atoll(argv[++i]));
    else if (!strcmp(argv[i], "--no-torch"))
      withTorch = false;
    else
      maxN = atoll(argv[i]);
  }
  // Compiles included: a fresh disk cache, unless STRATA_CACHE_DIR is set.
  std::string cacheDir;
  if (!getenv("STRATA_CACHE_DIR")) {
    char tmpl[] = "/tmp/strata-linear-XXXXXX";
    if (mkdtemp(tmpl)) {
      cacheDir = tmpl;
      setenv("STRATA_CACHE_DIR", tmpl, 1);
    }
  }

  std::vector<int64_t> sizes;
  for (const char *p = sizeList.c_str(); *p;) {
    char *end;
    long long n = strtoll(p, &end, 10);
    if (end == p || n < 1) {
      fprintf(stderr, "linear-cost: --sizes wants n,n,... (n >= 1), got '%s'\n",
              sizeList.c_str());
      return 2;
    }
    sizes.push_back(n);
    p = *end == ',' ? end + 1 : end;
  }
  if (sizes.empty())
    for (int64_t n = minN; n <= maxN; n *= 10)
      sizes.push_back(n);
  std::map<std::pair<std::string, int64_t>, double> torch;
  if (withTorch) {
    std::string list;
    for (int64_t n : sizes)
      list += (list.empty() ? "" : ",") + std::to_string(n);
    torch = torchTimes(STRATA_SOURCE_DIR "/benchmarks/linear_cost_torch.py",
                       list, only);
  }
  std::string table =
      "| workload | n | strata wall s | CPU s | µs/op | programs | compiles "
      "| PyTorch wall s | µs/op |\n|---|---|---|---|---|---|---|---|---|\n";
  std::string slopes;
  auto slope = [&](const std::vector<double> &t) {
    return std::log(t.back() / t.front()) /
           std::log(static_cast<double>(sizes.back()) / sizes.front());
  };
  for (const Workload &w : kWorkloads) {
    if (!only.empty() && only != w.name)
      continue;
    std::vector<double> walls, cpus, torchWalls;
    for (int64_t n : sizes) {
      reset_eval_stats();
      Times t = seconds([&] { w.run(n); });
      EvalStats st = eval_stats();
      walls.push_back(t.wall);
      cpus.push_back(t.cpu);
      auto it = torch.find({w.name, n});
      double pt = it == torch.end() ? NAN : it->second;
      torchWalls.push_back(pt);
      char row[256];
      snprintf(row, sizeof row,
               "| %s | %lld | %.3f | %.3f | %.2f | %lld | %lld | %.4f | %.2f "
               "|\n",
               w.name, static_cast<long long>(n), t.wall, t.cpu,
               t.wall / n * 1e6, static_cast<long long>(st.programs),
               static_cast<long long>(st.compiles), pt, pt / n * 1e6);
      table += row;
      printf("%s", row);
      // --repeat R: the same n again in this process (a training loop's
      // later steps: what is prepared stays prepared), not in the table.
      for (int k = 1; k < repeat; ++k) {
        reset_eval_stats();
        Times again = seconds([&] { w.run(n); });
        EvalStats sa = eval_stats();
        printf("  %s n=%lld step %d: wall %.3f s, CPU %.3f s, %lld programs, "
               "%lld compiles\n",
               w.name, static_cast<long long>(n), k + 1, again.wall, again.cpu,
               static_cast<long long>(sa.programs),
               static_cast<long long>(sa.compiles));
      }
      fflush(stdout);
    }
    double perOp = walls.back() / sizes.back() * 1e6;
    double perOpCpu = cpus.back() / sizes.back() * 1e6;
    auto verdict = [](double slope, double perOp) {
      return slope <= 1.1 && perOp <= 5.0 ? "met" : "MISSED";
    };
    char line[400];
    snprintf(line, sizeof line,
             "%s: n = %lld..%lld: slope %.2f wall, %.2f CPU (PyTorch %.2f); "
             "at n = %lld %.2f µs/op wall, %.2f CPU (PyTorch %.2f); target "
             "(<= 5 µs/op, slope <= 1.1) %s on wall time, %s on CPU time\n",
             w.what, static_cast<long long>(sizes.front()),
             static_cast<long long>(sizes.back()), slope(walls), slope(cpus),
             slope(torchWalls), static_cast<long long>(sizes.back()), perOp,
             perOpCpu, torchWalls.back() / sizes.back() * 1e6,
             verdict(slope(walls), perOp), verdict(slope(cpus), perOpCpu));
    slopes += line;
  }
  if (!cacheDir.empty())
    std::filesystem::remove_all(cacheDir);
  printf("\n%s", slopes.c_str());
  if (!markdown.empty()) {
    if (FILE *f = fopen(markdown.c_str(), "w")) {
      fprintf(f, "%s\n%s", table.c_str(), slopes.c_str());
      fclose(f);
    }
  }
  return 0;
}
