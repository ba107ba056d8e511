"""Random programs of the fuzzer's line language (torch_fuzz_lang.py).

The generator proposes one line at a time and tries it in PyTorch on the
program so far (the Analyzer): a line PyTorch accepts is kept; one it
rejects is dropped, or kept as the program's last line (an error both must
raise) with probability ERROR_END. Shapes and dtypes therefore always come
from PyTorch itself. Program i of a run uses random.Random(seed + i). A share of programs
(--autograd P, drawn from a separate stream so the others stay as they
were) are autograd programs (autograd_program): float leaves, views,
in-place writes through views, detach and detach().requires_grad_(),
no-grad blocks, retain_grad, repeated backward with retain, grad(), and
parameter-update loops.
"""
import random
import struct

from torch_fuzz_lang import (BINARY20, DIVISION, FLOATS, UNARY20, Analyzer,
                             Diverges, fmt_float, fmt_scalar)

DTYPES = ("b8", "i32", "i64", "f32", "f64")
ERROR_END = 0.3
INT64_MAX, INT64_MIN = 2**63 - 1, -2**63
INT_EDGES = [0, 1, -1, 2, 7, 2**53 + 1, -(2**53 + 1), INT64_MAX, INT64_MIN,
             2**31 - 1, -2**31, 2**31, 3_000_000_000, -2**31 - 1, 2**62]
I32_EDGES = [2**31 - 1, -2**31, 65536, 46341, -46341]
FLOAT_EDGES = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1e17,
               1e20, -1e20, 2.0**53 + 2, 1e-30, 3e9, 65504.0, 1e38]
OPS = [  # (weight, method)
    (22, "binary"), (10, "unary"), (8, "compare"), (4, "where"),
    (4, "maxmin"), (6, "cast"), (12, "reduce"), (26, "view"),
    (14, "inplace"), (4, "copyish"), (4, "matmul"), (3, "input"),
    (3, "factory"), (12, "unary20"), (3, "bitwise20"), (8, "binary20"),
    (5, "scan"),
]


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


class Generator:
    def __init__(self, seed, dtypes=DTYPES, large=0.005, autograd=0.0):
        self.autograd = autograd > 0 and \
            random.Random(seed * 7919 + 13).random() < autograd
        self.r = random.Random(seed)
        self.dtypes = list(dtypes)
        self.an = Analyzer()
        self.large = large
        self.primary = self.r.choice(self.dtypes)
        self.grad = self.primary in FLOATS and self.r.random() < 0.4
        self.done = False

    # --- values --------------------------------------------------------
    def other_dtype(self):
        """Mostly the program's dtype; with --dtypes only those."""
        r = self.r.random()
        if r < 0.65:
            return self.primary
        return self.r.choice(self.dtypes)

    def fvalue(self, dt):
        r = self.r.random()
        if r < 0.75:
            v = self.r.randint(-32, 32) / 8
        elif r < 0.88:
            v = self.r.uniform(-4, 4)
        else:
            v = self.r.choice(FLOAT_EDGES)
        return f32(v) if dt == "f32" else v

    def ivalue(self, dt):
        if self.r.random() < 0.88:
            return self.r.randint(-6, 6)
        return self.r.choice(I32_EDGES if dt == "i32" else INT_EDGES)

    def scalar(self, dt=None):
        r = self.r.random()
        if r < 0.45:
            v = self.r.randint(-4, 5) if self.r.random() < 0.7 else \
                self.r.choice(INT_EDGES)
        elif r < 0.88:
            v = self.r.randint(-16, 16) / 4 if self.r.random() < 0.7 else \
                self.r.choice(FLOAT_EDGES)
        else:
            v = self.r.random() < 0.5
        return fmt_scalar(v)

    def shape(self, max_rank=4):
        rank = self.r.choice([0, 1, 1, 2, 2, 2, 3, 3, 4][:max_rank * 2 + 1])
        s = [self.r.choice([0, 1, 1, 2, 2, 3, 3, 4, 5]) if self.r.random() > 0.03
             else 0 for _ in range(rank)]
        while _numel(s) > 120:
            s[self.r.randrange(rank)] //= 2
        return s

    # --- lines ---------------------------------------------------------
    def try_line(self, line):
        """Keeps `line` if PyTorch runs it; a rejected line may end the
        program (an error case)."""
        try:
            self.an.step(line)
            return True
        except Diverges:
            return False  # dropped, never an error end (difference 15)
        except (RuntimeError, ValueError, IndexError, TypeError):
            if self.r.random() < ERROR_END:
                self.an.lines.append(line)
                self.done = True
            return False

    def new(self, rest):
        return f"%{len(self.an.env.values)} = {rest}"

    def input(self, dt=None, shape=None):
        dt = dt or self.other_dtype()
        shape = self.shape() if shape is None else shape
        n = _numel(shape)
        if dt in FLOATS:
            vals = [fmt_float(self.fvalue(dt)) for _ in range(n)]
        elif dt == "b8":
            vals = [str(self.r.randint(0, 1)) for _ in range(n)]
        else:
            vals = [str(self.ivalue(dt)) for _ in range(n)]
        rg = " rg" if dt in FLOATS and self.grad and self.r.random() < 0.7 \
            else (" rg" if self.r.random() < 0.01 else "")
        ok = self.try_line(self.new(f"input {dt} {_list(shape)} "
                                    f"v:{','.join(vals)}{rg}"))
        return len(self.an.env.values) - 1 if ok else None

    def pick(self):
        return self.r.randrange(len(self.an.env.values))

    def t(self, j):
        return self.an.env.values[j]

    def operand(self, j):
        """A tensor (existing or new) that broadcasts with value j."""
        shape = list(self.t(j).shape)
        if self.r.random() < 0.5:
            ok = [k for k in range(len(self.an.env.values))
                  if _broadcasts(list(self.t(k).shape), shape)]
            if ok:
                return self.r.choice(ok)
        s = shape[self.r.randint(0, len(shape)):] if shape else []
        s = [1 if self.r.random() < 0.25 else d for d in s]
        if self.r.random() < 0.05:
            s = self.shape()
        k = self.input(self.other_dtype(), s)
        return k if k is not None else j

    # --- op kinds ------------------------------------------------------
    def binary(self):
        op = self.r.choice(["add", "sub", "mul", "div", "pow"])
        j = self.pick()
        if self.r.random() < 0.35:
            s = self.scalar()
            if op != "pow" and self.r.random() < 0.25:
                return self.new(f"{op} {s} %{j}")
            return self.new(f"{op} %{j} {s}")
        return self.new(f"{op} %{j} %{self.operand(j)}")

    def unary(self):
        op = self.r.choice(["neg", "abs", "exp", "log", "sqrt", "relu",
                            "sigmoid", "tanh"])
        return self.new(f"{op} %{self.pick()}")

    def unary20(self):
        """The unary, clamp and nan_to_num ops of issue 20, in place 1 in 5
        (the generator's trial run drops what PyTorch refuses)."""
        r = self.r
        j = self.pick()
        op = r.choice(UNARY20 + ("gelu", "clamp", "clamp_min", "clamp_max",
                                 "nan_to_num"))
        # (In place only where the generator writes in place: not into
        # flip-derived values, intentional difference 1.)
        inplace = "_" if op not in ("clamp_min", "clamp_max", "nan_to_num",
                                    "softplus") and r.random() < 0.2 and \
            self.an.inplace_ok(j) else ""
        if op == "gelu":
            return self.new(f"gelu{inplace} %{j} {r.choice(['none', 'tanh'])}")
        if op == "clamp":
            lo, hi = self.scalar(), self.scalar()
            if r.random() < 0.3:
                lo, hi = r.choice([(lo, "none"), ("none", hi)])
            return self.new(f"clamp{inplace} %{j} {lo} {hi}")
        if op in ("clamp_min", "clamp_max"):
            return self.new(f"{op} %{j} {self.scalar()}")
        if op == "nan_to_num":
            return self.new(f"nan_to_num %{j}")
        return self.new(f"{op}{inplace} %{j}")

    def bitwise20(self):
        op = self.r.choice(BINARY20)
        j = self.pick()
        if op.startswith("bitwise") and self.r.random() < 0.3:
            return self.new(f"{op} %{j} {self.scalar()}")
        return self.new(f"{op} %{j} %{self.operand(j)}")

    def binary20(self):
        """atan2, fmod, remainder, floor_divide, lerp (in place 1 in 5),
        isclose and allclose."""
        r = self.r
        j = self.pick()
        op = r.choice(("atan2", "lerp", "isclose", "allclose") + DIVISION * 2)
        if op in ("isclose", "allclose"):
            rtol = r.choice([1e-5, 0.0, 1e-3, 0.25])
            atol = r.choice([1e-8, 0.0, 0.5, 1e-3])
            return self.new(f"{op} %{j} %{self.operand(j)} {fmt_float(rtol)} "
                            f"{fmt_float(atol)} {r.randint(0, 1)}")
        inplace = "_" if r.random() < 0.2 and self.an.inplace_ok(j) else ""
        if op == "lerp":
            w = self.scalar() if r.random() < 0.5 else f"%{self.operand(j)}"
            return self.new(f"lerp{inplace} %{j} %{self.operand(j)} {w}")
        if op != "atan2" and r.random() < 0.35:
            return self.new(f"{op}{inplace} %{j} {self.scalar()}")
        return self.new(f"{op}{inplace} %{j} %{self.operand(j)}")

    def compare(self):
        op = self.r.choice(["eq", "ne", "lt", "le", "gt", "ge"])
        j = self.pick()
        if self.r.random() < 0.4:
            return self.new(f"{op} %{j} {self.scalar()}")
        return self.new(f"{op} %{j} %{self.operand(j)}")

    def where(self):
        j = self.pick()
        bools = [k for k in range(len(self.an.env.values))
                 if self.t(k).dtype == _torch_bool()]
        if bools and self.r.random() < 0.7:
            c = self.r.choice(bools)
        else:
            c = len(self.an.env.values)
            if not self.try_line(self.new(f"gt %{j} {self.scalar()}")):
                return None
        return self.new(f"where %{c} %{j} %{self.operand(j)}")

    def maxmin(self):
        j = self.pick()
        return self.new(f"{self.r.choice(['maximum', 'minimum'])} %{j} "
                        f"%{self.operand(j)}")

    def cast(self):
        return self.new(f"to %{self.pick()} {self.r.choice(self.dtypes)}")

    def factory(self):
        """full/zeros/ones/arange, with edge scalars (3e9 into int32...)."""
        r = self.r
        dt = r.choice([self.other_dtype(), "-"])
        shape = self.shape(2)
        kind = r.choice(["full", "full", "zeros", "ones", "arange"])
        if kind == "full":
            return self.new(f"full {dt} {_list(shape)} {self.scalar()}")
        if kind in ("zeros", "ones"):
            return self.new(f"{kind} {dt if dt != '-' else 'f32'} {_list(shape)}")
        if r.random() < 0.5:
            return self.new(f"arange {dt} {fmt_scalar(r.randint(0, 6))}")
        start = r.choice([r.randint(-3, 3), r.randint(-12, 12) / 4])
        step = r.choice([1, 2, -1, 0.5, 0.25, 3, 0])
        end = start + step * r.randint(0, 6) + (0.1 if r.random() < 0.2 else 0)
        return self.new(f"arange {dt} {fmt_scalar(start)} {fmt_scalar(end)} "
                        f"{fmt_scalar(step)}")

    def reduce(self):
        op = self.r.choice(["sum", "sum", "mean", "amax", "amin", "prod"])
        j = self.pick()
        rank = self.t(j).dim()
        if self.r.random() < 0.25:
            return self.new(f"{op} %{j}")
        if op == "prod":  # one dim (PyTorch's prod has no dim list)
            d = self.r.randint(-max(rank, 1), max(rank, 1) - 1)
            return self.new(f"prod %{j} [{d}] {self.r.randint(0, 1)}")
        dims = [d for d in range(max(rank, 1)) if self.r.random() < 0.5]
        dims = [d - rank if self.r.random() < 0.3 else d for d in dims]
        if self.r.random() < 0.05 and dims:
            dims.append(dims[0])
        return self.new(f"{op} %{j} {_list(dims)} {self.r.randint(0, 1)}")

    def scan(self):
        """cumsum/cumprod along a random dim (negative too), with a dtype
        1 in 5, in place 1 in 6 where the generator writes in place."""
        r = self.r
        j = self.pick()
        op = r.choice(["cumsum", "cumprod"])
        rank = max(self.t(j).dim(), 1)
        d = r.randint(-rank, rank - 1)
        if r.random() < 0.17 and self.an.inplace_ok(j):
            return self.new(f"{op}_ %{j} {d}")
        # (Not of a 0-d tensor: PyTorch fills a 0-d result with a checked
        # conversion, NaN to an integer dtype raises; strata converts.)
        if r.random() < 0.2 and self.t(j).dim() > 0:
            return self.new(f"{op} %{j} {d} {r.choice(self.dtypes)}")
        return self.new(f"{op} %{j} {d}")

    def matmul(self):
        j = self.pick()
        s = list(self.t(j).shape)
        if not 1 <= len(s) <= 3:
            k = self.input(self.primary, [self.r.randint(1, 4)])
            if k is None:
                return None
            j, s = k, list(self.t(k).shape)
        m = self.r.randint(0, 4) if self.r.random() < 0.1 else self.r.randint(1, 4)
        kdim = s[-1]
        other = self.r.choice([[kdim], [kdim, m]] +
                              ([[s[0], kdim, m], [1, kdim, m]] if len(s) == 3 else []))
        if self.r.random() < 0.05:
            other = [kdim + 1, m]
        k = self.input(self.primary if self.r.random() < 0.85 else None, other)
        if k is None:
            return None
        a, b = (j, k) if self.r.random() < 0.8 else (k, j)
        return self.new(f"matmul %{a} %{b}")

    def copyish(self):
        op = self.r.choice(["contiguous", "clone", "detach"])
        return self.new(f"{op} %{self.pick()}")

    def view(self):
        j = self.pick()
        x = self.t(j)
        s, rank, n = list(x.shape), x.dim(), x.numel()
        r = self.r
        d = r.randint(-rank, rank - 1) if rank else r.choice([0, -1])
        size = s[d] if rank else 1
        op = r.choice(["view", "reshape", "t", "transpose", "permute",
                       "narrow", "select", "index", "slice", "slice", "expand",
                       "squeeze", "unsqueeze", "flatten", "as_strided",
                       "diagonal", "unfold", "flip", "expand_as"])
        if op in ("view", "reshape"):
            shape = _factor(r, n)
            if shape and r.random() < 0.2:
                shape[r.randrange(len(shape))] = -1
            if r.random() < 0.05:
                shape = [r.randint(1, 5)]
            return self.new(f"{op} %{j} {_list(shape)}")
        if op == "t":
            return self.new(f"t %{j}")
        if op == "transpose":
            e = r.randint(-rank, rank - 1) if rank else 0
            return self.new(f"transpose %{j} {d} {e}")
        if op == "permute":
            p = list(range(rank))
            r.shuffle(p)
            if r.random() < 0.05:
                p = p[:-1] if p else [0]
            return self.new(f"permute %{j} {_list(p)}")
        if op == "narrow":
            start = r.randint(-size, size) if size else 0
            length = r.randint(0, max(0, size - max(start, start + size if start < 0 else start)))
            if r.random() < 0.05:
                length += 2
            return self.new(f"narrow %{j} {d} {start} {length}")
        if op == "select":
            i = r.randint(-size, size - 1) if size else 0
            if r.random() < 0.05:
                i = size
            return self.new(f"select %{j} {d} {i}")
        if op == "index":
            return self.new(f"index %{j} {r.randint(-1, (s[0] if s else 1) - 1)}")
        if op == "slice":
            def bound():
                return "none" if r.random() < 0.3 else str(r.randint(-size - 2, size + 2))
            step = r.choice([1, 1, 2, 3]) if r.random() > 0.03 else r.choice([0, -1])
            return self.new(f"slice %{j} {d} {bound()} {bound()} {step}")
        if op == "expand":
            to = [r.randint(1, 3) if v == 1 else (v if r.random() < 0.5 else -1)
                  for v in s]
            if rank < 4 and r.random() < 0.3:
                to = [r.randint(1, 3)] + to
            if r.random() < 0.04:
                to = [r.randint(2, 4)] * max(rank, 1)
            return self.new(f"expand %{j} {_list(to)}")
        if op == "expand_as":
            k = self.operand(j)
            return self.new(f"expand_as %{k} %{j}")
        if op == "squeeze":
            return self.new(f"squeeze %{j}" + (f" {d}" if r.random() < 0.6 else ""))
        if op == "unsqueeze":
            return self.new(f"unsqueeze %{j} {r.randint(-rank - 1, rank)}")
        if op == "flatten":
            a = r.randint(-rank, rank - 1) if rank else 0
            b = r.randint(-rank, rank - 1) if rank else 0
            if r.random() < 0.8:
                a, b = sorted([a % max(rank, 1), b % max(rank, 1)])
            return self.new(f"flatten %{j} {a} {b}")
        if op == "as_strided" and self.an.gradval[j]:
            # Storage-relative: a gradient's storage is autograd's.
            return self.new(f"unsqueeze %{j} 0")
        if op == "as_strided" and self.an.flip[j]:
            # Storage-relative: in PyTorch the flip's storage is a copy.
            op = "flip"
        if op == "as_strided":
            shape = [r.randint(0, 3) for _ in range(r.randint(0, 3))]
            strides = [r.randint(0, 3) for _ in shape]
            off = r.choice(["none", str(r.randint(0, max(0, x.storage().size() - 1)))])
            if r.random() < 0.7 and shape:
                # Keep it inside the storage most of the time.
                while shape and _extent(shape, strides) + (int(off) if off != "none"
                                                           else x.storage_offset()) > x.storage().size():
                    shape[r.randrange(len(shape))] = max(0, shape[0] - 1)
                    if r.random() < 0.3:
                        break
            return self.new(f"as_strided %{j} {_list(shape)} {_list(strides)} {off}")
        if op == "diagonal":
            a = r.randint(-rank, rank - 1) if rank else 0
            b = r.randint(-rank, rank - 1) if rank else 1
            return self.new(f"diagonal %{j} {r.randint(-2, 2)} {a} {b}")
        if op == "unfold":
            return self.new(f"unfold %{j} {d} {r.randint(0, size + 1) if size else 1} "
                            f"{r.randint(1, 3) if r.random() > 0.03 else 0}")
        dims = sorted({r.randint(-rank, rank - 1) for _ in range(r.randint(1, 2))}) \
            if rank else [0]
        return self.new(f"flip %{j} {_list(dims)}")

    def inplace(self):
        ok = [k for k in range(len(self.an.env.values)) if self.an.inplace_ok(k)]
        if not ok:
            return None
        j = self.r.choice(ok)
        op = self.r.choice(["add_", "sub_", "mul_", "div_", "fill_", "zero_",
                            "copy_", "relu_", "add_", "mul_", "copy_"])
        if op in ("zero_", "relu_"):
            return self.new(f"{op} %{j}")
        if op == "fill_" or self.r.random() < 0.35 and op != "copy_":
            return self.new(f"{op} %{j} {self.scalar()}")
        shape = list(self.t(j).shape)
        ok = [k for k in range(len(self.an.env.values)) if k != j and
              _broadcasts_to(list(self.t(k).shape), shape)]
        if ok and self.r.random() < 0.6:
            k = self.r.choice(ok)
        else:
            s = shape[self.r.randint(0, len(shape)):] if shape else []
            s = [1 if self.r.random() < 0.25 else v for v in s]
            k = self.input(self.other_dtype(), s)
            if k is None:
                return None
        return self.new(f"{op} %{j} %{k}")

    # --- programs ------------------------------------------------------
    def large_program(self):
        """A reduction over 10^7 elements (rare: slow)."""
        dt = self.r.choice(["f32", "f32", "f64", "i64", "i32"])
        n = 10**7
        if self.r.random() < 0.5:
            v = 0.1 if dt in FLOATS else 3
            self.try_line(self.new(f"full {dt} [{n}] {fmt_scalar(v)}"))
        else:
            self.try_line(self.new(f"arange {dt} {fmt_scalar(n)}"))
        if self.done or not self.an.env.values:
            return self.an.lines
        op = self.r.choice(["sum", "sum", "mean", "amax"])
        if self.try_line(self.new(f"{op} %0")) or self.done:
            pass
        if not self.done and self.try_line(self.new("view %0 [1000,10000]")):
            v = len(self.an.env.values) - 1
            if not self.done:
                self.try_line(self.new(f"sum %{v} [{self.r.randint(0, 1)}] 0"))
        return self.an.lines

    # --- autograd programs --------------------------------------------
    def rg_values(self):
        return [k for k, v in enumerate(self.an.env.values) if v.requires_grad]

    def line(self, text):
        """Tries a line (statement or value); True if kept and not done."""
        return self.try_line(text) and not self.done

    def ag_detach(self):
        j = self.r.choice(self.rg_values() or [self.pick()])
        if self.line(self.new(f"detach %{j}")) and self.r.random() < 0.6:
            self.line(f"requires_grad_ %{len(self.an.env.values) - 1}")

    def ag_no_grad(self):
        if not self.line("no_grad"):
            return
        for _ in range(self.r.randint(1, 2)):
            kind = self.r.choice(["inplace", "inplace", "view", "binary"])
            line = getattr(self, kind)()
            if line and not self.done:
                self.try_line(line)
            if self.done:
                return
        self.line("enable_grad")

    def ag_retain(self):
        cands = [k for k in (self.rg_values() or [self.pick()])
                 if not self.an.retain_crashes(k)]
        if not cands:
            return
        j = self.r.choice(cands)
        self.line(f"retain_grad %{j}")
        if self.r.random() < 0.2:
            self.line(f"retain_grad %{j}")

    def maybe_eval(self):
        """Now and then evaluate a value (a no-op in PyTorch): results and
        gradients must not depend on when strata evaluates."""
        vals = self.an.env.values
        if vals and not self.done and self.r.random() < 0.08:
            self.line(f"eval %{self.r.randrange(len(vals))}")

    def ag_requires_grad(self):
        j = self.pick()
        if self.an.gradval[j]:
            return  # grad() results may view one tensor (difference 7)
        flag = " 0" if self.r.random() < 0.2 else \
            (" 1" if self.r.random() < 0.3 else "")
        self.line(f"requires_grad_ %{j}{flag}")

    def ag_loss(self):
        """sum of a value requiring grad, maybe of its square."""
        cands = self.rg_values()
        if not cands:
            return None
        j = self.r.choice(cands)
        if self.r.random() < 0.4:
            if not self.line(self.new(f"mul %{j} %{j}")):
                return None
            j = len(self.an.env.values) - 1
        if not self.line(self.new(f"sum %{j}")):
            return None
        return len(self.an.env.values) - 1

    def ag_backward(self):
        s = self.ag_loss()
        if s is None:
            return
        retain = self.r.random() < 0.5
        if self.r.random() < 0.1:
            # backward(gradient) of a non-scalar
            j = self.r.choice(self.rg_values())
            k = self.input(self.primary, list(self.t(j).shape))
            if k is not None and not self.done:
                self.line(f"backward %{j} %{k}" + (" retain" if retain else ""))
            return
        if self.line(f"backward %{s}" + (" retain" if retain else "")) and \
                self.r.random() < 0.4:
            self.line(f"backward %{s}")

    def ag_grad(self):
        s = self.ag_loss()
        if s is None:
            return
        cands = self.rg_values()
        ins = sorted(self.r.sample(cands, self.r.randint(1, min(3, len(cands)))))
        retain = " retain" if self.r.random() < 0.4 else ""
        create = " create" if self.r.random() < 0.35 else ""
        first = len(self.an.env.values)
        if not self.line(self.new(f"grad [%{s}] [{','.join(f'%{k}' for k in ins)}]"
                                  f"{retain}{create}")) or not create:
            return
        # Second order: a Hessian-vector product of the created gradients
        # (later lines may use them too: they require grad).
        gs = [k for k in range(first, len(self.an.env.values))
              if self.t(k).requires_grad]
        if not gs or self.r.random() < 0.3:
            return
        g = self.r.choice(gs)
        if self.line(self.new(f"mul %{g} %{g}")) and \
                self.line(self.new(f"sum %{len(self.an.env.values) - 1}")):
            self.line(f"backward %{len(self.an.env.values) - 1}")

    def ag_update(self):
        """A training loop of 1-3 steps: w2 = (w - lr * w.grad).detach()
        .requires_grad_(), or the update in place under no_grad, then a new
        loss and backward."""
        vals = self.an.env.values
        ws = [k for k, v in enumerate(vals) if _is_leaf(v) and v.grad is not None]
        if not ws:
            return self.ag_backward()
        w = self.r.choice(ws)
        for _ in range(self.r.randint(1, 3)):
            w = self.ag_step(w)
            if w is None or self.done:
                return

    def ag_step(self, w):
        """One step of ag_update; the new parameter, or None."""
        vals = self.an.env.values
        if not self.line(self.new(f"grad_of %{w}")):
            return
        g = len(vals) - 1
        lr = fmt_scalar(self.r.choice([0.5, 0.25, 0.125, 0.1]))
        if not self.line(self.new(f"mul %{g} {lr}")):
            return
        u = len(vals) - 1
        if self.r.random() < 0.5 or not self.an.inplace_ok(w):
            if not (self.line(self.new(f"sub %{w} %{u}")) and
                    self.line(self.new(f"detach %{len(vals) - 1}")) and
                    self.line(f"requires_grad_ %{len(vals) - 1}")):
                return
            w2 = len(vals) - 1
        else:
            if not (self.line("no_grad") and
                    self.line(self.new(f"sub_ %{w} %{u}")) and
                    self.line(self.new(f"zero_ %{g}")) and
                    self.line("enable_grad")):
                return
            w2 = w
        if self.line(self.new(f"mul %{w2} %{w2}")) and \
                self.line(self.new(f"sum %{len(vals) - 1}")) and \
                self.line(f"backward %{len(vals) - 1}"):
            return w2
        return None

    AG_OPS = [  # (weight, method)
        (20, "view"), (14, "inplace"), (10, "binary"), (5, "unary"),
        (4, "reduce"), (4, "copyish"), (8, "ag_detach"), (5, "ag_no_grad"),
        (5, "ag_retain"), (3, "ag_requires_grad"), (7, "ag_backward"),
        (4, "ag_grad"), (5, "ag_update"), (2, "input"), (3, "scan"),
    ]

    def autograd_program(self):
        if self.primary not in FLOATS:
            self.primary = self.r.choice(FLOATS)
        self.grad = True
        for _ in range(self.r.randint(1, 2)):
            self.input(self.primary)
        if not self.an.env.values:
            self.input(self.primary, [2])
        if self.r.random() < 0.5 and not self.done:
            # a leaf without grad to write into (becomes CopySlices' base)
            self.input(self.primary, self.shape(2)[:2] or [3])
        if not self.an.env.values:
            return self.an.lines
        names = [m for _, m in self.AG_OPS]
        weights = [w for w, _ in self.AG_OPS]
        n_ops = self.r.randint(4, 14)
        tries = 0
        while not self.done and tries < 60 and len(self.an.lines) < n_ops + 3:
            tries += 1
            kind = self.r.choices(names, weights)[0]
            if kind.startswith("ag_"):
                getattr(self, kind)()
                continue
            if kind == "input":
                self.input()
                continue
            line = getattr(self, kind)()
            if line and not self.done:
                self.try_line(line)
            self.maybe_eval()
        if not self.done and self.r.random() < 0.7:
            self.ag_backward()
        return self.an.lines

    def program(self):
        if self.autograd:
            return self.autograd_program()
        if self.r.random() < self.large:
            self.primary = "large"
            return self.large_program()
        for _ in range(self.r.randint(1, 2)):
            self.input(self.primary)
        if not self.an.env.values:
            self.input(self.primary, [2])
        if not self.an.env.values:
            return self.an.lines
        names = [m for _, m in OPS]
        weights = [w for w, _ in OPS]
        n_ops = self.r.randint(3, 12)
        tries = 0
        while not self.done and tries < 60 and \
                sum(1 for l in self.an.lines if "input" not in l) < n_ops:
            tries += 1
            kind = self.r.choices(names, weights)[0]
            if kind == "input":
                self.input()
                continue
            line = getattr(self, kind)()
            if line and not self.done:
                self.try_line(line)
            self.maybe_eval()
        if not self.done and self.grad:
            vals = self.an.env.values
            cands = [k for k, v in enumerate(vals) if v.requires_grad]
            if cands:
                k = self.r.choice(cands)
                if self.r.random() < 0.05:
                    # Non-scalar or non-differentiable: both must raise.
                    self.try_line(f"backward %{self.pick()}")
                elif self.try_line(self.new(f"sum %{k}")):
                    self.try_line(f"backward %{len(vals) - 1}")
        return self.an.lines


def _is_leaf(t):
    """t.is_leaf; False where PyTorch raises reading it (a view made in
    no-grad mode whose base was written with grad mode on)."""
    try:
        return t.is_leaf
    except RuntimeError:
        return False


def _torch_bool():
    import torch
    return torch.bool


def _numel(s):
    n = 1
    for v in s:
        n *= v
    return n


def _list(xs):
    return "[" + ",".join(str(x) for x in xs) + "]"


def _extent(shape, strides):
    if any(v == 0 for v in shape):
        return 0
    return 1 + sum((a - 1) * b for a, b in zip(shape, strides))


def _broadcasts(a, b):
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and x != 1 and y != 1:
            return False
    return True


def _broadcasts_to(a, b):
    if len(a) > len(b):
        return False
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and x != 1:
            return False
    return True


def _factor(r, n):
    """A random shape with n elements (rank 0..4)."""
    if n == 1 and r.random() < 0.3:
        return []
    if n == 0:
        return r.choice([[0], [0, 3], [2, 0], [0, 1, 2]])
    out, left = [], n
    for _ in range(r.randint(0, 3)):
        divs = [d for d in range(1, left + 1) if left % d == 0]
        d = r.choice(divs)
        out.append(d)
        left //= d
    out.append(left)
    r.shuffle(out)
    return out
