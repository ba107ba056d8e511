#!/usr/bin/env python3
"""Writes tests/ops/ops_golden.txt: PyTorch 1.13's results of the composite
ops (cat, stack, split, chunk, unbind, repeat, tile, roll, tril/triu,
one_hot, eye, linspace, logspace, full_like, var/std, logsumexp, norm,
any/all, argmax/argmin, max/min, the compound assignments and the one-dim
reductions) for tests/ops/OpsTest.cpp.

    /usr/bin/python3 scripts/gen_ops_golden.py tests/ops/ops_golden.txt

Each case has a name OpsTest.cpp knows, its inputs (contiguous: a case that
reads a view, e.g. a transpose, makes it in its function on both sides),
every output (`outK`), whether it requires grad (`rgK`), for the ops that
return views their strides and storage offset (`stridesK`, `offsetK`), a
random upstream gradient of each floating-point output that requires grad
(`goutK`) and the gradient of every floating-point input (`gradK`: the
backward of sum_k (outK * goutK).sum()). Values have 17 significant digits
(exact for float64 and float32; nan/inf spelled so). One tensor per line:

    case NAME
    KEY DTYPE RANK SIZE... : VALUE...
    end

DTYPE is b, i32, i64, f32 or f64.
"""
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(21)
LINES = []
NAN, INF = float("nan"), float("inf")
DT = {torch.bool: "b", torch.int32: "i32", torch.int64: "i64",
      torch.float32: "f32", torch.float64: "f64"}


def emit(key, t):
    t = t.detach()
    dtype = DT[t.dtype]
    vals = t.reshape(-1).tolist()
    if dtype in ("b", "i32", "i64"):
        fmt = lambda v: str(int(v))
    else:
        fmt = lambda v: format(float(v), ".17g")
    LINES.append(f"{key} {dtype} {t.dim()} " +
                 " ".join(str(s) for s in t.shape) + " : " +
                 " ".join(fmt(v) for v in vals))


def case(name, fn, inputs=(), nograd=(), views=False):
    ins = [i.clone().requires_grad_(i.is_floating_point() and k not in nograd)
           for k, i in enumerate(inputs)]
    res = fn(*ins)
    outs = list(res) if isinstance(res, (tuple, list)) else [res]
    LINES.append(f"case {name}")
    for k, i in enumerate(inputs):
        emit(f"in{k}", i)
    grads_of, gouts = [], []
    for k, o in enumerate(outs):
        emit(f"out{k}", o)
        emit(f"rg{k}", torch.tensor(int(o.requires_grad)))
        if views:
            emit(f"strides{k}", torch.tensor(o.stride(), dtype=torch.int64))
            emit(f"offset{k}", torch.tensor(o.storage_offset()))
        if o.requires_grad:
            g = torch.randn(o.shape, dtype=o.dtype)
            emit(f"gout{k}", g)
            grads_of.append(o)
            gouts.append(g)
    if grads_of:
        torch.autograd.backward(grads_of, gouts)
    for k, i in enumerate(ins):
        if i.requires_grad:
            emit(f"grad{k}", i.grad if i.grad is not None
                 else torch.zeros_like(i))
    LINES.append("end")


def rn(*shape, dtype=torch.float64):
    return torch.randn(shape, dtype=dtype)


def ints(*shape, dtype=torch.int64, lo=-5, hi=6):
    return torch.randint(lo, hi, shape, dtype=dtype)  # shape () is 0-d


def bools(*shape):
    return torch.rand(shape) > 0.5


def every_dtype(*shape):
    """One tensor of each dtype (floats with NaN-free random values)."""
    return {"f64": rn(*shape), "f32": rn(*shape, dtype=torch.float32),
            "i64": ints(*shape), "i32": ints(*shape, dtype=torch.int32),
            "b": bools(*shape)}


def idiom_cases():
    a, b = rn(2, 3), rn(3)

    def inplace(op, other):
        def f(x, *y):
            c = x.clone()
            o = y[0] if y else other
            if op == "+":
                c += o
            elif op == "-":
                c -= o
            elif op == "*":
                c *= o
            else:
                c /= o
            return c
        return f
    for op, name in (("+", "add"), ("-", "sub"), ("*", "mul"), ("/", "div")):
        case(f"i{name}_tensor", inplace(op, None), [a, b])
        case(f"i{name}_scalar", inplace(op, 2.5), [a])
    case("iadd_int_tensor", inplace("+", None), [ints(2, 3), ints(3, dtype=torch.int32)])
    case("imul_int_scalar", inplace("*", 3), [ints(2, 3, dtype=torch.int32)])
    case("idiv_f32_int", inplace("/", None), [rn(2, 3, dtype=torch.float32), ints(3, lo=1)])

    def iadd_row(x, y):
        c = x.clone()
        c[0] += y
        return c

    def imul_t(x, y):
        c = x.clone()
        t = c.t()
        t *= y
        return c
    case("iadd_view_row", iadd_row, [a, b])
    case("imul_view_t", imul_t, [a, rn(2)])
    x = rn(3, 4)
    case("sum_dim1", lambda t: t.sum(1), [x])
    case("sum_dim_neg_keep", lambda t: t.sum(-1, True), [x])
    case("sum_dim_i32", lambda t: t.sum(1), [ints(3, 4, dtype=torch.int32)])
    case("sum_dim_bool", lambda t: t.sum(0), [bools(3, 4)])
    case("mean_dim0", lambda t: t.mean(0), [x])
    case("mean_dim_t_keep", lambda t: t.t().mean(1, True), [x])
    case("amax_dim1", lambda t: t.amax(1), [x])
    case("amin_dim_neg_keep", lambda t: t.amin(-2, True), [x])


def shape_cases():
    a, b = rn(2, 3), rn(4, 3)
    case("cat_dim0", lambda x, y: torch.cat([x, y]), [a, b])
    case("cat_dim1", lambda x, y: torch.cat([x, y], 1), [a, rn(2, 2)])
    case("cat_neg_three", lambda x, y, z: torch.cat([x, y, z], -1),
         [rn(2, 1, 2), rn(2, 1, 3), rn(2, 1, 1)])
    case("cat_transposed", lambda x, y: torch.cat([x.t(), y], 0),
         [rn(3, 2), rn(1, 3)])
    case("cat_sliced", lambda x: torch.cat([x[:, 1:], x[:, :1]], 1), [rn(3, 4)])
    case("cat_single", lambda x: torch.cat([x]), [a])
    case("cat_f32_i64", lambda x, y: torch.cat([x, y]),
         [rn(2, 3, dtype=torch.float32), ints(1, 3)])
    case("cat_i32_f64", lambda x, y: torch.cat([x, y], 1), [ints(2, 2, dtype=torch.int32), rn(2, 1)])
    case("cat_bool_i64", lambda x, y: torch.cat([x, y], 1), [bools(2, 3), ints(2, 3)])
    case("cat_bool_bool", lambda x, y: torch.cat([x, y]), [bools(2), bools(3)])
    case("cat_i32_i32", lambda x, y: torch.cat([x, y]), [ints(2, dtype=torch.int32), ints(1, dtype=torch.int32)])
    case("cat_legacy_empty", lambda x, y: torch.cat([x, y, x], 1),
         [rn(2, 3), torch.zeros(0, dtype=torch.float64)])
    case("cat_legacy_empty_i64", lambda x, y: torch.cat([x, y]),
         [ints(2, 2), torch.zeros(0, dtype=torch.float32)])
    case("cat_empty_rows", lambda x, y: torch.cat([x, y]), [a, torch.zeros(0, 3, dtype=torch.float64)])
    case("stack_dim0", lambda x, y: torch.stack([x, y]), [a, rn(2, 3)])
    case("stack_dim_neg", lambda x, y: torch.stack([x, y], -1), [a, rn(2, 3)])
    case("stack_dim2", lambda x, y, z: torch.stack([x, y, z], 2), [a, rn(2, 3), rn(2, 3)])
    case("stack_scalars", lambda x, y: torch.stack([x, y]), [rn(), rn()])
    case("stack_i32_f32", lambda x, y: torch.stack([x, y], 1),
         [ints(3, dtype=torch.int32), rn(3, dtype=torch.float32)])
    case("stack_transposed", lambda x, y: torch.stack([x.t(), y]), [rn(3, 2), rn(2, 3)])

    v = rn(5, 3)
    case("split_size", lambda x: x.split(2), [v], views=True)
    case("split_neg_dim_t", lambda x: x.t().split(2, -1), [v], views=True)
    case("split_sizes", lambda x: x.split([1, 2], 1), [v], views=True)
    case("split_with_sizes_zero", lambda x: x.split_with_sizes([2, 0, 3]), [v], views=True)
    case("split_big", lambda x: x.split(10), [v], views=True)
    case("split_empty_dim", lambda x: x.split(0, 1), [rn(2, 0)], views=True)
    case("split_i32", lambda x: x.split(2, 1), [ints(2, 5, dtype=torch.int32)], views=True)
    case("chunk3_dim1", lambda x: x.chunk(3, 1), [rn(2, 7)], views=True)
    case("chunk_fewer", lambda x: x.chunk(4), [rn(2, 3)], views=True)
    case("chunk_empty", lambda x: x.chunk(3), [rn(0, 3)], views=True)
    case("chunk_sliced", lambda x: x[1:, ::2].chunk(2, 0), [rn(5, 6)], views=True)
    case("chunk_bool", lambda x: x.chunk(2), [bools(4, 2)], views=True)
    case("unbind0", lambda x: x.unbind(), [rn(3, 2)], views=True)
    case("unbind_neg_sliced", lambda x: x[:, 1:].unbind(-1), [rn(2, 4)], views=True)
    case("unbind_i64", lambda x: x.unbind(1), [ints(2, 3)], views=True)

    case("repeat_2d", lambda x: x.repeat(2, 1, 2), [a])
    case("repeat_1d", lambda x: x.repeat(3), [rn(2)])
    case("repeat_scalar", lambda x: x.repeat([]), [rn()])
    case("repeat_scalar_dims", lambda x: x.repeat(2, 3), [rn()])
    case("repeat_transposed", lambda x: x.t().repeat(2, 2), [a])
    case("repeat_zero", lambda x: x.repeat(0, 2), [a])
    case("repeat_bool", lambda x: x.repeat(2, 1), [bools(2, 2)])
    case("repeat_i32", lambda x: x.repeat(1, 3), [ints(2, 2, dtype=torch.int32)])
    case("tile_short", lambda x: x.tile([2]), [a])
    case("tile_long", lambda x: x.tile([2, 1, 1]), [a])

    r = rn(3, 4)
    case("roll_flat", lambda x: x.roll(1), [r])
    case("roll_neg_dim0", lambda x: x.roll(-4, 0), [r])
    case("roll_two_dims", lambda x: x.roll([1, -2], [0, 1]), [r])
    case("roll_transposed", lambda x: x.t().roll(2, 1), [r])
    case("roll_big_shift", lambda x: x.roll(7, -1), [r])
    case("roll_zero", lambda x: x.roll(0, 1), [r])
    case("roll_scalar", lambda x: x.roll(1), [rn()])
    case("roll_empty", lambda x: x.roll(1, 0), [rn(0, 2)])
    case("roll_i64", lambda x: x.roll(1, 1), [ints(2, 3)])
    case("roll_bool", lambda x: x.roll(-1), [bools(5)])

    t = rn(3, 4)
    for k in (0, 1, -1, 5, -5):
        kn = str(k).replace("-", "m")
        case(f"tril_{kn}", lambda x: x.tril(k), [t])
        case(f"triu_{kn}", lambda x: x.triu(k), [t])
    case("tril_batched", lambda x: x.tril(), [rn(2, 3, 3)])
    case("triu_transposed", lambda x: x.t().triu(1), [t])
    case("tril_bool", lambda x: x.tril(), [bools(3, 3)])
    case("triu_i32", lambda x: x.triu(-1), [ints(3, 2, dtype=torch.int32)])
    case("tril_empty", lambda x: x.tril(), [rn(0, 3)])

    case("one_hot_n", lambda x: F.one_hot(x, 5), [torch.tensor([0, 3, 1, 4])])
    case("one_hot_infer", lambda x: F.one_hot(x), [torch.tensor([[2, 0], [1, 2]])])
    case("one_hot_scalar", lambda x: F.one_hot(x, 3), [torch.tensor(1)])
    case("one_hot_empty", lambda x: F.one_hot(x, 3), [torch.zeros(0, dtype=torch.int64)])


def factory_cases():
    case("eye_3", lambda: torch.eye(3))
    case("eye_2_4", lambda: torch.eye(2, 4))
    case("eye_4_2_f64", lambda: torch.eye(4, 2, dtype=torch.float64))
    case("eye_0", lambda: torch.eye(0))
    case("eye_bool", lambda: torch.eye(3, dtype=torch.bool))
    case("eye_i32", lambda: torch.eye(2, 3, dtype=torch.int32))
    case("linspace_5", lambda: torch.linspace(0, 1, 5))
    case("linspace_f64", lambda: torch.linspace(-2.5, 7, 7, dtype=torch.float64))
    case("linspace_15_f32", lambda: torch.linspace(-3, 11, 15))
    case("linspace_down", lambda: torch.linspace(4, -4, 6))
    # Long enough for PyTorch's vectorized kernel (a per-vector base, then
    # base + step * lane): within the float tolerance of strata's formula.
    case("linspace_50_f32", lambda: torch.linspace(-3, 11, 50))
    case("linspace_101_f64", lambda: torch.linspace(-3.3, 11.7, 101, dtype=torch.float64))
    case("linspace_i64", lambda: torch.linspace(0, 10, 5, dtype=torch.int64))
    case("linspace_i32_down", lambda: torch.linspace(10, 0, 7, dtype=torch.int32))
    case("linspace_one", lambda: torch.linspace(3, 9, 1))
    case("linspace_zero", lambda: torch.linspace(3, 9, 0))
    case("logspace_3", lambda: torch.logspace(0, 2, 3))
    case("logspace_base2_f64", lambda: torch.logspace(-1, 1, 5, base=2, dtype=torch.float64))
    case("logspace_f32_7", lambda: torch.logspace(-2, 1.5, 7))
    case("logspace_i64", lambda: torch.logspace(0, 2, 3, dtype=torch.int64))
    case("logspace_one", lambda: torch.logspace(2, 5, 1))
    case("full_like_dtype", lambda x: torch.full_like(x, 2, dtype=torch.int32), [rn(2, 3)])
    case("full_like_trunc", lambda x: torch.full_like(x, 2.5), [ints(2, 2)])
    case("full_like_bool", lambda x: torch.full_like(x, 7), [bools(3)])
    case("full_like_f64", lambda x: torch.full_like(x, 0.25, dtype=torch.float64), [ints(2, dtype=torch.int32)])
    case("zeros_like_dtype", lambda x: torch.zeros_like(x, dtype=torch.bool), [rn(2)])
    case("ones_like_dtype", lambda x: torch.ones_like(x, dtype=torch.float32), [ints(2, 2)])


def reduction_cases():
    x = rn(3, 4)
    const = torch.tensor([[1.5, 1.5, 1.5], [0.0, 1.0, 2.0]], dtype=torch.float64)
    for fn in ("var", "std"):
        case(f"{fn}_all", lambda t: getattr(t, fn)(), [x])
        case(f"{fn}_biased", lambda t: getattr(t, fn)(unbiased=False), [x])
        case(f"{fn}_dim0", lambda t: getattr(t, fn)(0), [x])
        case(f"{fn}_dims_keep", lambda t: getattr(t, fn)([-1], True, True), [rn(2, 3, 4)])
        case(f"{fn}_dims01", lambda t: getattr(t, fn)([0, 2], False), [rn(2, 3, 4)])
        case(f"{fn}_corr0", lambda t: getattr(t, fn)(1, correction=0), [x])
        case(f"{fn}_corr2", lambda t: getattr(t, fn)(1, correction=2), [x])
        case(f"{fn}_corr_inf", lambda t: getattr(t, fn)(0, correction=3), [x])
        case(f"{fn}_f32", lambda t: getattr(t, fn)(1), [rn(3, 5, dtype=torch.float32)])
        case(f"{fn}_transposed", lambda t: getattr(t, fn)(1), [x.t().contiguous().t()])
        case(f"{fn}_t_view", lambda t: getattr(t, fn)(0).sum() + getattr(t.t(), fn)(0).sum(), [x])
        case(f"{fn}_scalar", lambda t: getattr(t, fn)(), [rn()])
        case(f"{fn}_single", lambda t: getattr(t, fn)(0), [rn(1, 3)])
        case(f"{fn}_empty", lambda t: getattr(t, fn)(), [rn(0)])
        case(f"{fn}_empty_dim", lambda t: getattr(t, fn)(1), [rn(2, 0)])
        case(f"{fn}_const_row", lambda t: getattr(t, fn)(1), [const])
        case(f"{fn}_nan_inf", lambda t: getattr(t, fn)(1),
             [torch.tensor([[1., NAN, 2.], [1., INF, 2.], [1., 2., 4.]], dtype=torch.float64)])

    special = torch.tensor([[-INF, -INF, -INF], [INF, 1., 2.], [1., NAN, 2.],
                            [1000., 999., -1000.], [-1., 0., 1.]], dtype=torch.float64)
    case("lse_dim1", lambda t: t.logsumexp(1), [x])
    case("lse_dim_neg_keep", lambda t: t.logsumexp(-2, True), [x])
    case("lse_dims_all", lambda t: t.logsumexp([0, 1]), [x])
    case("lse_special", lambda t: t.logsumexp(1), [special])
    case("lse_f32", lambda t: t.logsumexp(0), [rn(4, 3, dtype=torch.float32) * 50])
    case("lse_i64", lambda t: t.logsumexp(1), [ints(2, 3)])
    case("lse_bool", lambda t: t.logsumexp(0), [bools(3, 2)])
    case("lse_scalar", lambda t: t.logsumexp(0), [rn()])
    case("lse_empty_dim", lambda t: t.logsumexp(0), [rn(0, 3)])
    case("lse_empty_rows", lambda t: t.logsumexp(1), [rn(0, 3)])
    case("lse_transposed", lambda t: t.t().logsumexp(1), [x])

    zrow = torch.tensor([[0., 0., 0.], [3., -4., 0.], [-1., 2., -2.]], dtype=torch.float64)
    for p, pn in ((2, "2"), (1, "1"), (INF, "inf"), (-INF, "neginf"), (0, "0"), (3, "3"), (-1, "m1")):
        case(f"norm_{pn}", lambda t: t.norm(p), [x])
        case(f"norm_{pn}_dim1", lambda t: t.norm(p, 1), [zrow])
        case(f"norm_{pn}_keep", lambda t: t.norm(p, [0], True), [rn(3, 2, dtype=torch.float32)])
    case("norm_default_dims", lambda t: t.norm(dim=[0, 2]), [rn(2, 3, 2)])
    case("norm_inf_empty", lambda t: t.norm(INF), [rn(0)])
    case("norm_2_empty_dim", lambda t: t.norm(2, 0), [rn(0, 3)])
    case("norm_inf_empty_dim", lambda t: t.norm(INF, 0), [rn(0, 3)])
    case("norm_scalar", lambda t: t.norm(), [rn()])
    case("norm_zero_all", lambda t: t.norm(), [torch.zeros(2, 2, dtype=torch.float64)])
    case("norm_transposed", lambda t: t.t().norm(2, 1), [x])
    case("norm_nan", lambda t: t.norm(INF, 1), [torch.tensor([[1., NAN], [-3., 2.]], dtype=torch.float64)])

    for dn, t in every_dtype(3, 4).items():
        t = t.clone()
        if dn in ("f64", "f32"):
            t[0] = 0
            t[1, 1] = NAN
        elif dn != "b":
            t[0] = 0
        case(f"any_{dn}", lambda u: u.any(), [t])
        case(f"all_{dn}", lambda u: u.all(), [t])
        case(f"any_dim_{dn}", lambda u: u.any(1), [t])
        case(f"all_dim_keep_{dn}", lambda u: u.all(-1, True), [t])
        case(f"all_dim0_{dn}", lambda u: u.all(0), [t])
    case("any_empty", lambda u: u.any(), [rn(0)])
    case("all_empty", lambda u: u.all(), [rn(0)])
    case("all_empty_dim", lambda u: u.all(1), [rn(2, 0)])
    case("any_scalar", lambda u: u.any(0), [rn()])

    ties = torch.tensor([[1., 3., 3., 0.], [NAN, 2., NAN, 5.], [-INF, -INF, -INF, -INF],
                         [2., 2., 2., 2.], [0., -1., INF, -INF]], dtype=torch.float64)
    ity = torch.tensor([[1, 5, 5], [-2, -7, -7], [0, 0, 0]], dtype=torch.int64)
    for f in ("argmax", "argmin"):
        case(f"{f}_flat", lambda t: getattr(t, f)(), [x])
        case(f"{f}_flat_keep", lambda t: getattr(t, f)(keepdim=True), [x])
        case(f"{f}_dim1", lambda t: getattr(t, f)(1), [x])
        case(f"{f}_dim_neg_keep", lambda t: getattr(t, f)(-2, True), [x])
        case(f"{f}_ties_nan", lambda t: getattr(t, f)(1), [ties])
        case(f"{f}_ties_flat", lambda t: getattr(t, f)(), [ties])
        case(f"{f}_i64", lambda t: getattr(t, f)(1), [ity])
        case(f"{f}_i32_flat", lambda t: getattr(t, f)(), [ity.int()])
        case(f"{f}_f32", lambda t: getattr(t, f)(0), [rn(4, 3, dtype=torch.float32)])
        case(f"{f}_scalar", lambda t: getattr(t, f)(), [rn()])
        case(f"{f}_scalar_dim", lambda t: getattr(t, f)(0, True), [rn()])
        case(f"{f}_empty_rows", lambda t: getattr(t, f)(0), [rn(2, 0)])
        case(f"{f}_transposed", lambda t: getattr(t.t(), f)(1), [x])
    for f in ("max", "min"):
        case(f"{f}_dim1", lambda t: getattr(t, f)(1), [x])
        case(f"{f}_dim_keep", lambda t: getattr(t, f)(0, True), [x])
        case(f"{f}_ties_nan", lambda t: getattr(t, f)(1), [ties])
        case(f"{f}_transposed", lambda t: getattr(t.t(), f)(1), [x])
        case(f"{f}_f32", lambda t: getattr(t, f)(-1), [rn(2, 5, dtype=torch.float32)])
        case(f"{f}_i32", lambda t: getattr(t, f)(1), [ity.int()])
        case(f"{f}_bool", lambda t: getattr(t, f)(1), [bools(3, 4)])
        case(f"{f}_scalar", lambda t: getattr(t, f)(0), [rn()])
        case(f"{f}_empty_rows", lambda t: getattr(t, f)(0), [rn(2, 0)])
        case(f"{f}_all", lambda t: getattr(t, f)(), [x])
        case(f"{f}_all_ties", lambda t: getattr(t, f)(), [torch.tensor([[1., 3.], [3., 0.]], dtype=torch.float64)])
        case(f"{f}_all_i64", lambda t: getattr(t, f)(), [ity])
        case(f"{f}_all_nan", lambda t: getattr(t, f)(),
             [torch.tensor([[1., NAN], [NAN, 0.]], dtype=torch.float64)])
        case(f"{f}_other", lambda t, u: getattr(t, f)(u), [x, rn(4)])


def main(path):
    idiom_cases()
    shape_cases()
    factory_cases()
    reduction_cases()
    with open(path, "w") as f:
        f.write("# written by scripts/gen_ops_golden.py (PyTorch "
                f"{torch.__version__}); do not edit\n")
        f.write("\n".join(LINES) + "\n")
    print(f"wrote {path}: {sum(l.startswith('case ') for l in LINES)} cases")


if __name__ == "__main__":
    main(sys.argv[1])
