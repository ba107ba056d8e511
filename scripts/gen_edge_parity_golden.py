#!/usr/bin/python3
"""Generates tests/unit/dsl/edge_parity_golden.txt: what PyTorch 1.13 gives
for the cases of tests/unit/dsl/EdgeParityTest.cpp (an adversary's finds,
issue 17): int64 numbers beside f32/f64/int64 tensors, in-place writes into
the views split/chunk/unbind return, lerp by a number and its gradients,
and the signs of zero in gradients through writes to views.

Run with the system Python that has PyTorch 1.13 (python3-torch):
    /usr/bin/python3 scripts/gen_edge_parity_golden.py
One case per line, its values as bits (f32 and f64 in hex, int64 and bool
in decimal), or the start of PyTorch's error message:

    name | f32 | 3f800000 80000000 ...
    name | err | Output 0 of SplitBackward0 is a view and ...

The inputs are made the same way in both files: small dyadic numbers from
one integer generator (exact in f32), and the values listed here.
"""

import os
import struct

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                   "unit", "dsl", "edge_parity_golden.txt")

I64_MAX = 2**63 - 1
I64_MIN = -2**63
# int64 numbers a double cannot hold (and some it can), ties included:
# 2^60 + 2^36 + 1 is 2^60 + 2^37 in f32 (once), 2^60 through a double.
BIG = [2**60 + 2**36 + 1, -(2**60 + 2**36 + 1), 2**53 + 1, -(2**53 + 1),
       2**24 + 1, 2**55 + 2**31 + 1, 2**62 + 2**38 + 2**37, I64_MAX, I64_MIN]
EDGE = [I64_MAX, I64_MIN, 0, -1, 2**53 + 1]
WEIGHTS = [1.17, 0.3, 0.7, 2.1, -0.45, 0.5, 1.0 / 3, 1e-8, 1 - 1e-8, -3.7,
           0.49999997, 0.5000001, 1e30]


def dyadic(n, seed):
    """n numbers k / 4096 for k in [-2^19, 2^19) from an LCG (exact in f32)."""
    out, s = [], seed
    for _ in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) % 2**64
        out.append(((s >> 33) % 2**20 - 2**19) / 4096.0)
    return out


def f32(v):
    """static_cast<float>(int64 v): rounded once."""
    return torch.tensor([v], dtype=torch.int64).float().item()


def bits(t):
    t = t.detach().contiguous().reshape(-1)
    if t.dtype == torch.float32:
        return "f32", ["%08x" % struct.unpack("<I", struct.pack("<f", v))[0]
                       for v in t.tolist()]
    if t.dtype == torch.float64:
        return "f64", ["%016x" % struct.unpack("<Q", struct.pack("<d", v))[0]
                       for v in t.tolist()]
    if t.dtype == torch.bool:
        return "bool", [str(int(v)) for v in t.tolist()]
    return "i64", [str(int(v)) for v in t.tolist()]


def int64_cases(cases):
    for k, v in enumerate(BIG):
        F = f32(v)
        x = lambda F=F: torch.tensor([0.0, 1.0, -2.5, 2.0**60, F, -F],
                                 dtype=torch.float32)
        c = torch.tensor([True, False, True, False, True, False])
        p = f"big{k}_"
        cases[p + "add"] = lambda x=x, v=v: x() + v
        cases[p + "sub"] = lambda x=x, v=v: x() - v
        cases[p + "rsub"] = lambda x=x, v=v: v - x()
        cases[p + "mul"] = lambda x=x, v=v: x() * v
        cases[p + "div"] = lambda x=x, v=v: x() / v
        cases[p + "rdiv"] = lambda x=x, v=v: v / x()
        cases[p + "clamp_min"] = lambda x=x, v=v: x().clamp(min=v)
        cases[p + "clamp_max"] = lambda x=x, v=v: x().clamp(max=v)
        cases[p + "clamp"] = lambda x=x, v=v: x().clamp(v, v)
        cases[p + "fill_"] = lambda x=x, v=v: x().fill_(v)
        cases[p + "where_other"] = lambda x=x, v=v, c=c: torch.where(c, x(), v)
        cases[p + "where_self"] = lambda x=x, v=v, c=c: torch.where(c, v, x())
        cases[p + "masked_fill"] = lambda x=x, v=v, c=c: x().masked_fill(c, v)
        cases[p + "full"] = lambda v=v: torch.full((2,), v,
                                                   dtype=torch.float32)
        for op in ["eq", "ne", "lt", "le", "gt", "ge"]:
            cases[p + op] = lambda x=x, v=v, op=op: getattr(x(), op)(v)
        cases[p + "add_alpha"] = lambda x=x, v=v: x().add(x(), alpha=v)
        cases[p + "add_"] = lambda x=x, v=v: x().add_(v)
        cases[p + "f64_add"] = lambda v=v: torch.tensor(
            [0.0, 1.0], dtype=torch.float64) + v
        cases[p + "f64_fill_"] = lambda v=v: torch.zeros(
            2, dtype=torch.float64).fill_(v)
        cases[p + "f64_eq"] = lambda v=v: torch.tensor(
            [float(v), 0.0], dtype=torch.float64) == v

        def grad_mul(x=x, v=v):
            a = x().requires_grad_()
            (a * v).sum().backward()
            return a.grad

        def grad_div(x=x, v=v):
            a = x().requires_grad_()
            (a / v).sum().backward()
            return a.grad
        cases[p + "grad_mul"] = grad_mul
        cases[p + "grad_div"] = grad_div

    def i():
        return torch.tensor(EDGE, dtype=torch.int64)
    c = torch.tensor([True, False, True, False, True])
    for k, v in enumerate(EDGE):
        p = f"edge{k}_"
        cases[p + "add"] = lambda v=v: i() + v
        cases[p + "sub"] = lambda v=v: i() - v
        cases[p + "mul"] = lambda v=v: i() * v
        cases[p + "fill_"] = lambda v=v: i().fill_(v)
        cases[p + "where"] = lambda v=v: torch.where(c, i(), v)
        cases[p + "masked_fill"] = lambda v=v: i().masked_fill(c, v)
        cases[p + "full"] = lambda v=v: torch.full((2,), v)
        for op in ["eq", "ne", "lt", "le", "gt", "ge"]:
            cases[p + op] = lambda v=v, op=op: getattr(i(), op)(v)
    cases["edge_clamp"] = lambda: i().clamp(I64_MIN + 1, I64_MAX - 1)
    cases["edge_clamp_min"] = lambda: i().clamp(min=I64_MAX)
    cases["edge_clamp_max"] = lambda: i().clamp(max=I64_MIN)


def X():
    return torch.tensor([1.5, -2., 0.5, 3.], requires_grad=True)


def multi_output_cases(cases):
    def a1():
        h = X() * 1
        h.split(2)[0].mul_(2)

    def a2():
        h = X() * 1
        h.chunk(2)[1].add_(1)

    def a3():
        h = X() * 1
        h.split([1, 3])[1].add_(1)

    def a4():
        h = X() * 1
        h.unbind()[3].add_(1)

    def a5():  # no-grad mode: allowed
        x = X()
        h = x * 1
        p = h.split(2)
        with torch.no_grad():
            p[0].mul_(2)
        h.sum().backward()
        return x.grad

    def a6():  # nothing requires grad: allowed
        h = torch.tensor([1., 2., 3., 4.])
        h.split(2)[0].mul_(2)
        return h

    def a7():  # split of a tensor not requiring grad, copy_ of one that does
        h = torch.zeros(4)
        h.split(2)[0].copy_(X()[:2])

    def a8():  # a view of a split's output
        h = X() * 1
        h.split(2)[0].narrow(0, 0, 1).mul_(2)

    def a9():
        h = X() * 1
        h.split(2)[0][0].mul_(2)

    def a10():  # read after the base was written
        h = X() * 1
        p = h.split(2)
        h.mul_(2)
        p[0].sum()

    def a11():  # detach() of it: allowed
        x = X()
        h = x * 1
        p = h.split(2)
        p[0].detach().mul_(2)
        h.sum().backward()
        return x.grad

    def a12():
        h = X() * 1
        h.split(2)[0].view(2).mul_(2)

    def a13():  # of a leaf: this error comes first
        X().split(2)[0].mul_(2)

    def a14():  # another view written, then this one read
        h = X() * 1
        p = h.split(2)
        p[1].detach().mul_(2)
        p[0] * 1

    def a15():
        h = (X() * 1).view(2, 2)
        h.unbind(1)[0].mul_(2)

    def a16():  # written after its base was
        h = X() * 1
        p = h.split(2)
        h.mul_(2)
        p[0].add_(1)

    def a17():  # the whole tensor as one output
        h = X() * 1
        h.split(4)[0].zero_()

    def a18():  # made before the base required grad
        h = X().detach()
        p = h.split(2)
        h.requires_grad_()
        p[0].mul_(2)

    def a19():  # split in no-grad mode: a no-grad view
        h = X() * 1
        with torch.no_grad():
            p = h.split(2)
        p[0].mul_(2)

    def a20():  # nothing requires grad, written then read: allowed
        h = torch.tensor([1., 2., 3., 4.])
        p = h.split(2)
        h.mul_(2)
        return p[0] * 1

    for k, f in enumerate([a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12,
                           a13, a14, a15, a16, a17, a18, a19, a20], 1):
        cases[f"multi{k}"] = f


def lerp_cases(cases):
    n = 37
    s0, e0 = dyadic(n, 1), dyadic(n, 2)
    s0[:4] = [0.0, -0.0, 1.0, -1.0]
    e0[:4] = [-0.0, -0.0, 1.0, 3.0]
    wt = [v / 2**18 for v in dyadic(n, 3)]  # weights in [-2, 2)
    for k, w in enumerate(WEIGHTS + [7, -2]):
        p = f"lerp{k}_"

        def fwd(w=w, dt=torch.float32):
            return torch.tensor(s0, dtype=dt).lerp(torch.tensor(e0, dtype=dt),
                                                   w)

        def grads(w=w, dt=torch.float32):
            s = torch.tensor(s0, dtype=dt, requires_grad=True)
            e = torch.tensor(e0, dtype=dt, requires_grad=True)
            g = torch.tensor(dyadic(n, 4), dtype=dt)
            s.lerp(e, w).backward(g)
            return torch.cat([s.grad, e.grad])

        def inplace(w=w):
            s = torch.tensor(s0, requires_grad=True)
            h = s * 1
            h.lerp_(torch.tensor(e0), w)
            h.sum().backward()
            return torch.cat([h.detach(), s.grad])
        cases[p + "fwd"] = fwd
        cases[p + "grads"] = grads
        cases[p + "inplace"] = inplace
        cases[p + "f64_fwd"] = lambda fwd=fwd: fwd(dt=torch.float64)
        cases[p + "f64_grads"] = lambda grads=grads: grads(dt=torch.float64)

    def tensor_weight(dt=torch.float32):
        s = torch.tensor(s0, dtype=dt, requires_grad=True)
        e = torch.tensor(e0, dtype=dt, requires_grad=True)
        w = torch.tensor(wt, dtype=dt, requires_grad=True)
        r = s.lerp(e, w)
        r.backward(torch.tensor(dyadic(n, 4), dtype=dt))
        return torch.cat([r.detach(), s.grad, e.grad, w.grad])
    cases["lerp_tensor"] = tensor_weight

    def create_graph(w=1.17):  # the gradient's graph, differentiated again
        s = torch.tensor(s0, requires_grad=True)
        e = torch.tensor(e0)
        g, = torch.autograd.grad((s.lerp(e, w) * s).sum(), [s],
                                 create_graph=True)
        h, = torch.autograd.grad((g * g).sum(), [s])
        return torch.cat([g.detach(), h])
    cases["lerp_create_graph"] = create_graph
    cases["lerp_tensor_f64"] = lambda: tensor_weight(torch.float64)


def negzero_cases(cases):
    def run(write, seed, x0=(1.0, 2.0)):
        x = torch.tensor(list(x0), requires_grad=True)
        h = x * 1
        write(h)
        if seed is None:
            h.sum().backward()
        else:
            h.backward(torch.tensor(seed))
        return x.grad
    sel = lambda h: h[0].mul_(-0.0)
    nar = lambda h: h.narrow(0, 0, 1).mul_(-0.0)
    cases["nz_sel"] = lambda: run(sel, None)
    cases["nz_narrow"] = lambda: run(nar, None)
    cases["nz_whole"] = lambda: run(lambda h: h.mul_(-0.0), None)
    cases["nz_sel_gm0"] = lambda: run(sel, [1.0, -0.0])
    cases["nz_narrow_gm0"] = lambda: run(
        lambda h: h.narrow(0, 0, 1).mul_(2.0), [1.0, -0.0])
    cases["nz_zero_sel"] = lambda: run(lambda h: h[0].zero_(), [-1.0, -0.0])
    cases["nz_sel_neg_seed"] = lambda: run(sel, [-0.0, -0.0])
    cases["nz_add_sel"] = lambda: run(lambda h: h[1].add_(1), [-0.0, -0.0])
    # copy_ of a value that reads the written elements: that read's
    # gradient is added to copy_'s zeros, not put in their place.
    cases["nz_copy_same"] = lambda: run(lambda h: h[0].copy_(h[0] * 2),
                                        [1.0, -0.0])
    cases["nz_copy_negzero"] = lambda: run(
        lambda h: h.narrow(0, 0, 1).copy_(h.narrow(0, 0, 1) * -0.0),
        [1.0, -0.0])

    def neg_sel():
        x = torch.tensor([-0.0, 2.0], requires_grad=True)
        h = x.neg()
        h[1].mul_(-0.0)
        (h * 1).sum().backward()
        return x.grad

    def two_d():
        x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
                         requires_grad=True)
        h = x * 1
        h[:, 1].mul_(-0.0)
        h.narrow(1, 2, 1).mul_(0.0)
        h.backward(torch.tensor([[1.0, -0.0, -0.0], [-0.0, 2.0, -1.0]]))
        return x.grad

    def twice():  # two writes through views of the same elements
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = x * 1
        h[1].mul_(-1.0)
        h.narrow(0, 1, 2).mul_(-0.0)
        h.backward(torch.tensor([-0.0, 1.0, -0.0]))
        return x.grad
    def create_graph():
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x * x
        h[0].mul_(-0.0)
        g, = torch.autograd.grad(h, [x], torch.tensor([1.0, -0.0]),
                                 create_graph=True)
        h2, = torch.autograd.grad(g.sum(), [x])
        return torch.cat([g.detach(), h2])
    cases["nz_neg_sel"] = neg_sel
    cases["nz_create_graph"] = create_graph
    cases["nz_2d"] = two_d
    cases["nz_twice"] = twice


def main():
    cases = {}
    int64_cases(cases)
    multi_output_cases(cases)
    lerp_cases(cases)
    negzero_cases(cases)
    lines = []
    for name, f in cases.items():
        try:
            r = f()
        except RuntimeError as e:
            lines.append(f"{name} | err | {str(e).splitlines()[0]}")
            continue
        if r is None:
            lines.append(f"{name} | ok |")
            continue
        kind, vals = bits(r)
        lines.append(f"{name} | {kind} | {' '.join(vals)}")
    with open(OUT, "w") as f:
        f.write("# Generated by scripts/gen_edge_parity_golden.py "
                "(PyTorch %s); do not edit.\n" % torch.__version__)
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} cases to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
