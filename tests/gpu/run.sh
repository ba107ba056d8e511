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
#    through a view, printing, memory stats) on cuda:0 against the CPU, and
#    (tests/gpu/DslCudaOuterSize.cpp) one structure at many outer sizes,
#    one PTX each, with sizes past one grid that the simulator skips;
# 3. runs every tests/lit/Reference program with strata-run --engine=cuda
#    against --engine=jit (CPU), with arange and with seeded random inputs,
#    compared within float32 tolerance by tests/lit/JIT/Inputs/compare.py;
# 3b. runs strata-fuzz-programs --cuda --large for 40 s: random programs
#    (views, broadcasting, reductions, writes through views; large
#    dimensions) on the CUDA engine against the reference evaluator, and
#    every 5th program's gradients on cuda:0 against the CPU's;
# 3c. runs strata-dist-nccl (tests/distributed/NcclTest.cpp) with the real
#    NCCL, one rank per GPU (CUDA_VISIBLE_DEVICES=LOCAL_RANK), started by
#    strata-launch: every collective on CUDA tensors and a DDP step against
#    the CPU. NCCL is $STRATA_NCCL_LIBRARY, else libnccl.so.2 found as NVRTC
#    is (below: /usr/local/cuda*, pip's nvidia-nccl-cu* in site-packages,
#    nvidia/*/lib), else the system's library path; the path found is
#    exported as STRATA_NCCL_LIBRARY. With --bundle the ranks meet in a
#    fresh directory, STRATA_INIT_METHOD=file://BUILD/nccl-rdzv-PID (the
#    bundle's strata_distributed has no c10d::TCPStore for env://).
#    Skipped with a message where NCCL does not load, nvidia-smi lists no
#    GPU, or strata-dist-nccl was not built (no gloo; libtorch too without
#    --bundle);
# 4. runs strata-bench-cuda: device-copy baseline vs workloads (a)-(h) of
#    issue 4 at sizes that fill the GPU; its markdown table goes to stdout
#    (paste it into docs/performance.md, section "CUDA").
# $STRATA_GPU_ONLY (e.g. "nccl", or "unit,smoke") runs only the steps
# named: unit (2), smoke (2b), reference (3), fuzz (3b), nccl (3c), bench
# (4); the machine, bundle and build steps run always. A second, short
# device call can so rerun one step.
# $STRATA_GPU_BENCH_ARGS replaces step 4's arguments (default --reps 10;
# "--tiny --reps 1" to rehearse the whole script on the CUDA simulator, see
# docs/reliability.md).
# Every command is printed before it runs and has a timeout, cut to what
# is left of the whole run's budget ($STRATA_GPU_BUDGET_S, default 470 s,
# so that the run ends within 8 minutes); a step that would start with too
# little time left is reported as skipped and fails the run. Nothing is
# written outside BUILD: the kernel caches, ccache, temporary files and
# Python's bytecode all go under BUILD or nowhere.
#
#   tests/gpu/run.sh --prebuilt [BUILD_DIR]
# skips configure and build and runs the binaries already in BUILD_DIR/bin
# (a build made elsewhere and carried to the GPU machine; extra shared
# libraries it needs may be put in BUILD_DIR/lib, which goes first on
# LD_LIBRARY_PATH).
#
#   tests/gpu/run.sh --bundle BUNDLE [BUILD_DIR]
# runs the GPU bundle made by tests/gpu/make-bundle.sh (`make gpu-bundle`)
# on a machine that cannot build strata: BUNDLE is its output directory
# (holding strata-gpu-bundle.tar.xz, unpacked into BUILD_DIR/bundle), the
# tarball itself, or an unpacked bundle (BUNDLE/bin/strata-gpu). Its
# binary has LLVM, MLIR, fmt, GoogleTest and libstdc++ inside and needs
# glibc and the machine's NVRTC (libnvrtc.so.13 for a CUDA 13 build), which
# is looked for in $STRATA_NVRTC_DIR, next to nvcc, in /usr/local/cuda*
# and in Python's site-packages (pip's nvidia-cuda-nvrtc: nvidia/*/lib);
# ptxas likewise ($STRATA_PTXAS, PATH, next to nvcc, /usr/local/cuda/bin,
# site-packages nvidia/*/bin). The sources it reads (tests/lit/Reference)
# are this checkout's: bundle and checkout must be the same commit (the
# bundle's MANIFEST, printed first, names its commit). Its strata-dist-nccl
# and strata-launch (step 3c) are binaries of their own: the first needs
# the machine's libstdc++.so.6 too, and carries libgloo.so.0 and its
# libraries in the bundle's lib/.
#
# How a session with the device tool runs it (the GPU machine gets the
# working tree and at most 8 carried git-ignored paths, 64 MiB in all):
#   1. here:  make gpu-bundle    (writes gpu-bundle/, git-ignored: about
#             14 MiB of tarball; commit first so MANIFEST names the commit)
#   2. device `run` with carry ["gpu-bundle"], timeout_s 560, command:
#        set -o pipefail; tests/gpu/run.sh --bundle gpu-bundle 2>&1 |
#          tee $OUT/gpu-run.log
#      (its table and log come back even if the call is cut short).
#      To rerun only the NCCL step: STRATA_GPU_ONLY=nccl tests/gpu/run.sh ...
# Without a GPU (here) the same command runs the CPU side: strata-run
# --engine=jit from the bundle, the NVRTC + ptxas test; every CUDA step
# fails or skips with "no CUDA device: ...".
# Exit status: 0 when everything passed, 1 otherwise (the summary says what
# failed), 2 when the machine cannot build strata (missing dependencies) or
# the bundle is missing or does not start there.
set -euo pipefail

PREBUILT=0
BUNDLE=""
if [ "${1:-}" = --prebuilt ]; then
  PREBUILT=1
  shift
elif [ "${1:-}" = --bundle ]; then
  if [ $# -lt 2 ]; then
    echo "usage: tests/gpu/run.sh --bundle BUNDLE [BUILD_DIR]"
    exit 2
  fi
  PREBUILT=1
  case "$2" in
    /*) BUNDLE="$2" ;;
    *) BUNDLE="$PWD/$2" ;;
  esac
  shift 2
fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-$ROOT/build-gpu}"
mkdir -p "$BUILD"
BUILD="$(cd "$BUILD" && pwd)"
FAILED=()
START=$(date +%s)
BUDGET=${STRATA_GPU_BUDGET_S:-470}
step() { echo; echo "=== $* ($(( $(date +%s) - START )) s elapsed)"; }
run() { echo "+ $*"; "$@"; }
# Seconds left of the budget.
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
# The smaller of a step's own limit and what is left (at least 1).
limit() {
  local l
  l=$(left)
  if [ "$l" -lt "$1" ]; then echo $(( l > 1 ? l : 1 )); else echo "$1"; fi
}
# Whether step $1 runs ($STRATA_GPU_ONLY); says so when it does not.
STEPS="unit smoke reference fuzz nccl bench"
ONLY=" $(echo "${STRATA_GPU_ONLY:-$STEPS}" | tr ',' ' ') "
for s in $ONLY; do
  case " $STEPS " in *" $s "*) ;; *)
    echo "error: STRATA_GPU_ONLY names '$s', not a step ($STEPS)"
    exit 2 ;;
  esac
done
only() {
  case "$ONLY" in *" $1 "*) return 0 ;; esac
  echo "skipped: not in STRATA_GPU_ONLY=$STRATA_GPU_ONLY"
  return 1
}
# Fails the run with "<name> (out of time)" unless $1 seconds are left.
have_time() {
  if [ "$(left)" -lt "$1" ]; then
    echo "skipped $2: less than $1 s of the $BUDGET s budget left"
    FAILED+=("$2 (out of time)")
    return 1
  fi
}

# Everything the run writes stays in BUILD.
export STRATA_CACHE_DIR="$BUILD/gpu-kernel-cache"
export CCACHE_DIR="$BUILD/ccache"
export TMPDIR="$BUILD/tmp"
export PYTHONDONTWRITEBYTECODE=1
# The driver's own cache of PTX compiled for this GPU (default ~/.nv).
export CUDA_CACHE_PATH="$BUILD/nv-compute-cache"
mkdir -p "$STRATA_CACHE_DIR" "$TMPDIR"
if [ -d "$BUILD/lib" ]; then
  export LD_LIBRARY_PATH="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# Prints the directory holding $1 among where a CUDA toolkit keeps it: $2
# (a directory the user named), next to nvcc, /usr/local/cuda*, and pip's
# nvidia-* packages in Python's site-packages (nvidia/<package>/$3: those
# of python3, $VIRTUAL_ENV and /opt/*/.venv); $3 is lib or bin. Fails when
# none has it.
cuda_dir() {
  local name=$1 given=$2 sub=$3 d nvcc
  local dirs=()
  [ -n "$given" ] && dirs+=("$given")
  if nvcc=$(command -v nvcc); then
    nvcc=$(dirname "$(readlink -f "$nvcc")")
    dirs+=("$nvcc" "$nvcc/../$sub" "$nvcc/../${sub}64"
           "$nvcc/../targets/x86_64-linux/$sub")
  fi
  for d in /usr/local/cuda /usr/local/cuda-*; do
    dirs+=("$d/$sub" "$d/${sub}64" "$d/targets/x86_64-linux/$sub")
  done
  while IFS= read -r d; do dirs+=("$d"); done < <(python3 -c '
import glob, os, site, sys
paths = site.getsitepackages() + [site.getusersitepackages()] + sys.path
for p in dict.fromkeys(paths):
    for d in sorted(glob.glob(os.path.join(p, "nvidia", "*", sys.argv[1]))):
        print(d)' "$sub" 2>/dev/null)
  # A virtual environment that is not python3's (pip's CUDA wheels).
  local venv
  for venv in ${VIRTUAL_ENV:-/nonexistent} /opt/*/.venv /opt/*/venv; do
    for d in "$venv"/lib/python3*/site-packages/nvidia/*/"$sub"; do
      [ -d "$d" ] && dirs+=("$d")
    done
  done
  for d in "${dirs[@]}"; do
    if [ -e "$d/$name" ]; then
      (cd "$d" && pwd -P)
      return 0
    fi
  done
  return 1
}

step "machine"
run date
if command -v nvidia-smi >/dev/null; then
  run timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total \
    --format=csv || true
else
  echo "nvidia-smi not found"
fi

if [ -n "$BUNDLE" ]; then
  step "GPU bundle ($BUNDLE)"
  if [ -f "$BUNDLE/bin/strata-gpu" ]; then
    UNPACKED="$BUNDLE"
  else
    TARBALL="$BUNDLE"
    [ -d "$BUNDLE" ] && TARBALL="$BUNDLE/strata-gpu-bundle.tar.xz"
    if [ ! -f "$TARBALL" ]; then
      echo "error: no bundle at $BUNDLE (make it with: make gpu-bundle)"
      exit 2
    fi
    UNPACKED="$BUILD/bundle"
    rm -rf "$UNPACKED"
    mkdir -p "$UNPACKED"
    echo "+ unpack $TARBALL into $UNPACKED"
    # Python's tarfile: no dependence on the machine's xz or tar.
    python3 -c '
import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    if hasattr(tarfile, "data_filter"):
        t.extractall(sys.argv[2], filter="data")
    else:
        t.extractall(sys.argv[2])' "$TARBALL" "$UNPACKED"
  fi
  cat "$UNPACKED/MANIFEST"
  if HEAD=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null) &&
     ! grep -q "^commit: $HEAD" "$UNPACKED/MANIFEST"; then
    echo "warning: this checkout is at $HEAD, not the bundle's commit: the"
    echo "         tests read this checkout's tests/lit/Reference"
  fi
  NVRTC=$(cat "$UNPACKED/nvrtc-soname")
  LIBS="$UNPACKED/lib"
  if NVRTC_DIR=$(cuda_dir "$NVRTC" "${STRATA_NVRTC_DIR:-}" lib); then
    echo "NVRTC: $NVRTC_DIR/$NVRTC"
    LIBS="$LIBS:$NVRTC_DIR"
  else
    echo "NVRTC: $NVRTC not found in a CUDA toolkit's usual places; the"
    echo "       system's library path is the last chance (STRATA_NVRTC_DIR=dir"
    echo "       names its directory)"
  fi
  export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  BIN="$UNPACKED/bin"
  if ! run "$BIN/strata-run" --version; then
    echo "error: the bundle's binary does not start on this machine (above)"
    exit 2
  fi
fi

if [ "$PREBUILT" = 0 ]; then
  step "configure and build ($BUILD)"
  # strata needs LLVM/MLIR 16 (Debian's llvm-16-dev, libmlir-16-dev), fmt,
  # GoogleTest and DLPack; a machine without them (and without network to
  # install them) cannot build it: say so instead of a CMake error.
  if [ ! -d /usr/lib/llvm-16/lib/cmake/mlir ] && [ -z "${MLIR_DIR:-}" ]; then
    echo "error: MLIR 16 not found (/usr/lib/llvm-16/lib/cmake/mlir, or set"
    echo "       MLIR_DIR): install the packages of scripts/install-deps.sh, or"
    echo "       build elsewhere and run: tests/gpu/run.sh --prebuilt BUILD_DIR"
    exit 2
  fi
  GEN=()
  command -v ninja >/dev/null && GEN=(-G Ninja)
  LAUNCHER=()
  command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  run timeout "$(limit 120)" cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" \
    -DCMAKE_BUILD_TYPE=Release "${LAUNCHER[@]}"
  if ! grep -q "^CUDA_nvrtc_LIBRARY:FILEPATH=/" "$BUILD/CMakeCache.txt"; then
    echo "error: CMake did not find the CUDA toolkit (NVRTC); set"
    echo "       CUDAToolkit_ROOT=/usr/local/cuda and rerun"
    exit 1
  fi
  DIST=()
  grep -q "^STRATA_DISTRIBUTED:INTERNAL=ON" "$BUILD/CMakeCache.txt" &&
    DIST=(strata-dist-nccl strata-launch)
  run timeout "$(limit 330)" cmake --build "$BUILD" -j16 --target strata-run \
    strata-translate strata-unit-cuda strata-bench-cuda strata-gpu-dsl-smoke \
    strata-fuzz-programs "${DIST[@]}"
fi
[ -n "$BUNDLE" ] || BIN="$BUILD/bin"

# The CUDA unit tests find the sources, ptxas and the toolkit's stub
# libcuda at the paths of the machine that built them, unless told.
export STRATA_SOURCE_DIR="$ROOT"
if [ -z "${STRATA_PTXAS:-}" ]; then
  if p=$(command -v ptxas) || p=$(cuda_dir ptxas "" bin)/ptxas; then
    export STRATA_PTXAS="$p"
  fi
fi
echo "ptxas: ${STRATA_PTXAS:-not found (the ptxas test uses the path it was built with)}"
if [ -z "${STRATA_CUDA_STUB:-}" ] &&
   d=$(cuda_dir stubs/libcuda.so "${STRATA_NVRTC_DIR:-}" lib); then
  export STRATA_CUDA_STUB="$d/stubs/libcuda.so"
fi

for b in strata-run strata-unit-cuda strata-bench-cuda strata-gpu-dsl-smoke \
         strata-fuzz-programs; do
  if [ ! -x "$BIN/$b" ]; then
    echo "error: $BIN/$b is missing"
    exit 1
  fi
done

step "CUDA unit tests"
if only unit && have_time 30 strata-unit-cuda &&
   ! run timeout "$(limit 180)" "$BIN/strata-unit-cuda"; then
  FAILED+=("strata-unit-cuda")
fi

step "DSL smoke: fluent programs on cuda:0 against the CPU"
if only smoke && have_time 20 strata-gpu-dsl-smoke &&
   ! run timeout "$(limit 120)" "$BIN/strata-gpu-dsl-smoke"; then
  FAILED+=("strata-gpu-dsl-smoke")
fi

step "Reference programs: --engine=cuda against --engine=jit"
OUT="$BUILD/gpu-e2e"
mkdir -p "$OUT"
REFERENCE=("$ROOT"/tests/lit/Reference/*.mlir)
only reference || REFERENCE=()
for f in "${REFERENCE[@]}"; do
  name="$(basename "$f" .mlir)"
  [ "$name" = errors ] && continue
  for inputs in arange random; do
    # Keep 100 s for the bandwidth table.
    have_time 110 "$name/$inputs" || continue
    opts=(--inputs="$inputs")
    [ "$inputs" = random ] && opts+=(--seed=7)
    echo "+ strata-run ${opts[*]} --engine={jit,cuda} $f"
    if timeout "$(limit 60)" "$BIN/strata-run" "${opts[@]}" --engine=jit "$f" \
         > "$OUT/$name.$inputs.jit" 2>&1 &&
       timeout "$(limit 60)" "$BIN/strata-run" "${opts[@]}" --engine=cuda "$f" \
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

step "random programs on CUDA against the reference evaluator"
if only fuzz && have_time 60 strata-fuzz-programs &&
   ! run timeout "$(limit 70)" "$BIN/strata-fuzz-programs" --cuda --large \
       --grad-every 5 --seconds 40 --seed 9000; then
  FAILED+=("strata-fuzz-programs")
fi

step "NCCL: collectives on CUDA tensors, one rank per GPU"
if [ -z "${STRATA_NCCL_LIBRARY:-}" ] &&
   NCCL_DIR=$(cuda_dir libnccl.so.2 "" lib); then
  export STRATA_NCCL_LIBRARY="$NCCL_DIR/libnccl.so.2"
fi
NCCL_LIB=${STRATA_NCCL_LIBRARY:-libnccl.so.2}
echo "NCCL: $NCCL_LIB"
GPUS=$(timeout 30 nvidia-smi -L 2>/dev/null | grep -c "^GPU" || true)
# The bundle's ranks meet in a fresh directory (no c10d::TCPStore there).
# Its lib/ holds Debian's libibverbs (gloo's), which NCCL's InfiniBand
# transport would dlopen too and pair with the machine's rdma-core
# providers: off (one node: NCCL's GPUs talk through P2P or shared memory).
RDZV=()
if [ -n "$BUNDLE" ]; then
  RDZV=(STRATA_INIT_METHOD="file://$BUILD/nccl-rdzv-$$" NCCL_IB_DISABLE=1)
fi
if ! only nccl; then
  :
elif [ ! -x "$BIN/strata-dist-nccl" ] || [ ! -x "$BIN/strata-launch" ]; then
  echo "SKIPPED: strata-dist-nccl is not in $BIN (strata_distributed needs"
  echo "         gloo at build time, and libtorch too outside the bundle)"
elif ! python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' \
       "$NCCL_LIB" 2>/dev/null; then
  echo "SKIPPED: $NCCL_LIB could not be loaded (install NCCL: libnccl2 or"
  echo "         pip's nvidia-nccl-cu13; STRATA_NCCL_LIBRARY=path names it)"
elif [ "${GPUS:-0}" -lt 1 ]; then
  echo "SKIPPED: nvidia-smi lists no GPU"
elif have_time 40 strata-dist-nccl; then
  if [ -n "$BUNDLE" ]; then
    rm -rf "$BUILD/nccl-rdzv-$$"
    mkdir -p "$BUILD/nccl-rdzv-$$"
  fi
  # strata drives cuda:0: each rank sees its own GPU as cuda:0.
  if ! run timeout "$(limit 120)" env "${RDZV[@]}" "$BIN/strata-launch" \
       --nproc-per-node "$GPUS" \
       bash -c 'CUDA_VISIBLE_DEVICES=$LOCAL_RANK exec "$0"' \
       "$BIN/strata-dist-nccl"; then
    FAILED+=("strata-dist-nccl")
  fi
fi

step "bandwidth: device copy vs strata workloads (a)-(h)"
if only bench && have_time 30 strata-bench-cuda &&
   ! run timeout "$(limit 240)" "$BIN/strata-bench-cuda" \
       ${STRATA_GPU_BENCH_ARGS:---reps 10}; then
  FAILED+=("strata-bench-cuda")
fi

step "summary"
echo "elapsed $(( $(date +%s) - START )) s of a $BUDGET s budget"
if [ ${#FAILED[@]} -eq 0 ]; then
  echo "all CUDA checks passed${STRATA_GPU_ONLY:+ (only: $STRATA_GPU_ONLY)}"
else
  echo "failed: ${FAILED[*]}"
  exit 1
fi
