#!/usr/bin/python3
"""Writes tests/e2e/data/unary_golden.txt: PyTorch 1.13's values, gradients,
dtypes and error messages of the unary and bitwise ops that
tests/e2e/UnaryOpsTest.cpp runs in strata on the same inputs. One line per
fact:
    <op>.<case> <dtype> <numel> <values...>     (floats as repr(float),
                                                 integers and bool exactly)
    <op>.<case> error <PyTorch's message>
Cases: `t` op(X.t()) of a float32 leaf X [3, 4] (a transposed view),
`t.grad` the gradient of (op(X.t()) * W).sum() wrt X, `expand` and
`expand.grad` the same through v.expand(3, 4) of a [4] leaf v, `f64`
op(X.double()), `i64` and `bool` the op of integer and bool inputs,
`i64_big` of int64 values doubles cannot hold (above 2^53).
Run: /usr/bin/python3 scripts/gen_unary_golden.py"""
import os

import torch

F = torch.nn.functional
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "e2e", "data", "unary_golden.txt")


def lin(lo, hi, n=12):
    return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


WIDE = lin(-2.75, 3.0)
UNIT = lin(-0.95, 0.9)
POS = lin(0.1, 5.0)
# name: (torch function, X's 12 values)
OPS = {
    "sin": (torch.sin, WIDE), "cos": (torch.cos, WIDE),
    "tan": (torch.tan, lin(-1.2, 1.3)), "asin": (torch.asin, UNIT),
    "acos": (torch.acos, UNIT), "atan": (torch.atan, WIDE),
    "sinh": (torch.sinh, WIDE), "cosh": (torch.cosh, WIDE),
    "exp2": (torch.exp2, WIDE), "expm1": (torch.expm1, lin(-1e-3, 2.0)),
    "log2": (torch.log2, POS), "log10": (torch.log10, POS),
    "log1p": (torch.log1p, lin(-0.9, 1e-4)), "rsqrt": (torch.rsqrt, POS),
    "reciprocal": (torch.reciprocal, [v if abs(v) > 0.1 else 0.5
                                      for v in WIDE]),
    "square": (torch.square, WIDE), "sign": (torch.sign, lin(-2.5, 3.0)),
    "floor": (torch.floor, lin(-2.5, 3.0)), "ceil": (torch.ceil, lin(-2.5, 3.0)),
    "round": (torch.round, lin(-2.5, 3.0)), "trunc": (torch.trunc, lin(-2.5, 3.0)),
    "erf": (torch.erf, WIDE), "gelu": (F.gelu, WIDE),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), WIDE),
    "silu": (F.silu, WIDE), "softplus": (F.softplus, lin(-25.0, 30.0)),
    "clamp": (lambda x: torch.clamp(x, -0.5, 0.5), lin(-2.5, 3.0)),
    "clamp_min": (lambda x: torch.clamp_min(x, 0.5), lin(-2.5, 3.0)),
    "clamp_max": (lambda x: torch.clamp_max(x, 0.5), lin(-2.5, 3.0)),
    "nan_to_num": (torch.nan_to_num,
                   [float("nan"), float("inf"), float("-inf")] + WIDE[3:]),
    "logical_not": (torch.logical_not, lin(-2.5, 3.0)),
    "relu": (torch.relu, WIDE), "exp": (torch.exp, WIDE),
    "abs": (torch.abs, WIDE), "neg": (torch.neg, WIDE),
}
W = [0.5 + 0.25 * i for i in range(12)]
# int64 values a double rounds (2^53 + 1 and others), none whose op
# overflows; the ops of integers that keep int64.
BIG = torch.tensor([2**53 + 1, -(2**53 + 1), 2**62 + 3, -(2**63 - 1),
                    2**63 - 1, 3 * (2**53 + 1)])
BIG_OPS = ("neg", "abs", "sign", "floor", "ceil", "round", "trunc", "relu")


def line(out, name, t):
    t = t.detach().reshape(-1)
    dt = str(t.dtype).replace("torch.", "")
    if t.dtype.is_floating_point:
        vals = [repr(float(v)) for v in t.tolist()]
    else:
        vals = [str(int(v)) for v in t.tolist()]
    out.append("%s %s %d %s" % (name, dt, t.numel(), " ".join(vals)))


def attempt(out, name, fn):
    try:
        line(out, name, fn())
    except RuntimeError as e:
        out.append("%s error %s" % (name, str(e).split("\n")[0]))


def main():
    out = []
    ints = torch.tensor([-5, -3, -2, -1, 0, 1, 2, 3, 4, 5, 7, 9]).reshape(3, 4)
    bools = torch.tensor([True, False, False, True] * 3).reshape(3, 4)
    for op, (fn, xs) in OPS.items():
        x = torch.tensor(xs, dtype=torch.float32).reshape(3, 4)
        X = x.clone().requires_grad_()
        w = torch.tensor(W).reshape(4, 3)
        y = fn(X.t())
        line(out, op + ".t", y)
        if y.requires_grad:
            (y * w).sum().backward()
            line(out, op + ".t.grad", X.grad)
        v = x[1].clone().requires_grad_()
        y = fn(v.expand(3, 4))
        line(out, op + ".expand", y)
        if y.requires_grad:
            (y * w.reshape(3, 4)).sum().backward()
            line(out, op + ".expand.grad", v.grad)
        line(out, op + ".f64", fn(x.double()))
        attempt(out, op + ".i64", lambda: fn(ints))
        attempt(out, op + ".bool", lambda: fn(bools))
        if op in BIG_OPS:
            line(out, op + ".i64_big", fn(BIG))
    # Bitwise and logical binary ops: integers broadcast with a row, bool
    # masks, an int32 tensor with an int64 one, a scalar; floats fail.
    row = torch.tensor([3, -1, 6, 0])
    for op in ("bitwise_and", "bitwise_or", "bitwise_xor", "logical_and",
               "logical_or", "logical_xor"):
        fn = getattr(torch, op)
        line(out, op + ".i64", fn(ints, row))
        line(out, op + ".bool", fn(bools, bools.flip(1)))
        line(out, op + ".mixed", fn(ints.int(), row))
        if op.startswith("bitwise"):
            line(out, op + ".scalar", fn(ints, 6))
        attempt(out, op + ".float", lambda: fn(ints.float(), row))
    line(out, "bitwise_not.i64", torch.bitwise_not(ints))
    line(out, "bitwise_not.bool", torch.bitwise_not(bools))
    line(out, "bitwise_not.i64_big", torch.bitwise_not(BIG))
    attempt(out, "bitwise_not.float", lambda: torch.bitwise_not(ints.float()))
    # isnan/isinf/isfinite, masked_fill (and its gradient), where with
    # numbers.
    special = torch.tensor([float("nan"), float("inf"), float("-inf"), 0.0,
                            -1.5, 2.0]).reshape(2, 3)
    for op in ("isnan", "isinf", "isfinite"):
        line(out, op + ".f32", getattr(special, op)())
        line(out, op + ".i64", getattr(ints, op)())
    mask = torch.tensor([True, False, True, False])
    x = torch.tensor(WIDE, dtype=torch.float32).reshape(3, 4).requires_grad_()
    y = x.masked_fill(mask, -7.5)
    line(out, "masked_fill.f32", y)
    (y * torch.tensor(W).reshape(3, 4)).sum().backward()
    line(out, "masked_fill.grad", x.grad)
    line(out, "masked_fill.i64", ints.masked_fill(mask, 2.7))
    m = bools
    line(out, "where.scalar_tensor", torch.where(m, 1.5, ints))
    line(out, "where.tensor_scalar", torch.where(m, ints, 2))
    line(out, "where.int_int", torch.where(m, 1, 2))
    line(out, "where.float_int", torch.where(m, 1.0, 2))
    with open(OUT, "w") as f:
        f.write("# Generated by scripts/gen_unary_golden.py from PyTorch %s; "
                "do not edit.\n" % torch.__version__)
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
