#!/usr/bin/python3
"""Generates tests/unit/dsl/rounding_parity_golden.txt: what PyTorch 1.13's
CPU kernels give for the cases of tests/unit/dsl/RoundingParityTest.cpp (an
adversary's finds): add/sub and index_add with alpha and the optimizers
built on them (one fused multiply-add; addcmul is fma(value * t1, t2,
self), addcdiv self + (value * t1) / t2), clamp with NaN bounds, lerp by
an int64 number or an int64 tensor, the grad_fn names of split, chunk and
unbind, pow by a number (PyTorch's scalar loop), and arange with float
steps and linspace (one thread: their vectorized blocks start at each
thread's chunk).

Run with the system Python that has PyTorch 1.13 (python3-torch):
    /usr/bin/python3 scripts/gen_rounding_parity_golden.py
One case per line, as edge_parity_golden.txt (f32/f64 bits in hex, int64
and bool in decimal, the start of an error message), and `name` for a
list of grad_fn names:

    name | f32 | 3f800000 80000000 ...
    name | name | SplitBackward0 SplitBackward0

Inputs are made the same way in both files: dyadic numbers k / 4096 from
one integer generator (exact in f32), divided by 3 in double for f64.
"""

import os
import struct

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                   "unit", "dsl", "rounding_parity_golden.txt")
NAN = float("nan")
ALPHAS = [0.37, -0.3, 1e-3, 3, -2, 1.0 / 3]


def dyadic(n, seed):
    """n numbers k / 4096 for k in [-2^19, 2^19) from an LCG (exact in f32)."""
    out, s = [], seed
    for _ in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) % 2**64
        out.append(((s >> 33) % 2**20 - 2**19) / 4096.0)
    return out


def f32s(n, seed):
    return torch.tensor(dyadic(n, seed), dtype=torch.float32)


def f64s(n, seed):
    return torch.tensor([v / 3.0 for v in dyadic(n, seed)],
                        dtype=torch.float64)


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


def alpha_cases(cases):
    n = 37
    for k, al in enumerate(ALPHAS):
        for dt, make in (("", f32s), ("f64_", f64s)):
            p = f"alpha{k}_{dt}"
            a = lambda make=make: make(n, 1)
            b = lambda make=make: make(n, 2)
            cases[p + "add"] = lambda a=a, b=b, al=al: torch.add(a(), b(),
                                                                 alpha=al)
            cases[p + "sub"] = lambda a=a, b=b, al=al: torch.sub(a(), b(),
                                                                 alpha=al)
            # other broadcast over rows; a strided self. (Not compared:
            # other broadcast along the inner dim, one number per row,
            # which PyTorch's loops of fewer than 16 elements compute as
            # self + (alpha * other), the product hoisted, but not all.)
            cases[p + "add_bcast"] = lambda a=a, b=b, al=al: torch.add(
                a()[:36].view(6, 6), b()[:6].view(1, 6), alpha=al)
            cases[p + "sub_strided"] = lambda a=a, b=b, al=al: torch.sub(
                a()[::2], b()[:19], alpha=al)
            cases[p + "add_"] = lambda a=a, b=b, al=al: a().add_(b(),
                                                                 alpha=al)
            cases[p + "sub_"] = lambda a=a, b=b, al=al: a().sub_(b(),
                                                                 alpha=al)

    # index_add with alpha: on more than one dim PyTorch adds each slice
    # with add_(alpha), one fma per element, index by index in order
    # (repeated targets too); a 1-d self is `self[i] += src * alpha` (two
    # roundings).
    def index_add(rows, dt=torch.float32, al=0.37, dim=0,
                  idx=(3, 0, 5, 1, 7, 2)):
        make = f32s if dt == torch.float32 else f64s
        s = make(rows * 5, 4).view(rows, 5) if rows else make(9, 4)
        src = make(len(idx) * 5, 5).view(len(idx), 5) if rows else \
            make(len(idx), 5)
        if dim == 1:
            s, src = s.t().contiguous(), src.t().contiguous()
        return s.index_add(dim, torch.tensor(idx), src, alpha=al)
    cases["index_add_2d"] = lambda: index_add(9)
    cases["index_add_2d_f64"] = lambda: index_add(9, torch.float64, -1 / 3)
    cases["index_add_2d_dim1"] = lambda: index_add(9, dim=1)
    cases["index_add_2d_repeats"] = lambda: index_add(
        9, idx=(3, 0, 3, 1, 3, 0, 2))
    cases["index_add_1d"] = lambda: index_add(0)

    def index_add_grads():
        s = f32s(45, 4).view(9, 5).requires_grad_()
        src = f32s(35, 5).view(7, 5).requires_grad_()
        s.index_add(0, torch.tensor([3, 0, 3, 1, 3, 0, 2]), src,
                    alpha=0.37).backward(f32s(45, 6).view(9, 5))
        return torch.cat([s.grad.reshape(-1), src.grad.reshape(-1)])
    cases["index_add_2d_grads"] = index_add_grads

    def sgd(**kw):
        p = f32s(23, 6).requires_grad_()
        opt = torch.optim.SGD([p], **kw)
        for step in range(3):
            opt.zero_grad()
            (p * f32s(23, 7 + step)).sum().backward()
            opt.step()
        return p

    def adam(cls=torch.optim.Adam, **kw):
        p = f32s(23, 6).requires_grad_()
        opt = cls([p], **kw)
        for step in range(3):
            opt.zero_grad()
            (p * f32s(23, 7 + step)).sum().backward()
            opt.step()
        return p
    cases["sgd"] = lambda: sgd(lr=0.1)
    cases["sgd_momentum"] = lambda: sgd(lr=0.1, momentum=0.9)
    cases["sgd_dampening_wd"] = lambda: sgd(lr=0.03, momentum=0.7,
                                            dampening=0.3, weight_decay=0.01)
    cases["sgd_nesterov"] = lambda: sgd(lr=0.05, momentum=0.9, nesterov=True,
                                        weight_decay=1e-3)
    cases["adam"] = lambda: adam(lr=0.01)
    cases["adam_wd"] = lambda: adam(lr=0.01, weight_decay=0.1)
    cases["adam_amsgrad"] = lambda: adam(lr=0.01, betas=(0.8, 0.99),
                                         amsgrad=True)
    cases["adamw"] = lambda: adam(torch.optim.AdamW, lr=0.01)


def clamp_cases(cases):
    def x(dt=torch.float32):
        return torch.tensor([-2., -0.5, 0., 0.5, 2., NAN, -0.0, 7.], dtype=dt)
    cases["clamp_min_nan"] = lambda: x().clamp(min=NAN)
    cases["clamp_max_nan"] = lambda: x().clamp(max=NAN)
    cases["clamp_nan_nan"] = lambda: x().clamp(NAN, NAN)
    cases["clamp_lo_nan"] = lambda: x().clamp(NAN, 1.)
    cases["clamp_hi_nan"] = lambda: x().clamp(-1., NAN)
    cases["clamp_crossed"] = lambda: x().clamp(1., -1.)
    cases["clamp_min_fn_nan"] = lambda: x().clamp_min(NAN)
    cases["clamp_max_fn_nan"] = lambda: x().clamp_max(NAN)
    cases["clamp_f64_lo_nan"] = lambda: x(torch.float64).clamp(NAN, 1.)
    cases["clamp_int_nan"] = lambda: torch.tensor([1, -2, 3]).clamp(NAN, 1)
    cases["clamp_int_min_nan"] = lambda: torch.tensor([1, -2, 3]).clamp(
        min=NAN)
    cases["clamp__lo_nan"] = lambda: x().clamp_(NAN, 1.)
    cases["clamp__min_nan"] = lambda: x().clamp_(min=NAN)
    cases["clamp_min__nan"] = lambda: x().clamp_min_(NAN)

    def grads(lo_, hi_):
        a = x().requires_grad_()
        a.clamp(lo_, hi_).backward(torch.arange(1., 9.))
        return a.grad
    cases["clamp_grad_lo_nan"] = lambda: grads(NAN, 1.)
    cases["clamp_grad_hi_nan"] = lambda: grads(-1., NAN)
    cases["clamp_grad_min_nan"] = lambda: grads(NAN, None)
    cases["clamp_grad_max_nan"] = lambda: grads(None, NAN)


def lerp_cases(cases):
    s = lambda dt=torch.float32: torch.tensor([0., 1., -2.5, 3.], dtype=dt)
    e = lambda dt=torch.float32: torch.tensor([1., 3., 4., -0.5], dtype=dt)
    big = [2**53 + 1, 2**60 + 2**36 + 1, 2**63 - 1, -2**63, 2**24 + 1,
           -(2**55 + 2**31 + 1), 3, -7]
    for k, w in enumerate(big):
        cases[f"lerp_int{k}"] = lambda w=w: s().lerp(e(), w)
        cases[f"lerp_int{k}_f64"] = lambda w=w: s(torch.float64).lerp(
            e(torch.float64), w)

        def grads(w=w, dt=torch.float32):
            a, b = s(dt).requires_grad_(), e(dt).requires_grad_()
            a.lerp(b, w).backward(torch.tensor([1., -2., 0.5, 3.], dtype=dt))
            return torch.cat([a.grad, b.grad])
        cases[f"lerp_int{k}_grads"] = grads
        cases[f"lerp_int{k}_f64_grads"] = lambda grads=grads: grads(
            dt=torch.float64)
    cases["lerp_i64_weight"] = lambda: s().lerp(e(), torch.tensor([1, 2, 3, 4]))
    cases["lerp_i64_0d_weight"] = lambda: s().lerp(e(), torch.tensor(2))
    cases["lerp__i64_weight"] = lambda: s().lerp_(e(),
                                                  torch.tensor([1, 2, 3, 4]))
    cases["lerp_f64_weight"] = lambda: s().lerp(
        e(), torch.tensor([1., 2., 3., 4.], dtype=torch.float64))
    cases["lerp_i64_tensors"] = lambda: torch.tensor([1, 2]).lerp(
        torch.tensor([3, 4]), 2)


def name_cases(cases):
    def names(f):
        def run():
            x = torch.arange(12.).reshape(3, 4).requires_grad_()
            return [o.grad_fn.name() for o in f(x * 1)] + \
                [o.grad_fn.name() for o in f(x)]
        return run
    cases["names_split"] = names(lambda h: h.split(2, 1))
    cases["names_split_one"] = names(lambda h: h.split(4, 1))
    cases["names_split_sizes"] = names(lambda h: h.split([1, 3], 1))
    cases["names_split_with_sizes"] = names(
        lambda h: h.split_with_sizes([2, 1], 0))
    cases["names_chunk"] = names(lambda h: h.chunk(3, 1))
    cases["names_chunk_one"] = names(lambda h: h.chunk(1, 0))
    cases["names_unbind"] = names(lambda h: h.unbind(0))
    cases["names_unbind1"] = names(lambda h: h.unbind(1))


def pow_cases(cases):
    # PyTorch's scalar loop: std::pow in double of the base and the double
    # exponent, rounded once (an f32 tensor of fewer than 16 elements, a
    # strided one). Contiguous blocks of 16 f32 (8 f64) elements go through
    # Sleef_powf8_u10 with the exponent rounded to f32 (Sleef_pow4_u10):
    # not compared.
    base = [0., -0., 1., -1., 2., -2., 0.5, 3.7, -3.7, 1e-3, 123.25, 1e5,
            -8., 7.]
    for k, e in enumerate([2.2, 1 / 3, 1e-8, 0.1, -0.1, 7.3, -2.2, 1e30,
                           -1e-30, 0.7]):
        cases[f"pow{k}"] = lambda e=e: torch.tensor(base).pow(e)
        cases[f"pow{k}_f64"] = lambda e=e: torch.tensor(
            base * 3, dtype=torch.float64).view(-1, 3)[:, 1].pow(e)
        cases[f"pow{k}_strided"] = lambda e=e: torch.tensor(
            base * 3).view(-1, 3)[:, 1].pow(e)


ARANGES = [(0, 1, 0.1), (-3.7, 100.2, 0.37), (0.1, 1000.3, 0.7),
           (1e7, 1e7 + 50, 0.3), (-100, 100, 1 / 3), (5, -5, -0.3),
           (0, 10, 1), (0.5, 40, 1.25), (2.5, 3, 0.01), (-1, 1, 1e-3)]


def arange_cases(cases):
    for k, (a, b, s) in enumerate(ARANGES):
        for dt in (torch.float32, torch.float64):
            tag = "" if dt == torch.float32 else "_f64"
            cases[f"arange{k}{tag}"] = lambda a=a, b=b, s=s, dt=dt: \
                torch.arange(a, b, s, dtype=dt)


LINSPACES = [(0, 1, 10), (-3.7, 100.2, 281), (0.1, 1000.3, 1429),
             (1e7, 1e7 + 50, 167), (5, -5, 33), (-1, 1, 2001), (0.3, 0.7, 17)]


def linspace_cases(cases):
    for k, (a, b, n) in enumerate(LINSPACES):
        for dt in (torch.float32, torch.float64):
            tag = "" if dt == torch.float32 else "_f64"
            cases[f"linspace{k}{tag}"] = lambda a=a, b=b, n=n, dt=dt: \
                torch.linspace(a, b, n, dtype=dt)


def main():
    torch.set_num_threads(1)  # arange's, linspace's blocks start at 0
    cases = {}
    alpha_cases(cases)
    clamp_cases(cases)
    lerp_cases(cases)
    name_cases(cases)
    pow_cases(cases)
    arange_cases(cases)
    linspace_cases(cases)
    lines = []
    for name, f in cases.items():
        try:
            r = f()
        except RuntimeError as e:
            lines.append(f"{name} | err | {str(e).splitlines()[0]}")
            continue
        if isinstance(r, list):
            lines.append(f"{name} | name | {' '.join(r)}")
            continue
        kind, vals = bits(r)
        lines.append(f"{name} | {kind} | {' '.join(vals)}")
    with open(OUT, "w") as f:
        f.write("# Generated by scripts/gen_rounding_parity_golden.py "
                "(PyTorch %s); do not edit.\n" % torch.__version__)
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} cases to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
