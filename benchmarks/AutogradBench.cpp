//===- AutogradBench.cpp - backward vs forward time (autograd issue) ------===//
//
// `make bench`: forward + backward of ((x.t() * w).relu()).sum() on 1024x1024
// f32 and of one 3-layer MLP step, against the forward alone measured in the
// same run. Reports the ratio backward/forward (target <= 2) and the
// forward's kernel launches (eval_stats(); the gradient program runs through
// the autograd engine, which eval_stats does not count yet). Medians of
// several repetitions; programs are compiled once (warm-up) before timing.
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

using namespace strata;

namespace {
double seconds(const std::function<void()> &f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Measured {
  double forward, total;
  int64_t forwardKernels;
};

/// `forward()` returns the scalar loss; `leaves` require grad.
Measured measure(const std::function<Tensor()> &forward,
                 std::vector<Tensor> leaves, int reps) {
  auto zeroGrads = [&] {
    for (Tensor &l : leaves)
      l.mutable_grad() = Tensor();
  };
  // Warm-up: compile the forward program and the gradient program.
  forward().eval();
  forward().backward();
  zeroGrads();
  std::vector<double> fwd, all;
  Measured m{};
  for (int i = 0; i < reps; ++i) {
    reset_eval_stats();
    fwd.push_back(seconds([&] {
      NoGradGuard guard;
      forward().eval();
    }));
    m.forwardKernels = eval_stats().kernels;
    all.push_back(seconds([&] {
      Tensor loss = forward();
      loss.backward();
      for (Tensor &l : leaves)
        l.grad().eval();
    }));
    zeroGrads();
  }
  m.forward = median(fwd);
  m.total = median(all);
  return m;
}

void report(const char *name, const Measured &m) {
  double backward = m.total - m.forward;
  std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %lld |\n", name,
              m.forward * 1e3, m.total * 1e3, backward * 1e3,
              backward / m.forward, static_cast<long long>(m.forwardKernels));
}
} // namespace

int main() {
  constexpr int kReps = 7;
  manual_seed(0);
  std::printf("| program | forward ms | forward+backward ms | backward ms | "
              "backward/forward | forward kernels |\n"
              "|---|---:|---:|---:|---:|---:|\n");
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
