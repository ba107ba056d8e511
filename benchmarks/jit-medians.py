#!/usr/bin/env python3
"""Runs strata-bench-jit N times and prints, per workload, the median (and
the list) of its "% of baseline" and "% of baseline, paired" columns, and
the median GB/s of each baseline: the figures docs/performance.md quotes.

    python3 benchmarks/jit-medians.py [N=20] [BUILD_DIR=build] [--only a,g]
"""
import re
import statistics
import subprocess
import sys


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--only")]
    only = [a for a in sys.argv[1:] if a.startswith("--only")]
    n = int(args[0]) if args else 20
    build = args[1] if len(args) > 1 else "build"
    cmd = [build + "/bin/strata-bench-jit", "--reps", "7"]
    if only:
        cmd += ["--only", only[0].split("=", 1)[-1]]
    rows, base = {}, {}
    for _ in range(n):
        out = subprocess.run(cmd, capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            m = re.match(r"\| \((\w+)\) `.*?` \| \d+ \| ([\d.]+) \| (\d+)% "
                         r"\| (\d+)% \|", line)
            if m:
                rows.setdefault(m.group(1), []).append(
                    (float(m.group(2)), int(m.group(3)), int(m.group(4))))
            m = re.match(r"\| (copy|add|triad|read-sum) `.*?` \| ([\d.]+) \|",
                         line)
            if m:
                base.setdefault(m.group(1), []).append(float(m.group(2)))
    for k, v in sorted(base.items()):
        print("baseline %-8s GB/s median %.1f (%.1f-%.1f)"
              % (k, statistics.median(v), min(v), max(v)))
    for k, v in sorted(rows.items()):
        table = [x[1] for x in v]
        paired = [x[2] for x in v]
        print("(%s) GB/s %.1f; %% of baseline median %g %s; paired median %g %s"
              % (k, statistics.median(x[0] for x in v),
                 statistics.median(table), table,
                 statistics.median(paired), paired))


if __name__ == "__main__":
    main()
