"""The line language of the PyTorch differential fuzzer, run in PyTorch.

One op per line, tokens separated by one space; a line `%i = op ...`
defines value %i (i counts values; `grad` defines several), the
statements below (backward, requires_grad_, ...) none:
  %i = input <dt> [sizes] v:<values> [rg]   dt: f32 f64 i32 i64 b8 (a
       fresh tensor, not a view)
  %i = full <dt|-> [sizes] <scalar> | zeros <dt> [s] | ones <dt> [s]
  %i = arange <dt|-> <end> | arange <dt|-> <start> <end> <step>
  %i = add|sub|mul|div <a> <b>       a or b may be a scalar
  %i = pow|eq|ne|lt|le|gt|ge <t> <t|scalar>, maximum|minimum|matmul <t> <t>
  %i = where <c> <a> <b>, neg|abs|exp|log|sqrt|relu|sigmoid|tanh <t>
  %i = to <t> <dt>, sum|mean|amax|amin <t> [[dims] <keepdim 0|1>],
       prod <t> [[dim] <keepdim 0|1>]     (PyTorch's prod takes one dim)
  %i = cumsum|cumprod <t> <dim> [<dt>], cumsum_|cumprod_ <t> <dim>
  %i = view|reshape|permute|expand|flip <t> [list], t <t>,
       transpose <t> d0 d1, narrow <t> d start len, select <t> d i,
       index <t> i, slice <t> d start|none end|none step, expand_as <t> <u>,
       squeeze <t> [d], unsqueeze <t> d, flatten <t> s e,
       as_strided <t> [sizes] [strides] off|none, diagonal <t> off d1 d2,
       unfold <t> d size step, contiguous|clone|detach <t>
  %i = add_|sub_|mul_|div_ <t> <u|scalar>, fill_ <t> <scalar>, zero_ <t>,
       copy_ <t> <u>, relu_ <t>          (the result is <t> itself)
  %i = <u> <t>, <u>_ <t>             u in UNARY20 (sin ... bitwise_not;
       in place: the result is <t> itself), gelu|gelu_ <t> none|tanh,
       clamp|clamp_ <t> <scalar|none> <scalar|none>,
       clamp_min|clamp_max <t> <scalar>, nan_to_num <t>,
       bitwise_and|bitwise_or|bitwise_xor <t> <u|scalar>,
       logical_and|logical_or|logical_xor <t> <u>,
       atan2|atan2_ <t> <u>, fmod|remainder|floor_divide[_] <t> <u|scalar>,
       lerp|lerp_ <t> <u> <w|scalar>,
       isclose|allclose <t> <u> <rtol> <atol> <equal_nan 0|1> (allclose: a
       0-d bool tensor of torch.allclose's answer)
  backward <t> [<g>] [retain]        t.backward(g, retain_graph=...)
Autograd lines (docs/reliability.md, "The autograd vocabulary"):
  requires_grad_ <t> [0|1]           in place (default 1); defines nothing
  retain_grad <t>                    defines nothing
  no_grad | enable_grad              grad mode of the lines that follow
                                     (strata::NoGradGuard while off)
  %i = grad [outs] [ins] [retain] [create]
                                     torch.autograd.grad (scalar outputs):
                                     defines one value per input, %i, %i+1..;
                                     create: create_graph=True (retain_graph
                                     then defaults to True, as PyTorch's)
  %i = grad_of <t>                   t.grad itself (an error when None)
Lines that define nothing start with their keyword; every other line is
`%i = op ...` (refs() reads %j tokens, also inside lists).
After the run every value is compared: also requires_grad, is_leaf,
_version, the grad_fn's name, and .grad (of every value; None unless a
leaf or retained).
Scalars: s:i:<int64> s:f:<float.hex(), inf, nan> s:b:<0|1>. Values of
`input`: comma-separated, float.hex() for floats. The C++ interpreter is
tests/fuzz/TorchFuzz.cpp.
"""
import math
import re
import warnings

import torch

DT = {"f32": torch.float32, "f64": torch.float64, "i32": torch.int32,
      "i64": torch.int64, "b8": torch.bool}
DT_NAME = {v: k for k, v in DT.items()}
FLOATS = ("f32", "f64")
SAMPLE_LIMIT = 4096
VIEW_OPS = {"view", "t", "transpose", "permute", "narrow", "select", "index",
            "slice", "expand", "expand_as", "squeeze", "unsqueeze",
            "as_strided", "diagonal", "unfold", "flip", "detach"}
VIEW_OR_COPY = {"reshape", "flatten", "contiguous", "to"}
STATEMENTS = {"backward", "requires_grad_", "retain_grad", "no_grad",
              "enable_grad", "eval"}
GRAD_VALUES = {"grad", "grad_of"}  # values autograd made
# The unary ops of issue 20 (method names of Tensor in both languages).
UNARY20 = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
           "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "reciprocal",
           "erf", "square", "sign", "floor", "ceil", "round", "trunc", "silu",
           "softplus", "logical_not", "bitwise_not")
BINARY20 = ("bitwise_and", "bitwise_or", "bitwise_xor", "logical_and",
            "logical_or", "logical_xor")
# The binary and ternary ops of issue 20 (and their in-place forms).
DIVISION = ("fmod", "remainder", "floor_divide")
TERNARY20 = ("atan2", "lerp") + DIVISION
INPLACE = {"add_", "sub_", "mul_", "div_", "fill_", "zero_", "copy_",
           "relu_", "gelu_", "clamp_"} | {u + "_" for u in UNARY20
                                          if u != "softplus"} | \
    {u + "_" for u in TERNARY20} | {"cumsum_", "cumprod_"}
ROUNDING = {"exp", "log", "sqrt", "sigmoid", "tanh", "pow", "div", "mean",
            "div_"} | {u + s for u in ("sin", "cos", "tan", "asin", "acos",
                                       "atan", "sinh", "cosh", "exp2",
                                       "expm1", "log2", "log10", "log1p",
                                       "rsqrt", "reciprocal", "erf", "silu",
                                       "softplus", "gelu", "atan2",
                                       "lerp")
                       for s in ("", "_")}
# Float results that step (a rounding difference in the input can move
# them by a whole unit): decided by rounded floats, as DISCRETE.
STEPS = {u + s for u in ("floor", "ceil", "round", "trunc", "sign") + DIVISION
         for s in ("", "_")}
REDUCING = {"sum", "mean", "matmul", "prod", "cumsum", "cumprod", "cumsum_",
            "cumprod_"}
DISCRETE = {"eq", "ne", "lt", "le", "gt", "ge", "isclose", "allclose"}
# Ops whose error is not bounded by a constant times their input's: an
# order-dependent input that is all cancellation (its value within the
# loose tolerance of its scale: 0 in one order, -27 in another after
# 1e20 - 1e20) makes their result arbitrary (0 ** 0 is 1, (-27) ** 0.5
# NaN).
AMPLIFYING = {u + s for u in ("pow", "div", "exp", "exp2", "expm1", "log",
                              "log2", "log10", "log1p", "sqrt", "rsqrt",
                              "reciprocal", "tan", "asin", "acos", "sinh",
                              "cosh", "atan2", "fmod", "remainder",
                              "floor_divide", "lerp", "square", "prod",
                              "cumprod")
              for s in ("", "_")}
LOOSE_RTOL = {torch.float32: 1e-4, torch.float64: 1e-10}


def _largest_finite(env, ins):
    """The largest finite magnitude among the float tensors `ins` read
    (at least 1.0)."""
    mags = [1.0]
    for j in ins:
        v = env.values[j]
        if torch.is_tensor(v) and v.numel() and v.is_floating_point():
            f = v.detach().abs()
            f = f[torch.isfinite(f)]
            if f.numel():
                mags.append(float(f.max()))
    return max(mags)


def sample_step(n):
    """The runner prints every k-th element of a large value."""
    return (n + 1023) // 1024 if n > SAMPLE_LIMIT else 1


def refs(line):
    """The value indices a line reads (also inside lists: grad [%3] [%0])."""
    w = line.split(" ")
    body = " ".join(w if is_statement(line) else w[1:])
    return [int(m) for m in re.findall(r"%(\d+)", body)]


def is_statement(line):
    """A line that defines no value (backward, retain_grad, no_grad...)."""
    return not line.startswith("%")


def op_name(line):
    w = line.split(" ")
    return w[0] if is_statement(line) else w[2]


def n_defs(line):
    """How many values a line defines: 0, 1, or a grad's inputs."""
    if is_statement(line):
        return 0
    w = line.split(" ")
    if w[2] == "grad":
        return len(parse_refs(w[4]))
    return 1


def parse_refs(tok):
    """[%1,%2] -> [1, 2]."""
    assert tok[0] == "[" and tok[-1] == "]", tok
    body = tok[1:-1]
    return [int(x[1:]) for x in body.split(",")] if body else []


def parse_list(tok):
    assert tok[0] == "[" and tok[-1] == "]", tok
    body = tok[1:-1]
    return [int(x) for x in body.split(",")] if body else []


def parse_float(s):
    if s in ("nan", "-nan", "inf", "-inf"):
        return float(s)
    return float.fromhex(s)


def parse_scalar(tok):
    kind, v = tok[2], tok[4:]
    if kind == "i":
        return int(v)
    if kind == "f":
        return parse_float(v)
    return v == "1"


def fmt_float(v):
    return float(v).hex() if math.isfinite(v) else repr(float(v))


def fmt_scalar(v):
    if isinstance(v, bool):
        return f"s:b:{int(v)}"
    if isinstance(v, int):
        return f"s:i:{v}"
    return f"s:f:{fmt_float(v)}"


class TorchEnv:
    """Runs lines in PyTorch. `shadow`: float32 becomes float64 (the default
    dtype too), which measures PyTorch's own rounding error."""

    def __init__(self, shadow=False):
        self.values, self.rg = [], []
        self.shadow = shadow
        self.grad_mode = True  # no_grad / enable_grad lines switch it

    def dt(self, name):
        if self.shadow and name == "f32":
            return torch.float64
        return DT[name]

    def arg(self, tok):
        if tok.startswith("s:"):
            return parse_scalar(tok)
        return self.values[int(tok[1:])]

    def run(self, line):
        """Runs one line in the program's grad mode (the process's stays
        on between lines: the generator interleaves programs)."""
        with torch.set_grad_enabled(self.grad_mode):
            self._run(line)

    def _run(self, line):
        w = line.split(" ")
        if w[0] == "backward":
            rest = w[2:]
            retain = "retain" in rest
            g = [self.arg(x) for x in rest if x.startswith("%")]
            self.arg(w[1]).backward(g[0] if g else None, retain_graph=retain)
            return
        if w[0] == "requires_grad_":
            self.arg(w[1]).requires_grad_(len(w) < 3 or w[2] == "1")
            return
        if w[0] == "retain_grad":
            self.arg(w[1]).retain_grad()
            return
        if w[0] == "eval":  # strata evaluates a pending value; eager: no-op
            self.arg(w[1])
            return
        if w[0] in ("no_grad", "enable_grad"):
            if len(w) != 1:
                raise KeyError(f"bad line {line}")
            self.grad_mode = w[0] == "enable_grad"
            return
        if w[0] in STATEMENTS or not line.startswith("%"):
            raise KeyError(f"unknown statement {w[0]}")
        op, a = w[2], w[3:]
        if op == "grad":
            outs = [self.values[j] for j in parse_refs(a[0])]
            ins = [self.values[j] for j in parse_refs(a[1])]
            create = "create" in a[2:]
            retain = True if "retain" in a[2:] else (None if create else False)
            rs = torch.autograd.grad(outs, ins, retain_graph=retain,
                                     create_graph=create)
            for r in rs:
                self.values.append(r)
                self.rg.append(False)
            return
        if op == "grad_of":
            r = self.arg(a[0]).grad
            if r is None:
                raise RuntimeError("grad_of: .grad is None")
            self.values.append(r)
            self.rg.append(False)
            return
        V = self.arg
        if op == "input":
            dt, sizes, data = self.dt(a[0]), parse_list(a[1]), a[2][2:]
            items = data.split(",") if data else []
            if a[0] in FLOATS:
                vals = [parse_float(x) for x in items]
            elif a[0] == "b8":
                vals = [x == "1" for x in items]
            else:
                vals = [int(x) for x in items]
            # clone: not a view of the 1-d tensor (strata's is no view)
            t = torch.tensor(vals, dtype=dt).view(sizes).clone()
            if len(a) > 3 and a[3] == "rg":
                t.requires_grad_(True)
            r = t
        elif op == "full":
            kw = {} if a[0] == "-" else {"dtype": self.dt(a[0])}
            r = torch.full(parse_list(a[1]), parse_scalar(a[2]), **kw)
        elif op in ("zeros", "ones"):
            r = getattr(torch, op)(parse_list(a[1]), dtype=self.dt(a[0]))
        elif op == "arange":
            kw = {} if a[0] == "-" else {"dtype": self.dt(a[0])}
            r = torch.arange(*[parse_scalar(x) for x in a[1:]], **kw)
        elif op in ("add", "sub", "mul", "div"):
            x, y = V(a[0]), V(a[1])
            r = {"add": lambda: x + y, "sub": lambda: x - y,
                 "mul": lambda: x * y, "div": lambda: x / y}[op]()
        elif op in ("pow", "eq", "ne", "lt", "le", "gt", "ge"):
            r = getattr(V(a[0]), op)(V(a[1]))
        elif op in ("maximum", "minimum", "matmul"):
            r = getattr(torch, op)(V(a[0]), V(a[1]))
        elif op == "where":
            r = torch.where(V(a[0]), V(a[1]), V(a[2]))
        elif op in ("neg", "abs", "exp", "log", "sqrt", "relu", "sigmoid",
                    "tanh", "t", "contiguous", "clone", "detach", "zero_",
                    "relu_"):
            r = getattr(V(a[0]), op)()
        elif op == "to":
            r = V(a[0]).to(self.dt(a[1]))
        elif op in ("sum", "mean", "amax", "amin", "prod"):
            x = V(a[0])
            if len(a) == 1:
                r = getattr(x, op)()
            elif op == "prod":
                r = x.prod(*parse_list(a[1]), keepdim=a[2] == "1")
            else:
                r = getattr(x, op)(parse_list(a[1]), keepdim=a[2] == "1")
        elif op in ("cumsum", "cumprod"):
            r = getattr(V(a[0]), op)(int(a[1]), dtype=self.dt(a[2])
                                     if len(a) > 2 else None)
        elif op in ("cumsum_", "cumprod_"):
            r = getattr(V(a[0]), op)(int(a[1]))
        elif op in ("view", "reshape", "permute", "expand", "flip"):
            r = getattr(V(a[0]), op)(parse_list(a[1]))
        elif op in ("transpose", "select", "narrow", "unsqueeze", "flatten",
                    "diagonal", "unfold"):
            r = getattr(V(a[0]), op)(*[int(x) for x in a[1:]])
        elif op == "index":
            r = V(a[0])[int(a[1])]
        elif op == "slice":
            opt = [None if x == "none" else int(x) for x in a[2:4]]
            r = torch.ops.aten.slice(V(a[0]), int(a[1]), opt[0], opt[1],
                                     int(a[4]))
        elif op == "expand_as":
            r = V(a[0]).expand_as(V(a[1]))
        elif op == "squeeze":
            r = V(a[0]).squeeze(*[int(x) for x in a[1:]])
        elif op == "as_strided":
            off = None if a[3] == "none" else int(a[3])
            r = V(a[0]).as_strided(parse_list(a[1]), parse_list(a[2]), off)
        elif op in ("add_", "sub_", "mul_", "div_", "copy_"):
            r = getattr(V(a[0]), op)(V(a[1]))
        elif op == "fill_":
            r = V(a[0]).fill_(V(a[1]))
        elif op in ("silu", "silu_", "softplus"):
            r = getattr(torch.nn.functional, op.rstrip("_"))(
                V(a[0]), **({"inplace": True} if op == "silu_" else {}))
            r = V(a[0]) if op == "silu_" else r
        elif op in UNARY20 or (op[:-1] in UNARY20 and op.endswith("_")):
            r = getattr(V(a[0]), op)()
        elif op == "gelu":
            r = torch.nn.functional.gelu(V(a[0]), approximate=a[1])
        elif op == "gelu_":
            r = torch.ops.aten.gelu_(V(a[0]), approximate=a[1])
        elif op in ("clamp", "clamp_"):
            lo, hi = [None if x == "none" else V(x) for x in a[1:3]]
            r = getattr(V(a[0]), op)(lo, hi)
        elif op in ("clamp_min", "clamp_max", "nan_to_num") or op in BINARY20:
            r = getattr(V(a[0]), op)(*[V(x) for x in a[1:]])
        elif op.rstrip("_") in TERNARY20:
            args = [V(x) for x in a]
            if op.rstrip("_") in DIVISION:
                _check_int_division(op, *args)
            r = getattr(args[0], op)(*args[1:])
        elif op in ("isclose", "allclose"):
            x, y = V(a[0]), V(a[1])
            eq_nan = a[4] == "1"
            if eq_nan and x.is_floating_point() and \
                    torch.broadcast_shapes(x.shape, y.shape) != x.shape:
                raise Diverges("isclose(equal_nan=True) of a broadcast self "
                               "writes in place into `self != self`")
            r = getattr(torch, op)(x, y, parse_float(a[2]), parse_float(a[3]),
                                   eq_nan)
            if op == "allclose":
                r = torch.tensor(r)
        else:
            raise KeyError(f"unknown op {op}")
        self.values.append(r)
        self.rg.append(op == "input" and len(a) > 3 and a[3] == "rg")


class PyTorchCrash(Exception):
    """A line PyTorch 1.13 would crash on (not run; a driver error)."""


class Diverges(Exception):
    """A line strata computes where PyTorch 1.13's CPU kernel raises or
    traps (torch_fuzz_compare.py, difference 15): the generator drops it."""


def _check_int_division(op, x, y):
    """Integer fmod/remainder/floor_divide by a tensor holding 0 (PyTorch's
    CPU kernels raise ZeroDivisionError, strata's give 0), or of the
    dtype's minimum by -1 (PyTorch's CPU kernels trap: SIGFPE)."""
    t = torch.result_type(x, y)
    if t.is_floating_point or t == torch.bool:
        return
    xt = x if isinstance(x, torch.Tensor) else torch.tensor(x)
    yt = y if isinstance(y, torch.Tensor) else torch.tensor(y)
    try:
        xb, yb = torch.broadcast_tensors(xt.to(t), yt.to(t))
    except RuntimeError:
        return  # PyTorch's own error (shapes)
    if isinstance(y, torch.Tensor) and bool((yb == 0).any()):
        raise Diverges(f"{op}: an integer division by a tensor holding 0")
    if bool(((yb == -1) & (xb == torch.iinfo(t).min)).any()):
        raise Diverges(f"{op}: the integer minimum divided by -1")


def tensor_record(t):
    """What the runner prints for a value (exact values, sampled)."""
    n = t.numel()
    step = sample_step(n)
    flat = t.detach().reshape(-1)[::step]
    vals = flat.tolist()
    if t.dtype == torch.bool:
        vals = [int(v) for v in vals]
    return {"dtype": DT_NAME.get(t.dtype, str(t.dtype)), "sizes": list(t.shape),
            "n": n, "values": vals}


class Analyzer:
    """Runs a program line by line in PyTorch and derives, for each value,
    what the comparison must know (torch_fuzz.py's intentional differences):
      flip    flip-derived: a view (in strata) of a flip result
      rounded a float computed with rounding beyond + - * (exp, div, ...)
      order   depends on a float summation order (sum/mean/matmul of
              rounded values or with rounding in the sum)
      fuzzy   a bool/int (or a where) decided by rounded floats
      scale   how large the terms of the float sums behind a value are (a
              cancelling sum's order-dependent error scales with them)
      alias   reads a storage that an in-place op wrote while reading it
              through another layout (x.mul_(x[:, ::3])): PyTorch's result
              depends on its loop order
      group   strata's storage: views share their input's group
      gradval shares the storage of a `grad`/`grad_of` value (autograd's
              own tensor: its _version is an implementation detail)
      impl_version its _version is PyTorch's implementation detail (grad
              values, matmul results whose decomposition wrote in place,
              flip-derived: a copy in PyTorch, a view in strata)
    A failed line changes nothing (the generator's trial run)."""

    def __init__(self, shadow=False):
        self.env = TorchEnv(shadow)
        self.lines = []
        self.flip, self.rounded, self.order, self.fuzzy = [], [], [], []
        self.alias = []
        self.adopted_read = []  # computed from an adopted gradient's group
        self.scale = []  # magnitude of the terms an order-dependent sum adds
        self.group, self.flip_groups = [], set()
        self.gradval = []  # shares the storage of a grad / grad_of value
        self.impl_version = []  # _version set by PyTorch's implementation
        self.made_no_grad = []  # made in no-grad mode
        # In-place writes per group, and the count each value has seen
        # through itself (a view's grad_fn is regenerated after others).
        self.writes, self.seen = {}, []
        self.nograd_written = set()  # groups written in no-grad mode
        self.adopted = set()  # groups of gradients passed to backward
        self.flip_ng = []
        self.flip_ng_groups = set()  # written in place from a no-grad flip
        self.flip_pre_rg = []  # flip of a base not requiring grad, & reads
        self.flip_pre_rg_groups = set()  # written in place from one
        self.grad_of_groups = set()

    def step(self, line):
        """Runs `line`; raises what PyTorch raises (then nothing changed)."""
        env = self.env
        n = len(env.values)
        w = line.split(" ")
        if w[0] == "retain_grad" and self.retain_crashes(refs(line)[0]):
            raise PyTorchCrash(f"PyTorch 1.13 segfaults on: {line}")
        env.run(line)
        self.lines.append(line)
        if w[0] == "backward" and len(refs(line)) > 1:
            # PyTorch's AccumulateGrad may adopt the gradient passed as
            # .grad (then accumulate into it): not compared afterwards.
            self.adopted.add(self.group[refs(line)[1]])
        if is_statement(line):
            return
        w = line.split(" ")
        op, ins = w[2], refs(line)
        if op in GRAD_VALUES:
            # Gradients: rounded like any backward; their storage is
            # autograd's (its _version is not compared).
            for k in range(n, len(env.values)):
                self.flip.append(False)
                self.rounded.append(True)
                self.order.append(True)
                self.fuzzy.append(False)
                self.alias.append(False)
                self.adopted_read.append(False)
                self.scale.append(max(self.scale + [1.0]))
                self.group.append(k)
                self.gradval.append(True)
                self.made_no_grad.append(not env.grad_mode)
                self.impl_version.append(True)
                self.seen.append(0)
                self.flip_ng.append(False)
                self.flip_pre_rg.append(False)
                if op == "grad_of":  # .grad: dense, written by updates
                    self.grad_of_groups.add(k)
            return
        r = env.values[n]
        rf = any(self.rounded[j] for j in ins)
        od = any(self.order[j] for j in ins)
        fz = any(self.fuzzy[j] for j in ins)
        al = any(self.alias[j] for j in ins)
        fl = False
        group = n
        if op in INPLACE:
            group = self.group[ins[0]]
            fl = self.flip[ins[0]]
            if len(ins) > 1 and _overlaps(env.values[ins[0]], env.values[ins[1]]):
                al = True
        elif op in VIEW_OPS or (op in VIEW_OR_COPY and ins and
                                _same_storage(r, env.values[ins[0]])):
            group = self.group[ins[0]]
            fl = op == "flip" or self.flip[ins[0]]
        elif op in ("reshape", "flatten", "contiguous") and self.flip[ins[0]]:
            # strata may view a flip where PyTorch copies (or the reverse).
            group = self.group[ins[0]]
            fl = True
        is_float = r.dtype in (torch.float32, torch.float64)
        if op in ROUNDING and (is_float or op == "div"):
            rf = True
        # PyTorch's vectorized float fmod/remainder (Sleef) gives NaN where
        # the quotient a / b overflows (1e38 % 0.125 in f32), its scalar
        # path and strata the exact 0: such a NaN is "rounded" (a cast of
        # it to an integer is fuzzy-discrete; difference 16).
        if op.rstrip("_") in ("fmod", "remainder") and is_float and \
                bool(torch.isnan(r).any()):
            rf = True
        sc = max([self.scale[j] for j in ins] + [0.0])
        if op in ("mul", "mul_") and (sc > 0 or (rf and is_float)):
            mag = _largest_finite(env, ins)
            # An order-dependent factor's error is scaled by the other
            # factor (a cancelling sum times 1e20): bounded by the largest
            # finite magnitude among the operands.
            if sc > 0:
                sc *= mag
            # A rounded value (exp, atan, pow: libm and PyTorch's Sleef
            # kernels may differ in the last bit) times a huge number: its
            # error is that number times an ulp, as an order-dependent
            # sum's (tan(atan(x) * 2^31) differs in the 7th digit).
            if rf and is_float and mag > 1e6:
                od = True
                sc = max(sc, mag)
        if op in AMPLIFYING and sc > 0 and not math.isinf(sc):
            for j in ins:
                v = env.values[j]
                if not (self.order[j] and torch.is_tensor(v) and v.numel()
                        and v.is_floating_point()):
                    continue
                f = v.detach().abs()
                f = f[torch.isfinite(f)]
                if f.numel() and float(f.min()) <= \
                        LOOSE_RTOL[v.dtype] * self.scale[j]:
                    sc = math.inf  # (any difference: float-order)
        if op in REDUCING and is_float:
            if not od:
                od = rf or not _exact_reduction(env, line)
            sc = max(sc, _reduction_scale(env, line))
        if (op in DISCRETE or op in ("to", "where") or op == "copy_") and \
                (rf or od):
            fz = fz or not is_float or op == "where"
        # A scan to an integer dtype converts its input first, as `to`.
        if op in ("cumsum", "cumprod") and (rf or od) and not is_float:
            fz = True
        if op in STEPS and (rf or od):
            fz = True
        if fl:
            self.flip_groups.add(group)
        self.flip.append(fl)
        self.rounded.append(rf)
        self.order.append(od)
        self.fuzzy.append(fz)
        self.alias.append(al)
        self.adopted_read.append(any(
            self.group[j] in self.adopted or self.adopted_read[j]
            for j in ins))
        self.scale.append(sc)
        self.group.append(group)
        self.gradval.append((group != n and self.gradval[group]) or
                            ((op in VIEW_OPS or op in VIEW_OR_COPY) and
                             bool(ins) and self.gradval[ins[0]]))
        self.made_no_grad.append(not env.grad_mode)
        # A flip made in no-grad mode (a copy without grad in PyTorch, a
        # view of a tensor requiring grad in strata), and what reads one.
        self.flip_ng.append((fl and not env.grad_mode) or
                            any(self.flip_ng[j] for j in ins))
        if op in INPLACE and self.flip_ng[-1]:
            self.flip_ng_groups.add(group)  # its destination too
        # A flip of a tensor that did not require grad (yet): a copy that
        # never will in PyTorch, a view that follows a later requires_grad_()
        # of its base in strata; and what is computed from one.
        self.flip_pre_rg.append(
            (op == "flip" and not env.values[ins[0]].requires_grad) or
            any(self.flip_pre_rg[j] for j in ins))
        if op in INPLACE and self.flip_pre_rg[-1]:
            self.flip_pre_rg_groups.add(group)  # its destination too
        # matmul's and isclose's results have had in-place ops of their
        # decompositions
        self.impl_version.append(op in ("matmul", "isclose") or fl or
                                 (group != n and self.impl_version[group]))
        if op in INPLACE and not env.grad_mode:
            self.nograd_written.add(group)
        if op in INPLACE:
            self.writes[group] = self.writes.get(group, 0) + 1
            self.seen[ins[0]] = self.writes[group]
        self.seen.append(self.writes.get(group, 0))
        if op in INPLACE:
            # The write changes every view of the storage.
            for j in range(n):
                if self.group[j] == group:
                    self.rounded[j] |= rf
                    self.order[j] |= od
                    self.scale[j] = max(self.scale[j], sc)
                    self.fuzzy[j] |= fz
                    self.alias[j] |= al

    def retain_crashes(self, j):
        """retain_grad() of value j would crash PyTorch 1.13 (a segfault in
        libtorch_cpu): a view whose grad_fn is due to be regenerated (its
        storage was written since, not through it, or in no-grad mode)."""
        g = self.group[j]
        return self.env.values[j]._base is not None and \
            (self.seen[j] != self.writes.get(g, 0) or g in self.nograd_written)

    def inplace_ok(self, j):
        """May the generator write through value j? Not into a storage a
        flip-derived view reads (strata's flip is a view, PyTorch's a copy),
        nor into a gradient of `grad` (PyTorch's may be expanded)."""
        return self.group[j] not in self.flip_groups and \
            (not self.gradval[j] or self.group[j] in self.grad_of_groups)


def _overlaps(a, b):
    """b reads a's storage through a different layout."""
    if not _same_storage(a, b) or a.storage().nbytes() == 0:
        return False
    return (a.shape, a.stride(), a.storage_offset()) != \
        (b.shape, b.stride(), b.storage_offset())


def _same_storage(a, b):
    return a.storage()._cdata == b.storage()._cdata


def _exact_reduction(env, line):
    """Whether the float reduction of `line` equals the same reduction in
    float64 (then any summation order gives it too, almost always)."""
    w = line.split(" ")
    ins = [env.values[j].detach().double() for j in refs(line)]
    try:
        x = ins[0]
        if w[2] == "matmul":
            ref = torch.matmul(x, ins[1])
        elif w[2] in ("cumsum_", "cumprod_"):
            return False  # (its input is overwritten: no reference)
        elif w[2] in ("cumsum", "cumprod"):
            ref = getattr(x, w[2])(int(w[4]))
        elif len(w) == 4:
            ref = getattr(x, w[2])()
        elif w[2] == "prod":
            ref = x.prod(*parse_list(w[4]), keepdim=w[5] == "1")
        else:
            ref = getattr(x, w[2])(parse_list(w[4]), keepdim=w[5] == "1")
    except RuntimeError:
        return False
    got = env.values[-1].detach().double()
    if got.shape != ref.shape:
        return False
    return bool(((got == ref) | (got.isnan() & ref.isnan())).all()) and \
        bool(x.abs().amax().item() < 2**20 if x.numel() else True)


def _reduction_scale(env, line):
    """An upper bound on |terms| x count of the sum `line` computes."""
    w = line.split(" ")
    ins = [env.values[j].detach().double() for j in refs(line)]

    def big(t):
        f = t[t.isfinite()].abs()
        return f.amax().item() if f.numel() else 0.0
    out = env.values[-1]
    n = max(ins[0].numel() // max(out.numel(), 1), 1)
    if w[2] == "matmul":
        return big(ins[0]) * big(ins[1]) * max(ins[0].shape[-1] if ins[0].dim() else 1, 1)
    if w[2] in ("prod", "cumprod", "cumprod_"):  # relative to the products
        return big(out.detach().double())
    if w[2] in ("cumsum", "cumsum_"):  # terms x the longest partial sum
        d = int(w[4])
        x = ins[0] if w[2] == "cumsum" else out.detach().double()
        return big(x) * (x.shape[d] if x.dim() else 1) * \
            (2 if w[2] == "cumsum_" else 1)
    return big(ins[0]) * (1 if w[2] == "mean" else n)


def run_torch(lines, shadow=False):
    """The oracle's output for a program: {'error': (line, msg) | None,
    'values': [record], 'grads': {i: record | 'none'}, 'tensors': [...],
    'meta': the Analyzer}."""
    an = Analyzer(shadow)
    if shadow:
        old = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
    error = None
    torch.set_grad_enabled(True)
    try:
        for n, line in enumerate(lines):
            try:
                an.step(line)
            except (RuntimeError, ValueError, IndexError, TypeError) as e:
                error = (n, str(e).split("\n")[0] or type(e).__name__)
                break
    finally:
        if shadow:
            torch.set_default_dtype(old)
    env = an.env
    out = {"error": error, "values": [], "grads": {}, "tensors": env.values,
           "meta": an}
    keys = {}
    for i, t in enumerate(env.values):
        rec = tensor_record(t)
        rec["strides"] = list(t.stride())
        rec["offset"] = t.storage_offset()
        try:
            rec["rl"] = f"{int(t.requires_grad)}{int(t.is_leaf)}"
            rec["grad_fn"] = type(t.grad_fn).__name__ if t.grad_fn else "-"
        except RuntimeError:
            # PyTorch regenerates a view's grad_fn when read and may raise
            # then (a view made in no-grad mode, written since): not
            # compared.
            rec["rl"] = rec["grad_fn"] = "!"
        rec["version"] = t._version
        st = t.storage()
        rec["alias"] = "-" if st.nbytes() == 0 else keys.setdefault(st._cdata, i)
        out["values"].append(rec)
    for i, t in enumerate(env.values):
        with warnings.catch_warnings():  # .grad of a non-leaf
            warnings.simplefilter("ignore")
            g = t.grad
        try:
            leaf = t.is_leaf
        except RuntimeError:  # as above
            leaf = False
        if g is not None or (leaf and t.requires_grad) or t.retains_grad:
            out["grads"][i] = "none" if g is None else tensor_record(g)
    return out
