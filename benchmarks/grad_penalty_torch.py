"""PyTorch eager side of strata-bench-grad-penalty (GradPenaltyBench.cpp).

Usage: grad_penalty_torch.py STEPS ; prints `loss STEP VALUE` for every step
and `ms_per_step VALUE` (median of 5 runs of STEPS steps after one warm-up
run, one thread). The step: an MLP (8 -> 16 -> 1, tanh), the input
gradient by torch.autograd.grad(create_graph=True), loss = mean(out^2) +
0.1 * mean((|grad_x|^2 - 1)^2), backward, SGD without momentum.
"""
import math
import statistics
import sys
import time

import torch

B, D, H = 32, 8, 16


def run(steps, report):
    X = torch.tensor([math.sin(0.37 * i) for i in range(B * D)],
                     dtype=torch.float64).view(B, D).float()
    W1 = torch.tensor([0.3 * math.cos(0.11 * i + 1) for i in range(D * H)],
                      dtype=torch.float64).view(D, H).float().requires_grad_()
    W2 = torch.tensor([0.2 * math.sin(0.7 * i) for i in range(H)],
                      dtype=torch.float64).view(H, 1).float().requires_grad_()
    for step in range(steps):
        x = X.clone().requires_grad_()
        out = (x @ W1).tanh() @ W2
        gx = torch.autograd.grad(out.sum(), x, create_graph=True)[0]
        loss = out.pow(2).mean() + 0.1 * (gx.pow(2).sum(1) - 1).pow(2).mean()
        loss.backward()
        value = loss.item()
        if report:
            print("loss %d %.9g" % (step, value))
        with torch.no_grad():
            W1 -= W1.grad * 0.1
            W2 -= W2.grad * 0.1
            W1.grad.zero_()
            W2.grad.zero_()


def main():
    torch.set_num_threads(1)
    steps = int(sys.argv[1])
    run(steps, True)
    times = []
    for _ in range(5):
        t = time.perf_counter()
        run(steps, False)
        times.append(time.perf_counter() - t)
    print("ms_per_step %.6f" % (statistics.median(times) * 1e3 / steps))


if __name__ == "__main__":
    main()
