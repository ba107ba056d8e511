#!/usr/bin/env python3
"""One fault case of strata_distributed (ctest distributed-fault-MODE).

    run_fault.py FAULT_BIN MODE

Starts the ranks of MODE directly (not through strata-launch, which would
end the others as soon as one fails), with a 6 s timeout (joining included:
under a load of 10 on 2 cores a rank took over 3 s to start and join), and
checks that every rank that should survive exits with status 1 within 40 s,
printing a
located strata::Error containing the expected text. A rank left running
(the hanging one) is killed afterwards. Some cases give a rank its own
environment (RANK_ENV), and the file-store ones first run an earlier
group in the same directory (EARLIER_RUN).
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

TIMEOUT_MS = 6000
LIMIT_S = 40

# mode: (world size, ranks started, surviving ranks, expected text)
CASES = {
    "exit-early": (2, [0, 1], [0], "lost its connection to another rank"),
    "crash": (2, [0, 1], [0], "lost its connection to another rank"),
    "hang": (2, [0, 1], [0], f"timed out after {TIMEOUT_MS} ms waiting for "
             "the other ranks; rank 1 has not reached this all_reduce"),
    "shape": (2, [0, 1], [0, 1], "all_reduce: the ranks disagree: rank 0 "
              "called all_reduce of a tensor of shape [3]"),
    "dtype": (2, [0, 1], [0, 1], "and dtype torch.float64"),
    "sizes": (2, [0, 1], [0, 1], "the ranks disagree: rank 0 called "
              "all_reduce of a tensor of shape [1000] and dtype torch.float32, "
              "op sum, rank 1 called all_reduce of a tensor of shape [1200]"),
    "order": (2, [0, 1], [0, 1], "the ranks disagree: rank 0 called "
              "all_reduce of a tensor of shape [8]"),
    "missing": (3, [0, 1], [0, 1], "waiting for the other ranks to join: "
                "rank 2 has not joined"),
    "no-master": (2, [1], [1], "could not reach the master's store"),
    # The master's port held by another process: rank 0 says so at once.
    "port-in-use": (1, [0], [0], "rank 0 could not serve the store at "
                    "127.0.0.1:PORT: the port is in use by another process"),
    "ddp-shapes": (2, [0, 1], [0, 1], "DistributedDataParallel: rank 1's "
                   "module has parameters of other number, shapes or dtypes "
                   "than rank 0's (2 and 2 parameters; parameter 0 is "
                   "torch.float32 [2, 2] on rank 0 and torch.float32 [2, 3] "
                   "on rank 1)"),
    "file-store": (2, [0, 1], [], "OK"),
    # A second run in the directory of a finished one works (each rank
    # removed its files once all had joined, as PyTorch's FileStore
    # removes its file), and one after an interrupted run (a rank's
    # record left) is refused at once on every rank.
    "file-store-reused": (2, [0, 1], [], "OK"),
    "file-store-stale": (2, [0, 1], [0, 1], "no longer running"),
    # WORLD_SIZE differs (rank 1 sees 3): named at once, before gloo.
    "world-size": (2, [0, 1], [0, 1], "every rank must have the same "
                   "world size, but rank "),
    # STRATA_DISTRIBUTED_CHECK=0 on rank 1 only: named at init.
    "check-env": (2, [0, 1], [0, 1], "every rank must have the consistency "
                  "check set alike, but rank "),
    # Rank 1 turns the check off after init: named after the timeout.
    "check-toggled": (2, [0, 1], [0, 1], "the ranks disagree on the "
                      "consistency check: rank 0 has it on and rank 1 off"),
    # The nccl backend (strata-dist-nccl on the fake NCCL, whose own gloo
    # waits 30 s): the deadline aborts the communicator; a lost peer is
    # NCCL's async error; the signature check names the device.
    "nccl-hang": (2, [0, 1], [0], f"timed out after {TIMEOUT_MS} ms waiting "
                  "for the other ranks [nccl: the communicator was aborted]"),
    "nccl-exit-early": (2, [0, 1], [0], "NCCL communicator failed"),
    "nccl-shape": (2, [0, 1], [0, 1], "and dtype torch.float32 on cuda:0, "
                   "op sum, rank 1 called all_reduce of a tensor of shape [4]"),
    # Rank 1's ncclCommInitRankConfig hangs (the fake, asked to): NCCL's
    # non-blocking init is aborted at the timeout on both ranks.
    "nccl-init-hang": (2, [0, 1], [0, 1], "ncclCommInitRankConfig did not "
                       f"complete within {TIMEOUT_MS} ms (then ncclCommAbort)"),
    # Rank 1 asks for backend gloo, rank 0 for nccl: named at init.
    "nccl-backend": (2, [0, 1], [0, 1], "every rank must use the same "
                     "backend, but rank "),
}

# Environment of one rank only.
RANK_ENV = {
    "world-size": {1: {"WORLD_SIZE": "3"}},
    "check-env": {1: {"STRATA_DISTRIBUTED_CHECK": "0"}},
    "nccl-init-hang": {1: {"STRATA_FAKE_NCCL_HANG_INIT": "1"}},
}

# An earlier group in the same file:// directory: (mode, ranks started),
# run to its end first.
EARLIER_RUN = {
    "file-store-reused": ("file-store", [0, 1]),
    "file-store-stale": ("file-store", [0]),  # rank 0 alone: it times out
}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main(binary, mode):
    world, started, survivors, expected = CASES[mode]
    port = free_port()
    holder = None
    if mode == "port-in-use":
        holder = socket.socket()
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        expected = expected.replace("PORT", str(port))
    store = None
    env = dict(os.environ, WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(port))
    if mode.startswith("file-store"):
        store = tempfile.mkdtemp(prefix="strata-store-")
        env["STRATA_TEST_STORE"] = store
    earlier_problems = []
    if mode in EARLIER_RUN:
        earlier, ranks = EARLIER_RUN[mode]
        runs = [subprocess.Popen(
            [binary, earlier, str(TIMEOUT_MS)], env=dict(env, RANK=str(r)),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for r in ranks]
        for r, p in zip(ranks, runs):
            out, _ = p.communicate(timeout=LIMIT_S)
            print(f"[earlier run, rank {r}] {out.strip()}")
            if len(ranks) == world and p.returncode != 0:
                earlier_problems.append(f"the earlier run's rank {r} "
                                        f"exited with {p.returncode}")
        left = sorted(os.listdir(store))
        print(f"run_fault.py: the earlier run left {len(left)} files")
        if len(ranks) == world and left:
            earlier_problems.append(f"a finished run left files: {left}")
    procs = {}
    start = time.monotonic()
    for r in started:
        rank_env = dict(env, RANK=str(r), **RANK_ENV.get(mode, {}).get(r, {}))
        procs[r] = subprocess.Popen(
            [binary, mode, str(TIMEOUT_MS)], env=rank_env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    problems = earlier_problems
    outputs = {}
    waited = survivors if survivors else started
    for r in waited:
        left = max(0.1, LIMIT_S - (time.monotonic() - start))
        try:
            out, _ = procs[r].communicate(timeout=left)
        except subprocess.TimeoutExpired:
            procs[r].kill()
            out, _ = procs[r].communicate()
            problems.append(f"rank {r} still running after {LIMIT_S} s "
                            "(a hang)")
        outputs[r] = out
        want_status = 0 if not survivors else 1
        if procs[r].returncode != want_status:
            problems.append(f"rank {r} exited with {procs[r].returncode}, "
                            f"expected {want_status}")
        if expected not in out:
            problems.append(f"rank {r}'s output lacks {expected!r}")
        if survivors and "strata::Error" not in out:
            problems.append(f"rank {r} printed no strata::Error")
        if survivors and " at " not in out.split("strata::Error", 1)[-1]:
            problems.append(f"rank {r}'s error has no location")
    for r, p in procs.items():
        if p.poll() is None:
            p.kill()
            p.wait()
    if store:
        shutil.rmtree(store, ignore_errors=True)
    if holder:
        holder.close()
    elapsed = time.monotonic() - start
    for r in sorted(outputs):
        for line in outputs[r].splitlines():
            if "Logging before InitGoogleLogging" not in line:
                print(f"[rank {r}] {line}")
    print(f"run_fault.py {mode}: {elapsed:.1f} s, "
          f"{len(problems)} problems")
    for p in problems:
        print("run_fault.py:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
