#!/usr/bin/python3
"""Golden tensor reprs from PyTorch 1.13 for tests/unit/dsl/PrintTest.cpp.

Run with Debian's python3-torch:
    /usr/bin/python3 scripts/gen_print_golden.py > tests/unit/dsl/print_golden.txt

Each case is five lines:
    case NAME
    tensor DTYPE SIZES GRAD TRANSPOSE
    values explicit V1 V2 ...      (floats as float.hex(), ints in decimal)
      or   values gen N MUL MOD A B  (element i = ((i * MUL) % MOD) * A + B,
                                      in double for floats, exact for ints)
    expect REPR                      (repr(t) with \\ and newlines escaped)
    end
SIZES is comma-separated ("-" for 0-d); GRAD is none, leaf (requires_grad_)
or mul (leaf * 1.0, a MulBackward0); TRANSPOSE 1 prints t.t() of a 2-D t.
The C++ test builds the same tensor from the same numbers and compares its
toString() with REPR byte for byte.
"""
import math
import sys

import torch

DTYPES = {
    "bool": torch.bool,
    "int32": torch.int32,
    "int64": torch.int64,
    "float32": torch.float32,
    "float64": torch.float64,
}
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

cases = []

def gen_values(n, mul, mod, a, b, dtype):
    if dtype in ("float32", "float64"):
        return [float((i * mul) % mod) * a + b for i in range(n)]
    if dtype == "bool":
        return [((i * mul) % mod) * a + b != 0 for i in range(n)]
    return [((i * mul) % mod) * int(a) + int(b) for i in range(n)]

def add(name, dtype, sizes, values=None, gen=None, grad="none", transpose=0):
    n = math.prod(sizes)
    if gen is not None:
        vals = gen_values(n, *gen, dtype)
        spec = "gen %d %d %d %s %s" % (
            n,
            gen[0],
            gen[1],
            float(gen[2]).hex() if dtype.startswith("float") else int(gen[2]),
            float(gen[3]).hex() if dtype.startswith("float") else int(gen[3]),
        )
    else:
        vals = list(values)
        assert len(vals) == n, name
        if dtype.startswith("float"):
            spec = "explicit " + " ".join(float(v).hex() for v in vals)
        elif dtype == "bool":
            spec = "explicit " + " ".join("1" if v else "0" for v in vals)
        else:
            spec = "explicit " + " ".join(str(int(v)) for v in vals)
    if dtype == "float32" or dtype == "float64":
        t = torch.tensor(vals, dtype=torch.float64).to(DTYPES[dtype])
    else:
        t = torch.tensor(vals, dtype=DTYPES[dtype])
    t = t.reshape(sizes)
    if grad != "none":
        t.requires_grad_()
        if grad == "mul":
            t = t * 1.0
    if transpose:
        t = t.t()
    text = repr(t).replace("\\", "\\\\").replace("\n", "\\n")
    sizes_text = ",".join(str(s) for s in sizes) if sizes else "-"
    cases.append(
        "case %s\ntensor %s %s %s %d\nvalues %s\nexpect %s\nend\n"
        % (name, dtype, sizes_text, grad, transpose, spec, text)
    )

# Sizes around the 1,000-element threshold, the edge items and the 80-column
# line width, in every dtype.
shapes = [
    [],
    [0],
    [0, 3],
    [2, 0, 4],
    [1],
    [5],
    [6],
    [7],
    [13],
    [40],
    [1000],
    [1001],
    [4, 5],
    [7, 7],
    [3, 1, 2],
    [2, 3, 4],
    [8, 8, 3],
    [1000, 1],
    [1, 1001],
    [33, 31],
    [2, 2, 2, 2],
    [7, 8, 9, 3],
]
for dtype in DTYPES:
    for sizes in shapes:
        n = math.prod(sizes)
        key = "x".join(str(s) for s in sizes) or "scalar"
        if dtype.startswith("float"):
            add("%s_%s_int" % (dtype, key), dtype, sizes, gen=(1, 10**9, 1.0, 0.0))
            add("%s_%s_frac" % (dtype, key), dtype, sizes,
                gen=(7, 23, 0.37, -3.2))
            add("%s_%s_sci" % (dtype, key), dtype, sizes,
                gen=(13, 97, 12345.678, 0.001))
        elif dtype == "bool":
            add("%s_%s" % (dtype, key), dtype, sizes, gen=(3, 5, 1, -2))
        else:
            add("%s_%s" % (dtype, key), dtype, sizes, gen=(7, 1000, 37, -18000))

# Special values.
nan, inf = float("nan"), float("inf")
for dtype in ("float32", "float64"):
    specials = {
        "nan_inf": [1.0, nan, inf, -inf, 2.0],
        "nan_frac": [0.5, nan, -1.25],
        "neg_zero": [-0.0, 0.0, 1.0],
        "neg_zero_frac": [-0.0, 0.5],
        "all_zero": [0.0, -0.0, 0.0],
        "only_nan": [nan, nan],
        "only_inf": [inf, -inf],
        "huge": [1e30, -2.5e30, 3.0],
        "tiny": [1e-30, 2e-8, -3e-5],
        "mixed": [1e-3, 1.0, 1e5, -7.25],
        "int_1e8": [1e8, 2.0],
        "int_big": [1e9, 1.0, -3.0],
        "int_range": [1.0, 1001.0],
        "int_range_ok": [1.0, 1000.0],
        "min_1e-4": [1e-4, 0.5],
        "below_1e-4": [9.999e-5, 0.5],
        "round_half": [0.00005, 0.00015, 2.5, 3.5],
        "sci_nan": [1e-9, nan, inf, 1.0],
        "neg_sci": [-1e10, 1.5],
        "ones_like": [1.0, 1.0, 1.0],
        "max": [3.4e38 if dtype == "float32" else 1.7e308, -1.0, 0.5],
        "denorm": [1e-40 if dtype == "float32" else 5e-324, 1.0],
    }
    for key, vals in specials.items():
        add("%s_%s" % (dtype, key), dtype, [len(vals)], values=vals)
        add("%s_%s_scalar" % (dtype, key), dtype, [], values=vals[1:2])
    add("%s_wide" % dtype, dtype, [30], gen=(7, 30, 1234.5678, -17000.0))
    add("%s_sum_wide" % dtype, dtype, [4, 20], gen=(3, 40, 0.125, -2.0))
    add("%s_big_nan" % dtype, dtype, [1200],
        values=[nan if i % 7 == 0 else i * 0.5 for i in range(1200)])
    add("%s_big_sci_middle" % dtype, dtype, [1100],
        values=[1e-7 if 5 < i < 1090 else 1.5 for i in range(1100)])
    # Autograd suffixes and line breaking of the suffixes.
    for grad in ("leaf", "mul"):
        add("%s_grad_%s" % (dtype, grad), dtype, [3], gen=(1, 9, 0.5, 1.0),
            grad=grad)
        add("%s_grad_%s_scalar" % (dtype, grad), dtype, [], values=[2.0],
            grad=grad)
        add("%s_grad_%s_2d" % (dtype, grad), dtype, [3, 4],
            gen=(5, 11, 0.25, -1.0), grad=grad)
        add("%s_grad_%s_long" % (dtype, grad), dtype, [12],
            gen=(5, 11, 0.1, -0.5), grad=grad)
        add("%s_grad_%s_big" % (dtype, grad), dtype, [20, 60],
            gen=(5, 11, 0.1, -0.5), grad=grad)
        add("%s_grad_%s_empty" % (dtype, grad), dtype, [0, 2],
            values=[], grad=grad)
    add("%s_line_end" % dtype, dtype, [9], gen=(1, 100, 1.0, 123456.0))
    add("%s_transposed" % dtype, dtype, [3, 5], gen=(1, 100, 0.5, 0.0),
        transpose=1)
    add("%s_transposed_big" % dtype, dtype, [40, 30], gen=(3, 101, 0.5, 0.0),
        transpose=1)

# Integers near the int64 limits and wide int32s.
add("int64_limits", "int64", [4], values=[INT64_MAX, INT64_MIN, 0, -1])
add("int64_limits_scalar", "int64", [], values=[INT64_MIN])
add("int64_big_lines", "int64", [3, 7],
    values=[INT64_MAX - i if i % 2 else INT64_MIN + i for i in range(21)])
add("int64_2pow53", "int64", [2], values=[2**53 + 1, -(2**53) - 1])
add("int32_limits", "int32", [5],
    values=[2**31 - 1, -(2**31), 0, 7, -8])
add("int32_big", "int32", [1500], gen=(104729, 2**31 - 1, 1, -(2**30)))
add("int64_big", "int64", [40, 40], gen=(7919, 10**12, 1, -(10**11)))
add("int64_transposed", "int64", [4, 6], gen=(1, 1000, 3, -7), transpose=1)
add("bool_big", "bool", [30, 50], gen=(7, 3, 1, -1))
add("bool_transposed", "bool", [2, 5], gen=(1, 2, 1, 0), transpose=1)

sys.stdout.write("# Generated by scripts/gen_print_golden.py with torch %s;"
                 " do not edit.\n" % torch.__version__)
for c in cases:
    sys.stdout.write(c)
