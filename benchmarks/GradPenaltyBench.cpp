//===- GradPenaltyBench.cpp - a create_graph training step ----------------===//
//
// A gradient-penalty step (create_graph, issue 20) beside PyTorch eager:
// an MLP (8 -> 16 -> 1, tanh) on a fixed batch of 32, the input gradient by
// grad(create_graph = true), loss = mean(out^2) + 0.1 * mean((|grad_x|^2 -
// 1)^2), backward, SGD. Median of 5 runs of STEPS steps (after one run that
// compiles), ms per step, and every step's loss against PyTorch's
// (benchmarks/grad_penalty_torch.py, /usr/bin/python3, same initial
// weights) within 1e-5 relative. Usage: strata-bench-grad-penalty [STEPS]
// [--no-torch].
//
//===----------------------------------------------------------------------===//
#include <strata/strata.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace strata;

namespace {

constexpr int kB = 32, kD = 8, kH = 16;

std::vector<double> run(int steps) {
  std::vector<double> xs(kB * kD), w1(kD * kH), w2(kH), losses;
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = std::sin(0.37 * i);
  for (size_t i = 0; i < w1.size(); ++i)
    w1[i] = 0.3 * std::cos(0.11 * i + 1);
  for (size_t i = 0; i < w2.size(); ++i)
    w2[i] = 0.2 * std::sin(0.7 * i);
  Tensor X = from_vector<double>(xs, {kB, kD}).to(kFloat32);
  Tensor W1 = from_vector<double>(w1, {kD, kH}).to(kFloat32).requires_grad_();
  Tensor W2 = from_vector<double>(w2, {kH, 1}).to(kFloat32).requires_grad_();
  for (int step = 0; step < steps; ++step) {
    Tensor x = X.clone().requires_grad_();
    Tensor out = x.matmul(W1).tanh().matmul(W2);
    Tensor gx = grad({out.sum()}, {x}, {}, {}, /*create_graph=*/true)[0];
    Tensor loss =
        out.pow(2).mean() + 0.1 * (gx.pow(2).sum(1) - 1).pow(2).mean();
    loss.backward();
    losses.push_back(loss.item<double>());
    NoGradGuard noGrad;
    W1.sub_(W1.grad() * 0.1);
    W2.sub_(W2.grad() * 0.1);
    W1.grad().zero_();
    W2.grad().zero_();
  }
  return losses;
}

} // namespace

int main(int argc, char **argv) {
  int steps = 50;
  bool torch = true;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--no-torch"))
      torch = false;
    else
      steps = std::atoi(argv[i]);
  }
  std::vector<double> losses = run(steps);
  std::vector<double> times;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    run(steps);
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count());
  }
  std::sort(times.begin(), times.end());
  double ms = times[2] * 1e3 / steps;
  printf("strata: %.3f ms per gradient-penalty step (%d steps, median of 5; "
         "%lld gradient programs compiled)\n",
         ms, steps, static_cast<long long>(backward_compiles()));
  if (!torch)
    return 0;
  std::string cmd = "/usr/bin/python3 " STRATA_SOURCE_DIR
                    "/benchmarks/grad_penalty_torch.py " +
                    std::to_string(steps) + " 2>/dev/null";
  FILE *p = popen(cmd.c_str(), "r");
  if (!p)
    return 0;
  char line[256];
  double torchMs = 0;
  int bad = 0;
  while (fgets(line, sizeof line, p)) {
    int step;
    double v;
    if (sscanf(line, "loss %d %lf", &step, &v) == 2 && step < steps) {
      if (std::fabs(losses[step] - v) > 1e-5 * std::fabs(v)) {
        fprintf(stderr, "step %d: strata loss %.9g, PyTorch %.9g\n", step,
                losses[step], v);
        ++bad;
      }
    } else {
      sscanf(line, "ms_per_step %lf", &torchMs);
    }
  }
  pclose(p);
  if (torchMs > 0)
    printf("PyTorch eager: %.3f ms per step; strata / PyTorch = %.2f\n",
           torchMs, ms / torchMs);
  if (bad) {
    fprintf(stderr, "grad-penalty: %d losses differ from PyTorch's\n", bad);
    return 1;
  }
  return 0;
}
