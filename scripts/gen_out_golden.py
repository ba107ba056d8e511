#!/usr/bin/env python3
"""Writes tests/ops/out_golden.txt: PyTorch 1.13's results of the `_out`
forms (torch.add/sub/mul/div/matmul/mm with out=) for tests/ops/OutOpsTest.cpp.

    /usr/bin/python3 scripts/gen_out_golden.py tests/ops/out_golden.txt

A case is named OP:KIND:LABEL. OP is add, sub, mul, div, matmul or mm
(add2/sub2: alpha 2; addh: alpha 0.5). KIND says how the out tensor is made
from `base` on both sides:
    whole   out = base (the result's shape)
    t       out = base.t() (base is the result's transpose, 2-d)
    narrow  out = base.narrow(0, 1, rows) (base has two more rows)
    empty   out = base, an empty tensor: resized to the result's shape
    alias   out = in0 (base is in0; the result has in0's shape)
Keys: in0, in1, base (out's storage before), want (base after; for empty,
out after). Same line format as ops_golden.txt (gen_ops_golden.py).
"""
import sys

import torch

torch.manual_seed(20)
LINES = []
DT = {torch.bool: "b", torch.int32: "i32", torch.int64: "i64",
      torch.float32: "f32", torch.float64: "f64"}


def emit(key, t):
    dtype = DT[t.dtype]
    vals = t.reshape(-1).tolist()
    if dtype in ("b", "i32", "i64"):
        fmt = lambda v: str(int(v))
    else:
        fmt = lambda v: format(float(v), ".17g")
    LINES.append(f"{key} {dtype} {t.dim()} " +
                 " ".join(str(s) for s in t.shape) + " : " +
                 " ".join(fmt(v) for v in vals))


def make(dtype, shape):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype in (torch.int32, torch.int64):
        t = torch.randint(-5, 6, shape, dtype=dtype)
        return torch.where(t == 0, torch.ones_like(t), t)  # no 0 divisors
    return torch.randn(shape, dtype=dtype)


def call(op, a, b, out):
    if op in ("add", "sub", "mul", "div", "matmul", "mm"):
        return getattr(torch, op)(a, b, out=out)
    alpha = {"add2": 2, "sub2": 2, "addh": 0.5}[op]
    return getattr(torch, op[:3])(a, b, alpha=alpha, out=out)


def case(op, kind, label, a, b, out_dtype):
    result = call(op, a.clone(), b.clone(), None)
    shape = result.shape
    if kind == "whole":
        base = make(out_dtype, shape)
        out = base
    elif kind == "t":
        base = make(out_dtype, (shape[1], shape[0]))
        out = base.t()
    elif kind == "narrow":
        base = make(out_dtype, (shape[0] + 2,) + tuple(shape[1:]))
        out = base.narrow(0, 1, shape[0])
    elif kind == "empty":
        base = torch.empty(0, dtype=out_dtype)
        out = base
    elif kind == "alias":
        a = a.to(out_dtype)
        base = a
        out = a
    LINES.append(f"case {op}:{kind}:{label}")
    emit("in0", a)
    emit("in1", b)
    emit("base", base)
    before = base.clone()
    got = call(op, a, b, out)
    assert got is out
    emit("want", out if kind == "empty" else base)
    del before
    LINES.append("end")


def main(path):
    f32, f64, i32, i64, b = (torch.float32, torch.float64, torch.int32,
                             torch.int64, torch.bool)
    elementwise = ["add", "sub", "mul", "div", "add2", "sub2", "addh"]
    # (label, dtype a, dtype b, out dtype) for every elementwise op.
    dtypes = [("f32", f32, f32, f32), ("f32_into_f64", f32, f32, f64),
              ("f64_f32", f64, f32, f64), ("i64", i64, i64, i64),
              ("i32_i64", i32, i64, i64), ("i64_into_f32", i64, i64, f32),
              ("i32_f32", i32, f32, f32), ("b_into_i64", b, b, i64),
              ("b", b, b, b)]
    for op in elementwise:
        for label, da, db, do in dtypes:
            if op.startswith("sub") and da == b:
                continue  # an error (OutOpsTest checks it)
            if op == "div" and do not in (f32, f64):
                continue  # a float result into an integer out: an error
            if op == "addh" and do not in (f32, f64):
                continue  # a float alpha with integers: an error
            if op == "addh" and (da, db) != (f32, f32) and da != f64:
                continue
            if op in ("add2", "sub2") and label == "b":
                continue  # an int alpha for a bool result: PyTorch's add
            for kind in ("whole", "t", "narrow", "empty"):
                case(op, kind, label, make(da, (3, 4)), make(db, (3, 4)), do)
    # Broadcasting, 0-d, empty results, exact aliasing.
    for op in ("add", "mul", "div", "sub2"):
        case(op, "whole", "bcast", make(f32, (3, 1)), make(f32, (4,)), f32)
        case(op, "whole", "zero_d", make(f32, ()), make(f32, ()), f32)
        case(op, "empty", "zero_d", make(f64, ()), make(f64, ()), f64)
        case(op, "whole", "empty_result", make(f32, (0, 3)), make(f32, (3,)),
             f32)
        case(op, "alias", "self", make(f32, (3, 4)), make(f32, (3, 4)), f32)
        case(op, "alias", "bcast_other", make(f64, (3, 4)), make(f64, (4,)),
             f64)
    case("add", "whole", "int_bcast", make(i64, (2, 3)), make(i32, (3,)), i64)
    case("add2", "alias", "i64", make(i64, (5,)), make(i64, (5,)), i64)
    # Products: 2-d, batched, matrix-vector, vector-vector (0-d result).
    for op in ("matmul", "mm"):
        for dt in (f32, f64):
            name = DT[dt]
            case(op, "whole", name, make(dt, (3, 5)), make(dt, (5, 4)), dt)
            case(op, "t", name, make(dt, (3, 5)), make(dt, (5, 4)), dt)
            case(op, "narrow", name, make(dt, (3, 5)), make(dt, (5, 4)), dt)
            case(op, "empty", name, make(dt, (3, 5)), make(dt, (5, 4)), dt)
        case(op, "whole", "i64", make(i64, (2, 3)), make(i64, (3, 2)), i64)
        case(op, "alias", "square", make(f32, (4, 4)), make(f32, (4, 4)), f32)
    case("matmul", "whole", "batched", make(f32, (2, 3, 5)),
         make(f32, (5, 4)), f32)
    case("matmul", "empty", "mv", make(f64, (3, 5)), make(f64, (5,)), f64)
    case("matmul", "empty", "dot", make(f32, (5,)), make(f32, (5,)), f32)
    case("matmul", "whole", "dot", make(f32, (5,)), make(f32, (5,)), f32)
    with open(path, "w") as f:
        f.write("# Written by scripts/gen_out_golden.py (PyTorch " +
                torch.__version__ + "); do not edit.\n")
        f.write("\n".join(LINES) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
