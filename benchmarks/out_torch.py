"""PyTorch eager times for strata-bench-out (benchmarks/OutBench.cpp).

Usage: out_torch.py OPS N... ; prints `add_out|copy_ eager n seconds` lines:
seconds per op of `torch.add(x, b, out=y)` and `y.copy_(x + b)` on n-element
f32 tensors, one thread, median of 7 loops of OPS ops after 2 warm-up
loops (the Python call included).
"""
import statistics
import sys
import time

import torch


def per_op(fn, ops, reps=7):
    for _ in range(2):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) / ops


def main():
    torch.set_num_threads(1)
    ops = int(sys.argv[1])
    for n in map(int, sys.argv[2:]):
        x = torch.full((n,), 2.0)
        b = torch.full((n,), 1.0)
        y = torch.zeros(n)

        def add_out():
            for _ in range(ops):
                torch.add(x, b, out=y)

        def copy():
            for _ in range(ops):
                y.copy_(x + b)

        print("add_out eager", n, per_op(add_out, ops))
        assert bool((y == 3).all())
        print("copy_ eager", n, per_op(copy, ops))
        assert bool((y == 3).all())
        sys.stdout.flush()


if __name__ == "__main__":
    main()
