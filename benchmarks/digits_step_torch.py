#!/usr/bin/env python3
"""PyTorch eager's training step of the digits MLP, for docs/performance.md.

    /usr/bin/python3 benchmarks/digits_step_torch.py [--batch B] [--steps N]
        [--threads T] [--optimizer sgd|adam]

The same step as `strata-train-digits DATA --time N` (examples/
train_digits.cpp): Sequential(Linear(64, 128), ReLU(), Linear(128, 10)),
cross_entropy, zero_grad, backward, SGD with momentum 0.9 (or Adam), and
loss.item() every step, on random data of the digits' shape (the values do
not change the work). torch.set_num_threads(T), T from --threads or
$STRATA_NUM_THREADS (default 1), so both run on as many threads. Prints
ms/step (wall and process CPU time) after 20 warm-up steps.
"""
import argparse
import os
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--threads", type=int,
                    default=int(os.environ.get("STRATA_NUM_THREADS", "1")))
    ap.add_argument("--optimizer", default="sgd")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    if a.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(1437, 64)
    y = torch.randint(0, 10, (1437,))
    batches = 1437 // a.batch

    def step(s):
        k = (s % batches) * a.batch
        loss = torch.nn.functional.cross_entropy(model(x[k:k + a.batch]),
                                                 y[k:k + a.batch])
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    for s in range(20):
        step(s)
    start, cpu = time.perf_counter(), time.process_time()
    for s in range(a.steps):
        step(s)
    ms = (time.perf_counter() - start) * 1e3 / a.steps
    cpu_ms = (time.process_time() - cpu) * 1e3 / a.steps
    print(f"pytorch {torch.__version__}: {ms:.3f} ms/step wall, {cpu_ms:.3f} "
          f"ms/step CPU (batch {a.batch}, "
          f"{a.steps} steps, {a.optimizer}, {a.threads} thread(s))")


if __name__ == "__main__":
    main()
