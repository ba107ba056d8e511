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
The comparison, and the one list of intentional differences, is
torch_fuzz_compare.py; the runner process, torch_fuzz_runner.py.

  /usr/bin/python3 tests/fuzz/torch_fuzz.py --runner build/bin/strata-fuzz-torch
      [--seed K] [--programs N] [--seconds S] [--dtypes f32,i64,...]
      [--plant KIND --expect-mismatch] [--report FILE] [--replay FILE]
      [--allow CLASS,...] [--threads T] [--autograd P] [--twice]

Exit status: 0 no failing mismatch, 1 failing mismatches (with
--expect-mismatch: 0 iff the planted defect was reported), 77 when torch
cannot be imported (ctest SKIP).
"""
import argparse
import os
import re
import sys
import time
import warnings

try:
    import torch
except Exception as e:  # the ctest SKIP path
    print(f"SKIPPED: /usr/bin/python3 cannot import torch ({e})")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_fuzz_compare import (CANDIDATES, GRAD_KINDS,  # noqa: E402
                                NON_FAILING, compare, op_sig)
from torch_fuzz_gen import DTYPES, Generator  # noqa: E402
from torch_fuzz_lang import (is_statement, n_defs, op_name,  # noqa: E402
                             parse_float, refs, run_torch)
from torch_fuzz_runner import Runner, parse_strata  # noqa: E402

torch.set_num_threads(1)
warnings.filterwarnings("ignore")  # PyTorch's UserWarnings (grad layouts...)


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
    for i, r in enumerate(out["values"]):
        lines.append(f"M {i} {r['version']} {r['grad_fn']}")
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
        self.runner = Runner(args.runner, args.plant, args.threads,
                             twice=args.twice)
        self.classes = {}      # class -> [count, first seed, report text]
        self.per_dtype = {}
        self.per_op = {}
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
            lines = Generator(a.seed + i, a.dtypes, large=0,
                              autograd=a.autograd).program()
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
        # float32 values come from f32 inputs and from promotion (int * 0.5).
        if any(v.dtype == torch.float32 for v in tout["tensors"]):
            try:
                shadow = run_torch(lines, shadow=True)
            except Exception:  # the shadow is only a tolerance aid
                shadow = None
        status, out = self.runner.run(lines, self.timeout(lines))
        if status != "ok":
            op = op_name(lines[-1])
            return [(f"{status}:{op}", f"runner {status} ({out})")], \
                [f"<{status}: {out}>"], tout
        sout = parse_strata(out)
        found = compare(lines, tout, sout, shadow)
        found = [(c, d) for c, d in found
                 if c.split(":")[0] not in self.allow and c not in self.allow]
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
        if all(kind_of(c) in GRAD_KINDS for c, _ in failing):
            # Gradients show only after backward(): name the class by the ops
            # of the minimized program instead.
            for c, d in failing:
                small = self.minimize(lines, c, raw=True)
                ops = sorted({l.split(" ")[2] for l in small
                              if not is_statement(l)} -
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
        sig = op_sig(prefix, hi - 1, t)
        for c, d in f:
            k = kind_of(c)
            if k not in GRAD_KINDS:
                key = sig.split("(")[0] if k == "compute-layout" else sig
                classes.setdefault(f"{k}:{key}", (d, None))
        for c, d in failing:  # gradients, not hidden by the classes above
            if kind_of(c) in GRAD_KINDS:
                classes.setdefault(c, (d, lines))
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
            g = Generator(seed, a.dtypes, large=a.large, autograd=a.autograd)
            try:
                lines = g.program()
            except Exception as e:  # a generator bug: report it, go on
                self.record(seed, [], {f"driver-error:gen-{type(e).__name__}":
                                       (str(e).split("\n")[0], None)})
                continue
            if not lines:
                continue
            self.programs += 1
            key = ("autograd-" if g.autograd else "") + g.primary
            self.per_dtype[key] = self.per_dtype.get(key, 0) + 1
            for line in lines:
                op = op_of_line(line)
                self.per_op[op] = self.per_op.get(op, 0) + 1
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
               "lines per op: " + ", ".join(
                   f"{k} {v}" for k, v in sorted(self.per_op.items())),
               f"mismatch classes: {len(failing)} failing, "
               f"{len(self.classes) - len(failing)} informational"]
        for c, (n, seed, _) in sorted(self.classes.items()):
            tag = "" if c in failing else " (informational)"
            out.append(f"  {n:5d}  {c}  (first: seed {seed}){tag}")
        return "\n".join(out), failing


def op_of_line(line):
    return op_name(line)


def kind_of(cls):
    return cls.split(":")[0]


def drop_line(lines, n):
    """`lines` without line n and every line that reads what it defines,
    values renumbered; None when nothing would be left to compare."""
    vidx, removed, out = 0, set(), []
    mapping = {}
    for k, line in enumerate(lines):
        defs = n_defs(line)
        if k == n or any(j in removed for j in refs(line)):
            removed.update(range(vidx, vidx + defs))
            vidx += defs
            continue
        for v in range(vidx, vidx + defs):
            mapping[v] = len(mapping)
        vidx += defs
        out.append(line)
    if not mapping:
        return None
    return [re.sub(r"%(\d+)", lambda m: f"%{mapping[int(m.group(1))]}", line)
            for line in out]


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
                    "intentional: " + ",".join(sorted(CANDIDATES)) +
                    "; or any kind (grad-fn) or whole class "
                    "(error-torch-raises:grad()) still open")
    ap.add_argument("--large", type=float, default=0.005,
                    help="share of programs reducing 10^7 elements")
    ap.add_argument("--autograd", type=float, default=0.0,
                    help="share of autograd programs (views, in-place "
                    "writes, detach, no_grad, retain_grad, grad, updates)")
    ap.add_argument("--threads", type=int, default=1,
                    help="STRATA_NUM_THREADS of the runner")
    ap.add_argument("--timeout", type=float, default=90,
                    help="seconds a program may take in strata (x4 for the "
                    "10^7-element ones) before it counts as a hang")
    ap.add_argument("--twice", action="store_true",
                    help="the runner runs each program twice and reports "
                    "the second run: every backward then finds its "
                    "gradient template (docs/design.md)")
    ap.add_argument("--report", help="write every class's report here")
    ap.add_argument("--replay", help="check the programs of this file "
                    "(separated by lines 'end') instead of generating; exit 1 "
                    "on a failing mismatch")
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
    # More classes to allow, from the environment (ctest adds them there).
    fz.allow |= set(filter(None, os.environ.get(
        "STRATA_TORCH_FUZZ_ALLOW", "").split(",")))
    if a.replay:
        progs = open(a.replay).read().split("\nend\n")
        failed = 0
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
                failed += kind_of(c) not in NON_FAILING
        fz.runner.stop()
        print(f"replayed {sum(1 for p in progs if p.strip())} programs: "
              f"{failed} failing mismatches")
        return 1 if failed else 0
    if a.expect_mismatch:
        return fz.plant_run()
    fz.run()
    text, failing = fz.summary()
    if a.report:
        with open(a.report, "w") as f:
            f.write(text + "\n\n")
            for c, (_, _, rep) in sorted(fz.classes.items()):
                f.write(rep + "\n")
    print(text, flush=True)
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
