#!/usr/bin/python3
"""Generates tests/unit/runtime/layout_golden.txt: PyTorch's answers for the
view rules that runtime/lib/Layout/ViewOps.cpp implements.

Run with the system Python that has PyTorch 1.13 (python3-torch):
    /usr/bin/python3 scripts/gen_layout_golden.py
The output is deterministic (seeded), so rerunning it must not change the
checked-in file unless this script or PyTorch changed.

Every input tensor is a view of torch.arange(N), so its values are its storage
indices. One case per line, four fields separated by " | ":

    op | input | args | expected

input     "sizes=[3,4] strides=[4,1] offset=0 storage=12", "storage=N" (for
          as_strided: only the storage size) or "-" (shape-only rules)
args      space-separated key=value pairs; lists as [a,b]; "none" for an
          absent optional; "-" when the op takes none
expected  "ok sizes=[..] strides=[..] offset=k"        a view
          "ok view sizes=.." / "ok copy sizes=.."       reshape and flatten
          "ok values=[..]"                              flip: storage indices
                                                        in row-major order
          "ok shape=[..]"                               broadcast, reduce
          "ok true" / "ok false"                        contig, overlap
          "error <text>"   strata's message must start with "<op>: " and
                           contain <text>

<text> is PyTorch's message, minus prefixes naming PyTorch internals
("permute(sparse_coo): ", "expand(torch.LongTensor{...}, size=...): ",
"Tensor: "), with setStorage's byte counts turned into element counts. Where
PyTorch 1.13 has no meaningful message (a negative size makes it overflow), the
text is strata's; a "# strata wording" comment line above says so.
"""

import os
import random
import re

import torch

SEED = 20240607
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                   "unit", "runtime", "layout_golden.txt")

lines = []
counts = {}


def fmt(values):
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def opt(v):
    return "none" if v is None else str(v)


def layout_str(t):
    return "sizes=%s strides=%s offset=%d" % (fmt(t.shape), fmt(t.stride()),
                                              t.storage_offset())


def input_str(x, base):
    return "%s storage=%d" % (layout_str(x), base.numel())


def error_key(msg):
    msg = str(msg).split("\n")[0]
    for prefix in ("permute(sparse_coo): ", "permute(): ", "Tensor: "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    m = re.match(r"expand\(.*?\): (the number of sizes provided.*)", msg)
    if m:
        msg = m.group(1)
    m = re.match(
        r"setStorage: (sizes \[.*?\], strides \[.*?\], storage offset -?\d+), "
        r"and itemsize (\d+) requiring a storage size of (\d+) are out of "
        r"bounds for storage of size (\d+)", msg)
    if m:
        item = int(m.group(2))
        msg = ("%s requiring a storage size of %d elements are out of bounds "
               "for storage of size %d elements" %
               (m.group(1), int(m.group(3)) // item, int(m.group(4)) // item))
    return msg


def shares(r, base):
    return r.storage().data_ptr() == base.storage().data_ptr()


def emit(op, inp, args, fn, describe, strata_msg=None):
    """Runs fn(); records its result, or its error's key phrase."""
    try:
        r = fn()
    except Exception as e:  # PyTorch raises RuntimeError/IndexError
        torch_msg = str(e).split("\n")[0]
        if strata_msg is not None:
            assert "overflow" in torch_msg, torch_msg
            lines.append("# strata wording: PyTorch 1.13 says %r" % torch_msg)
            expected = "error " + strata_msg
        else:
            expected = "error " + error_key(torch_msg)
    else:
        assert strata_msg is None, (op, inp, args)
        expected = "ok " + describe(r)
    lines.append(" | ".join([op, inp, args if args else "-", expected]))
    counts[op] = counts.get(op, 0) + 1


def view_case(op, x, base, args, fn, strata_msg=None):
    def describe(r):
        assert shares(r, base), "a view op copied"
        return layout_str(r)
    emit(op, input_str(x, base), args, lambda: fn(x), describe, strata_msg)


def maybe_view_case(op, x, base, args, fn):
    def describe(r):
        kind = "view" if shares(r, base) else "copy"
        if kind == "copy":
            assert r.storage_offset() == 0 and r.is_contiguous()
        return kind + " " + layout_str(r)
    emit(op, input_str(x, base), args, lambda: fn(x), describe)


#===--- Inputs -------------------------------------------------------------===#

def contiguous_strides(sizes):
    strides, run = [], 1
    for s in reversed(sizes):
        strides.append(run)
        run *= max(s, 1)
    return list(reversed(strides))


def make(sizes, strides, offset=0, slack=0):
    """An as_strided view of arange(N) with N just large enough (+ slack)."""
    need = offset + 1 + sum((s - 1) * st for s, st in zip(sizes, strides)
                            if s > 0)
    if 0 in sizes:
        need = offset
    base = torch.arange(max(need + slack, 1))
    return base.as_strided(sizes, strides, offset), base


def from_torch(base, fn):
    return fn(base), base


def rand_layout(rng):
    rank = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4])
    sizes = [rng.choice([1, 1, 2, 2, 3, 3, 4, 5]) for _ in range(rank)]
    if rank and rng.random() < 0.08:
        sizes[rng.randrange(rank)] = 0
    kind = rng.random()
    if kind < 0.35:
        strides = contiguous_strides(sizes)
    elif kind < 0.55:  # a permuted contiguous tensor
        perm = list(range(rank))
        rng.shuffle(perm)
        psizes = [sizes[p] for p in perm]
        pstrides = contiguous_strides(psizes)
        strides = [0] * rank
        for i, p in enumerate(perm):
            strides[p] = pstrides[i]
    elif kind < 0.75:  # a slice of a larger contiguous tensor, with steps
        padded = [s + rng.choice([0, 0, 1, 2]) for s in sizes]
        strides = [st * rng.choice([1, 1, 1, 2])
                   for st in contiguous_strides(padded)]
    else:
        strides = [rng.randrange(0, 13) for _ in range(rank)]
    for d in range(rank):
        if sizes[d] == 1 and rng.random() < 0.5:
            strides[d] = rng.randrange(1, 40, 2)  # odd, arbitrary
        elif rng.random() < 0.06:
            strides[d] = 0  # as expand makes
    return make(sizes, strides, rng.randrange(0, 6), rng.choice([0, 0, 3]))


def factorizations(n, rng, max_dims=4):
    """A random shape with product n, size-1 dims sprinkled in."""
    if n == 0:
        dims = [rng.choice([0, 1, 2, 3]) for _ in range(rng.randrange(1, 4))]
        dims[rng.randrange(len(dims))] = 0
        return dims
    dims = []
    m = n
    while m > 1 and len(dims) < max_dims - 1:
        divs = [d for d in range(2, m + 1) if m % d == 0]
        d = rng.choice(divs)
        dims.append(d)
        m //= d
    if m > 1:
        dims.append(m)
    for _ in range(rng.choice([0, 0, 1, 2])):
        dims.insert(rng.randrange(len(dims) + 1), 1)
    if rng.random() < 0.3:
        rng.shuffle(dims)
    return dims


def neighbour_shapes(sizes, rng):
    """Shapes that merge or split the input's dims (views that may work)."""
    out = []
    if len(sizes) >= 2:
        i = rng.randrange(len(sizes) - 1)
        out.append(sizes[:i] + [sizes[i] * sizes[i + 1]] + sizes[i + 2:])
    if sizes:
        i = rng.randrange(len(sizes))
        s = sizes[i]
        divs = [d for d in range(1, s + 1) if s and s % d == 0]
        if divs:
            d = rng.choice(divs)
            out.append(sizes[:i] + [d, s // d] + sizes[i + 1:])
    return out


def slice_op(t, dim, start, end, step):
    """at::slice, cross-checked against Python slicing where that applies."""
    r = torch.ops.aten.slice.Tensor(t, dim, start, end, step)
    if t.dim() > 0 and step > 0:
        index = [slice(None)] * t.dim()
        index[dim] = slice(start, end, step)
        p = t[tuple(index)]
        assert (p.shape, p.stride(), p.storage_offset()) == \
            (r.shape, r.stride(), r.storage_offset()), (start, end, step)
    return r


#===--- Cases --------------------------------------------------------------===#

def view_family(x, base, shapes):
    for shape in shapes:
        args = "shape=" + fmt(shape)
        view_case("view", x, base, args, lambda t: t.view(shape))
        maybe_view_case("reshape", x, base, args, lambda t: t.reshape(shape))


def hand_cases():
    a12 = torch.arange(12)
    m34 = (a12.view(3, 4), a12)
    mt = (a12.view(3, 4).t(), a12)
    scalar = make([], [], 3, 2)
    empty = make([3, 0, 2], [5, 7, 11], 1, 4)

    # view / reshape
    view_family(*m34, [[12], [-1], [2, 6], [4, 3], [2, -1, 3], [1, 12, 1],
                       [12, 1], [1, 1, 3, 1, 4], [5, 3], [-1, -1], [-1, 5],
                       [-2, 6], [3, 4], [], [0], [13]])
    view_family(*mt, [[12], [-1], [4, 3], [2, 2, 3], [4, 3, 1], [1, 4, 3],
                      [3, 4], [2, 6]])
    view_family(*scalar, [[], [1], [1, 1], [-1], [1, -1, 1], [2]])
    view_family(*empty, [[2, 0, 3], [3, 0, 2], [0, 6], [0, 0, 6], [0], [-1],
                         [4, -1], [0, -1], [-1, 0], [0, 3, 1], [1, 0], [5]])
    view_family(*make([1], [7], 3), [[], [1, 1], [-1]])
    # Size-1 dims with odd strides inside a chunk do not break it.
    view_family(*make([2, 1, 2], [2, 9, 1]), [[4, 1], [1, 4], [4], [2, 2]])
    view_family(*make([2, 2, 1], [2, 1, 9]), [[4], [4, 1], [1, 4, 1, 1]])
    view_family(*make([2, 4], [2, 1]), [[2, 2, 2], [8], [4, 2]])
    # Two chunks: (4,) and (2,3) from a row-sliced tensor.
    sl = from_torch(torch.arange(40), lambda b: b.view(4, 10)[:, :6]
                    .view(4, 2, 3))
    view_family(*sl, [[4, 6], [8, 3], [2, 2, 6], [24], [4, 2, 3, 1],
                      [2, 2, 2, 3]])
    # Stride 0 from expand.
    ex = from_torch(torch.arange(3), lambda b: b.expand(4, 3))
    view_family(*ex, [[12], [2, 2, 3], [4, 3, 1], [2, 6]])
    ex0 = from_torch(torch.arange(1), lambda b: b.expand(2, 3))
    view_family(*ex0, [[6], [3, 2], [1, 6, 1]])

    # permute / transpose / t
    m234 = from_torch(torch.arange(24), lambda b: b.view(2, 3, 4))
    for dims in ([0, 1, 2], [2, 0, 1], [-1, -3, 1], [0, 1], [0, 0, 1],
                 [0, 1, 3], [0, 1, -4], [1, 0, 2, 3]):
        view_case("permute", *m234, "dims=" + fmt(dims),
                  lambda t: t.permute(dims))
    for dims in ([], [0], [-1]):
        view_case("permute", *scalar, "dims=" + fmt(dims),
                  lambda t: t.permute(dims))
    for d0, d1 in ((0, 1), (1, 0), (0, -1), (-1, -2), (1, 1), (0, 2),
                   (-3, 0), (0, 5)):
        view_case("transpose", *m34, "dim0=%d dim1=%d" % (d0, d1),
                  lambda t: t.transpose(d0, d1))
    for d0, d1 in ((0, 0), (0, -1), (-1, -1), (0, 1)):
        view_case("transpose", *scalar, "dim0=%d dim1=%d" % (d0, d1),
                  lambda t: t.transpose(d0, d1))
    for x in (m34, mt, scalar, m234, (a12, a12), empty):
        view_case("t", *x, "", lambda t: t.t())

    # slice (PyTorch's Python slicing calls the same at::slice)
    a10 = from_torch(torch.arange(10), lambda b: b)
    for start, end, step in ((2, 5, 1), (None, None, 1), (-3, None, 1),
                             (None, -3, 1), (-100, 100, 1), (5, 2, 1),
                             (10, None, 1), (11, 12, 1), (0, 10, 3),
                             (1, None, 4), (-7, -1, 2), (3, 3, 1),
                             (0, 5, 0), (0, 5, -1), (None, None, 100),
                             (2 ** 62, None, 1), (-2 ** 62, 2 ** 62, 7)):
        view_case("slice", *a10, "dim=0 start=%s end=%s step=%d" %
                  (opt(start), opt(end), step),
                  lambda t: slice_op(t, 0, start, end, step))
    for dim, start, end, step in ((1, 1, 3, 1), (-1, None, None, 2),
                                  (0, -2, None, 1), (2, 0, 1, 1),
                                  (-3, 0, 1, 1)):
        view_case("slice", *mt, "dim=%d start=%s end=%s step=%d" %
                  (dim, opt(start), opt(end), step),
                  lambda t: slice_op(t, dim, start, end, step))
    view_case("slice", *scalar, "dim=0 start=none end=none step=1",
              lambda t: slice_op(t, 0, None, None, 1))
    view_case("slice", *empty, "dim=1 start=-1 end=5 step=2",
              lambda t: slice_op(t, 1, -1, 5, 2))

    # select / narrow
    for dim, index in ((0, 0), (0, 2), (0, -1), (0, -3), (0, 3), (0, -4),
                       (1, 3), (-1, -4), (2, 0), (1, 4), (-3, 0)):
        view_case("select", *m34, "dim=%d index=%d" % (dim, index),
                  lambda t: t.select(dim, index))
    view_case("select", *scalar, "dim=0 index=0", lambda t: t.select(0, 0))
    view_case("select", *empty, "dim=1 index=0", lambda t: t.select(1, 0))
    view_case("select", *empty, "dim=2 index=1", lambda t: t.select(2, 1))
    for dim, start, length in ((0, 2, 3), (0, -1, 1), (0, 10, 0), (0, 11, 0),
                               (0, 3, 8), (0, 3, -1), (0, -10, 10),
                               (0, -11, 1), (0, 0, 10), (1, 0, 1)):
        view_case("narrow", *a10, "dim=%d start=%d length=%d" %
                  (dim, start, length), lambda t: t.narrow(dim, start, length))
    view_case("narrow", *scalar, "dim=0 start=0 length=1",
              lambda t: t.narrow(0, 0, 1))
    for start in (0, -1, 1):
        view_case("narrow", *empty, "dim=1 start=%d length=0" % start,
                  lambda t: t.narrow(1, start, 0))

    # expand
    a3 = from_torch(torch.arange(3), lambda b: b)
    col = from_torch(torch.arange(3), lambda b: b.view(3, 1))
    one = from_torch(torch.arange(1), lambda b: b)
    for x, shape in ((a3, [2, 3]), (a3, [2, -1]), (a3, [1, 3]),
                     (a3, [2, 1, 3]), (a3, [4]), (a3, [2, 4]), (a3, [3, 3, -1]),
                     (col, [3, 4]), (col, [-1, 4]), (col, [2, 3, 4]),
                     (col, [4]), (col, [3, 0]), (col, [2, 3]),
                     (m34, [2, 4]), (m34, [4]), (m34, [-1, 2, 4]),
                     (m34, [1, 3, 4]), (m34, [-1, 3, 4]), (one, [3, 1]),
                     (one, [1, 1]), (one, [2, 0]), (one, [0]),
                     (scalar, [3, 1]), (scalar, [1]), (scalar, []),
                     (scalar, [2, 3]), (empty, [2, 3, 0, 2]), (empty, [3, 1, 2]),
                     (from_torch(torch.arange(1), lambda b: b[:0]), [2, 0]),
                     (from_torch(torch.arange(1), lambda b: b[:0]), [2, 1])):
        view_case("expand", *x, "shape=" + fmt(shape),
                  lambda t: t.expand(shape))
    view_case("expand", *scalar, "shape=[-1]", lambda t: t.expand([-1]),
              strata_msg="The expanded size of the tensor (-1) isn't allowed "
              "in a leading, non-existing dimension 0")
    view_case("expand", *one, "shape=[-2]", lambda t: t.expand([-2]),
              strata_msg="The expanded size of the tensor (-2) at dimension 0 "
              "must be non-negative")
    view_case("expand", *a3, "shape=[-1,3]", lambda t: t.expand([-1, 3]))

    # squeeze / unsqueeze
    sq = make([1, 3, 1, 2, 1], [17, 2, 5, 1, 3], 2)
    for dim in (None, 0, 1, 2, -1, -5, 5, -6):
        args = "dims=[]" if dim is None else "dims=[%d]" % dim
        view_case("squeeze", *sq, args,
                  lambda t: t.squeeze() if dim is None else t.squeeze(dim))
    for dim in (None, 0, -1, 1):
        args = "dims=[]" if dim is None else "dims=[%d]" % dim
        view_case("squeeze", *scalar, args,
                  lambda t: t.squeeze() if dim is None else t.squeeze(dim))
    for dim in (0, 1, 2, -1, -2, -3, 3, -4):
        view_case("unsqueeze", *m34, "dim=%d" % dim,
                  lambda t: t.unsqueeze(dim))
        view_case("unsqueeze", *mt, "dim=%d" % dim, lambda t: t.unsqueeze(dim))
    for dim in (0, -1, 1, -2):
        view_case("unsqueeze", *scalar, "dim=%d" % dim,
                  lambda t: t.unsqueeze(dim))
    view_case("unsqueeze", *empty, "dim=1", lambda t: t.unsqueeze(1))

    # flatten
    for x in (m34, mt, m234, scalar, empty, sl, ex):
        for s, e in ((0, -1), (1, -1), (0, 0), (0, 1), (1, 0), (-1, -1),
                     (0, 5), (-2, -1)):
            maybe_view_case("flatten", *x, "start=%d end=%d" % (s, e),
                            lambda t: t.flatten(s, e))

    # as_strided over arange(12)
    for sizes, strides, off in (([3], [1], 2), ([4], [1], 8), ([4], [1], 9),
                                ([4], [1], 10), ([2, 2], [3, 1], 0),
                                ([2, 3], [0, 1], 9), ([3, 4], [1, 3], 0),
                                ([0], [1], 100), ([0, 3], [1, 5], 50),
                                ([4], [-1], 3), ([-1, 4], [-1, 1], 0),
                                ([4], [1, 1], 0), ([4], [1], -1),
                                ([20], [1], -1), ([0], [1], -1),
                                ([], [], 11), ([], [], 12), ([1], [100], 0),
                                ([2], [100], 0), ([2, 1, 2], [6, 99, 1], 5)):
        args = "sizes=%s strides=%s offset=%d" % (fmt(sizes), fmt(strides),
                                                  off)
        emit("as_strided", "storage=12", args,
             lambda: a12.as_strided(sizes, strides, off),
             lambda r: layout_str(r))
    emit("as_strided", "storage=12", "sizes=[-1] strides=[1] offset=0",
         lambda: a12.as_strided([-1], [1], 0), layout_str,
         strata_msg="Trying to create tensor with negative dimension -1: [-1]")

    # diagonal
    sq44 = from_torch(torch.arange(16), lambda b: b.view(4, 4))
    for x in (m34, mt, sq44):
        for off, d1, d2 in ((0, 0, 1), (1, 0, 1), (-1, 0, 1), (3, 0, 1),
                            (4, 0, 1), (5, 0, 1), (-2, 0, 1), (-3, 0, 1),
                            (-5, 0, 1), (0, 1, 0), (2, 1, 0), (0, 0, 0),
                            (0, -1, 1), (0, 0, 2), (0, -2, -1)):
            view_case("diagonal", *x, "offset=%d dim1=%d dim2=%d" %
                      (off, d1, d2), lambda t: t.diagonal(off, d1, d2))
    for off, d1, d2 in ((0, 0, 2), (1, 2, 0), (-1, 1, 2), (0, -1, 0)):
        view_case("diagonal", *m234, "offset=%d dim1=%d dim2=%d" %
                  (off, d1, d2), lambda t: t.diagonal(off, d1, d2))
    for x in (scalar, a10):
        view_case("diagonal", *x, "offset=0 dim1=0 dim2=1",
                  lambda t: t.diagonal(0, 0, 1))
    view_case("diagonal", *scalar, "offset=0 dim1=0 dim2=-1",
              lambda t: t.diagonal(0, 0, -1))
    view_case("diagonal", *empty, "offset=1 dim1=0 dim2=2",
              lambda t: t.diagonal(1, 0, 2))

    # unfold
    for dim, size, step in ((0, 2, 1), (0, 3, 2), (1, 4, 10), (1, 0, 1),
                            (1, 5, 1), (0, 3, 3), (-1, 2, 2), (0, 1, 0),
                            (0, 1, -1), (2, 1, 1), (-3, 1, 1)):
        view_case("unfold", *m34, "dim=%d size=%d step=%d" % (dim, size, step),
                  lambda t: t.unfold(dim, size, step))
    for dim, size, step in ((0, 1, 1), (0, 0, 1), (-1, 1, 2), (0, 2, 1),
                            (1, 1, 1)):
        view_case("unfold", *scalar, "dim=%d size=%d step=%d" %
                  (dim, size, step), lambda t: t.unfold(dim, size, step))
    for dim, size, step in ((0, 4, 1), (0, 13, 1), (0, 12, 5), (0, 5, 5)):
        view_case("unfold", *(a12, a12), "dim=%d size=%d step=%d" %
                  (dim, size, step), lambda t: t.unfold(dim, size, step))
    view_case("unfold", *empty, "dim=1 size=0 step=2",
              lambda t: t.unfold(1, 0, 2))
    view_case("unfold", *(a12, a12), "dim=0 size=-1 step=1",
              lambda t: t.unfold(0, -1, 1),
              strata_msg="size is -1 but must be >= 0")

    # flip (strata's extension: compare the addressed values)
    for x in (m34, mt, m234, scalar, empty, sl, ex, sq):
        r = x[0].dim()
        for dims in ([], [0], [-1], [0, 1], list(range(r)), [0, 0], [r],
                     [1, -1]):
            flip_case(x, dims)

    # isContiguous / hasInternalOverlap
    for x in (m34, mt, m234, scalar, empty, sl, ex, ex0, sq,
              make([1, 3], [99, 1]), make([3, 1], [1, 5]),
              make([2, 1, 3], [3, 0, 1]), make([4, 0], [0, 0]),
              make([3, 2], [1, 1]), make([2, 2], [2, 1], 5)):
        query_cases(*x)

    # broadcast / reduce
    for a, b in (([3, 1], [1, 4]), ([2, 3], [4]), ([2, 3], [3]), ([], [2, 3]),
                 ([0, 3], [1]), ([0], [2, 1]), ([5, 1, 4], [3, 1]),
                 ([2, 1], [3, 3]), ([], []), ([1], [0])):
        emit("broadcast", "-", "a=%s b=%s" % (fmt(a), fmt(b)),
             lambda: (torch.empty(a) + torch.empty(b)).shape,
             lambda s: "shape=" + fmt(s))
    for sizes, dims, keep in (([3, 4], [1], 0), ([3, 4], [1], 1),
                              ([3, 4], [], 0), ([3, 4], [], 1),
                              ([3, 4], [1, 1], 0), ([3, 4], [1, -1], 0),
                              ([3, 4], [2], 0), ([2, 3, 4], [0, 2], 1),
                              ([2, 3, 4], [-1, 0], 0), ([], [0], 0),
                              ([], [0], 1), ([], [-1], 0), ([], [1], 0),
                              ([], [0, -1], 0), ([0, 3], [0], 0)):
        emit("reduce", "-", "sizes=%s dims=%s keepdim=%d" %
             (fmt(sizes), fmt(dims), keep),
             lambda: torch.zeros(sizes).sum(dims, keepdim=bool(keep)).shape,
             lambda s: "shape=" + fmt(s))


def flip_case(x, dims):
    t, base = x
    emit("flip", input_str(t, base), "dims=" + fmt(dims),
         lambda: torch.flip(t, dims),
         lambda r: "values=" + fmt(r.reshape(-1).tolist()))


def query_cases(t, base):
    inp = input_str(t, base)
    emit("contig", inp, "", lambda: t.is_contiguous(),
         lambda v: "true" if v else "false")
    emit("overlap", inp, "", lambda: torch._debug_has_internal_overlap(t) == 1,
         lambda v: "true" if v else "false")


def random_cases(rng, n):
    for _ in range(n):
        x, base = rand_layout(rng)
        r = x.dim()
        sizes = list(x.shape)
        numel = x.numel()
        query_cases(x, base)

        shapes = neighbour_shapes(sizes, rng) + [factorizations(numel, rng)]
        if numel > 0 and rng.random() < 0.5:
            s = factorizations(numel, rng)
            if s:
                s[rng.randrange(len(s))] = -1
            else:
                s = [-1]
            shapes.append(s)
        if rng.random() < 0.15:
            shapes.append([numel + 1])
        view_family(x, base, shapes)

        perm = list(range(r))
        rng.shuffle(perm)
        perm = [p - r if rng.random() < 0.3 else p for p in perm]
        if r and rng.random() < 0.1:
            perm[0] = perm[-1]  # duplicate (or identity for rank 1)
        view_case("permute", x, base, "dims=" + fmt(perm),
                  lambda t: t.permute(perm))
        d0, d1 = rng.randrange(-r - 1, r + 1), rng.randrange(-r - 1, r + 1)
        view_case("transpose", x, base, "dim0=%d dim1=%d" % (d0, d1),
                  lambda t: t.transpose(d0, d1))
        if r <= 2 or rng.random() < 0.2:
            view_case("t", x, base, "", lambda t: t.t())

        dim = rng.randrange(-r, r) if r else 0
        size = sizes[dim] if r else 1

        def bound():
            return None if rng.random() < 0.2 else rng.randrange(-size - 3,
                                                                 size + 4)
        start, end = bound(), bound()
        step = rng.choice([1, 1, 1, 2, 3, 5]) if rng.random() > 0.04 else 0
        view_case("slice", x, base, "dim=%d start=%s end=%s step=%d" %
                  (dim, opt(start), opt(end), step),
                  lambda t: slice_op(t, dim, start, end, step))
        index = rng.randrange(-size - 1, size + 1)
        view_case("select", x, base, "dim=%d index=%d" % (dim, index),
                  lambda t: t.select(dim, index))
        nstart = rng.randrange(-size - 1, size + 2)
        length = rng.randrange(-1, size + 2) if rng.random() < 0.2 else \
            rng.randrange(0, max(size, 1) + 1)
        view_case("narrow", x, base, "dim=%d start=%d length=%d" %
                  (dim, nstart, length), lambda t: t.narrow(dim, nstart,
                                                            length))

        target = [rng.choice([1, 2, 3, 0]) if s == 1 else
                  (-1 if rng.random() < 0.3 else s) for s in sizes]
        target = [rng.choice([1, 2, 3])
                  for _ in range(rng.choice([0, 0, 1, 2]))] + target
        if target and rng.random() < 0.1:
            target[-1] += 1
        if r == 0 and -1 in target:
            target = [1 if v == -1 else v for v in target]
        view_case("expand", x, base, "shape=" + fmt(target),
                  lambda t: t.expand(target))

        sqd = rng.randrange(-r - 1, r + 1) if rng.random() < 0.7 else None
        view_case("squeeze", x, base,
                  "dims=[]" if sqd is None else "dims=[%d]" % sqd,
                  lambda t: t.squeeze() if sqd is None else t.squeeze(sqd))
        usd = rng.randrange(-r - 2, r + 2)
        view_case("unsqueeze", x, base, "dim=%d" % usd,
                  lambda t: t.unsqueeze(usd))
        fs, fe = rng.randrange(-r - 1, r + 1), rng.randrange(-r - 1, r + 1)
        maybe_view_case("flatten", x, base, "start=%d end=%d" % (fs, fe),
                        lambda t: t.flatten(fs, fe))

        dd1, dd2 = rng.randrange(-r, r + 1), rng.randrange(-r, r + 1)
        doff = rng.randrange(-4, 5)
        view_case("diagonal", x, base, "offset=%d dim1=%d dim2=%d" %
                  (doff, dd1, dd2), lambda t: t.diagonal(doff, dd1, dd2))
        ufs = rng.randrange(0, size + 2)
        ust = rng.randrange(0, 4) if rng.random() < 0.1 else \
            rng.randrange(1, 4)
        view_case("unfold", x, base, "dim=%d size=%d step=%d" %
                  (dim, ufs, ust), lambda t: t.unfold(dim, ufs, ust))

        fdims = [d for d in range(-r, r) if rng.random() < 0.4]
        if rng.random() < 0.05:
            fdims.append(r)
        flip_case((x, base), fdims)

        n = base.numel()
        rank = rng.randrange(0, 4)
        as_sizes = [rng.randrange(0, 5) for _ in range(rank)]
        as_strides = [rng.randrange(0, 6) for _ in range(rank)]
        as_off = rng.randrange(0, n + 2)
        emit("as_strided", "storage=%d" % n, "sizes=%s strides=%s offset=%d" %
             (fmt(as_sizes), fmt(as_strides), as_off),
             lambda: base.as_strided(as_sizes, as_strides, as_off),
             layout_str)

        a = [rng.choice([1, 1, 2, 3, 0]) for _ in range(rng.randrange(0, 4))]
        b = [rng.choice([1, 2, 3]) for _ in range(rng.randrange(0, 4))]
        emit("broadcast", "-", "a=%s b=%s" % (fmt(a), fmt(b)),
             lambda: (torch.empty(a) + torch.empty(b)).shape,
             lambda s: "shape=" + fmt(s))
        rdims = [rng.randrange(-r - 1, r + 1) for _ in
                 range(rng.randrange(0, r + 1))]
        keep = rng.randrange(2)
        emit("reduce", "-", "sizes=%s dims=%s keepdim=%d" %
             (fmt(sizes), fmt(rdims), keep),
             lambda: torch.zeros(sizes).sum(rdims, keepdim=bool(keep)).shape,
             lambda s: "shape=" + fmt(s))


def main():
    assert torch.__version__.startswith("1.13"), torch.__version__
    hand_cases()
    random_cases(random.Random(SEED), 100)
    header = [
        "# Generated by scripts/gen_layout_golden.py with PyTorch %s; do not "
        "edit." % torch.__version__.split("a")[0],
        "# Format: op | input | args | expected (see the script's docstring).",
    ]
    with open(OUT, "w") as f:
        f.write("\n".join(header + lines) + "\n")
    total = sum(counts.values())
    print("%d cases -> %s" % (total, os.path.normpath(OUT)))
    print(", ".join("%s %d" % kv for kv in sorted(counts.items())))


if __name__ == "__main__":
    main()
