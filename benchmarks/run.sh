#!/usr/bin/env bash
# Runs strata's benchmarks from a build directory: ./benchmarks/run.sh BUILD_DIR
# Extra arguments go to every benchmark program (e.g. --benchmark_filter=Fold).
set -euo pipefail
build_dir="${1:-build}"
shift || true
bin="$build_dir/bin"
if [[ ! -x "$bin/strata-bench-passes" ]]; then
  echo "run.sh: $bin/strata-bench-passes not found; build the" \
       "strata-bench-passes target (needs libbenchmark-dev)" >&2
  exit 1
fi
# per_op is the time per op of the program: flat across sizes = linear.
"$bin/strata-bench-passes" --benchmark_counters_tabular=true "$@"
"$bin/strata-bench-jit" --markdown "$build_dir/jit-bandwidth.md"
"$bin/strata-bench-dsl" --benchmark_counters_tabular=true "$@"
# Workloads (a)-(h) through the fluent API against the same IR (within 10%).
"$bin/strata-bench-dsl" --fluent-vs-ir --markdown "$build_dir/fluent-vs-ir.md"
"$bin/strata-bench-autograd"
# A scalar schedule and random narrow offsets: compiles after step 1.
"$bin/strata-bench-values"
# The first evaluation in a fresh process with a cold disk cache.
"$bin/strata-bench-first-eval"
# Cost against program length, n = 10^2 .. 10^5, beside PyTorch eager.
"$bin/strata-bench-linear" --markdown "$build_dir/linear-cost.md"
# matmul GFLOP/s through OpenBLAS and through the compiled kernel, beside
# PyTorch eager and NumPy.
"$bin/strata-bench-matmul" --markdown "$build_dir/matmul.md"
STRATA_BLAS=0 "$bin/strata-bench-matmul" --label kernels --no-torch \
  --sizes 128,256,512 --markdown "$build_dir/matmul-kernels.md"
# LibTorch's _out forms (add_out) against out.copy_(a + b) and PyTorch eager.
"$bin/strata-bench-out" --markdown "$build_dir/out.md"
# A create_graph (gradient-penalty) training step against PyTorch eager.
"$bin/strata-bench-grad-penalty"
# What including <strata/strata.h> costs a user's g++ -O2 (budget 2 s, 300 MB).
"$(dirname "$0")/HeaderCompileTime.sh" "$build_dir"
# strata::distributed (issue 21): all_reduce against the same gloo call
# made directly, 4 KB .. 256 MB on 2 ranks; the data-parallel digits step on
# 1, 2 and 4 ranks (docs/performance.md, docs/distributed.md).
if [[ -x "$bin/strata-bench-allreduce" ]]; then
  "$bin/strata-launch" --nproc-per-node 2 "$bin/strata-bench-allreduce" \
    --markdown "$build_dir/allreduce.md"
  for n in 1 2 4; do
    "$bin/strata-launch" --nproc-per-node "$n" "$bin/strata-bench-ddp"
  done
fi
