#!/usr/bin/python3
"""Generates tests/lit/Reference/*.mlir: strata IR functions and, as FileCheck
lines, the output strata-run must print for them, computed by PyTorch 1.13.

Run with the system Python that has PyTorch (python3-torch):
    /usr/bin/python3 scripts/gen_reference_golden.py          # rewrite files
    /usr/bin/python3 scripts/gen_reference_golden.py --check  # diff only
(--check is the ctest reference-golden: it fails, printing the diff, when a
checked-in file is not what this script writes.)
The output is deterministic; rerunning it must not change the checked-in
files unless this script or PyTorch changed. The tests themselves need only
strata-run and FileCheck.

Each test function is traced here: a small builder writes the IR text and
performs the same op with PyTorch at the same time.
- View ops are applied by PyTorch to torch.as_strided(root, layout), so the
  result type written into the IR is PyTorch's (sizes, stride(),
  storage_offset()) and its values are PyTorch's. strata-opt's verifier
  re-infers each type with the layout algebra. flip is the exception (PyTorch
  copies): its layout is the documented negative-stride rule, its values are
  torch.flip's.
- Compute ops are PyTorch's ops. Floating-point ops run in float64 and the
  result is rounded to the result dtype, which is the reference evaluator's
  documented model ("compute in double, round each stored element"). Integer
  and bool ops run in their own dtype.
- A compute result is laid out as PyTorch lays it out: the same op runs
  again on tensors of the operands' own sizes, strides and dtypes (and a
  number, a 0-d fill, as a Python number where PyTorch has a Scalar
  overload), and the result takes that tensor's stride() (TensorIterator's
  memory order, preserve_format, row-major reductions and matmul, ...).
  A negative stride counts by its magnitude (docs/design.md); the script
  checks that PyTorch's flip, a copy, would give the same layout.
- Inputs follow strata-run: --inputs=arange puts i into element i of each
  argument's storage (i % 2 for i1); --inputs=random reproduces the
  documented SplitMix64 stream (strata/Reference/Evaluator.h).
- Values print as strata-run prints them: "{:.6g}" floats, integers,
  true/false; nested brackets spaced as "[ [..], [..] ]".
"""

import difflib
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "..", "tests", "lit", "Reference")
DTYPES = {"f32": torch.float32, "f64": torch.float64, "i32": torch.int32,
          "i64": torch.int64, "i1": torch.bool}
MASK = (1 << 64) - 1


def ints(xs):
    return "[" + ", ".join(str(int(x)) for x in xs) + "]"


def tensor_type(layout, dt):
    sizes, strides, offset = layout
    shape = "".join("%dx" % s for s in sizes)
    return "!strata.tensor<%s%s, strided<%s, offset: %d>>" % (
        shape, dt, ints(strides), offset)


def float_attr(v):
    text = repr(float(v))
    return text if "." in text else text.replace("e", ".0e")


def fmt_elem(v, dt):
    if dt == "i1":
        return "true" if v else "false"
    if dt in ("i32", "i64"):
        return str(int(v))
    v = float(v)
    return "nan" if math.isnan(v) else "{:.6g}".format(v)


def fmt_values(t, dt):
    if t.dim() == 0:
        return fmt_elem(t.item(), dt)
    inner = ", ".join(fmt_values(t[i], dt) for i in range(t.shape[0]))
    if t.dim() > 1 and t.shape[0] > 0:
        return "[ " + inner + " ]"
    return "[" + inner + "]"


def gather(root, layout):
    """Elements of `layout` over the 1-D `root`, for any strides."""
    sizes, strides, offset = layout
    index = torch.full(list(sizes), offset, dtype=torch.int64)
    for d, (n, s) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[d] = n
        index = index + (torch.arange(n) * s).reshape(shape)
    return root[index]


class Val:
    """A traced value: an SSA name, its type, and PyTorch's data for it."""

    def __init__(self, name, dt, root, layout=None, number=False):
        self.name, self.dt, self.root, self.layout = name, dt, root, layout
        self.number = number  # a 0-d fill (or a cast of one): a C++ number

    @property
    def storage(self):
        return self.layout is None

    @property
    def type(self):
        if self.storage:
            return "!strata.storage<%dx%s>" % (self.root.numel(), self.dt)
        return tensor_type(self.layout, self.dt)

    @property
    def data(self):
        return self.root if self.storage else gather(self.root, self.layout)

    def base(self):
        """The value as a PyTorch view of its root (non-negative strides)."""
        sizes, strides, offset = self.layout
        assert min(strides, default=0) >= 0, "PyTorch can't view this layout"
        return torch.as_strided(self.root, sizes, strides, offset)

    def like(self, flip_copies):
        """Ones of this value's dtype, sizes and strides, for PyTorch to say
        what layout a result of it has. A negative stride counts by its
        magnitude; with `flip_copies`, as PyTorch's flip (a copy of the
        unflipped view, empty_like's strides) instead."""
        sizes, strides, _ = self.layout
        mags = [abs(s) for s in strides]
        extent = 0 if 0 in sizes else 1 + sum(
            (n - 1) * s for n, s in zip(sizes, mags))
        t = torch.as_strided(torch.ones(extent, dtype=DTYPES[self.dt]),
                             sizes, mags)
        flipped = [d for d, s in enumerate(strides) if s < 0]
        return torch.flip(t, flipped) if flip_copies and flipped else t


class Func:
    def __init__(self, name, inputs="arange", seed=0):
        self.name, self.inputs, self.state = name, inputs, seed
        self.args, self.body, self.expect = [], [], []
        self.count = 0

    # --- inputs --------------------------------------------------------------
    def _next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def _buffer(self, n, dt):
        if self.inputs == "arange":
            vals = [i % 2 if dt == "i1" else i for i in range(n)]
            return torch.tensor(vals, dtype=torch.float64).to(DTYPES[dt])
        vals = []
        for _ in range(n):
            r = self._next()
            if dt == "i1":
                vals.append(float(r >> 63))
            elif dt in ("i32", "i64"):
                vals.append(float(r % 11 - 5))
            else:
                vals.append(-2.0 + 4.0 * ((r >> 11) * 2.0 ** -53))
        return torch.tensor(vals, dtype=torch.float64).to(DTYPES[dt])

    def storage_arg(self, n, dt="f32"):
        v = Val("%%arg%d" % len(self.args), dt, self._buffer(n, dt))
        self.args.append(v)
        return v

    def tensor_arg(self, sizes, strides, offset=0, dt="f32"):
        extent = 0 if 0 in sizes else offset + 1 + sum(
            (n - 1) * s for n, s in zip(sizes, strides))
        v = Val("%%arg%d" % len(self.args), dt, self._buffer(extent, dt),
                (list(sizes), list(strides), offset))
        self.args.append(v)
        return v

    # --- ops -----------------------------------------------------------------
    def _emit(self, op, operands, attrs, dt, root, layout=None,
              number=False):
        v = Val("%%%d" % self.count, dt, root, layout, number)
        self.count += 1
        text = "%s = strata.%s" % (v.name, op)
        text += "".join(" " + o.name for o in operands[:1])
        text += "".join(", " + o.name for o in operands[1:])
        text += (" " + attrs if attrs else "") + " : "
        if operands:
            text += ", ".join(o.type for o in operands) + " -> "
        self.body.append(text + v.type)
        return v

    def _fresh(self, op, operands, attrs, t, dt, like, number=False):
        """A compute result: values `t` in the layout of `like`'s result,
        PyTorch's op run on the operands' `Val.like` tensors."""
        out = like(*[o.like(False) for o in operands])
        flip = like(*[o.like(True) for o in operands])
        sizes, strides = list(out.shape), list(out.stride())
        assert sizes == list(t.shape), (op, sizes, list(t.shape))
        assert strides == list(flip.stride()), (
            "%s: PyTorch's flip (a copy) gives strides %s, the magnitudes %s;"
            " pick another case" % (op, list(flip.stride()), strides))
        extent = 0 if 0 in sizes else 1 + sum(
            (n - 1) * s for n, s in zip(sizes, strides))
        assert extent == t.numel() and min(strides, default=0) >= 0, (
            op, sizes, strides)  # fresh results are dense
        root = torch.zeros(extent, dtype=DTYPES[dt])
        torch.as_strided(root, sizes, strides).copy_(t.to(DTYPES[dt]))
        return self._emit(op, operands, attrs, dt, root, (sizes, strides, 0),
                          number)

    def strided_view(self, src, sizes, strides, offset):
        return self._emit("strided_view", [src], "", src.dt, src.root,
                          (list(sizes), list(strides), offset))

    def view(self, op, x, attrs, fn):
        """A view op (or reshape/flatten/contiguous, which may copy)."""
        y = fn(x.base())
        if y.storage().data_ptr() != x.root.storage().data_ptr():
            return self._fresh(op, [x], attrs, y, x.dt,  # PyTorch copied.
                               lambda _: y)
        return self._emit(op, [x], attrs, x.dt, x.root,
                          (list(y.shape), list(y.stride()),
                           y.storage_offset()))

    def flip(self, x, dims):
        sizes, strides, offset = x.layout
        strides = list(strides)
        for d in dims:
            offset += (sizes[d] - 1) * strides[d] if sizes[d] else 0
            strides[d] = -strides[d]
        v = self._emit("flip", [x], "dims " + ints(dims), x.dt, x.root,
                       (list(sizes), strides, offset))
        assert torch.equal(v.data, torch.flip(x.data, dims))
        return v

    def unary(self, op, x):
        F = torch.nn.functional
        fn = {"gelu": F.gelu, "silu": F.silu, "softplus": F.softplus,
              "gelu_tanh": lambda v: F.gelu(v, approximate="tanh")}.get(
                  op, getattr(torch, op, None))
        if x.dt in ("f32", "f64"):
            t = fn(x.data.double())
        else:
            t = fn(x.data)
        return self._fresh(op, [x], "", t, x.dt, fn)

    def binary(self, op, a, b):
        fn = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
              "div": torch.div, "pow": torch.pow, "maximum": torch.maximum,
              "minimum": torch.minimum, "eq": torch.eq, "ne": torch.ne,
              "lt": torch.lt, "le": torch.le, "gt": torch.gt,
              "ge": torch.ge, "bitwise_and": torch.bitwise_and,
              "bitwise_or": torch.bitwise_or,
              "bitwise_xor": torch.bitwise_xor, "atan2": torch.atan2,
              "hypot": torch.hypot, "logaddexp": torch.logaddexp,
              "fmod": torch.fmod, "remainder": torch.remainder,
              "floor_divide": torch.floor_divide}[op]
        wide = a.dt in ("f32", "f64")
        t = fn(a.data.double(), b.data.double()) if wide else fn(a.data,
                                                                 b.data)
        dt = "i1" if op in ("eq", "ne", "lt", "le", "gt", "ge") else a.dt
        like = fn
        if op == "pow" and b.number:  # pow(Tensor, Scalar), as the DSL
            like = lambda x, _: torch.pow(x, b.data.item())  # noqa: E731
        return self._fresh(op, [a, b], "", t, dt, like)

    def where(self, c, a, b):
        return self._fresh("where", [c, a, b], "",
                           torch.where(c.data, a.data, b.data), a.dt,
                           torch.where)

    def lerp(self, a, b, w):
        wide = [v.data.double() for v in (a, b, w)]
        return self._fresh("lerp", [a, b, w], "", torch.lerp(*wide), a.dt,
                           torch.lerp)

    def cast(self, x, dt):
        return self._fresh("cast", [x], "", x.data.to(DTYPES[dt]), dt,
                           lambda v: v.to(DTYPES[dt]), x.number)

    def reduce(self, op, x, dims, keepdim=False):
        data = x.data
        if x.dt in ("f32", "f64"):
            data = data.double()
        all_dims = list(dims) if dims else list(range(data.dim()))

        def fn(data):
            if op in ("sum", "mean"):
                f = getattr(torch, op)
                return f(data, dim=all_dims, keepdim=keepdim) if all_dims \
                    else f(data)
            if op == "prod":  # torch.prod takes one dim: one at a time
                for d in sorted(all_dims, reverse=True):
                    data = torch.prod(data, dim=d, keepdim=keepdim)
                return data
            return getattr(torch, op)(data, dim=all_dims, keepdim=keepdim)
        dt = "i64" if op in ("sum", "prod") and x.dt not in ("f32", "f64") \
            else x.dt
        attrs = "dims " + ints(dims) + (" keepdim" if keepdim else "")
        return self._fresh(op, [x], attrs, fn(data), dt, fn)

    def scan(self, op, x, dim, reverse=False, exclusive=False):
        """strata.scan: torch.cumsum/cumprod in float64 (PyTorch's CPU
        kernels accumulate f32 in double), flipped for `reverse`, shifted
        by one (the identity first) for `exclusive`."""
        data = x.data
        if x.dt in ("f32", "f64"):
            data = data.double()
        fn = torch.cumsum if op == "sum" else torch.cumprod
        if data.dim() == 0:
            t = torch.full((), 0 if op == "sum" else 1, dtype=data.dtype) \
                if exclusive else data.clone()
        else:
            d = dim % data.dim()
            t = data.flip(d) if reverse else data
            if exclusive:
                first = torch.full_like(t.narrow(d, 0, 1),
                                        0 if op == "sum" else 1)
                t = torch.cat([first, t.narrow(d, 0, t.shape[d] - 1)], d) \
                    if t.shape[d] else t
            t = fn(t, d)
            if reverse:
                t = t.flip(d)
        attrs = 'dim %d "%s"' % (dim, op) + (" reverse" if reverse else "") \
            + (" exclusive" if exclusive else "")
        # Laid out as PyTorch's one kernel, fn (flip and cat would copy).
        return self._fresh("scan", [x], attrs, t, x.dt,
                           lambda v: fn(v, dim) if v.dim() else fn(v, 0))

    def matmul(self, a, b):
        wide = a.dt in ("f32", "f64")
        t = torch.matmul(a.data.double(), b.data.double()) if wide else \
            torch.matmul(a.data, b.data)
        return self._fresh("matmul", [a, b], "", t, a.dt, torch.matmul)

    def fill(self, value, sizes, dt="f32"):
        t = torch.full(list(sizes), value, dtype=torch.float64)
        return self._fresh("fill", [], float_attr(value), t, dt,
                           lambda: torch.full(list(sizes), 0,
                                              dtype=DTYPES[dt]),
                           number=not sizes)

    def arange(self, start, step, n, dt="f32"):
        t = start + torch.arange(n, dtype=torch.float64) * step
        attrs = "start %s step %s" % (float_attr(start), float_attr(step))
        return self._fresh("arange", [], attrs, t, dt,
                           lambda: torch.arange(n, dtype=DTYPES[dt]))

    def copy(self, x):
        return self._fresh("copy", [x], "", x.data.clone(), x.dt,
                           torch.clone)

    def write(self, src, dest):
        root = dest.root.clone()
        if min(dest.layout[1], default=0) >= 0:
            torch.as_strided(root, *dest.layout).copy_(src.data)
        else:  # PyTorch can't view negative strides: assign through indices.
            idx = gather(torch.arange(root.numel()), dest.layout)
            root[idx] = src.data.to(root.dtype).expand(idx.shape)
        v = Val("%%%d" % self.count, dest.dt, root)
        self.count += 1
        self.body.append("%s = strata.write %s into %s : %s, %s -> %s" % (
            v.name, src.name, dest.name, src.type, dest.type, v.type))
        return v

    # --- output --------------------------------------------------------------
    def ret(self, *vals, print_inputs=False):
        lines = ["func @" + self.name]
        for label, group in (("arg", self.args if print_inputs else []),
                             ("result", vals)):
            for i, v in enumerate(group):
                if v.storage:
                    desc = "storage %s size %d" % (v.dt, v.root.numel())
                else:
                    desc = "%s sizes %s strides %s offset %d" % (
                        v.dt, ints(v.layout[0]), ints(v.layout[1]),
                        v.layout[2])
                lines.append("%s %d: %s" % (label, i, desc))
                lines.append("  " + fmt_values(v.data, v.dt))
        self.expect = lines
        self.results = vals

    def text(self, first):
        out = []
        for i, line in enumerate(self.expect):
            kind = "CHECK" if first and i == 0 else "CHECK-NEXT"
            out.append("// %s: %s" % (kind, line))
        args = ", ".join("%s: %s" % (a.name, a.type) for a in self.args)
        types = ", ".join(v.type for v in self.results)
        out.append("func.func @%s(%s) -> (%s) {" % (self.name, args, types))
        out += ["  " + line for line in self.body]
        out.append("  return %s : %s" % (
            ", ".join(v.name for v in self.results), types))
        out.append("}")
        return "\n".join(out)


def render(title, funcs, run_args=""):
    names = [f.name for f in funcs]
    assert len(set(names)) == len(names), names
    head = ("// %s\n"
            "// Generated by scripts/gen_reference_golden.py from PyTorch %s;"
            " do not edit.\n"
            "// RUN: strata-run%s %%s | FileCheck %%s --match-full-lines\n"
            % (title, torch.__version__.split("a")[0], run_args))
    body = "\n\n".join(f.text(i == 0) for i, f in enumerate(funcs))
    return head + "\n" + body + "\n\n// Nothing after the last result.\n" \
        "// CHECK-NOT: {{.}}\n"


FILES = {}


def test_file(filename, title, run_args=""):
    def register(builder):
        FILES[filename] = lambda: render(title, builder(), run_args)
        return builder
    return register


# --- views: values are storage indices ---------------------------------------

@test_file("views.mlir", "View ops over arange storages: every printed value "
           "is the storage index the view reads.")
def views():
    fs = []

    def fn(name):
        f = Func(name)
        fs.append(f)
        return f

    f = fn("chain")
    s = f.storage_arg(12)
    m = f.strided_view(s, [3, 4], [4, 1], 0)
    f.ret(f.view("select", m, "dim 1 index 1", lambda t: t.select(1, 1)))

    f = fn("transpose_permute")
    s = f.storage_arg(24)
    a = f.strided_view(s, [2, 3, 4], [12, 4, 1], 0)
    t = f.view("transpose", a, "dims 0, 2", lambda t: t.transpose(0, 2))
    p = f.view("permute", a, "dims [1, 2, 0]", lambda t: t.permute(1, 2, 0))
    f.ret(t, p)

    f = fn("view_reshape")
    s = f.storage_arg(12)
    a = f.strided_view(s, [3, 4], [4, 1], 0)
    v = f.view("view", a, "as [2, -1, 3]", lambda t: t.view(2, -1, 3))
    tr = f.view("transpose", a, "dims 0, 1", lambda t: t.t())
    r1 = f.view("reshape", tr, "as [4, 3]", lambda t: t.reshape(4, 3))
    r2 = f.view("reshape", tr, "as [12]", lambda t: t.reshape(12))
    f.ret(v, r1, r2)

    f = fn("slice_narrow")
    s = f.storage_arg(20)
    a = f.strided_view(s, [4, 5], [5, 1], 0)
    s1 = f.view("slice", a, "dim 1 start 1 end 5 step 2",
                lambda t: t[:, 1:5:2])
    s2 = f.view("slice", a, "dim 0 start -3 step 1", lambda t: t[-3:])
    s3 = f.view("slice", a, "dim 1 end 100 step 3", lambda t: t[:, :100:3])
    n = f.view("narrow", a, "dim 0 start 1 length 2",
               lambda t: t.narrow(0, 1, 2))
    sel = f.view("select", a, "dim 0 index -1", lambda t: t.select(0, -1))
    f.ret(s1, s2, s3, n, sel)

    f = fn("expand_squeeze")
    s = f.storage_arg(6)
    a = f.strided_view(s, [3, 1], [2, 1], 1)
    e = f.view("expand", a, "to [2, 3, 4]", lambda t: t.expand(2, 3, 4))
    e2 = f.view("expand", a, "to [-1, 2]", lambda t: t.expand(-1, 2))
    u = f.view("unsqueeze", a, "dim 0", lambda t: t.unsqueeze(0))
    q = f.view("squeeze", u, "", lambda t: t.squeeze())
    q2 = f.view("squeeze", u, "dims [0]", lambda t: t.squeeze(0))
    f.ret(e, e2, q, q2)

    f = fn("flatten_unfold_diagonal")
    s = f.storage_arg(24)
    a = f.strided_view(s, [2, 3, 4], [12, 4, 1], 0)
    fl = f.view("flatten", a, "dims 1 to 2", lambda t: t.flatten(1, 2))
    tr = f.view("transpose", a, "dims 1, 2", lambda t: t.transpose(1, 2))
    fc = f.view("flatten", tr, "dims 0 to 2", lambda t: t.flatten(0, 2))
    m = f.strided_view(s, [6], [1], 2)
    uf = f.view("unfold", m, "dim 0 size 3 step 2",
                lambda t: t.unfold(0, 3, 2))
    d = f.view("diagonal", a, "offset 1 dims 1, 2",
               lambda t: t.diagonal(1, 1, 2))
    f.ret(fl, fc, uf, d)

    f = fn("as_strided_overlap")
    s = f.storage_arg(10)
    a = f.strided_view(s, [10], [1], 0)
    w = f.view("as_strided", a, "sizes [3, 4] strides [2, 1] offset 1",
               lambda t: t.as_strided([3, 4], [2, 1], 1))
    f.ret(w)

    f = fn("flip_negative_strides")
    s = f.storage_arg(12)
    a = f.strided_view(s, [3, 4], [4, 1], 0)
    f1 = f.flip(a, [0])
    f2 = f.flip(a, [0, 1])
    neg = f.strided_view(s, [4], [-3], 10)
    f.ret(f1, f2, neg)

    f = fn("contiguous_copy")
    s = f.storage_arg(6)
    a = f.strided_view(s, [2, 3], [3, 1], 0)
    c1 = f.view("contiguous", a, "", lambda t: t.contiguous())
    tr = f.view("transpose", a, "dims 0, 1", lambda t: t.t())
    c2 = f.view("contiguous", tr, "", lambda t: t.contiguous())
    cp = f.copy(tr)
    f.ret(c1, c2, cp)

    f = fn("zero_size_and_scalars")
    s = f.storage_arg(12)
    a = f.strided_view(s, [3, 4], [4, 1], 0)
    z1 = f.view("slice", a, "dim 0 start 2 end 1 step 1", lambda t: t[2:1])
    z2 = f.view("slice", a, "dim 1 start 4 step 1", lambda t: t[:, 4:])
    z3 = f.view("unsqueeze", z2, "dim 0", lambda t: t.unsqueeze(0))
    sc = f.view("select", f.view("select", a, "dim 0 index 2",
                                 lambda t: t.select(0, 2)),
                "dim 0 index 3", lambda t: t.select(0, 3))
    one = f.strided_view(s, [1, 1], [7, 9], 5)
    f.ret(z1, z2, z3, sc, one)

    f = fn("tensor_arguments")
    a = f.tensor_arg([2, 3], [1, 2], 3)
    b = f.tensor_arg([], [], 4, "i32")
    c = f.tensor_arg([4], [0], 2, "i64")
    tr = f.view("transpose", a, "dims 0, 1", lambda t: t.t())
    f.ret(a, tr, b, c)

    f = fn("view_of_dtypes")
    s64 = f.storage_arg(4, "f64")
    si = f.storage_arg(5, "i1")
    a = f.strided_view(s64, [2, 2], [1, 2], 0)
    b = f.strided_view(si, [2, 2], [2, 1], 1)
    f.ret(a, b, si)
    return fs


def collect():
    """A decorator's helper: a list of functions and a maker for them."""
    fs = []

    def fn(name, **kw):
        f = Func(name, **kw)
        fs.append(f)
        return f
    return fs, fn


# --- elementwise -------------------------------------------------------------

@test_file("elementwise.mlir", "Unary, binary (broadcasting), compare, where "
           "and cast over strided, stride-0 and negative-stride inputs.")
def elementwise():
    fs, fn = collect()

    f = fn("unary_f32")
    s = f.storage_arg(6)
    a = f.strided_view(s, [2, 3], [1, 2], 0)  # transposed storage order
    x = f.binary("sub", a, f.fill(2.5, []))
    f.ret(*[f.unary(op, x) for op in ("neg", "abs", "relu", "sigmoid",
                                       "tanh", "exp")])

    f = fn("unary_domain")
    s = f.storage_arg(5)
    a = f.strided_view(s, [5], [-1], 4)
    x = f.binary("sub", a, f.fill(1.0, []))  # 3 2 1 0 -1
    f.ret(f.unary("log", x), f.unary("sqrt", x))

    f = fn("unary_ints")
    s = f.storage_arg(6, "i32")
    b = f.strided_view(s, [3, 2], [2, 1], 0)
    x = f.binary("sub", b, f.fill(3, [1, 2], "i32"))
    f.ret(f.unary("neg", x), f.unary("abs", x), f.unary("relu", x))

    f = fn("unary_f64_broadcast_input")
    s = f.storage_arg(3, "f64")
    e = f.strided_view(s, [2, 3], [0, 1], 0)
    f.ret(f.unary("exp", e), f.unary("sqrt", e))

    f = fn("binary_broadcast")
    s = f.storage_arg(12)
    col = f.strided_view(s, [3, 1], [4, 1], 1)
    row = f.strided_view(s, [1, 4], [4, 1], 8)
    f.ret(*[f.binary(op, col, row) for op in ("add", "sub", "mul", "div",
                                               "pow", "maximum", "minimum")])

    f = fn("binary_rank_mismatch")
    s = f.storage_arg(6)
    a = f.strided_view(s, [2, 3], [3, 1], 0)
    v = f.strided_view(s, [3], [-2], 5)
    sc = f.fill(0.5, [])
    f.ret(f.binary("mul", a, v), f.binary("add", sc, a),
          f.binary("div", a, sc), f.binary("div", sc, a))

    f = fn("binary_ints")
    s = f.storage_arg(8, "i64")
    a = f.strided_view(s, [2, 4], [4, 1], 0)
    b = f.strided_view(s, [4], [2], 1)
    f.ret(f.binary("mul", a, b), f.binary("sub", b, a),
          f.binary("maximum", a, f.fill(3, [], "i64")),
          f.binary("pow", a, f.fill(2, [], "i64")))

    f = fn("compares")
    s = f.storage_arg(8)
    a = f.strided_view(s, [2, 4], [4, 1], 0)
    b = f.strided_view(s, [4], [-1], 6)
    f.ret(*[f.binary(op, a, b) for op in ("eq", "ne", "lt", "le", "gt",
                                           "ge")])

    f = fn("where_broadcast")
    s = f.storage_arg(6)
    a = f.strided_view(s, [2, 3], [3, 1], 0)
    c = f.binary("gt", a, f.strided_view(s, [3], [1], 2))
    w1 = f.where(c, a, f.fill(-1.0, []))
    c2 = f.binary("lt", f.strided_view(s, [2, 1], [1, 1], 0),
                  f.fill(0.5, []))
    w2 = f.where(c2, f.fill(7.0, [3]), f.strided_view(s, [3], [2], 1))
    f.ret(c, w1, w2)

    f = fn("casts")
    s = f.storage_arg(6)
    a = f.strided_view(s, [6], [1], 0)
    x = f.binary("mul", f.binary("sub", a, f.fill(2.5, [])),
                 f.fill(1.5, []))  # -3.75 -2.25 -0.75 0.75 2.25 3.75
    b = f.cast(x, "i1")
    f.ret(x, f.cast(x, "i32"), f.cast(x, "i64"), f.cast(x, "f64"), b,
          f.cast(b, "f32"), f.cast(f.cast(x, "i32"), "f32"),
          f.cast(f.fill(0.1, [], "f64"), "f32"))

    f = fn("nan_propagation")
    s = f.storage_arg(6)
    a = f.strided_view(s, [2, 3], [1, 2], 0)  # 0 2 4 / 1 3 5
    x = f.unary("sqrt", f.binary("sub", a, f.fill(2.0, [])))
    f.ret(x, f.unary("relu", x), f.binary("maximum", x, f.fill(0.0, [])),
          f.binary("minimum", f.fill(9.0, []), x),
          f.binary("ne", x, x), f.binary("lt", x, f.fill(1.5, [])),
          f.cast(x, "i1"), f.reduce("amax", x, [1]),
          f.reduce("amin", x, [0]), f.reduce("sum", x, [1]))

    f = fn("int_overflow_wraps")
    s = f.storage_arg(3, "i32")
    big = f.fill(2147483647, [3], "i32")
    f.ret(f.binary("add", big, f.strided_view(s, [3], [1], 0)),
          f.cast(f.fill(4294967298, [], "i64"), "i32"))
    return fs


# --- the unary ops of StrataUnaryOps.td ----------------------------------------

FLOAT_UNARY = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
               "tanh", "exp", "exp2", "expm1", "log", "log2", "log10",
               "log1p", "sqrt", "rsqrt", "reciprocal", "erf", "sigmoid",
               "gelu", "gelu_tanh", "silu", "softplus")
ANY_UNARY = ("neg", "abs", "square", "sign", "floor", "ceil", "round",
             "trunc", "relu")


@test_file("unary.mlir", "Every unary op of StrataUnaryOps.td over a "
           "transposed f32 input, an f64 stride-0 one, special values and "
           "integers; bitwise ops on integers and bool.")
def unary_ops():
    fs, fn = collect()

    f = fn("float_unary_f32")
    s = f.storage_arg(24)
    a = f.strided_view(s, [3, 4], [8, 2], 0)  # every other element
    # (i - 11) / 12: in (-1, 1), none 0 (log's NaN is fine).
    x = f.binary("div", f.binary("sub", a, f.fill(11.0, [])),
                 f.fill(12.0, []))
    f.ret(*[f.unary(op, x) for op in FLOAT_UNARY])

    f = fn("float_unary_f64_broadcast")
    s = f.storage_arg(4, "f64")
    e = f.strided_view(s, [3, 4], [0, 1], 0)  # stride 0: rows repeat
    x = f.binary("add", e, f.fill(0.25, [], "f64"))  # 0.25 1.25 2.25 3.25
    f.ret(*[f.unary(op, x) for op in FLOAT_UNARY])

    f = fn("any_unary_f32_halves")
    s = f.storage_arg(12)
    a = f.strided_view(s, [12], [-1], 11)  # negative stride
    # (i - 6) / 2: -3, -2.5, ..., 2.5 (round half to even)
    x = f.binary("div", f.binary("sub", a, f.fill(6.0, [])),
                 f.fill(2.0, []))
    f.ret(*[f.unary(op, x) for op in ANY_UNARY])

    f = fn("special_values")
    s = f.storage_arg(6)
    a = f.strided_view(s, [6], [1], 0)
    # 0 1 2 3 4 5 -> 0, inf, -inf, nan, 30, -30
    z = f.binary("sub", a, a)
    one = f.binary("add", z, f.fill(1.0, []))
    inf = f.binary("div", one, z)
    x = f.where(f.binary("eq", a, f.fill(1.0, [])), inf, z)
    x = f.where(f.binary("eq", a, f.fill(2.0, [])), f.unary("neg", inf), x)
    x = f.where(f.binary("eq", a, f.fill(3.0, [])),
                f.binary("sub", inf, inf), x)
    x = f.where(f.binary("eq", a, f.fill(4.0, [])), f.fill(30.0, []), x)
    x = f.where(f.binary("eq", a, f.fill(5.0, [])), f.fill(-30.0, []), x)
    f.ret(*[f.unary(op, x) for op in FLOAT_UNARY + ANY_UNARY])

    f = fn("int_unary")
    s = f.storage_arg(12, "i64")
    b = f.strided_view(s, [2, 3], [6, 2], 0)
    x = f.binary("sub", b, f.fill(3, [], "i64"))
    f.ret(*[f.unary(op, x) for op in ("neg", "abs", "square", "sign",
                                       "floor", "ceil", "round", "trunc",
                                       "relu", "bitwise_not")])

    f = fn("bitwise")
    s = f.storage_arg(8, "i32")
    a = f.strided_view(s, [2, 4], [4, 1], 0)
    b = f.binary("sub", f.strided_view(s, [4], [-2], 7),
                 f.fill(4, [], "i32"))  # 3 1 -1 -3
    m = f.strided_view(f.storage_arg(4, "i1"), [4], [1], 0)
    m2 = f.strided_view(f.storage_arg(16, "i1"), [2, 4], [8, 2], 0)
    f.ret(*[f.binary(op, a, b) for op in ("bitwise_and", "bitwise_or",
                                           "bitwise_xor")],
          *[f.binary(op, m, m2) for op in ("bitwise_and", "bitwise_or",
                                            "bitwise_xor")],
          f.unary("bitwise_not", m2), f.unary("sign", m2))
    return fs


# --- atan2, hypot, the division family and lerp (issues 19, 20) ---------------

DIVISION = ("fmod", "remainder", "floor_divide")


def specials(f, dt):
    """0, inf, -inf, nan, 30, -30 (in dt) from an arange storage of 6."""
    a = f.strided_view(f.storage_arg(6, dt), [6], [1], 0)
    z = f.binary("sub", a, a)
    inf = f.binary("div", f.binary("add", z, f.fill(1.0, [], dt)), z)
    x = f.where(f.binary("eq", a, f.fill(1.0, [], dt)), inf, z)
    x = f.where(f.binary("eq", a, f.fill(2.0, [], dt)), f.unary("neg", inf),
                x)
    x = f.where(f.binary("eq", a, f.fill(3.0, [], dt)),
                f.binary("sub", inf, inf), x)
    x = f.where(f.binary("eq", a, f.fill(4.0, [], dt)), f.fill(30.0, [], dt),
                x)
    return f.where(f.binary("eq", a, f.fill(5.0, [], dt)),
                   f.fill(-30.0, [], dt), x)


@test_file("binary.mlir", "atan2, hypot, logaddexp, fmod, remainder, floor_divide and lerp "
           "over strided and broadcast f32 inputs, special values in f64, "
           "integers of both widths (divisors never 0) and -0.0; prod over "
           "dims, all, keepdim, integers (to i64) and empty dims.")
def binary_ops():
    fs, fn = collect()

    f = fn("division_family_f32")
    s = f.storage_arg(24)
    a = f.strided_view(s, [3, 4], [8, 2], 0)  # every other element
    a = f.binary("sub", a, f.fill(11.5, []))  # -11.5 .. 10.5
    b = f.binary("mul", f.binary("sub", f.strided_view(s, [4], [2], 1),
                                 f.fill(3.5, [])), f.fill(1.25, []))
    f.ret(*[f.binary(op, a, b)
            for op in ("atan2", "hypot", "logaddexp") + DIVISION])

    f = fn("special_values_f64")
    x = specials(f, "f64")
    col = f.view("view", x, "as [6, 1]", lambda t: t.view(6, 1))
    # (Not logaddexp: PyTorch computes log(1 + exp(-|a - b|)), strata
    # log1p, so logaddexp(0, -30) differs in the third digit: 9.34808e-14
    # there, 9.35762e-14 exactly. tests/e2e/LogaddexpTest.cpp checks the
    # special values against PyTorch's within assert_close's tolerance.)
    f.ret(*[f.binary(op, col, x) for op in ("atan2", "hypot") + DIVISION])

    f = fn("signed_zeros_f32")
    s = f.storage_arg(4)
    a = f.strided_view(s, [4], [1], 0)
    z = f.binary("mul", f.binary("sub", a, a), f.fill(-1.0, []))  # -0.0
    d = f.binary("sub", a, f.fill(1.5, []))  # -1.5 -0.5 0.5 1.5
    f.ret(*[f.binary(op, z, d) for op in DIVISION],
          f.binary("atan2", z, d), f.binary("atan2", z, z),
          f.binary("hypot", z, d))

    for dt in ("i32", "i64"):
        f = fn("division_family_" + dt)
        s = f.storage_arg(8, dt)
        a = f.binary("sub", f.strided_view(s, [2, 4], [4, 1], 0),
                     f.fill(4, [], dt))  # -4 .. 3
        # 2 * s - 7: odd, never 0 (PyTorch raises for a zero divisor).
        b = f.binary("sub", f.binary("mul", f.strided_view(s, [4], [-2], 7),
                                     f.fill(2, [], dt)), f.fill(7, [], dt))
        # s + 1: 5 .. 8 here; 0 and -1 among --inputs=random's (-5 .. 5),
        # where the kernels must not trap (JIT/binary.mlir).
        c = f.binary("add", f.strided_view(s, [4], [1], 4), f.fill(1, [], dt))
        f.ret(*[f.binary(op, a, b) for op in DIVISION],
              *[f.binary(op, b, f.fill(-3, [], dt)) for op in DIVISION],
              *[f.binary(op, a, c) for op in DIVISION])

    f = fn("lerp_f32")
    s = f.storage_arg(12)
    a = f.strided_view(s, [3, 4], [4, 1], 0)
    e = f.binary("mul", f.strided_view(s, [4], [-1], 11), f.fill(-2.0, []))
    w = f.binary("sub", f.binary("mul", f.strided_view(s, [3, 1], [1, 1], 0),
                                 f.fill(0.5, [])), f.fill(0.25, []))
    f.ret(f.lerp(a, e, f.fill(0.3, [])), f.lerp(a, e, f.fill(0.75, [])),
          f.lerp(a, e, w), f.lerp(e, a, f.fill(-0.5, [])))

    f = fn("lerp_f64_broadcast")
    s = f.storage_arg(3, "f64")
    a = f.strided_view(s, [2, 3], [0, 1], 0)
    e = f.binary("add", f.strided_view(s, [2, 1], [1, 1], 0),
                 f.fill(10.0, [], "f64"))
    f.ret(f.lerp(a, e, f.fill(0.5, [], "f64")),
          f.lerp(a, e, f.fill(1.0, [], "f64")))

    f = fn("prod_f32")
    s = f.storage_arg(24)
    a = f.strided_view(s, [2, 3, 4], [12, 4, 1], 0)
    x = f.binary("mul", f.binary("sub", a, f.fill(11.5, [])),
                 f.fill(0.125, []))  # -1.4375 .. 1.4375, no zero
    f.ret(f.reduce("prod", x, [2]), f.reduce("prod", x, [0], keepdim=True),
          f.reduce("prod", x, [0, 2]), f.reduce("prod", x, []),
          f.reduce("prod", f.strided_view(s, [3, 4], [1, 3], 0), [1]))

    f = fn("prod_ints_and_empty")
    s = f.storage_arg(6, "i32")
    a = f.binary("sub", f.strided_view(s, [2, 3], [3, 1], 0),
                 f.fill(2, [], "i32"))  # -2 .. 3
    e = f.strided_view(f.storage_arg(6), [0, 3], [3, 1], 0)
    f.ret(f.reduce("prod", a, [1]), f.reduce("prod", a, []),
          f.reduce("prod", e, [0]), f.reduce("prod", e, []))
    return fs


# --- reductions --------------------------------------------------------------

def x_w_views(f):
    """x (4x3) and w (3x4) storages seen as x.t(), w, x and w.t()."""
    sx = f.storage_arg(12)
    sw = f.storage_arg(12)
    return (f.strided_view(sx, [3, 4], [1, 3], 0),
            f.strided_view(sw, [3, 4], [4, 1], 0),
            f.strided_view(sx, [4, 3], [3, 1], 0),
            f.strided_view(sw, [4, 3], [1, 4], 0))


@test_file("siblings.mlir", "Programs whose kernels --strata-fuse merges "
           "(sibling fusion): siblings over permuted spaces, a reduction and "
           "an elementwise value of the same inputs, and pairs that must not "
           "merge.")
def siblings():
    fs, fn = collect()

    # x.t() * w and x * w.t(): one kernel over [3, 4], the second result
    # written in x's order.
    f = fn("transposed_siblings")
    xt, w, x, wt = x_w_views(f)
    a = f.unary("relu", f.binary("sub", f.binary("mul", xt, w),
                                 f.fill(20.0, [])))
    b = f.binary("add", f.binary("mul", x, wt), x)
    f.ret(a, b)

    # The loss and both gradients of ((x.t() * w).relu()).sum() as the
    # gradient program computes them: a full sum and two elementwise
    # results in their own orders.
    f = fn("loss_and_gradients")
    xt, w, x, wt = x_w_views(f)
    zero = f.fill(0.0, [])
    shift = f.fill(30.0, [])
    loss = f.reduce("sum", f.unary("relu", f.binary(
        "sub", f.binary("mul", xt, w), shift)), [])
    mask_w = f.cast(f.binary("gt", f.binary("sub", f.binary("mul", xt, w),
                                            shift), zero), "f32")
    gw = f.binary("mul", mask_w, xt)
    mask_x = f.cast(f.binary("gt", f.binary("sub", f.binary("mul", x, wt),
                                            shift), zero), "f32")
    gx = f.binary("mul", mask_x, wt)
    f.ret(loss, gx, gw)

    # A row reduction and an elementwise value of one 3-d input seen
    # through a permutation: kept dims in the permuted order.
    f = fn("permuted_reduce_and_map")
    s = f.storage_arg(24)
    a = f.strided_view(s, [2, 3, 4], [12, 4, 1], 0)
    p = f.view("permute", a, "dims [2, 0, 1]", lambda t: t.permute(2, 0, 1))
    m = f.reduce("amax", f.binary("mul", p, f.fill(-1.0, [])), [1])
    e = f.binary("mul", a, a)
    f.ret(m, e)

    # Reductions over different dims of one input stay apart; so do two
    # kernels where one reads the other's result; and a view of the first
    # kernel's result between the two.
    f = fn("must_not_merge")
    s = f.storage_arg(12)
    a = f.strided_view(s, [3, 4], [4, 1], 0)
    r0 = f.reduce("sum", a, [0])
    r1 = f.reduce("sum", a, [1])
    y = f.binary("add", a, f.fill(1.0, []))
    z = f.reduce("sum", f.binary("mul", y, a), [])
    yt = f.view("transpose", y, "dims 0, 1", lambda t: t.t())
    u = f.binary("sub", a, f.fill(2.0, []))
    f.ret(r0, r1, z, yt, u)

    # y's kernel and u's merge although z, between them, reads y: the
    # merged kernel goes where y's was (u reads only a), before z.
    f = fn("merge_before_consumer")
    s = f.storage_arg(12)
    a = f.strided_view(s, [3, 4], [4, 1], 0)
    y = f.unary("exp", f.binary("mul", a, f.fill(0.25, [])))
    z = f.reduce("amax", f.binary("add", y, y), [0])
    u = f.binary("sub", f.view("transpose", a, "dims 0, 1",
                               lambda t: t.t()), f.fill(3.0, []))
    f.ret(y, z, u)
    return fs


@test_file("reductions.mlir", "sum, mean, amax, amin over dims (all when "
           "none), keepdim, strided and zero-size inputs.")
def reductions():
    fs, fn = collect()

    f = fn("sum_dims")
    s = f.storage_arg(24)
    a = f.strided_view(s, [2, 3, 4], [12, 4, 1], 0)
    f.ret(f.reduce("sum", a, []), f.reduce("sum", a, [1]),
          f.reduce("sum", a, [0, 2], keepdim=True),
          f.reduce("sum", a, [-1]), f.reduce("sum", a, [], keepdim=True))

    f = fn("mean_amax_amin")
    s = f.storage_arg(12)
    a = f.strided_view(s, [4, 3], [1, 4], 0)
    x = f.binary("mul", f.binary("sub", a, f.fill(5.0, [])),
                 f.binary("sub", a, f.fill(7.0, [])))
    f.ret(f.reduce("mean", x, [0]), f.reduce("mean", x, [1], keepdim=True),
          f.reduce("amax", x, [0]), f.reduce("amin", x, [-1]),
          f.reduce("amax", x, []), f.reduce("amin", x, [0, 1],
                                            keepdim=True))

    f = fn("reduce_views")
    s = f.storage_arg(6)
    e = f.strided_view(s, [3, 4], [2, 0], 1)
    fl = f.strided_view(s, [2, 3], [-3, -1], 5)
    f.ret(f.reduce("sum", e, [1]), f.reduce("mean", e, [0]),
          f.reduce("amax", fl, [1]), f.reduce("sum", fl, [0]))

    f = fn("sum_int_bool_to_i64")
    si = f.storage_arg(6, "i32")
    sb = f.storage_arg(6, "i1")
    a = f.strided_view(si, [2, 3], [3, 1], 0)
    b = f.strided_view(sb, [2, 3], [3, 1], 0)
    f.ret(f.reduce("sum", a, [1]), f.reduce("sum", b, []),
          f.reduce("amax", a, [0]), f.reduce("amin", b, [1]))

    f = fn("reduce_zero_size")
    s = f.storage_arg(6)
    z = f.strided_view(s, [2, 0], [3, 1], 0)
    f.ret(f.reduce("sum", z, [1]), f.reduce("sum", z, []),
          f.reduce("mean", z, [1]), f.reduce("sum", z, [0], keepdim=True),
          f.reduce("amax", z, [0]))

    f = fn("reduce_scalar")
    s = f.storage_arg(6)
    sc = f.strided_view(s, [], [], 4)
    one = f.strided_view(s, [1, 1], [1, 1], 3)
    f.ret(f.reduce("sum", sc, []), f.reduce("mean", sc, []),
          f.reduce("amax", one, [1]), f.reduce("amin", one, [0, 1]))
    return fs


# --- scan --------------------------------------------------------------------

@test_file("scan.mlir", "strata.scan (cumsum, cumprod) along each dim, "
           "negative dims, reverse and exclusive, strided, expanded, flipped, "
           "0-d and zero-size inputs, i32/i64, and an elementwise producer.")
def scans():
    fs, fn = collect()

    f = fn("scan_dims")
    s = f.storage_arg(24)
    a = f.strided_view(s, [2, 3, 4], [12, 4, 1], 0)
    f.ret(f.scan("sum", a, 0), f.scan("sum", a, 1), f.scan("sum", a, -1),
          f.scan("prod", f.binary("mul", a, f.fill(0.125, [])), 2))

    f = fn("scan_flags")
    s = f.storage_arg(12)
    a = f.strided_view(s, [3, 4], [4, 1], 0)
    f.ret(f.scan("sum", a, 1, reverse=True), f.scan("sum", a, 0,
                                                    exclusive=True),
          f.scan("prod", a, 1, reverse=True, exclusive=True),
          f.scan("prod", f.binary("add", a, f.fill(1.0, [])), 0,
                 exclusive=True))

    f = fn("scan_views")
    s = f.storage_arg(12)
    t = f.strided_view(s, [4, 3], [1, 4], 0)
    e = f.strided_view(s, [3, 5], [1, 0], 2)
    fl = f.strided_view(s, [2, 3], [-3, -1], 11)
    sl = f.strided_view(s, [2, 2], [6, 2], 1)
    f.ret(f.scan("sum", t, 0), f.scan("sum", t, 1), f.scan("sum", e, 1),
          f.scan("prod", fl, 1), f.scan("sum", sl, 0))

    f = fn("scan_columns")
    s = f.storage_arg(60)
    a = f.strided_view(s, [3, 20], [20, 1], 0)
    t = f.strided_view(s, [2, 3, 10], [30, 10, 1], 0)
    f.ret(f.scan("sum", a, 0), f.scan("sum", a, -2, reverse=True,
                                       exclusive=True),
          f.scan("prod", f.binary("mul", t, f.fill(0.03125, [])), 1))

    f = fn("scan_warps")  # lines of >= 32 along the innermost dim
    s = f.storage_arg(600, "f64")
    a = f.strided_view(s, [3, 200], [200, 1], 0)
    si = f.storage_arg(80, "i64")
    b = f.strided_view(si, [2, 40], [40, 1], 0)
    ones = f.strided_view(si, [2, 40], [1, 0], 0)  # (no i64 overflow: the
    # evaluator computes in double)
    f.ret(f.scan("sum", a, 1), f.scan("sum", a, -1, reverse=True,
                                       exclusive=True),
          f.scan("prod", f.binary("add", f.binary("mul", a,
                                                   f.fill(0.0009765625, [],
                                                          "f64")),
                                  f.fill(1.0, [], "f64")), 1, exclusive=True),
          f.scan("prod", ones, 1, reverse=True), f.scan("sum", b, 1))

    f = fn("scan_ints")
    si = f.storage_arg(6, "i32")
    sl = f.storage_arg(6, "i64")
    a = f.strided_view(si, [2, 3], [3, 1], 0)
    b = f.strided_view(sl, [3, 2], [1, 3], 0)
    f.ret(f.scan("sum", a, 1), f.scan("prod", a, 0), f.scan("sum", b, 0),
          f.scan("prod", b, -1, reverse=True))

    f = fn("scan_edges")
    s = f.storage_arg(6, "f64")
    sc = f.strided_view(s, [], [], 4)
    z = f.strided_view(s, [2, 0], [3, 1], 0)
    z0 = f.strided_view(s, [0, 3], [3, 1], 0)
    one = f.strided_view(s, [3, 1], [1, 1], 2)
    f.ret(f.scan("sum", sc, 0), f.scan("prod", sc, -1),
          f.scan("sum", sc, 0, exclusive=True), f.scan("sum", z, 1),
          f.scan("prod", z0, 1), f.scan("prod", one, 1),
          f.scan("sum", one, 0, reverse=True))
    return fs


# --- matmul ------------------------------------------------------------------

@test_file("matmul.mlir", "matmul with torch.matmul's 1-D, 2-D and batched "
           "broadcast rules over strided operands.")
def matmul():
    fs, fn = collect()

    f = fn("mm_strided")
    s = f.storage_arg(12)
    a = f.strided_view(s, [3, 4], [4, 1], 0)
    b = f.strided_view(s, [4, 2], [1, 4], 2)
    f.ret(f.matmul(a, b), f.matmul(f.strided_view(s, [2, 3], [1, 2], 0),
                                   f.strided_view(s, [3, 3], [-3, 1], 9)))

    f = fn("mm_vectors")
    s = f.storage_arg(12)
    m = f.strided_view(s, [3, 4], [4, 1], 0)
    v4 = f.strided_view(s, [4], [1], 1)
    v3 = f.strided_view(s, [3], [4], 0)
    f.ret(f.matmul(v4, v4), f.matmul(m, v4), f.matmul(v3, m))

    f = fn("mm_batched_broadcast")
    s = f.storage_arg(24)
    a = f.strided_view(s, [2, 1, 3, 4], [12, 12, 4, 1], 0)
    b = f.strided_view(s, [3, 4, 2], [0, 2, 1], 3)
    v = f.strided_view(s, [4], [2], 0)
    f.ret(f.matmul(a, b), f.matmul(v, b), f.matmul(a, v))

    f = fn("mm_ints_and_empty")
    si = f.storage_arg(6, "i64")
    a = f.strided_view(si, [2, 3], [3, 1], 0)
    b = f.strided_view(si, [3, 2], [1, 3], 0)
    s = f.storage_arg(6)
    z1 = f.strided_view(s, [2, 0], [1, 1], 0)
    z2 = f.strided_view(s, [0, 3], [3, 1], 0)
    f.ret(f.matmul(a, b), f.matmul(z1, z2),
          f.matmul(f.strided_view(s, [0, 2], [2, 1], 0),
                   f.strided_view(s, [2, 2], [2, 1], 0)))
    return fs


# --- fill, arange, copy ------------------------------------------------------

@test_file("fill_arange.mlir", "fill and arange for every dtype, copy of "
           "strided values.")
def fill_arange():
    fs, fn = collect()

    f = fn("fills")
    f.ret(f.fill(2.5, []), f.fill(-1.25, [2, 3]), f.fill(7.9, [3], "i32"),
          f.fill(-3.0, [2], "i64"), f.fill(2.0, [2, 1], "i1"),
          f.fill(0.0, [3], "i1"), f.fill(1e-07, [2], "f64"),
          f.fill(0.1, [], "f32"), f.fill(1.0, [0, 2]))

    f = fn("aranges")
    f.ret(f.arange(0.0, 1.0, 5), f.arange(1.0, -0.5, 4),
          f.arange(-2.0, 3.0, 4, "i64"), f.arange(0.0, 0.1, 4, "f64"),
          f.arange(0.0, 0.1, 4), f.arange(3.0, 1.0, 0, "i32"))

    f = fn("copies")
    s = f.storage_arg(6, "i32")
    t = f.strided_view(s, [3, 2], [1, 3], 0)
    e = f.strided_view(s, [2, 2], [0, -1], 5)
    f.ret(f.copy(t), f.copy(e))
    return fs


# --- writes ------------------------------------------------------------------

@test_file("write.mlir", "strata.write makes a new storage version; later "
           "views read it, the old version is unchanged.")
def write():
    fs, fn = collect()

    f = fn("write_then_read")
    s = f.storage_arg(12)
    d = f.strided_view(s, [3], [4], 1)
    s1 = f.write(f.fill(7.5, []), d)
    r = f.strided_view(s1, [3, 4], [4, 1], 0)
    old = f.strided_view(s, [3, 4], [4, 1], 0)
    f.ret(s1, r, old)

    f = fn("write_chain_of_versions")
    s = f.storage_arg(6)
    a = f.strided_view(s, [2, 3], [3, 1], 0)
    tr = f.view("transpose", a, "dims 0, 1", lambda t: t.t())
    s1 = f.write(f.arange(10.0, 10.0, 2), tr)  # broadcast [2] -> [3, 2]
    row = f.strided_view(s1, [3], [1], 3)
    doubled = f.binary("mul", row, f.fill(2.0, []))
    s2 = f.write(doubled, f.strided_view(s1, [3], [1], 0))
    f.ret(s1, s2, f.strided_view(s2, [2, 3], [3, 1], 0))

    f = fn("write_negative_and_zero_stride_src")
    s = f.storage_arg(8)
    flipped = f.flip(f.strided_view(s, [2, 4], [4, 1], 0), [1])
    src = f.strided_view(s, [4], [0], 2)  # stride-0 source is fine
    s1 = f.write(f.binary("add", src, f.strided_view(s, [2, 4], [4, 1], 0)),
                 flipped)
    f.ret(s1)

    f = fn("write_into_compute_root")
    s = f.storage_arg(4, "i32")
    # contiguous of a transpose: a row-major compute root (a copy would keep
    # the transposed strides, preserve_format).
    c = f.view("contiguous", f.strided_view(s, [2, 2], [1, 2], 0), "",
               lambda t: t.contiguous())
    s1 = f.write(f.fill(-9, [], "i32"),
                 f.view("select", c, "dim 1 index 0",
                        lambda t: t.select(1, 0)))
    f.ret(s1, f.strided_view(s1, [2, 2], [2, 1], 0), c)

    f = fn("write_into_tensor_argument")
    a = f.tensor_arg([2, 2], [1, 3], 1, "f64")
    s1 = f.write(f.fill(0.5, [2, 1], "f64"), a)
    f.ret(s1, f.strided_view(s1, [2, 2], [1, 3], 1))

    f = fn("write_zero_size_and_bool")
    s = f.storage_arg(5, "i1")
    s1 = f.write(f.fill(1.0, [], "i1"), f.strided_view(s, [0], [1], 2))
    s2 = f.write(f.fill(1.0, [], "i1"), f.strided_view(s, [2], [2], 0))
    f.ret(s1, s2)
    return fs


# --- random inputs -----------------------------------------------------------

@test_file("random.mlir", "--inputs=random: the documented SplitMix64 stream, "
           "pinned.", " --inputs=random --seed=7 --print-inputs")
def random_inputs():
    fs, fn = collect()

    f = fn("random_dtypes", inputs="random", seed=7)
    a = f.storage_arg(5)
    b = f.storage_arg(3, "f64")
    c = f.storage_arg(6, "i32")
    d = f.storage_arg(4, "i1")
    e = f.tensor_arg([2, 2], [1, 2], 1, "i64")
    f.ret(f.reduce("sum", f.strided_view(a, [5], [1], 0), []),
          f.unary("tanh", f.strided_view(b, [3], [1], 0)),
          f.binary("mul", f.strided_view(c, [2, 3], [3, 1], 0),
                   f.fill(3, [], "i32")),
          f.cast(f.strided_view(d, [4], [1], 0), "f32"), e,
          print_inputs=True)

    # Each function starts the stream again from the seed.
    f = fn("random_again", inputs="random", seed=7)
    a = f.storage_arg(5)
    f.ret(f.strided_view(a, [2, 2], [1, 2], 1), print_inputs=True)
    return fs


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for name, make in sorted(FILES.items()):
        path = os.path.normpath(os.path.join(OUT_DIR, name))
        text = make()
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        stale.append(path)
        if check:  # what would change, so a failing ctest says why
            sys.stdout.writelines(difflib.unified_diff(
                (old or "").splitlines(True), text.splitlines(True),
                path + " (checked in)", path + " (generated)", n=1))
        else:
            os.makedirs(OUT_DIR, exist_ok=True)
            with open(path, "w") as out:
                out.write(text)
    for path in stale:
        print(("stale: " if check else "wrote: ") + path)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
