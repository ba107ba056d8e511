//===- AutogradBench.cpp - backward vs forward time (autograd issue) ------===//
//
// `make bench`: forward + backward of ((x.t() * w).relu()).sum() on 1024x1024
// f32 and of one 3-layer MLP step, against the forward alone measured in the
// same run (the same recorded program, evaluated under NoGradGuard).
// "forward + backward" is what a training step does: record, backward(),
// read the loss and the gradients. Reports the ratio backward/forward
// (target <= 2) and the kernels each runs (eval_stats(), which counts the
// gradient programs too). Medians of several repetitions, forward and
// forward + backward alternating; programs are compiled once (warm-up)
// before timing. Argument: the number of repetitions (default 21).
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <vector>

using namespace strata;

namespace {
/// Wall-clock and process CPU seconds (all threads) of one call of `f`.
struct Times {
  double wall, cpu;
};
double cpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
Times seconds(const std::function<void()> &f) {
  auto t0 = std::chrono::steady_clock::now();
  double c0 = cpuNow();
  f();
  double c1 = cpuNow();
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count(),
          c1 - c0};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Measured {
  double forward, total, forwardCpu, totalCpu;
  int64_t forwardKernels, totalKernels, totalPrograms;
};

/// `forward()` returns the scalar loss; `leaves` require grad.
Measured measure(const std::function<Tensor()> &forward,
                 std::vector<Tensor> leaves, int reps) {
  auto zeroGrads = [&] {
    for (Tensor &l : leaves)
      l.mutable_grad() = Tensor();
  };
  auto step = [&] {
    Tensor loss = forward();
    loss.backward();
    loss.item<float>();
    for (Tensor &l : leaves)
      l.grad().eval();
  };
  // Warm-up: compile the forward program and the gradient program.
  forward().eval();
  step();
  zeroGrads();
  std::vector<double> fwd, all, fwdCpu, allCpu;
  Measured m{};
  for (int i = 0; i < reps; ++i) {
    reset_eval_stats();
    Times f = seconds([&] {
      NoGradGuard guard;
      forward().item<float>();
    });
    fwd.push_back(f.wall);
    fwdCpu.push_back(f.cpu);
    m.forwardKernels = eval_stats().kernels;
    reset_eval_stats();
    Times a = seconds(step);
    all.push_back(a.wall);
    allCpu.push_back(a.cpu);
    m.totalKernels = eval_stats().kernels;
    m.totalPrograms = eval_stats().programs;
    zeroGrads();
  }
  m.forward = median(fwd);
  m.total = median(all);
  m.forwardCpu = median(fwdCpu);
  m.totalCpu = median(allCpu);
  return m;
}

void report(const char *name, const Measured &m) {
  double backward = m.total - m.forward;
  double backwardCpu = m.totalCpu - m.forwardCpu;
  std::printf("| %s | %.2f | %.2f | %.2f | **%.2f** | %.2f | %.2f | %lld | "
              "%lld (%lld) |\n",
              name, m.forward * 1e3, m.total * 1e3, backward * 1e3,
              backward / m.forward, m.forwardCpu * 1e3, backwardCpu * 1e3,
              static_cast<long long>(m.forwardKernels),
              static_cast<long long>(m.totalKernels),
              static_cast<long long>(m.totalPrograms));
  std::printf("|  backward/forward in CPU time (all threads) | | | | %.2f | | "
              "| | |\n",
              backwardCpu / m.forwardCpu);
}
} // namespace

int main(int argc, char **argv) {
  int kReps = argc > 1 ? std::max(1, atoi(argv[1])) : 21;
  manual_seed(0);
  std::printf("| program | forward ms | forward+backward ms | backward ms | "
              "backward/forward | forward CPU ms | backward CPU ms | forward "
              "kernels | forward+backward kernels (programs) |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  {
    Tensor x = randn({1024, 1024}).requires_grad_();
    Tensor w = randn({1024, 1024}).requires_grad_();
    x.eval();
    w.eval();
    report("((x.t() * w).relu()).sum(), 1024x1024",
           measure([&] { return ((x.t() * w).relu()).sum(); }, {x, w}, kReps));
  }
  {
    // One step of a 3-layer MLP: 256 inputs of 512 features -> 512 -> 512
    // -> 10, relu between layers, mean squared output as the loss.
    Tensor in = randn({256, 512});
    Tensor w1 = (randn({512, 512}) * 0.05).requires_grad_();
    Tensor w2 = (randn({512, 512}) * 0.05).requires_grad_();
    Tensor w3 = (randn({512, 10}) * 0.05).requires_grad_();
    for (Tensor *t : {&in, &w1, &w2, &w3})
      t->eval();
    report("3-layer MLP step (256x512, 512-512-512-10)",
           measure(
               [&] {
                 Tensor h1 = in.matmul(w1).relu();
                 Tensor h2 = h1.matmul(w2).relu();
                 Tensor out = h2.matmul(w3);
                 return (out * out).mean();
               },
               {w1, w2, w3}, kReps));
  }
  return 0;
}
