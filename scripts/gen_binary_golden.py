#!/usr/bin/python3
"""Writes tests/e2e/data/binary_golden.txt: PyTorch 1.13's values,
gradients, dtypes, grad_fn names and error messages of the binary and
ternary ops of issue 20 (atan2, fmod, remainder, floor_divide, lerp,
isclose, allclose) and the prod reduction that tests/e2e/BinaryOpsTest.cpp runs in strata on the
same inputs. One line per fact:
    <case> <dtype> <numel> <values...>   (floats as repr(float), integers
                                          and bool exactly, as ints)
    <case> error <PyTorch's message>
    <case> grad_fn <name>
Inputs are built here and in the test from the same lists (INPUTS below,
`inputs()` there). Cases (for each op):
  <op>.<da>.<db>   op(A, B) for every dtype pair of bool, int32, int64,
                   float32, float64: A [3, 4], B [4] broadcast as a row
  <op>.special.<dt>  every pair of SPECIAL (NaN, +-inf, +-0, ...) in f32/f64
  <op>.extreme.<dt>  int32/int64 extremes against nonzero divisors
  <op>.t / .slice  a transposed and a sliced (stride 2) operand
  <op>.zerod / .empty  a 0-d operand; an empty [0, 4] one
  <op>.scalar.*    a number as the second operand (and errors: a zero
                   integer divisor, bool)
  <op>.grad.a / .grad.b  gradients of (op(X, Y) * W).sum()
Run: /usr/bin/python3 scripts/gen_binary_golden.py"""
import math
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "e2e", "data", "binary_golden.txt")

DTYPES = {"bool": torch.bool, "int32": torch.int32, "int64": torch.int64,
          "float32": torch.float32, "float64": torch.float64}
# A [3, 4] and B [4] per dtype (B has no zero: integer division by zero
# raises in PyTorch; bool B is all true).
A = {"bool": [1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1],
     "int": [-7, -5, -3, -1, 0, 1, 2, 3, 5, 7, 9, 11],
     "float": [-7.5, -5.25, -3.0, -1.5, -0.0, 0.75, 2.0, 3.5, 5.0, 6.25,
               9.5, 11.0]}
B = {"bool": [1, 1, 1, 1], "int": [3, -2, 5, -4],
     "float": [2.5, -1.75, 4.0, -3.0]}
SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 5.5,
           -5.5, 1e30, -3.0, 3.0, 7.0, -7.0]
I64 = torch.iinfo(torch.int64)
I32 = torch.iinfo(torch.int32)
EXTREME_A = {"int64": [I64.min, I64.min + 1, I64.max, -7, 7, 0],
             "int32": [I32.min, I32.min + 1, I32.max, -7, 7, 0]}
EXTREME_B = {"int64": [I64.max, I64.min, 3, -3, 2, 1],
             "int32": [I32.max, I32.min, 3, -3, 2, 1]}
W = [0.5 + 0.25 * i for i in range(12)]


def kind(dt):
    return "bool" if dt == "bool" else "int" if dt.startswith("int") \
        else "float"


def tensor(values, dt, shape=None):
    t = torch.tensor(values, dtype=DTYPES[dt])
    return t.reshape(shape) if shape else t


def line(out, name, t):
    if isinstance(t, bool):
        t = torch.tensor([t])
    t = t.detach().reshape(-1)
    dt = str(t.dtype).replace("torch.", "")
    if t.dtype.is_floating_point:
        vals = [repr(float(v)) for v in t.tolist()]
    else:
        vals = [str(int(v)) for v in t.tolist()]
    out.append(("%s %s %d %s" % (name, dt, t.numel(), " ".join(vals))).rstrip())


def attempt(out, name, fn):
    try:
        line(out, name, fn())
    except RuntimeError as e:
        out.append("%s error %s" % (name, str(e).split("\n")[0]))


OPS = {"atan2": torch.atan2, "fmod": torch.fmod,
       "remainder": torch.remainder, "floor_divide": torch.floor_divide}


def binary_ops(out):
    for op, fn in OPS.items():
        for da in DTYPES:
            for db in DTYPES:
                a = tensor(A[kind(da)], da, (3, 4))
                b = tensor(B[kind(db)], db)
                attempt(out, "%s.%s.%s" % (op, da, db), lambda: fn(a, b))
        for dt in ("float32", "float64"):
            s = torch.tensor(SPECIAL, dtype=DTYPES[dt])
            line(out, "%s.special.%s" % (op, dt),
                 fn(s.reshape(12, 1), s.reshape(1, 12)))
        if op != "atan2":
            for dt in ("int32", "int64"):
                a = tensor(EXTREME_A[dt], dt).reshape(6, 1)
                b = tensor(EXTREME_B[dt], dt).reshape(1, 6)
                line(out, "%s.extreme.%s" % (op, dt), fn(a, b))
        x = tensor(A["float"], "float32", (3, 4))
        y = tensor(B["float"] * 3, "float32", (4, 3))
        line(out, op + ".t", fn(x.t(), y))
        z = tensor(A["float"] + B["float"] * 2, "float32")
        line(out, op + ".slice", fn(x, z[::5][:4]))
        line(out, op + ".zerod", fn(torch.tensor(-7.25), x))
        line(out, op + ".zerod_int", fn(tensor(A["int"], "int64", (3, 4)),
                                        torch.tensor(4)))
        line(out, op + ".empty", fn(torch.empty(0, 4),
                                    torch.tensor(B["float"]).reshape(1, 4)))
        # Numbers as the second operand (atan2 takes tensors only).
        if op != "atan2":
            ai = tensor(A["int"], "int64", (3, 4))
            line(out, op + ".scalar.int", fn(ai, 3))
            line(out, op + ".scalar.neg", fn(ai, -2))
            line(out, op + ".scalar.float", fn(ai, 2.5))
            line(out, op + ".scalar.int32", fn(ai.int(), -3))
            line(out, op + ".scalar.f32", fn(x, -1.5))
            line(out, op + ".scalar.bool_tensor",
                 fn(tensor(A["bool"], "bool", (3, 4)), 2))
            attempt(out, op + ".scalar.zero", lambda: fn(ai, 0))
            line(out, op + ".scalar.zero_float", fn(ai, 0.0))
        # Gradients of (op(X, Y) * W).sum(), X [3, 4], Y [4] (a row).
        if op != "floor_divide":
            X = x.clone().requires_grad_()
            Y = torch.tensor(B["float"]).requires_grad_()
            r = fn(X, Y)
            out.append("%s.grad_fn grad_fn %s" % (op, type(r.grad_fn).__name__))
            (r * torch.tensor(W).reshape(3, 4)).sum().backward()
            line(out, op + ".grad.a", X.grad)
            line(out, op + ".grad.b", Y.grad)
    line(out, "remainder.number_tensor",
         torch.remainder(5, tensor(B["int"], "int64")))
    # fmod/remainder by a number: FmodBackward0, RemainderBackward0.
    for op in ("fmod", "remainder"):
        X = tensor(A["float"], "float32", (3, 4)).requires_grad_()
        r = OPS[op](X, 2.5)
        out.append("%s.scalar.grad_fn grad_fn %s" % (op,
                                                   type(r.grad_fn).__name__))
    # floor_divide has no derivative: backward raises.
    X = tensor(A["float"], "float32", (3, 4)).requires_grad_()
    attempt(out, "floor_divide.backward",
            lambda: torch.floor_divide(X, 2.0).sum().backward())


def lerp_ops(out):
    s = tensor(A["float"], "float32", (3, 4))
    e = tensor(B["float"], "float32")
    for name, w in (("w0", 0.0), ("w03", 0.3), ("w07", 0.7), ("w1", 1.0),
                    ("wneg", -0.5), ("w15", 1.5)):
        line(out, "lerp.scalar." + name, torch.lerp(s, e, w))
    wt = torch.tensor([0.25, -0.5, 0.75]).reshape(3, 1)
    line(out, "lerp.tensor", torch.lerp(s, e, wt))
    line(out, "lerp.f64", torch.lerp(s.double(), e.double(), 0.3))
    line(out, "lerp.t", torch.lerp(s.t(), tensor(B["float"] * 3, "float32",
                                                  (4, 3)), 0.6))
    line(out, "lerp.zerod", torch.lerp(torch.tensor(2.0), e, 0.25))
    line(out, "lerp.empty", torch.lerp(torch.empty(0, 4), e, 0.25))
    sp = torch.tensor(SPECIAL)
    line(out, "lerp.special", torch.lerp(sp.reshape(12, 1), sp.reshape(1, 12),
                                         0.25))
    line(out, "lerp.special_weight",
         torch.lerp(torch.tensor([1.0] * 12), torch.tensor([2.0] * 12), sp))
    # Gradients: a number weight (LerpBackward0), a tensor one (...1).
    S = s.clone().requires_grad_()
    E = e.clone().requires_grad_()
    r = torch.lerp(S, E, 0.3)
    out.append("lerp.scalar.grad_fn grad_fn %s" % type(r.grad_fn).__name__)
    (r * torch.tensor(W).reshape(3, 4)).sum().backward()
    line(out, "lerp.scalar.grad.start", S.grad)
    line(out, "lerp.scalar.grad.end", E.grad)
    S = s.clone().requires_grad_()
    E = e.clone().requires_grad_()
    WT = wt.clone().requires_grad_()
    r = torch.lerp(S, E, WT)
    out.append("lerp.tensor.grad_fn grad_fn %s" % type(r.grad_fn).__name__)
    (r * torch.tensor(W).reshape(3, 4)).sum().backward()
    line(out, "lerp.tensor.grad.start", S.grad)
    line(out, "lerp.tensor.grad.end", E.grad)
    line(out, "lerp.tensor.grad.weight", WT.grad)
    ai = tensor(A["int"], "int64", (3, 4))
    attempt(out, "lerp.int", lambda: torch.lerp(ai, ai, 0.5))
    attempt(out, "lerp.int_tensor", lambda: torch.lerp(ai, ai, ai))
    attempt(out, "lerp.end_dtype", lambda: torch.lerp(s, e.double(), 0.5))
    attempt(out, "lerp.weight_dtype",
            lambda: torch.lerp(s, e, wt.double()))
    attempt(out, "lerp_.broadcast",
            lambda: e.clone().lerp_(s, 0.5))


def isclose_ops(out):
    sp = torch.tensor(SPECIAL)
    near = sp + torch.tensor([0.0, 0, 0, 0, 1e-9, 1e-5, -6e-5, 1e25, 0,
                              3e-5, -1e-7, 1e-3])
    for dt in ("float32", "float64"):
        a = sp.to(DTYPES[dt]).reshape(12, 1)
        b = near.to(DTYPES[dt]).reshape(1, 12)
        line(out, "isclose.%s" % dt, torch.isclose(a, b))
        # (PyTorch 1.13's equal_nan ORs in place into `a != a`: it fails
        # when `a` broadcasts, so `a` is expanded first.)
        line(out, "isclose.%s.equal_nan" % dt,
             torch.isclose(a.expand(12, 12), b, equal_nan=True))
        line(out, "isclose.%s.tol" % dt,
             torch.isclose(a, b, rtol=1e-3, atol=1e-2))
        line(out, "isclose.%s.exact" % dt, torch.isclose(a, b, 0, 0))
    ai = tensor(A["int"], "int64", (3, 4))
    bi = ai + torch.tensor([0, 1, -2, 3])
    line(out, "isclose.int64", torch.isclose(ai, bi))
    line(out, "isclose.int64.atol", torch.isclose(ai, bi, atol=1.5))
    line(out, "isclose.int64.rtol", torch.isclose(ai, bi, rtol=0.5))
    line(out, "isclose.int32.atol",
         torch.isclose(ai.int(), bi.int(), atol=2.0))
    line(out, "isclose.int32.wrap",
         torch.isclose(torch.tensor([0, 5], dtype=torch.int32),
                       torch.tensor([I32.min, I32.max], dtype=torch.int32)))
    line(out, "isclose.int32.f32",
         torch.isclose(torch.tensor([2 ** 24 + 1, 7], dtype=torch.int32),
                       torch.tensor([2 ** 24, 8], dtype=torch.int32), 0, 0.5))
    big = torch.tensor([I64.max, I64.min, 2 ** 62 + 1])
    line(out, "isclose.int64.extreme",
         torch.isclose(big, torch.tensor([I64.max - 1, I64.min, 2 ** 62])))
    bb = tensor(A["bool"], "bool", (3, 4))
    line(out, "isclose.bool", torch.isclose(bb, bb.flip(1)))
    line(out, "isclose.bool.atol", torch.isclose(bb, bb.flip(1), atol=1.0))
    x = tensor(A["float"], "float32", (3, 4))
    line(out, "isclose.t", torch.isclose(x.t(), x.t() * (1 + 1e-6)))
    line(out, "isclose.zerod", torch.isclose(torch.tensor(3.0), x))
    line(out, "isclose.empty", torch.isclose(torch.empty(0, 4), x[0]))
    attempt(out, "isclose.dtype", lambda: torch.isclose(x, x.double()))
    attempt(out, "isclose.rtol", lambda: torch.isclose(x, x, rtol=-1.0))
    attempt(out, "isclose.atol", lambda: torch.isclose(x, x, atol=-0.5))
    line(out, "allclose.true", torch.allclose(x, x + 1e-7))
    line(out, "allclose.false", torch.allclose(x, x + 1e-3))
    line(out, "allclose.broadcast", torch.allclose(x[0], x))
    line(out, "allclose.nan", torch.allclose(sp, sp))
    line(out, "allclose.equal_nan", torch.allclose(sp, sp, equal_nan=True))
    attempt(out, "allclose.dtype", lambda: torch.allclose(x, x.double()))


# prod's inputs: rows without zeros, with one zero, with two.
ZEROS = [1.5, -2.0, 0.5, 3.0, 2.0, 0.0, -1.25, 4.0, 0.0, 3.5, 0.0, -0.5]


def prod_ops(out):
    for dt in DTYPES:
        a = tensor(A[kind(dt)], dt, (3, 4))
        line(out, "prod.all." + dt, a.prod())
        line(out, "prod.dim1." + dt, a.prod(1))
    x = tensor(A["float"], "float32", (3, 4))
    line(out, "prod.dim0.keepdim", x.prod(0, keepdim=True))
    line(out, "prod.neg_dim", x.prod(-1, keepdim=True))
    line(out, "prod.t", x.t().prod(1))
    line(out, "prod.slice", x[:, ::2].prod(0))
    line(out, "prod.zerod", torch.tensor(-2.5).prod())
    line(out, "prod.zerod.dim", torch.tensor(-2.5).prod(0))
    line(out, "prod.empty", torch.empty(0, 3).prod(0))
    line(out, "prod.empty.all", torch.empty(0, 3).prod())
    line(out, "prod.int64.wrap", torch.tensor([2 ** 40, 2 ** 40, 3]).prod())
    line(out, "prod.int32.wrap",
         torch.tensor([2 ** 20, 2 ** 20, 3], dtype=torch.int32).prod())
    s = torch.tensor(SPECIAL).reshape(3, 4)
    line(out, "prod.special", s.prod(1))
    z = tensor(ZEROS, "float32", (3, 4))
    for name, fn in (("dim1", lambda t: t.prod(1)),
                     ("dim0", lambda t: t.prod(0, keepdim=True)),
                     ("all", lambda t: t.prod()),
                     ("all_one_zero", lambda t: t[0:2, 0:3].prod()),
                     ("t", lambda t: t.t().prod(0))):
        Z = z.clone().requires_grad_()
        r = fn(Z)
        out.append("prod.grad_fn.%s grad_fn %s" % (name,
                                                  type(r.grad_fn).__name__))
        (r * torch.arange(1.0, r.numel() + 1).reshape(r.shape)).sum() \
            .backward()
        line(out, "prod.grad." + name, Z.grad)
    X = x.clone().requires_grad_()
    X.prod(1).sum().backward()
    line(out, "prod.grad.nozeros", X.grad)


def main():
    out = []
    binary_ops(out)
    lerp_ops(out)
    isclose_ops(out)
    prod_ops(out)
    with open(OUT, "w") as f:
        f.write("# Generated by scripts/gen_binary_golden.py from PyTorch %s; "
                "do not edit.\n" % torch.__version__)
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
