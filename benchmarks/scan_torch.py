"""PyTorch eager times for strata-bench-scan's cases.

Usage: /usr/bin/python3 benchmarks/scan_torch.py THREADS; prints
`torch <what> <seconds>` (median of 7 after 2 warm-up runs) per case.
"""
import statistics
import sys
import time

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
    torch.manual_seed(0)
    m = torch.randn(4096, 4096)
    v = torch.randn(1 << 24)
    p = torch.rand(4096, 4096) * 0.02 + 0.99
    cases = [("cumsum_4096x4096_dim1", lambda: m.cumsum(1)),
             ("cumsum_4096x4096_dim0", lambda: m.cumsum(0)),
             ("cumsum_16M_dim0", lambda: v.cumsum(0)),
             ("cumprod_4096x4096_dim1", lambda: p.cumprod(1)),
             ("cumsum_t_4096x4096_dim1", lambda: m.t().cumsum(1))]
    for what, fn in cases:
        print(f"torch {what} {median_seconds(fn):.6f}", flush=True)


if __name__ == "__main__":
    main()
