#!/usr/bin/env python3
"""strata-launch's contract (ctest distributed-launcher).

    test_launch.py STRATA_LAUNCH

1. Every rank gets torchrun's environment and its output lines come back
   prefixed with "[rank K] "; exit status 0.
2. A rank exiting with 3 ends the others (one of them ignores SIGTERM, so
   SIGKILL after the 1 s grace period) and the launcher exits with 3 within
   10 s, instead of waiting for their 60 s sleep.
3. A rank ended before it started its program dies of SIGTERM.
4. --name=value, refused bad values, NUL bytes forwarded.
"""
import subprocess
import sys
import time


def run(args, limit):
    start = time.monotonic()
    p = subprocess.run(args, capture_output=True, text=True, timeout=limit)
    return p, time.monotonic() - start


def main(launch):
    problems = []
    script = ('echo "RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE '
              'LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE MASTER_ADDR=$MASTER_ADDR '
              'port=${MASTER_PORT:+set}"; echo "to stderr" >&2')
    p, _ = run([launch, "--nproc-per-node", "3", "sh", "-c", script], 30)
    if p.returncode != 0:
        problems.append(f"all ranks succeeded, but exit status {p.returncode}")
    for r in range(3):
        want = (f"[rank {r}] RANK={r} LOCAL_RANK={r} WORLD_SIZE=3 "
                f"LOCAL_WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 port=set")
        if want not in p.stdout:
            problems.append(f"stdout lacks {want!r}")
        if f"[rank {r}] to stderr" not in p.stderr:
            problems.append(f"stderr lacks rank {r}'s prefixed line")

    script = ('if [ "$RANK" = 1 ]; then echo "rank one fails"; exit 3; fi; '
              'if [ "$RANK" = 2 ]; then trap "" TERM; fi; sleep 60')
    p, took = run([launch, "--nproc-per-node", "3", "--grace-seconds", "1",
                   "sh", "-c", script], 30)
    if p.returncode != 3:
        problems.append(f"a rank exited with 3, the launcher with "
                        f"{p.returncode}")
    if took > 10:
        problems.append(f"the launcher took {took:.1f} s to end the ranks")
    if "[rank 1] rank one fails" not in p.stdout:
        problems.append("the failing rank's output is missing")
    if "rank 1 exited with status 3" not in p.stderr:
        problems.append("the launcher did not say which rank failed")
    print(p.stdout + p.stderr)

    # 3. A rank the launcher ends before it runs its program dies of the
    # SIGTERM (it used to live until SIGKILL, 5 s later, in half the runs).
    for attempt in range(5):
        p, took = run([launch, "--nproc-per-node", "4", "sh", "-c",
                       'if [ "$RANK" = 0 ]; then exit 7; fi; sleep 20'], 30)
        if p.returncode != 7 or took > 3:
            problems.append(f"rank 0 failed at once; the launcher ended "
                            f"with {p.returncode} after {took:.1f} s")
            break

    # 4. torchrun's --name=value; bad values refused with a reason; bytes
    # (a NUL) forwarded as they are.
    p, _ = run([launch, "--nproc-per-node=2", "sh", "-c",
                'printf "a\\000b\\n"'], 30)
    if p.returncode != 0 or p.stdout.count("[rank 0] a\0b\n") != 1:
        problems.append(f"--nproc-per-node=2 or a NUL byte: {p.stdout!r}")
    for bad in (["--grace-seconds", "-3"], ["--nproc-per-node", "x"]):
        p, _ = run([launch] + bad + ["true"], 30)
        if p.returncode != 2 or "takes a whole number" not in p.stderr:
            problems.append(f"{bad} was not refused: {p.returncode} "
                            f"{p.stderr!r}")
    for m in problems:
        print("test_launch.py:", m)
    print(f"test_launch.py: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
