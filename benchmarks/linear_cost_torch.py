"""PyTorch eager on LinearCost.cpp's workloads: prints "name n seconds" lines.

Run by strata-bench-linear (benchmarks/LinearCost.cpp) with /usr/bin/python3;
arguments: the sizes, comma-separated (or one number, the largest n of
100, 1000, ...), optionally one workload's name ("-": all) and read_'s
read interval. Same workloads, sizes
and checks as the C++ side.
"""
import sys
import time

import torch

ELEMS = 16
READ_EVERY = 100  # read_'s reads (third argument)


def chain(n):
    y = torch.arange(ELEMS, dtype=torch.float32)
    for i in range(n):
        y = y * 0.5 if i % 2 == 0 else y + 1.0
    return y[0].item()


def add_inplace(n):
    x = torch.zeros(ELEMS)
    for _ in range(n):
        x.add_(1)
    assert x[0].item() == n
    return x


def wide_eval(n):
    x = torch.arange(ELEMS, dtype=torch.float32)
    outs = [x + float(i) for i in range(n)]
    assert outs[-1][1].item() == n
    return outs


def backward(n):
    c = 1.0 - 1.0 / n
    x = torch.ones(ELEMS, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * c
    y.sum().backward()
    want = c ** n
    assert abs(x.grad[0].item() - want) <= 1e-3 * max(1.0, abs(want))


def inplace_chain(n, read_every=0, by_grad=False):
    c = 1.0 - 1.0 / n
    x = torch.ones(ELEMS, requires_grad=True)
    h = x * 1.0
    for i in range(n):
        if i % 2 == 0:
            h.mul_(c)
        else:
            h.add_(0.001)
        if read_every and (i + 1) % read_every == 0:
            h[0].item()
    if by_grad:
        g, = torch.autograd.grad([h.sum()], [x])
    else:
        h.sum().backward()
        g = x.grad
    want = c ** ((n + 1) // 2)
    assert abs(g[0].item() - want) <= 1e-3 * max(1.0, abs(want))


def backward_inplace(n):
    inplace_chain(n)


def read_inplace(n):
    inplace_chain(n, read_every=READ_EVERY)


def grad_inplace(n):
    inplace_chain(n, by_grad=True)


def main():
    arg = sys.argv[1] if len(sys.argv) > 1 else "100000"
    if "," in arg:
        sizes = [int(n) for n in arg.split(",")]
    else:
        sizes, n = [], 100
        while n <= int(arg):
            sizes.append(n)
            n *= 10
    only = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != "-" else None
    global READ_EVERY
    if len(sys.argv) > 3:
        READ_EVERY = int(sys.argv[3])
    work = [("chain", chain), ("add_", add_inplace), ("eval", wide_eval),
            ("backward", backward), ("backward_", backward_inplace),
            ("read_", read_inplace), ("grad_", grad_inplace)]
    for name, f in work:
        if only and name != only:
            continue
        f(10)  # warm-up
        for n in sizes:
            t0 = time.perf_counter()
            f(n)
            t = time.perf_counter() - t0
            print(name, n, "%.6f" % t, flush=True)


if __name__ == "__main__":
    main()
