"""PyTorch eager and NumPy matmul times for strata-bench-matmul.

Usage: matmul_torch.py THREADS N... ; prints `torch|numpy dtype n seconds`
(median of 7 after 2 warm-up runs) per line. PyTorch uses THREADS threads;
NumPy's BLAS runs with what OPENBLAS_NUM_THREADS says (set by the caller).
"""
import statistics
import sys
import time

import numpy as np
import torch


def median_seconds(fn, reps=7):
    for _ in range(2):
        fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    torch.set_num_threads(int(sys.argv[1]))
    for n in map(int, sys.argv[2:]):
        for name, tdt, ndt in (("f32", torch.float32, np.float32),
                               ("f64", torch.float64, np.float64)):
            a = torch.randn(n, n, dtype=tdt)
            b = torch.randn(n, n, dtype=tdt)
            print("torch", name, n, median_seconds(lambda: torch.matmul(a, b)))
            x, y = a.numpy().astype(ndt), b.numpy().astype(ndt)
            print("numpy", name, n, median_seconds(lambda: x @ y))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
