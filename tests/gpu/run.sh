#!/usr/bin/env bash
# tests/gpu/run.sh - the CUDA backend on a GPU machine, in one go (< 8 min).
#
#   tests/gpu/run.sh [BUILD_DIR]        (default: build-gpu in the repo root)
#
# 1. configures and builds (Release, -j16) the tools, the CUDA unit tests
#    and the bandwidth benchmark;
# 2. runs the CUDA unit tests (NVRTC + ptxas over every test kernel, the
#    device allocator);
# 2b. runs strata-gpu-dsl-smoke (tests/gpu/DslCudaSmoke.cpp): fluent
#    programs (elementwise, broadcast, transposed copy, reductions, in-place
#    through a view, printing, memory stats) on cuda:0 against the CPU;
# 3. runs every tests/lit/Reference program with strata-run --engine=cuda
#    against --engine=jit (CPU), with arange and with seeded random inputs,
#    compared within float32 tolerance by tests/lit/JIT/Inputs/compare.py;
# 4. runs strata-bench-cuda: device-copy baseline vs workloads (a)-(h) of
#    issue 4 at sizes that fill the GPU; its markdown table goes to stdout
#    (paste it into docs/performance.md, section "CUDA").
# Every command is printed before it runs and has a timeout. Exit status:
# 0 when everything passed, 1 otherwise (the summary says what failed).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-$ROOT/build-gpu}"
FAILED=()
step() { echo; echo "=== $*"; }
run() { echo "+ $*"; "$@"; }

step "machine"
run date
if command -v nvidia-smi >/dev/null; then
  run timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total \
    --format=csv || true
else
  echo "nvidia-smi not found"
fi

step "configure and build ($BUILD)"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
run timeout 120 cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" \
  -DCMAKE_BUILD_TYPE=Release "${LAUNCHER[@]}"
if ! grep -q "^CUDA_nvrtc_LIBRARY:FILEPATH=/" "$BUILD/CMakeCache.txt"; then
  echo "error: CMake did not find the CUDA toolkit (NVRTC); set"
  echo "       CUDAToolkit_ROOT=/usr/local/cuda and rerun"
  exit 1
fi
run timeout 330 cmake --build "$BUILD" -j16 --target strata-run \
  strata-translate strata-unit-cuda strata-bench-cuda strata-gpu-dsl-smoke
BIN="$BUILD/bin"

step "CUDA unit tests"
if ! run timeout 180 "$BIN/strata-unit-cuda"; then
  FAILED+=("strata-unit-cuda")
fi

step "DSL smoke: fluent programs on cuda:0 against the CPU"
if ! STRATA_CACHE_DIR="$BUILD/gpu-kernel-cache" \
     run timeout 120 "$BIN/strata-gpu-dsl-smoke"; then
  FAILED+=("strata-gpu-dsl-smoke")
fi

step "Reference programs: --engine=cuda against --engine=jit"
export STRATA_CACHE_DIR="$BUILD/gpu-kernel-cache"
OUT="$BUILD/gpu-e2e"
mkdir -p "$OUT"
for f in "$ROOT"/tests/lit/Reference/*.mlir; do
  name="$(basename "$f" .mlir)"
  [ "$name" = errors ] && continue
  for inputs in arange random; do
    opts=(--inputs="$inputs")
    [ "$inputs" = random ] && opts+=(--seed=7)
    echo "+ strata-run ${opts[*]} --engine={jit,cuda} $f"
    if timeout 60 "$BIN/strata-run" "${opts[@]}" --engine=jit "$f" \
         > "$OUT/$name.$inputs.jit" 2>&1 &&
       timeout 60 "$BIN/strata-run" "${opts[@]}" --engine=cuda "$f" \
         > "$OUT/$name.$inputs.cuda" 2>&1 &&
       python3 "$ROOT/tests/lit/JIT/Inputs/compare.py" \
         "$OUT/$name.$inputs.jit" "$OUT/$name.$inputs.cuda"; then
      :
    else
      echo "FAILED: $name ($inputs); outputs in $OUT/$name.$inputs.*"
      tail -5 "$OUT/$name.$inputs.cuda" || true
      FAILED+=("$name/$inputs")
    fi
  done
done

step "bandwidth: device copy vs strata workloads (a)-(h)"
if ! run timeout 240 "$BIN/strata-bench-cuda" --reps 10; then
  FAILED+=("strata-bench-cuda")
fi

step "summary"
if [ ${#FAILED[@]} -eq 0 ]; then
  echo "all CUDA checks passed"
else
  echo "failed: ${FAILED[*]}"
  exit 1
fi
