#!/usr/bin/python3
"""Writes tests/e2e/data/op_autograd_golden.txt: for every differentiable op
of strata's dialect that the DSL records (tests/e2e/OpAutogradTest.cpp runs
the same cases), PyTorch 1.13's autograd node of the op under each pattern
of its tensor operands requiring grad. One line per case and pattern:

  <case>/<pattern> <grad_fn name> saved=<sizes> raises=<bits> second=<bit>

`pattern` has a 0/1 per float operand (1: requires grad); `saved` the
sizes of the tensors the node saves, sorted (`-` for none); `raises` a bit
per tensor operand, then one for the result: whether writing it in place
after the op makes backward raise (the version check of a saved tensor);
`second` whether a second backward without retain_graph raises (the node
saved something; x: the first one raises already). Operands that require grad are leaves, or for `raises`
the non-leaves `leaf * 1`, so they can be written in place.
Run: /usr/bin/python3 scripts/gen_op_autograd_golden.py"""
import itertools
import os

import torch

F = "f"  # a float32 operand: ("f", shape)
I = "i"  # an int64 index: ("i", shape), values 0, 1, 0, 1, ...
B = "b"  # a bool condition: ("b", shape), values True, False, ...

UNARY = ["neg", "abs", "square", "reciprocal", "sign", "floor", "ceil",
         "round", "trunc", "exp", "exp2", "expm1", "log", "log2", "log10",
         "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos",
         "atan", "sinh", "cosh", "tanh", "erf", "relu", "sigmoid", "gelu",
         "silu", "softplus"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2",
          "hypot", "logaddexp", "fmod", "remainder", "floor_divide"]
FUNCTIONAL = ["gelu", "silu", "softplus"]  # torch.nn.functional's
X, AB = [(F, (2, 3))], [(F, (2, 1)), (F, (3,))]


def cases():
    """(case, IR op, operands, function of the operand tensors): the same
    names and order as OpAutogradTest.cpp's cases()."""
    for op in UNARY:
        f = getattr(torch.nn.functional, op, None) if op in FUNCTIONAL else None
        yield op, op, X, (f or (lambda x, op=op: getattr(x, op)()))
    yield "gelu_tanh", "gelu_tanh", X, lambda x: torch.nn.functional.gelu(
        x, approximate="tanh")
    for op in BINARY:
        yield op, op, AB, lambda a, b, op=op: getattr(a, op)(b)
    yield "mul_number", "mul", X, lambda x: x * 2.5
    yield "div_number", "div", X, lambda x: x / 2.5
    yield "rsub_number", "sub", X, lambda x: 2.5 - x
    yield "pow_number", "pow", X, lambda x: x.pow(2.5)
    yield "fmod_number", "fmod", X, lambda x: x.fmod(2.5)
    yield "remainder_number", "remainder", X, lambda x: x.remainder(2.5)
    yield "add_alpha", "fma", AB, lambda a, b: a.add(b, alpha=2.5)
    yield "sub_alpha", "fma", AB, lambda a, b: a.sub(b, alpha=2.5)
    yield "lerp", "lerp", [(F, (2, 1, 1)), (F, (3, 1)), (F, (4,))], \
        lambda a, b, w: a.lerp(b, w)
    yield "lerp_number", "lerp", [(F, (2, 1)), (F, (3,))], \
        lambda a, b: a.lerp(b, 0.25)
    yield "where", "where", [(B, (2, 1, 1)), (F, (3, 1)), (F, (4,))], \
        lambda c, a, b: torch.where(c, a, b)
    yield "where_number", "where", [(B, (2, 1)), (F, (3,))], \
        lambda c, a: torch.where(c, a, 2.5)
    yield "to_double", "cast", X, lambda x: x.to(torch.float64)
    yield "clone", "copy", X, lambda x: x.clone()
    yield "contiguous", "contiguous", X, lambda x: x.t().contiguous()
    yield "sum", "sum", X, lambda x: x.sum()
    yield "sum_dim", "sum", X, lambda x: x.sum([1])
    yield "mean", "mean", X, lambda x: x.mean()
    yield "mean_dim", "mean", X, lambda x: x.mean([1])
    yield "prod", "prod", X, lambda x: x.prod()
    yield "prod_dim", "prod", X, lambda x: x.prod(1)
    yield "amax", "amax", X, lambda x: x.amax([1])
    yield "amin", "amin", X, lambda x: x.amin([1])
    yield "cumsum", "scan", X, lambda x: x.cumsum(1)
    yield "cumprod", "scan", X, lambda x: x.cumprod(1)
    yield "dot", "matmul", [(F, (3,)), (F, (3,))], lambda a, b: a.matmul(b)
    yield "mv", "matmul", [(F, (2, 3)), (F, (3,))], lambda a, b: a.matmul(b)
    yield "mm", "matmul", [(F, (2, 3)), (F, (3, 4))], lambda a, b: a.matmul(b)
    # (torch.matmul of 3-D tensors ends in a view: UnsafeViewBackward0;
    # strata's matmul is bmm's node, as docs/design.md says.)
    yield "bmm", "matmul", [(F, (5, 2, 3)), (F, (5, 3, 4))], \
        lambda a, b: torch.bmm(a, b)
    yield "gather", "gather", [(F, (2, 3)), (I, (2, 2))], \
        lambda x, i: x.gather(1, i)
    # (src of the index's shape: PyTorch's gradient of a larger src is
    # the index's shape, which its engine refuses.)
    yield "scatter", "scatter", [(F, (2, 3)), (I, (2, 2)), (F, (2, 2))], \
        lambda x, i, s: x.scatter(1, i, s)
    yield "scatter_add", "scatter_add", \
        [(F, (2, 3)), (I, (2, 2)), (F, (2, 2))], \
        lambda x, i, s: x.scatter_add(1, i, s)
    # Shapes where a VJP takes a shortcut that reads nothing (a 0-d prod,
    # a cumprod over one element): PyTorch saves what it saves elsewhere.
    Z = [(F, ())]
    yield "exp_0d", "exp", Z, lambda x: x.exp()
    yield "mul_0d", "mul", [(F, ()), (F, ())], lambda a, b: a * b
    yield "prod_0d", "prod", Z, lambda x: x.prod()
    yield "cumprod_0d", "scan", Z, lambda x: x.cumprod(0)
    yield "cumprod_size1", "scan", [(F, (2, 1))], lambda x: x.cumprod(1)
    yield "amax_keepdim", "amax", X, lambda x: x.amax([1], True)
    yield "mean_keepdim", "mean", X, lambda x: x.mean([1], True)
    yield "where_0d", "where", [(B, ()), (F, ()), (F, ())], \
        lambda c, a, b: torch.where(c, a, b)


def value(kind, shape, k):
    n = 1
    for s in shape:
        n *= s
    if not shape:  # 0-d: the first element of the 1-element case
        return value(kind, (1,), k).reshape(()).clone()
    if kind == I:
        return torch.tensor([j % 2 for j in range(n)]).reshape(shape)
    if kind == B:
        return torch.tensor([j % 2 == 0 for j in range(n)]).reshape(shape)
    return torch.linspace(0.2 + 0.05 * k, 0.8, n).reshape(shape)


def operands(specs, pattern, nonleaf):
    out, p = [], iter(pattern)
    for k, (kind, shape) in enumerate(specs):
        t = value(kind, shape, k)
        if kind == F and next(p) == "1":
            t.requires_grad_()
            if nonleaf:
                t = t * 1
        out.append(t)
    return out


def raises(f):
    try:
        f()
        return "0"
    except RuntimeError:
        return "1"


def write_in_place(t):
    if t.dtype == torch.float32 or t.dtype == torch.float64:
        t.add_(0)
    else:
        t.copy_(t.clone())


def line(case, specs, fn, pattern):
    ops = operands(specs, pattern, False)
    y = fn(*ops)
    node = y.grad_fn
    saved = sorted(
        "[" + ",".join(str(s) for s in v.shape) + "]"
        for a in dir(node) if a.startswith("_saved_")
        for v in [getattr(node, a)] if isinstance(v, torch.Tensor))
    bits = ""
    for k in range(len(specs) + 1):
        ops = operands(specs, pattern, True)
        y = fn(*ops)
        write_in_place(ops[k] if k < len(specs) else y)
        bits += raises(lambda: y.sum().backward())
    ops = operands(specs, pattern, False)
    y = fn(*ops)
    second = "x" if raises(lambda: y.sum().backward()) == "1" else raises(
        lambda: y.sum().backward())
    return "%s/%s %s saved=%s raises=%s second=%s" % (
        case, pattern, type(node).__name__, ";".join(saved) or "-", bits, second)


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "tests", "e2e", "data", "op_autograd_golden.txt")
    lines = ["# generated by scripts/gen_op_autograd_golden.py (torch %s)"
             % torch.__version__]
    for case, ir, specs, fn in cases():
        floats = sum(1 for kind, _ in specs if kind == F)
        for bits in itertools.product("01", repeat=floats):
            pattern = "".join(bits)
            if "1" in pattern:
                lines.append(line(case, specs, fn, pattern))
    open(out, "w").write("\n".join(lines) + "\n")


main()
