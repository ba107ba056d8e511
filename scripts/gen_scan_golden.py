#!/usr/bin/env python3
"""Writes tests/ops/scan_golden.txt: PyTorch 1.13's cumsum and cumprod
(values, dtypes, sizes, requires_grad, input gradients) for
tests/ops/ScanTest.cpp, in ops_golden.txt's format (gen_ops_golden.py's
`case`): dims (negative, 0-d, empty), dtype promotion and the dtype
argument, views as inputs, in-place forms, zeros, infinities and NaNs for
cumprod's gradient, the prod reduction's gradient with zeros, and long f32
lines (PyTorch's CPU kernels accumulate in double).

    /usr/bin/python3 scripts/gen_scan_golden.py tests/ops/scan_golden.txt
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_ops_golden as g  # noqa: E402

torch.manual_seed(20)
NAN, INF = float("nan"), float("inf")
rn, ints, bools, case = g.rn, g.ints, g.bools, g.case
f64 = torch.float64


def t64(rows):
    return torch.tensor(rows, dtype=f64)


def inplace(op, dim, **kw):
    def f(x):
        c = x.clone()
        getattr(c, op)(dim, **kw)
        return c
    return f


def scan_cases():
    x = rn(3, 4)
    for op in ("cumsum", "cumprod"):
        f = lambda name: (lambda t, *a, **k: getattr(t, name)(*a, **k))
        s = f(op)
        case(f"{op}_dim1", lambda t: s(t, 1), [x])
        case(f"{op}_dim0", lambda t: s(t, 0), [x])
        case(f"{op}_neg", lambda t: s(t, -1), [rn(2, 3, 4)])
        case(f"{op}_mid", lambda t: s(t, 1), [rn(2, 3, 4)])
        case(f"{op}_f32", lambda t: s(t, 0), [rn(5, 7, dtype=torch.float32)])
        case(f"{op}_scalar", lambda t: s(t, 0), [rn()])
        case(f"{op}_scalar_neg", lambda t: s(t, -1), [rn()])
        case(f"{op}_empty", lambda t: s(t, 0), [rn(0, 3)])
        case(f"{op}_empty_other", lambda t: s(t, 0), [rn(2, 0)])
        case(f"{op}_size1", lambda t: s(t, 1), [rn(3, 1)])
        case(f"{op}_transposed", lambda t: s(t.t(), 1), [x])
        case(f"{op}_sliced", lambda t: s(t[:, 1::2], 0), [rn(3, 5)])
        case(f"{op}_expanded", lambda t: s(t.expand(3, 4), 1), [rn(3, 1)])
        case(f"{op}_flipped", lambda t: s(t.flip(1), 1), [x])
        case(f"{op}_of_expr", lambda t: s((t * 2 + 1).exp(), 0), [x])
        case(f"{op}_i64", lambda t: s(t, 1), [ints(2, 5)])
        case(f"{op}_i32", lambda t: s(t, 0), [ints(4, 2, dtype=torch.int32)])
        case(f"{op}_bool", lambda t: s(t, 1), [bools(3, 4)])
        case(f"{op}_dtype_f64", lambda t: s(t, 1, dtype=f64),
             [rn(2, 3, dtype=torch.float32)])
        # (PyTorch asserts on an integer dtype of an input requiring grad)
        case(f"{op}_dtype_i32", lambda t: s(t, 0, dtype=torch.int32),
             [rn(4) * 3], nograd=(0,))
        case(f"{op}_dtype_f32_int", lambda t: s(t, 0, dtype=torch.float32),
             [ints(5)])
        case(f"{op}_inplace", inplace(op + "_", 1), [x])
        case(f"{op}_inplace_i32", inplace(op + "_", 0),
             [ints(3, 2, dtype=torch.int32)])
        case(f"{op}_inplace_dtype", inplace(op + "_", -1, dtype=f64), [x])

        def through_view(t, op=op):
            c = t.clone()
            getattr(c.t()[1:], op + "_")(1)  # a write through a view
            return c
        case(f"{op}_inplace_view", through_view, [rn(4, 3)])
    # Along an outer dim over >= 8 columns: blocks of 256 columns (and a
    # partial block), also the gradient's reversed scan.
    case("cumsum_cols", lambda t: t.cumsum(0), [rn(5, 300)])
    case("cumprod_cols_3d", lambda t: t.cumprod(1), [rn(2, 4, 260) * 0.1 + 1])
    case("cumsum_cols_i32", lambda t: t.cumsum(-2), [ints(3, 9, dtype=torch.int32)])
    # A Bool result only where PyTorch runs no kernel: 0-d, empty.
    case("cumsum_bool_scalar", lambda t: t.cumsum(0, dtype=torch.bool),
         [ints()])
    case("cumprod_bool_empty_inplace", inplace("cumprod_", 1), [bools(2, 0)])
    case("cumsum_i32_wraps", lambda t: t.cumsum(0, dtype=torch.int32),
         [torch.tensor([2**31 - 1, 5, -7], dtype=torch.int32)])
    case("cumprod_i64_wraps", lambda t: t.cumprod(0),
         [torch.tensor([2**40, 2**30, 3], dtype=torch.int64)])
    # cumprod's gradient with zeros (none, one, two, first, last), inf, NaN.
    zeros = t64([[1.5, 0., 2., 3., -1.], [0., 2., 0., 4., 5.],
                 [2., 3., 4., 0., 0.], [1., 2., 3., 4., 0.],
                 [0.5, -2., 3., 1., 2.]])
    case("cumprod_zeros", lambda t: t.cumprod(1), [zeros])
    case("cumprod_zeros_dim0", lambda t: t.cumprod(0), [zeros])
    case("cumprod_zeros_f32", lambda t: t.cumprod(1),
         [zeros.to(torch.float32)])
    special = t64([[INF, 2., 0., 3.], [0., INF, 0., 1.], [2., INF, 3., 1.],
                   [0., 2., INF, 0.], [NAN, 1., 2., 3.], [1., 0., NAN, 2.],
                   [0., 3., NAN, 0.], [-INF, 0., 1., 2.]])
    case("cumprod_inf_nan", lambda t: t.cumprod(1), [special])
    case("cumprod_inf_no_zero", lambda t: t.cumprod(1),
         [t64([[INF, 2., 3.], [2., -INF, 0.5], [NAN, 2., 3.]])])
    case("cumprod_all_zero", lambda t: t.cumprod(0), [torch.zeros(4, dtype=f64)])
    # prod's gradient: PyTorch's result / input without zeros anywhere,
    # prod_safe_zeros_backward (exclusive products) when the input has one.
    case("prod_dim_zeros", lambda t: t.prod(1), [zeros])
    case("prod_dim_inf_nan", lambda t: t.prod(1), [special])
    case("prod_dim_inf_no_zero", lambda t: t.prod(1),
         [t64([[INF, 2., 3.], [2., -INF, 0.5], [NAN, 2., 3.]])])
    case("prod_dim_keep_zeros", lambda t: t.prod(0, keepdim=True), [zeros])
    case("prod_all_one_zero", lambda t: t.prod(),
         [t64([[INF, 2.], [0., 3.]])])
    case("prod_all_one_zero_nan", lambda t: t.prod(),
         [t64([[NAN, 2.], [3., 0.]])])
    case("prod_all_two_zeros", lambda t: t.prod(), [t64([[INF, 0.], [0., 3.]])])
    case("prod_all_no_zero", lambda t: t.prod(), [t64([[INF, 2.], [1., 3.]])])
    case("prod_all_transposed_zero", lambda t: t.t().prod(),
         [t64([[1., 2., 3.], [4., 0., 6.]])])
    case("prod_1d_dim_two_zeros", lambda t: t.prod(0),
         [t64([INF, 0., 2., 0.])])
    # Long f32 lines: PyTorch's CPU cumsum/cumprod accumulate in double.
    case("cumsum_long_f32", lambda: torch.full((10**6,), 0.1).cumsum(0)[::9973])
    case("cumprod_long_f32",
         lambda: torch.full((10**5,), 1.0001).cumprod(0)[::997])
    case("cumsum_long_rows_f32",
         lambda: torch.full((3, 300000), 0.3).cumsum(1)[:, ::29989])
    case("cumsum_long_col_blocks_f32",  # blocks of columns on threads
         lambda: (torch.arange(3000 * 600) % 7).float().reshape(3000, 600)
         .cumsum(0)[::97, ::37])
    case("cumsum_long_cols_f32",
         lambda: torch.full((300000, 3), 0.3).cumsum(0)[::29989])


def main(path):
    scan_cases()
    with open(path, "w") as f:
        f.write("# written by scripts/gen_scan_golden.py (PyTorch "
                f"{torch.__version__}); do not edit\n")
        f.write("\n".join(g.LINES) + "\n")
    print(f"wrote {path}: {sum(l.startswith('case ') for l in g.LINES)} cases")


if __name__ == "__main__":
    main(sys.argv[1])
