#!/usr/bin/env python3
"""Issue 17's first table, rerun: what a user does, strata against PyTorch.

Usage: python3 benchmarks/issue17_table.py [BUILD_DIR]   (default: build)

Each row runs in a fresh process with an empty disk cache
(STRATA_CACHE_DIR), so every row pays its own compiles:
  - pending `x.add_(1)` (then one read), n = 1,000 / 5,000 / 20,000, and
    `eval()` of n small outputs, n = 1,000 / 3,000, and backward of an
    n-step chain, n = 30 / 300 / 1,000: strata-bench-linear --sizes, which
    runs PyTorch eager (/usr/bin/python3) on the same workloads;
  - an MLP step over 40 distinct batch sizes: strata-bench-values --shapes
    40, and benchmarks/mlp_shapes_torch.py;
  - a learning-rate schedule and mini-batches by `narrow` at random
    offsets, 300 steps: strata-bench-values (compiles after the first
    step, RSS growth);
  - memory per cached prepared program: strata-bench-values --memory 1000;
  - the first evaluation in a fresh process: strata-bench-first-eval 9.
Every workload checks its values (the benchmarks exit non-zero on a wrong
value). Prints the table as markdown on stdout.
"""
import os
import re
import subprocess
import sys
import tempfile


def run(cmd, env_extra=None):
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="strata-issue17-") as cache:
        env["STRATA_CACHE_DIR"] = cache
        env.update(env_extra or {})
        out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    if out.returncode != 0:
        sys.exit("issue17_table: %s failed (%d):\n%s" %
                 (" ".join(cmd), out.returncode, out.stdout))
    return out.stdout


def linear_rows(bin_dir, workload, sizes):
    """{n: (strata wall s, PyTorch wall s)} from strata-bench-linear."""
    out = run([os.path.join(bin_dir, "strata-bench-linear"), "--only",
               workload, "--sizes", ",".join(str(n) for n in sizes)])
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 9 and cells[0] == workload:
            rows[int(cells[1])] = (float(cells[2]), float(cells[7]))
    return rows


def fmt_s(s):
    return "%.3f s" % s if s >= 0.01 else "%.1f ms" % (s * 1e3)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    bin_dir = os.path.join(build, "bin")
    src = os.path.dirname(os.path.abspath(__file__))
    table = []

    def linear(what, workload, sizes):
        rows = linear_rows(bin_dir, workload, sizes)
        table.append((what, " / ".join(fmt_s(rows[n][0]) for n in sizes),
                      " / ".join(fmt_s(rows[n][1]) for n in sizes)))

    linear("1,000 / 5,000 / 20,000 pending `x.add_(1)`, then one read",
           "add_", [1000, 5000, 20000])
    linear("`eval()` of 1,000 / 3,000 small independent outputs", "eval",
           [1000, 3000])
    linear("backward of an n-step chain, n = 30 / 300 / 1000", "backward",
           [30, 300, 1000])

    shapes = run([os.path.join(bin_dir, "strata-bench-values"), "--shapes",
                  "40"], {"STRATA_NUM_THREADS": "1"})
    first = re.search(r"\| first \| [^|]+\| (\d+) \| (\d+) \(([\d.]+)\) \| "
                      r"\d+ \| ([\d.]+) \| (\w+) \|", shapes)
    torch_shapes = subprocess.run(
        ["/usr/bin/python3", os.path.join(src, "mlp_shapes_torch.py")],
        stdout=subprocess.PIPE, text=True).stdout
    torch_ms = re.findall(r"^0 median ms ([\d.]+)", torch_shapes, re.M)
    table.append((
        "MLP fwd+bwd over 40 distinct batch sizes, first pass",
        "%s ms per new size (median); %s programs prepared, %s LLVM "
        "compiles (%s ms)" % (first.group(4), first.group(1),
                              first.group(2), first.group(3)),
        "%.3f ms per step" % float(torch_ms[0]) if torch_ms else "-"))

    values = run([os.path.join(bin_dir, "strata-bench-values")])
    for key, what in (("lr schedule", "a learning-rate schedule (new "
                       "scalar every step), 300 steps"),
                      ("random offsets", "mini-batches by `narrow` at random"
                       " offsets, 300 steps")):
        line = next(l for l in values.splitlines() if key in l)
        cells = [c.strip() for c in line.strip("|").split("|")]
        table.append((what, "%s compiles after the first step, RSS %s MB "
                      "after it, %s µs a step" % (cells[3], cells[5],
                                                 cells[4]), "-"))

    memory = run([os.path.join(bin_dir, "strata-bench-values"), "--memory",
                  "1000"])
    held = re.search(r"heap \+([\d.]+) KB per program \| RSS \+([\d.]+) KB",
                     memory)
    table.append(("memory per cached prepared program",
                  "%s KB heap, %s KB RSS" % (held.group(1), held.group(2)),
                  "-"))

    first_eval = run([os.path.join(bin_dir, "strata-bench-first-eval"),
                      "9"])
    med = re.search(r"median ([\d.]+) ms over \d+ processes \(min ([\d.]+)",
                    first_eval)
    cpu = re.search(r"its CPU time: median ([\d.]+) ms", first_eval)
    table.append(("first evaluation in a fresh process (one kernel, cold "
                  "disk cache)", "%s ms median wall (min %s), %s ms CPU" %
                  (med.group(1), med.group(2), cpu.group(1)), "-"))

    print("| what a user does | strata | PyTorch eager |")
    print("|---|---|---|")
    for row in table:
        print("| %s | %s | %s |" % row)


if __name__ == "__main__":
    main()
