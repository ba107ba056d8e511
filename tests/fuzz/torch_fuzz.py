#!/usr/bin/python3
"""Differential fuzzer: strata (tests/fuzz/TorchFuzz.cpp) against PyTorch.

Generates random programs in a line language (torch_fuzz_lang.py: one op
per line, `%3 = add %1 %2`, `%4 = view %3 [2,6]`,
`%5 = add_ %4 s:i:9007199254740993`; generator: torch_fuzz_gen.py), runs
each in PyTorch (the oracle) and, through a long-lived `strata-fuzz-torch`
process, in strata, and compares what a user sees: values, dtype, sizes,
strides, storage offset, storage sharing, errors (both raise or neither, at
the same line) and the .grad() of requires_grad leaves after backward().
The first program of each mismatch class is minimized (lines dropped while
the class persists) and printed with both outputs. A crash or hang of the
runner is a finding too: the runner is restarted and the run goes on.

  /usr/bin/python3 tests/fuzz/torch_fuzz.py --runner build/bin/strata-fuzz-torch
      [--seed K] [--programs N] [--seconds S] [--dtypes f32,i64,...]
      [--plant KIND --expect-mismatch] [--report FILE] [--replay FILE]
      [--allow CLASS,...] [--threads T]

Exit status: 0 no failing mismatch, 1 failing mismatches (with
--expect-mismatch: 0 iff the planted defect was reported), 77 when torch
cannot be imported (ctest SKIP).
"""
import argparse
import math
import os
import select
import subprocess
import sys
import time

try:
    import torch
except Exception as e:  # the ctest SKIP path
    print(f"SKIPPED: /usr/bin/python3 cannot import torch ({e})")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_fuzz_gen import DTYPES, Generator  # noqa: E402
from torch_fuzz_lang import (FLOATS, INPLACE, VIEW_OPS, parse_float,  # noqa: E402
                             parse_list, refs, run_torch, sample_step)

torch.set_num_threads(1)

# ===========================================================================
# Intentional differences between strata and PyTorch: the one place.
#  1. flip is a view in strata (negative strides), a copy in PyTorch. For a
#     flip result and every view taken of it ("flip-derived") only dtype,
#     sizes and values are compared, not strides, offset or storage; the
#     generator writes in place neither into a storage a flip-derived view
#     reads nor into a flip-derived view (in PyTorch that writes a copy).
#     `view` of a flip-derived value that strata rejects (negative strides
#     do not merge) while PyTorch views its contiguous copy is class
#     `flip-view`, not failing.
#  2. Float values: PyTorch's assert_close defaults (f32 rtol 1.3e-6 atol
#     1e-5; f64 rtol 1e-7 atol 1e-7) widened per element by 8x PyTorch's own
#     error (|torch - the same program run in float64|): strata and PyTorch
#     round differently after exp/log/tanh/pow/div, and a later subtraction
#     may cancel. Values downstream of a float reduction or matmul whose
#     result depends on the summation order are "order-dependent": a
#     difference beyond the strict tolerance but within 1e-4 (f64: 1e-10)
#     of the value's magnitude is class `float-order` and does not fail.
#  3. Booleans and integers decided by rounded floats (a comparison of
#     exp(x), a cast of tanh(x) to int) can legitimately differ near a
#     threshold: their mismatches are class `fuzzy-discrete`, not failing.
#  4. Error messages are not compared, only whether both raise, at which line.
#  5. Sign of zero and NaN payloads are not compared (assert_close neither).
#  6. An in-place op whose operand reads the written storage through another
#     layout (x.mul_(x[:, ::3])): PyTorch reads elements its loop already
#     wrote (the result depends on its iteration order; PyTorch checks only
#     some such overlaps), strata reads the old version (its writes are
#     functional). Value mismatches of what reads that storage afterwards
#     are class `inplace-alias`, not failing.
# Candidates the lead may declare intentional (--allow NAME): not allowed by
# default, so they are reported.
#  compute-layout: strata's compute results (and clone/to) are contiguous;
#     PyTorch's follow the input's memory layout (TensorIterator), e.g.
#     x.t() * 2 has strides [1, 3] in PyTorch, [2, 1] in strata.
NON_FAILING = {"flip-view", "float-order", "fuzzy-discrete", "inplace-alias"}
CANDIDATES = {"compute-layout"}
TOL = {"f32": (1.3e-6, 1e-5), "f64": (1e-7, 1e-7)}
LOOSE_RTOL = {"f32": 1e-4, "f64": 1e-10}


# ===========================================================================
# The strata runner process.

class Runner:
    """A long-lived strata-fuzz-torch; restarted after a crash, a hang, or
    every `recycle` programs (the DSL keeps compiled programs)."""

    def __init__(self, path, plant=None, threads=1, recycle=400):
        self.path, self.plant, self.threads = path, plant, threads
        self.recycle, self.proc, self.count = recycle, None, 0
        self.restarts = 0

    def start(self):
        cmd = [self.path] + ([f"--plant={self.plant}"] if self.plant else [])
        env = dict(os.environ, STRATA_NUM_THREADS=str(self.threads))
        for attempt in range(10):  # the binary may be being relinked
            try:
                self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE,
                                             stderr=subprocess.DEVNULL, env=env)
                break
            except OSError:
                if attempt == 9:
                    raise
                time.sleep(2)
        self.buf, self.count = b"", 0

    def stop(self):
        if self.proc:
            try:
                self.proc.kill()
            except OSError:
                pass
            self.proc.wait()
            self.proc = None

    def run(self, lines, timeout):
        """('ok', output lines) | ('crash', detail) | ('hang', detail)."""
        if self.proc is None or self.count >= self.recycle:
            self.stop()
            self.start()
        self.count += 1
        try:
            self.proc.stdin.write(("\n".join(lines) + "\nend\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._died("crash")
        out, deadline, fd = [], time.time() + timeout, self.proc.stdout.fileno()
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                line = line.decode(errors="replace")
                if line == "done":
                    return "ok", out
                out.append(line)
            left = deadline - time.time()
            if left <= 0:
                return self._died("hang", out)
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return self._died("crash", out)
                self.buf += chunk

    def _died(self, kind, out=()):
        self.proc.poll()
        code = self.proc.returncode
        self.stop()
        self.restarts += 1
        detail = f"signal {-code}" if code and code < 0 else f"exit {code}"
        return kind, (detail if kind == "crash" else "timeout") + \
            (f" after {len(out)} output lines" if out else "")


def parse_strata(out):
    res = {"error": None, "errclass": None, "evalall": None, "values": [],
           "grads": {}}
    for line in out:
        tag, _, rest = line.partition(" ")
        if tag in ("E", "X"):
            n, _, msg = rest.partition(" ")
            res["error"] = (int(n), msg)
            res["errclass"] = tag
        elif tag == "A":
            res["evalall"] = rest
        elif tag == "V":
            p = rest.split(" ", 8)
            rec = {"dtype": p[1], "sizes": parse_list(p[2]),
                   "strides": parse_list(p[3]), "offset": int(p[4]),
                   "alias": p[5] if p[5] in ("-", "?") else int(p[5]),
                   "rl": p[6]}
            if p[7] == "ERR":
                rec["error"] = p[8] if len(p) > 8 else ""
            else:
                rec["n"] = int(p[7])
                rec["values"] = parse_values(p[1], p[8] if len(p) > 8 else "")
            res["values"].append(rec)
        elif tag == "G":
            p = rest.split(" ", 4)
            i = int(p[0])
            if p[1] == "none":
                res["grads"][i] = "none"
            elif p[1] == "ERR":
                res["grads"][i] = {"error": rest.split(" ", 2)[2]}
            else:
                res["grads"][i] = {"dtype": p[1], "sizes": parse_list(p[2]),
                                   "n": int(p[3]),
                                   "values": parse_values(p[1], p[4] if len(p) > 4 else "")}
    return res


def parse_values(dt, text):
    if not text:
        return []
    items = text.split(",")
    if dt in FLOATS:
        return [parse_float(x) for x in items]
    return [int(x) for x in items]


# ===========================================================================
# Comparison.

def close_floats(dt, a, b, slack, loose):
    """None when strata's `a` matches torch's `b`, else (index, class)."""
    rtol, atol = TOL[dt]
    worst = None
    mag = max([abs(x) for x in b if math.isfinite(x)] + [1.0])
    for k, (x, y) in enumerate(zip(a, b)):
        if math.isnan(y) or math.isnan(x):
            if math.isnan(x) and math.isnan(y):
                continue
            s = slack[k] if slack else 0.0
            if math.isnan(s) or math.isinf(s):
                continue
            return k, "values"
        if math.isinf(y) or math.isinf(x):
            if x == y:
                continue
            s = slack[k] if slack else 0.0
            if math.isnan(s) or math.isinf(s):
                continue
            if loose and math.isinf(y) != math.isinf(x):
                worst = worst or (k, "float-order")
                continue
            return k, "values"
        s = slack[k] if slack else 0.0
        if math.isnan(s) or math.isinf(s):
            continue
        if abs(x - y) <= atol + rtol * abs(y) + 8 * s:
            continue
        if loose and abs(x - y) <= LOOSE_RTOL[dt] * mag + 8 * s:
            worst = worst or (k, "float-order")
            continue
        return k, "values"
    return worst


def shadow_slack(t, s):
    """|torch - shadow| per sampled element, or None."""
    if s is None or t.dtype not in (torch.float32, torch.float64):
        return None
    if tuple(s.shape) != tuple(t.shape) or s.dtype not in (torch.float64,):
        return None
    step = sample_step(t.numel())
    a = t.detach().double().reshape(-1)[::step]
    b = s.detach().reshape(-1)[::step]
    return (a - b).abs().tolist()


def contiguous_strides(sizes):
    out, acc = [], 1
    for v in reversed(sizes):
        out.append(acc)
        acc *= max(v, 1)
    return out[::-1]


def compare(lines, tout, sout, shadow):
    """A list of (class, detail) mismatches; class is 'kind:op(dtypes)'."""
    meta = tout["meta"]
    found = []
    te, se = tout["error"], sout["error"]
    if sout.get("errclass") == "X":
        found.append((f"non-strata-exception:{op_of(lines, se[0])}",
                      f"strata threw a non-strata::Error at line {se[0]}: {se[1]}"))
    if (te is None) != (se is None) or (te and se and te[0] != se[0]):
        if se is None:
            k = te[0]
            vk = len(value_lines(lines[:k]))
            deferred = vk < len(sout["values"]) and "error" in sout["values"][vk]
            kind = "error-deferred" if deferred else "error-torch-raises"
            found.append((f"{kind}:{op_sig(lines, k, tout)}",
                          f"line {k}: PyTorch raises ({te[1]}), strata "
                          + ("only when evaluating it" if deferred else
                             "does not")))
        elif te is None:
            k = se[0]
            ins = refs(lines[k]) if k < len(lines) else []
            kind = "error-strata-raises"
            if op_of(lines, k) == "view" and ins and meta.flip[ins[0]]:
                kind = "flip-view"  # PyTorch views its flip copy
            found.append((f"{kind}:{op_sig(lines, k, tout)}",
                          f"line {k}: strata raises ({se[1]}), PyTorch does not"))
        else:
            found.append((f"error-line:{op_of(lines, te[0])}",
                          f"PyTorch raises at line {te[0]} ({te[1]}), strata at "
                          f"{se[0]} ({se[1]})"))
        return found
    tv, sv = tout["values"], sout["values"]
    if len(tv) != len(sv):
        found.append(("runner:value-count", f"{len(tv)} vs {len(sv)} values"))
        return found
    vline = value_lines(lines)
    shadow_ok = shadow is not None and \
        (shadow["error"] or (None,))[0] == (tout["error"] or (None,))[0] and \
        len(shadow["tensors"]) == len(tout["tensors"])
    any_value_error = False
    for i, (t, s) in enumerate(zip(tv, sv)):
        ln = vline[i]
        sig = op_sig(lines, ln, tout)
        where = f"%{i} (line {ln})"
        if t["rl"] != s.get("rl"):
            what = "requires_grad" if t["rl"][0] != s["rl"][0] else "is_leaf"
            found.append((f"{what.replace('_', '-')}:{sig}",
                          f"{where}: {what} {s['rl']} vs PyTorch {t['rl']} "
                          "(requires_grad, is_leaf)"))
        if "error" in s:
            any_value_error = True
            found.append((f"eval-error:{sig}", f"{where}: strata fails to "
                          f"compute it: {s['error']}"))
            continue
        if t["dtype"] != s["dtype"]:
            found.append((f"dtype:{sig}", f"{where}: dtype {s['dtype']} vs "
                          f"PyTorch {t['dtype']}"))
            continue
        if t["sizes"] != s["sizes"]:
            found.append((f"sizes:{sig}", f"{where}: sizes {s['sizes']} vs "
                          f"PyTorch {t['sizes']}"))
            continue
        if not meta.flip[i]:
            if t["strides"] != s["strides"] and t["n"] > 1:
                op = op_of(lines, ln)
                kind = "strides"
                if op not in VIEW_OPS and op not in INPLACE and op not in \
                        ("reshape", "flatten", "contiguous") and \
                        s["strides"] == contiguous_strides(s["sizes"]):
                    kind = "compute-layout"
                found.append((f"{kind}:{op if kind == 'compute-layout' else sig}",
                              f"{where}: strides "
                              f"{s['strides']} vs PyTorch {t['strides']}"))
            if t["offset"] != s["offset"] and t["n"] > 0:
                found.append((f"offset:{sig}", f"{where}: storage_offset "
                              f"{s['offset']} vs PyTorch {t['offset']}"))
        bad = compare_values(t, s, meta.order[i],
                             shadow_slack(tout["tensors"][i],
                                          shadow["tensors"][i]) if shadow_ok else None)
        if bad:
            k, cls = bad
            if meta.alias[i] and cls == "values":
                cls = "inplace-alias"
            elif meta.fuzzy[i] and cls == "values":
                cls = "fuzzy-discrete"
            found.append((f"{cls}:{sig}", f"{where}: element {k * sample_step(t['n'])}"
                          f": strata {s['values'][k]!r} vs PyTorch {t['values'][k]!r}"))
    # Storage sharing, over values that are neither flip-derived nor empty.
    keep = [i for i in range(len(tv)) if not meta.flip[i]
            and tv[i]["alias"] != "-" and sv[i]["alias"] not in ("-", "?")]
    for side in (tv, sv):
        first = {}
        for i in keep:
            side[i]["share"] = first.setdefault(side[i]["alias"], i)
    for i in keep:
        if tv[i]["share"] != sv[i]["share"]:
            ln = vline[i]
            found.append((f"storage:{op_sig(lines, ln, tout)}",
                          f"%{i} (line {ln}): strata shares storage with "
                          f"%{sv[i]['share']}, PyTorch with %{tv[i]['share']}"))
            break
    if sout["evalall"] and not any_value_error:
        found.append(("eval-all-error", f"strata::eval of all values throws "
                      f"({sout['evalall']}) but each value computes alone"))
    for i, g in tout["grads"].items():
        s = sout["grads"].get(i)
        where = f"grad of %{i}"
        if s is None:
            found.append(("grad-missing", f"{where}: not reported"))
        elif (g == "none") != (s == "none"):
            found.append(("grad-none", f"{where}: strata "
                          f"{'none' if s == 'none' else 'defined'}, PyTorch "
                          f"{'none' if g == 'none' else 'defined'}"))
        elif g == "none":
            continue
        elif "error" in s:
            found.append(("grad-error", f"{where}: {s['error']}"))
        elif (g["dtype"], g["sizes"]) != (s["dtype"], s["sizes"]):
            found.append(("grad-layout", f"{where}: {s['dtype']}{s['sizes']}"
                          f" vs PyTorch {g['dtype']}{g['sizes']}"))
        else:
            slack = None
            if shadow_ok and shadow["tensors"][i].grad is not None:
                slack = shadow_slack(tout["tensors"][i].grad,
                                     shadow["tensors"][i].grad)
            bad = compare_values(g, s, any(meta.order), slack)
            if bad:
                k, cls = bad
                found.append(("grad-values" if cls != "float-order" else
                              "float-order:grad",
                              f"{where}: element {k}: strata {s['values'][k]!r}"
                              f" vs PyTorch {g['values'][k]!r}"))
    return found


def compare_values(t, s, loose, slack):
    if t["n"] != s["n"] or len(t["values"]) != len(s["values"]):
        return 0, "values"
    if t["dtype"] in FLOATS:
        return close_floats(t["dtype"], s["values"], t["values"], slack, loose)
    for k, (x, y) in enumerate(zip(s["values"], t["values"])):
        if x != y:
            return k, "values"
    return None


def value_lines(lines):
    return [n for n, l in enumerate(lines) if not l.startswith("backward")]


def op_of(lines, n):
    if n is None or n >= len(lines):
        return "?"
    w = lines[n].split(" ")
    return w[0] if w[0] == "backward" else w[2]


def op_sig(lines, n, tout):
    """'op(operands)', e.g. 'add(b8,b8)', 'sum(0d-f32)', 'mul(f32,scalar-f-big)':
    the dtypes of its tensor operands (0d-/empty- when that is what they
    are, for reductions), its scalars' kinds (-wide: an integer outside
    int32, -big: beyond 2^53 or a float >= 1e16, -nonfinite)."""
    w = lines[n].split(" ")
    if w[0] == "backward":
        return "backward"
    op, dts = w[2], []
    recs = tout["values"]
    for tok in w[3:]:
        if tok.startswith("%"):
            j = int(tok[1:])
            r = recs[j] if j < len(recs) else None
            d = r["dtype"] if r else "?"
            if r and op in ("sum", "mean", "amax", "amin", "matmul"):
                d = ("0d-" if not r["sizes"] else
                     "empty-" if r["n"] == 0 else "") + d
            dts.append(d)
        elif tok.startswith("s:"):
            dts.append("scalar-" + tok[2] + scalar_tag(tok))
    if op in ("input", "full", "zeros", "ones", "arange", "to"):
        dts.append(w[3] if op != "to" else w[4])
    return f"{op}({','.join(dts)})"


def scalar_tag(tok):
    from torch_fuzz_lang import parse_scalar
    v = parse_scalar(tok)
    if isinstance(v, bool):
        return ""
    if isinstance(v, int):
        return "-big" if abs(v) > 2**53 else "-wide" if not \
            -2**31 <= v < 2**31 else ""
    if not math.isfinite(v):
        return "-nonfinite"
    return "-big" if abs(v) >= 1e16 else ""


# ===========================================================================
# Running, minimizing, reporting.

def format_torch(out):
    """PyTorch's output in the runner's format (for reports)."""
    lines = []
    if out["error"]:
        lines.append(f"E {out['error'][0]} {out['error'][1]}")
    for i, r in enumerate(out["values"]):
        lines.append(f"V {i} {r['dtype']} {fmt_list(r['sizes'])} "
                     f"{fmt_list(r['strides'])} {r['offset']} {r['alias']} "
                     f"{r['rl']} {r['n']} {fmt_values(r)}")
    for i, g in out["grads"].items():
        lines.append(f"G {i} none" if g == "none" else
                     f"G {i} {g['dtype']} {fmt_list(g['sizes'])} {g['n']} "
                     f"{fmt_values(g)}")
    return lines


def fmt_list(xs):
    return "[" + ",".join(str(x) for x in xs) + "]"


def fmt_values(r):
    vals = r["values"][:64]
    text = ",".join(repr(v) if isinstance(v, float) else str(v) for v in vals)
    return text + (",..." if len(r["values"]) > 64 else "")


def readable(out):
    """strata's lines with hex floats shown as decimals (for reports)."""
    res = []
    for line in out:
        if line.startswith(("V ", "G ")) and " ERR " not in line:
            head, _, vals = line.rpartition(" ")
            items = vals.split(",")
            if any(x.startswith(("0x", "-0x")) for x in items):
                items = [repr(parse_float(x)) if "0x" in x or x in
                         ("inf", "-inf", "nan") else x for x in items]
                more = len(items) > 64
                vals = ",".join(items[:64]) + (",..." if more else "")
            line = head + " " + vals
        res.append(line)
    return res


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.allow = set(filter(None, (args.allow or "").split(",")))
        self.runner = Runner(args.runner, args.plant, args.threads)
        self.classes = {}      # class -> [count, first seed, report text]
        self.per_dtype = {}
        self.programs = 0
        self.runs = 0

    def plant_run(self):
        """--plant with --expect-mismatch: runs each program through a clean
        and a planted runner; caught iff some program shows a mismatch of
        the expected kind with the plant and none without it (so a real
        strata bug of that kind cannot pass the test for the plant)."""
        a = self.args
        clean = Runner(a.runner, None, a.threads)
        caught = []
        for i in range(a.programs or 30):
            lines = Generator(a.seed + i, a.dtypes, large=0).program()
            if not lines:
                continue
            self.programs += 1
            planted, _, _ = self.check(lines)
            self.runner, clean = clean, self.runner
            unplanted, _, _ = self.check(lines)
            self.runner, clean = clean, self.runner
            base = {c for c, _ in unplanted}
            new = [(c, d) for c, d in planted if c not in base and
                   c.startswith(a.expect_mismatch)]
            if new:
                caught.append((a.seed + i, new[0]))
        clean.stop()
        self.runner.stop()
        print(f"planted '{a.plant}': {len(caught)} of {self.programs} "
              f"programs show a new '{a.expect_mismatch}' mismatch")
        for seed, (c, d) in caught[:3]:
            print(f"  seed {seed}: {c}: {d}")
        return 0 if caught else 1

    def timeout(self, lines):
        big = any("10000000" in l for l in lines)
        return self.args.timeout * (4 if big else 1)

    def check(self, lines):
        """All mismatches of one program: [(class, detail)], strata output."""
        self.runs += 1
        tout = run_torch(lines)
        shadow = None
        if any(" f32 " in l or "f32" in l.split(" ")[-1:] for l in lines):
            try:
                shadow = run_torch(lines, shadow=True)
            except Exception:  # the shadow is only a tolerance aid
                shadow = None
        status, out = self.runner.run(lines, self.timeout(lines))
        if status != "ok":
            last = lines[-1].split(" ")
            op = last[0] if last[0] == "backward" else last[2]
            return [(f"{status}:{op}", f"runner {status} ({out})")], \
                [f"<{status}: {out}>"], tout
        sout = parse_strata(out)
        found = compare(lines, tout, sout, shadow)
        found = [(c, d) for c, d in found
                 if c.split(":")[0] not in self.allow]
        return found, out, tout

    def classify(self, lines):
        """Mismatch classes of a program, each attributed to the op that
        first shows it: the last line of the shortest failing prefix (the
        program is eager in PyTorch, so a wrong value becomes visible right
        after the line that makes it). Returns ({class: detail}, strata
        output, torch output) of the program as given."""
        found, out, tout = self.check(lines)
        classes = {c: (d, None) for c, d in found if kind_of(c) in NON_FAILING}
        failing = [(c, d) for c, d in found if kind_of(c) not in NON_FAILING]
        if not failing:
            return classes, out, tout
        if all(kind_of(c).startswith("grad") for c, _ in failing):
            # Gradients show only after backward(): name the class by the ops
            # of the minimized program instead.
            for c, d in failing:
                small = self.minimize(lines, c, raw=True)
                ops = sorted({l.split(" ")[2] for l in small
                              if not l.startswith("backward")} -
                             {"input", "sum"}) or ["sum"]
                classes.setdefault(f"{c}:{'+'.join(ops)}", (d, small))
            return classes, out, tout
        lo, hi, best = 1, len(lines), (failing, tout)
        while lo < hi:
            mid = (lo + hi) // 2
            f, _, t = self.check(lines[:mid])
            f = [(c, d) for c, d in f if kind_of(c) not in NON_FAILING]
            if f:
                hi, best = mid, (f, t)
            else:
                lo = mid + 1
        f, t = best
        prefix = lines[:hi]
        sig = op_sig(prefix, hi - 1, t) if not prefix[-1].startswith("backward") \
            else "backward"
        for c, d in f:
            k = kind_of(c)
            if not k.startswith("grad"):
                key = sig.split("(")[0] if k == "compute-layout" else sig
                classes.setdefault(f"{k}:{key}", (d, None))
        return classes, out, tout

    def minimize(self, lines, cls, budget=40, raw=False):
        """Drops lines (with what depends on them) while `cls` persists
        (raw: as check() names it, else as classify() does)."""
        best = list(lines)
        changed = True
        while changed and budget > 0:
            changed = False
            for n in range(len(best) - 1, -1, -1):
                if budget <= 0 or n >= len(best):
                    break
                cand = drop_line(best, n)
                if not cand:
                    continue
                budget -= 1
                try:
                    if raw:
                        classes = dict(self.check(cand)[0])
                    else:
                        classes = self.classify(cand)[0]
                except Exception:
                    continue
                if cls in classes:
                    best, changed = cand, True
        return best

    def record(self, seed, lines, classes):
        for cls, (detail, small) in classes.items():
            entry = self.classes.get(cls)
            if entry:
                entry[0] += 1
                continue
            if cls.startswith("driver-error"):
                text = [f"### {cls}", f"seed {seed}: {detail}", "", "program:",
                        *["    " + l for l in lines], ""]
                self.classes[cls] = [1, seed, "\n".join(text)]
                print("\n".join(text), flush=True)
                continue
            if small is None:
                small = lines if self.args.no_minimize else \
                    self.minimize(lines, cls)
            _, out2, tout2 = self.check(small)
            text = [f"### {cls}", f"seed {seed}: {detail}", "", "program:",
                    *["    " + l for l in small], "strata:",
                    *["    " + l for l in readable(out2)], "PyTorch:",
                    *["    " + l for l in format_torch(tout2)], ""]
            self.classes[cls] = [1, seed, "\n".join(text)]
            if not self.args.quiet:
                print("\n".join(text), flush=True)

    def run(self):
        a = self.args
        start = time.time()
        i = 0
        while (a.programs is None or i < a.programs) and \
                (a.seconds is None or time.time() - start < a.seconds):
            seed = a.seed + i
            i += 1
            g = Generator(seed, a.dtypes, large=a.large)
            lines = g.program()
            if not lines:
                continue
            self.programs += 1
            self.per_dtype[g.primary] = self.per_dtype.get(g.primary, 0) + 1
            try:
                classes, out, tout = self.classify(lines)
            except Exception as e:  # a fuzzer bug: report it, go on
                import traceback
                classes = {f"driver-error:{type(e).__name__}":
                           (traceback.format_exc().strip().split("\n")[-1], None)}
                out = [traceback.format_exc()]
            if a.verbose:
                print(f"-- seed {seed}", *lines, sep="\n")
                print(*readable(out), sep="\n")
            if classes:
                self.record(seed, lines, classes)
        self.elapsed = time.time() - start
        self.runner.stop()

    def summary(self):
        failing = {c: v for c, v in self.classes.items()
                   if kind_of(c) not in NON_FAILING}
        out = [f"strata-fuzz-torch: {self.programs} programs in "
               f"{self.elapsed:.0f} s (seed {self.args.seed}; "
               f"{self.runs - self.programs} minimization runs; "
               f"{self.runner.restarts} runner restarts)",
               "programs per dtype: " + ", ".join(
                   f"{k} {v}" for k, v in sorted(self.per_dtype.items())),
               f"mismatch classes: {len(failing)} failing, "
               f"{len(self.classes) - len(failing)} informational"]
        for c, (n, seed, _) in sorted(self.classes.items()):
            tag = "" if c in failing else " (informational)"
            out.append(f"  {n:5d}  {c}  (first: seed {seed}){tag}")
        return "\n".join(out), failing


def kind_of(cls):
    return cls.split(":")[0]


def drop_line(lines, n):
    """`lines` without line n and every line that reads what it defines,
    values renumbered; None when nothing would be left to compare."""
    vidx, removed, out = 0, set(), []
    mapping = {}
    for k, line in enumerate(lines):
        defines = not line.startswith("backward")
        if k == n or any(j in removed for j in refs(line)):
            if defines:
                removed.add(vidx)
                vidx += 1
            continue
        if defines:
            mapping[vidx] = len(mapping)
            vidx += 1
        out.append(line)
    if not mapping:
        return None
    res = []
    for line in out:
        w = line.split(" ")
        for k, tok in enumerate(w):
            if tok.startswith("%"):
                w[k] = f"%{mapping[int(tok[1:])]}"
        res.append(" ".join(w))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--runner", default=os.path.join(
        here, "../../build/bin/strata-fuzz-torch"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--programs", type=int)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--dtypes", default=",".join(DTYPES),
                    help="primary dtypes of the programs (comma-separated)")
    ap.add_argument("--plant", help="runner's planted defect (TorchFuzz.cpp)")
    ap.add_argument("--expect-mismatch", metavar="CLASS_PREFIX",
                    help="exit 0 iff a mismatch of this kind is reported")
    ap.add_argument("--allow", help="candidate differences to treat as "
                    "intentional: " + ",".join(sorted(CANDIDATES)))
    ap.add_argument("--large", type=float, default=0.005,
                    help="share of programs reducing 10^7 elements")
    ap.add_argument("--threads", type=int, default=1,
                    help="STRATA_NUM_THREADS of the runner")
    ap.add_argument("--timeout", type=float, default=90,
                    help="seconds a program may take in strata (x4 for the "
                    "10^7-element ones) before it counts as a hang")
    ap.add_argument("--report", help="write every class's report here")
    ap.add_argument("--replay", help="check the programs of this file "
                    "(separated by lines 'end') instead of generating")
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    a.dtypes = [d for d in a.dtypes.split(",") if d]
    if a.programs is None and a.seconds is None:
        a.programs = 100
    if not os.access(a.runner, os.X_OK):
        print(f"error: runner {a.runner} not found (build strata-fuzz-torch)")
        return 2
    fz = Fuzzer(a)
    if a.replay:
        progs = open(a.replay).read().split("\nend\n")
        for k, text in enumerate(progs):
            lines = [l for l in text.strip().split("\n")
                     if l and not l.startswith("#") and l != "end"]
            if not lines:
                continue
            found, out, tout = fz.classify(lines)
            print(f"-- program {k}", *lines, "strata:", *readable(out),
                  "PyTorch:", *format_torch(tout), sep="\n")
            for c, (d, _) in found.items():
                print(f"MISMATCH {c}: {d}")
        fz.runner.stop()
        return 0
    if a.expect_mismatch:
        return fz.plant_run()
    fz.run()
    text, failing = fz.summary()
    print(text)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text + "\n\n")
            for c, (_, _, rep) in sorted(fz.classes.items()):
                f.write(rep + "\n")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
