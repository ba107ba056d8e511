#!/usr/bin/env python3
"""PyTorch checks strata's long f32 sums (strata-unit-dtype-edges).

    /usr/bin/python3 long_sums_torch.py DIR

DIR holds x.npy (10^7 f32 values) and strata's results of the CASES below
on it, one NAME.npy each. Every result must match PyTorch's own f32 result
and the f64 reference (the same expression on x.double()) within
torch.testing.assert_close's float32 tolerance (rtol 1.3e-6, atol 1e-5).
A running f32 sum misses by ~1e-3 relative; cascade summation must not.
Exits 77 when torch or numpy cannot be imported.
"""
import sys

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"SKIPPED: torch/numpy not importable by {sys.executable} ({e})")
    sys.exit(77)

N = 2200  # (a.t() * b).sum() on N x N: transposed tiles, partial edge tiles

CASES = {
    "sum": lambda x: x.sum(),
    "mean": lambda x: x.mean(),
    # one accumulator per column (read-modify-written), 10^5 rows
    "sum0": lambda x: x.view(100000, 100).sum(0),
    # one accumulator per row (registers), 10^5 columns
    "sum1": lambda x: x.view(100, 100000).sum(1),
    "tprod": lambda x: (x[: N * N].view(N, N).t()
                        * x[N * N: 2 * N * N].view(N, N)).sum(),
}


def main():
    d = sys.argv[1]
    x = torch.from_numpy(np.load(f"{d}/x.npy"))
    assert x.dtype == torch.float32 and x.numel() == 10**7
    failed = 0
    for name, f in CASES.items():
        got = torch.from_numpy(np.load(f"{d}/{name}.npy"))
        torch32 = f(x)
        ref64 = f(x.double())
        err = ((got.double() - ref64).abs() / ref64.abs()).max().item()
        terr = ((torch32.double() - ref64).abs() / ref64.abs()).max().item()
        print(f"{name}: max relative error strata {err:.2e}, "
              f"PyTorch {terr:.2e}")
        try:
            torch.testing.assert_close(got, torch32)
            torch.testing.assert_close(got.double(), ref64, rtol=1.3e-6,
                                       atol=1e-5)
        except AssertionError as e:
            print(f"{name}: MISMATCH\n{e}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
