#!/usr/bin/env python3
"""Runs every reference program (tests/lit/Reference, less errors.mlir, and
tests/lit/JIT/Inputs/generators.mlir: kernels that compute aranges) with
--engine=cuda and --engine=jit, arange and random inputs, and compares the
outputs with tests/lit/JIT/Inputs/compare.py: the check tests/gpu/run.sh
makes on a GPU, run here under the CUDA simulator (the environment of the
`cudasim-reference` CTest). Outputs are kept in OUT_DIR.

usage: reference.py STRATA_RUN LIT_DIR OUT_DIR
"""
import concurrent.futures
import os
import pathlib
import subprocess
import sys


def check(strata_run, compare, out_dir, program, inputs):
    opts = [f"--inputs={inputs}"] + (["--seed=7"] if inputs == "random" else [])
    outputs = {}
    for engine in ("jit", "cuda"):
        path = out_dir / f"{program.stem}.{inputs}.{engine}"
        errors = path.with_name(path.name + ".stderr")
        with open(path, "w") as out, open(errors, "w") as err:
            rc = subprocess.run([strata_run, *opts, f"--engine={engine}",
                                 str(program)], stdout=out,
                                stderr=err).returncode
        if rc != 0:
            return f"{program.name} ({inputs}): --engine={engine} exited " \
                   f"{rc}:\n{path.read_text()[-1000:]}" \
                   f"{errors.read_text()[-2000:]}"
        outputs[engine] = path
    r = subprocess.run([sys.executable, compare, outputs["jit"],
                        outputs["cuda"]], capture_output=True, text=True)
    if r.returncode != 0:
        return f"{program.name} ({inputs}): cuda differs from jit: " \
               f"{r.stdout}{r.stderr}"
    print(f"{program.name} ({inputs}): {r.stdout.strip()}", flush=True)
    return None


def main():
    strata_run, lit_dir, out_dir = sys.argv[1], pathlib.Path(sys.argv[2]), \
        pathlib.Path(sys.argv[3])
    out_dir.mkdir(parents=True, exist_ok=True)
    compare = str(lit_dir / "JIT" / "Inputs" / "compare.py")
    programs = sorted(p for p in (lit_dir / "Reference").glob("*.mlir")
                      if p.stem != "errors")
    if not programs:
        sys.exit(f"no reference programs in {lit_dir / 'Reference'}")
    programs.append(lit_dir / "JIT" / "Inputs" / "generators.mlir")
    jobs = [(p, i) for p in programs for i in ("arange", "random")]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        failures = [f for f in pool.map(
            lambda job: check(strata_run, compare, out_dir, *job), jobs) if f]
    for f in failures:
        print("FAILED:", f)
    print(f"{len(jobs) - len(failures)} of {len(jobs)} program runs agree")
    sys.exit(1 if failures else 0)


main()
