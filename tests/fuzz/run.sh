#!/usr/bin/env bash
# The long fuzz run behind `make fuzz` (docs/reliability.md).
#   tests/fuzz/run.sh <build-dir> <seconds>
# Splits <seconds> between the four fuzzers (views 1/5, programs 2/5,
# pipeline 1/5, PyTorch differential 1/5) after the fixed minimum of 10^6
# view chains, prints each fuzzer's count of inputs and failures, and exits
# non-zero on any failure (the PyTorch fuzzer is skipped, not failed, when
# /usr/bin/python3 cannot import torch).
# The pipeline fuzzer is libFuzzer when a clang with libFuzzer is found
# (built in <build-dir>-libfuzzer with STRATA_LIBFUZZER=ON), else the
# seeded mutation driver of the same harness.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
SECONDS_TOTAL=${2:-600}
SEED=${FUZZ_SEED:-$(date +%s)}
JOBS=${JOBS:-$(nproc)}
status=0

cmake --build "$BUILD" -j "$JOBS" --target strata-fuzz-views \
  strata-fuzz-programs strata-fuzz-pipeline strata-fuzz-torch || exit 1
BIN=$BUILD/bin

echo "== view chains (10^6, then $((SECONDS_TOTAL / 5)) s), seed $SEED"
"$BIN/strata-fuzz-views" --chains 1000000 --seed "$SEED" | tail -n 40 || status=1
"$BIN/strata-fuzz-views" --seconds $((SECONDS_TOTAL / 5)) \
  --seed $((SEED + 1000000)) | tail -n 40 || status=1

echo "== programs, JIT vs reference ($((SECONDS_TOTAL * 2 / 5)) s), seed $SEED"
# In processes of at most 10^4 programs, gradients checked for every 25th:
# the DSL keeps every compiled program (~2.4 MB each, docs/reliability.md).
end=$((SECONDS + SECONDS_TOTAL * 2 / 5))
seed=$SEED
while [ "$SECONDS" -lt "$end" ]; do
  STRATA_NUM_THREADS=1 "$BIN/strata-fuzz-programs" --programs 10000 --grad-every 25 \
    --seconds $((end - SECONDS)) --seed "$seed" 2>/dev/null | tail -n 60 ||
    status=1
  seed=$((seed + 10000))
done

TORCH_SECONDS=$((SECONDS_TOTAL / 5))
echo "== programs, strata vs PyTorch ($TORCH_SECONDS s), seed $SEED"
# Every mismatch class's minimized program: $BUILD/fuzz-torch-report.md.
# A third of the programs are autograd programs (--autograd).
/usr/bin/python3 tests/fuzz/torch_fuzz.py --runner "$BIN/strata-fuzz-torch" \
  --seconds "$TORCH_SECONDS" --seed "$SEED" --quiet --autograd 0.3 \
  --report "$BUILD/fuzz-torch-report.md"
rc=$?
if [ $rc -eq 77 ]; then
  echo "strata-fuzz-torch: SKIPPED (/usr/bin/python3 cannot import torch)"
elif [ $rc -ne 0 ]; then
  status=1
  echo "strata-fuzz-torch: mismatches (reports in $BUILD/fuzz-torch-report.md)"
fi

PIPE_SECONDS=$((SECONDS_TOTAL / 5))
LIBFUZZER=""
for cxx in clang++-16 clang++-14 clang++; do
  command -v "$cxx" >/dev/null || continue
  if echo 'extern "C" int LLVMFuzzerTestOneInput(const char*,unsigned long){return 0;}' |
    "$cxx" -x c++ -fsanitize=fuzzer - -o /tmp/strata-libfuzzer-probe.$$ 2>/dev/null; then
    LIBFUZZER=$cxx
    rm -f /tmp/strata-libfuzzer-probe.$$
    break
  fi
done
FBUILD=$BUILD-libfuzzer
if [ -n "$LIBFUZZER" ] &&
  { [ -f "$FBUILD/build.ninja" ] ||
    cmake -S . -B "$FBUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER="$LIBFUZZER" -DSTRATA_LIBFUZZER=ON \
      -DSTRATA_SANITIZE=ON \
      $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) \
      >/dev/null; } &&
  cmake --build "$FBUILD" -j "$JOBS" --target strata-fuzz-pipeline; then
  echo "== pipeline, libFuzzer ($LIBFUZZER, $PIPE_SECONDS s)"
  CORPUS=$FBUILD/fuzz-corpus
  SEEDS=$FBUILD/fuzz-seeds
  mkdir -p "$CORPUS" "$SEEDS" "$FBUILD/fuzz-crashes"
  python3 - "$SEEDS" <<'EOF'
import pathlib, sys
n = 0
for f in sorted(pathlib.Path("tests/lit").rglob("*.mlir")):
    for piece in f.read_text().split("\n// -----\n"):
        n += 1
        (pathlib.Path(sys.argv[1]) / f"{n:04d}.mlir").write_text(piece)
EOF
  # libFuzzer stops at the first crash (saved in fuzz-crashes/); heap
  # corruption can also hang a process, hence the timeout.
  timeout $((PIPE_SECONDS + 120)) \
    "$FBUILD/bin/strata-fuzz-pipeline" -max_total_time="$PIPE_SECONDS" \
    -max_len=16384 -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$FBUILD/fuzz-crashes/" "$CORPUS" "$SEEDS" \
    2>&1 | grep -E "^stat::|^#[0-9]+ *DONE|ERROR|SUMMARY|Test unit written" ||
    true
  crashes=$(ls "$FBUILD/fuzz-crashes" | wc -l)
  echo "strata-fuzz-pipeline (libFuzzer): $crashes crashes" \
    "(inputs in $FBUILD/fuzz-crashes)"
  [ "$crashes" -eq 0 ] || status=1
else
  echo "== pipeline, mutation driver ($PIPE_SECONDS s; no libFuzzer-capable clang${LIBFUZZER:+ build})"
  "$BIN/strata-fuzz-pipeline" --seconds "$PIPE_SECONDS" --seed "$SEED" \
    tests/lit || {
    status=1
    echo "crash: input left in ${TMPDIR:-/tmp}/strata-fuzz-pipeline-current.mlir"
  }
fi
[ $status -eq 0 ] && echo "fuzz: no failures" || echo "fuzz: FAILURES (above)"
exit $status
