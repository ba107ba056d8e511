#!/usr/bin/env bash
# tests/gpu/make-bundle.sh [OUT_DIR] - the GPU bundle: what tests/gpu/run.sh
# runs, built here, for a GPU machine that cannot build strata (no LLVM/MLIR
# 16, fmt or GoogleTest there, no network). `make gpu-bundle` runs it.
#
# Builds strata-gpu (tests/gpu/BundleMain.cpp: strata-run, strata-unit-cuda,
# strata-gpu-dsl-smoke, strata-bench-cuda and strata-fuzz-programs in one
# executable) in
# $STRATA_BUNDLE_BUILD (default build-bundle/) with STRATA_STATIC_LLVM=ON:
# LLVM, MLIR, fmt, GoogleTest and libstdc++ linked statically, so the
# binary needs only glibc, libnvrtc (the GPU machine's CUDA toolkit has it;
# tests/gpu/run.sh finds it) and libzstd.so.1 (copied into the bundle's
# lib/ unless a static libzstd was found). It is compiled with clang, the
# compiler Debian's LLVM was built with: the static LLVM libraries and
# strata share the inline functions of the LLVM/MLIR headers, and GCC's
# copies of some (lambdas capturing `this` in MLIR's parser) are not
# interchangeable with clang's.
#
# Where strata_distributed is configured (libgloo-dev; built without
# libtorch here: dsl/CMakeLists.txt), also strata-dist-nccl (the NCCL test
# of run.sh's step 3c) and strata-launch, each its own executable: the
# first with LLVM and MLIR static but the shared libstdc++ (the GPU
# machine's; libgloo.so.0 needs it), libgloo.so.0 and its libraries
# (libhiredis, libibverbs, libnl-3, libnl-route-3) copied into lib/; the
# second needs glibc only. The tarball must stay under 40 MiB (the device
# tool carries 64 MiB): about 14 MiB with both.
#
# Writes OUT_DIR (default: gpu-bundle/ in the repo root, git-ignored):
#   strata-gpu-bundle.tar.xz  bin/strata-gpu (stripped) and a link per
#                             program, bin/strata-dist-nccl and
#                             bin/strata-launch, lib/, MANIFEST; run.sh --bundle
#                             unpacks it under its build directory
#   MANIFEST                  the commit, compiler, NEEDED libraries, sizes
# Exit status: 0 when the bundle was written and its binaries start here with
# an empty environment, 1 otherwise.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:-$ROOT/gpu-bundle}"
BUILD="${STRATA_BUNDLE_BUILD:-$ROOT/build-bundle}"
JOBS="${JOBS:-$(nproc)}"
PROGRAMS=(strata-run strata-unit-cuda strata-gpu-dsl-smoke strata-bench-cuda
          strata-fuzz-programs)
# glibc's libraries: present on every Linux the bundle is for.
GLIBC="libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 ld-linux-x86-64.so.2"

run() { echo "+ $*"; "$@"; }

if [ ! -f "$BUILD/build.ninja" ]; then
  CXX_BUNDLE="${STRATA_BUNDLE_CXX:-}"
  if [ -z "$CXX_BUNDLE" ]; then
    for c in clang++-16 clang++-15 clang++-14 clang++; do
      if command -v "$c" >/dev/null; then CXX_BUNDLE=$c; break; fi
    done
  fi
  if [ -z "$CXX_BUNDLE" ]; then
    echo "make-bundle: clang++ not found (apt-get install clang-16);" \
      "STRATA_BUNDLE_CXX=path names one"
    exit 1
  fi
  CC_BUNDLE="${CXX_BUNDLE/clang++/clang}"
  LAUNCHER=()
  command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  run cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSTRATA_STATIC_LLVM=ON -DCMAKE_CXX_COMPILER="$CXX_BUNDLE" \
    -DCMAKE_C_COMPILER="$CC_BUNDLE" "${LAUNCHER[@]}"
fi
if ! grep -q "^STRATA_STATIC_LLVM:BOOL=ON" "$BUILD/CMakeCache.txt"; then
  echo "make-bundle: $BUILD is not a STRATA_STATIC_LLVM=ON build"
  exit 1
fi
if ! grep -q "^CUDA_nvrtc_LIBRARY:FILEPATH=/" "$BUILD/CMakeCache.txt"; then
  echo "make-bundle: CMake did not find the CUDA toolkit (NVRTC); without it"
  echo "             the bundle could not compile CUDA kernels"
  exit 1
fi
# strata-dist-nccl (the NCCL test, step 3c of run.sh) and strata-launch,
# each its own executable, where strata_distributed is built (gloo found;
# here without libtorch: dsl/CMakeLists.txt, file:// rendezvous only).
DIST=()
if grep -q "^STRATA_DISTRIBUTED:INTERNAL=ON" "$BUILD/CMakeCache.txt"; then
  DIST=(strata-dist-nccl strata-launch)
else
  echo "make-bundle: warning: strata_distributed not configured (no"
  echo "             libgloo-dev): no NCCL test in the bundle"
fi
run cmake --build "$BUILD" -j "$JOBS" --target strata-gpu "${DIST[@]}"

STAGE="$BUILD/gpu-bundle"
rm -rf "$STAGE"
mkdir -p "$STAGE/bin" "$STAGE/lib"
for b in strata-gpu "${DIST[@]}"; do
  run strip --strip-all -o "$STAGE/bin/$b" "$BUILD/bin/$b"
done
for p in "${PROGRAMS[@]}"; do
  ln -s strata-gpu "$STAGE/bin/$p"
done

# Every NEEDED library, and each one's in turn, is glibc's, copied into
# lib/, or (strata-dist-nccl only) the GPU machine's C++ runtime. Copied:
# libzstd.so.1 (unless a static libzstd was found) and, for
# strata-dist-nccl, exactly libgloo.so.0 and what it needs beyond glibc
# and the C++ runtime: libhiredis, libibverbs, libnl-3 and libnl-route-3.
# strata-dist-nccl links libstdc++.so.6 and libgcc_s.so.1 (gloo's C++ API
# needs the runtime gloo uses; one per process): the GPU machine's, newer
# than the one it was built with, are found where the system keeps them.
# NVRTC must not be among them (dlopen'ed by soname, the machine's).
COPY_ALWAYS="libzstd.so.*"
COPY_GLOO="libgloo.so.* libhiredis.so.* libibverbs.so.* libnl-3.so.* libnl-route-3.so.*"
CXX_RUNTIME="libstdc++.so.6 libgcc_s.so.1"
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
matches() { # matches NAME "PATTERN...": whether NAME matches one
  local name=$1 pat
  local -
  set -f # the patterns are not file names here
  for pat in $2; do
    # shellcheck disable=SC2254
    case "$name" in $pat) return 0 ;; esac
  done
  return 1
}
# bundle_libs BINARY COPYABLE RUNTIME: checks BINARY's libraries (and
# theirs), copying the COPYABLE ones; RUNTIME are left to the machine.
bundle_libs() {
  local bin=$1 copyable=$2 runtime=$3 todo lib path
  todo=$(needed "$STAGE/bin/$bin")
  while [ -n "$todo" ]; do
    set -- $todo
    lib=$1
    shift
    todo="$*"
    case " $GLIBC " in *" $lib "*) continue ;; esac
    case " $runtime " in *" $lib "*) continue ;; esac
    case "$lib" in
      libnvrtc.so.*)
        echo "make-bundle: $bin links $lib; NVRTC must be dlopen'ed"
        exit 1 ;;
    esac
    if ! matches "$lib" "$copyable"; then
      echo "make-bundle: $bin needs $lib, which is neither glibc's nor one"
      echo "             the bundle may carry ($copyable)"
      exit 1
    fi
    [ -f "$STAGE/lib/$lib" ] && continue
    path=$(ldd "$BUILD/bin/$bin" | awk -v l="$lib" '$1 == l { print $3 }')
    if [ -z "$path" ] || [ ! -f "$path" ]; then
      echo "make-bundle: $lib (needed by $bin) not found"
      exit 1
    fi
    cp -L "$path" "$STAGE/lib/$lib"
    todo="$todo $(needed "$STAGE/lib/$lib" | tr '\n' ' ')"
  done
}
NEEDED=$(needed "$STAGE/bin/strata-gpu")
bundle_libs strata-gpu "$COPY_ALWAYS" ""
if [ ${#DIST[@]} -gt 0 ]; then
  bundle_libs strata-launch "$COPY_ALWAYS" ""
  bundle_libs strata-dist-nccl "$COPY_ALWAYS $COPY_GLOO" "$CXX_RUNTIME"
fi
# NVRTC is loaded at run time by its soname (jit/CMakeLists.txt).
NVRTC=$(cat "$BUILD/nvrtc-soname" 2>/dev/null || true)
if [ -z "$NVRTC" ]; then
  echo "make-bundle: $BUILD/nvrtc-soname is missing (CUDA toolkit not found?)"
  exit 1
fi
echo "$NVRTC" > "$STAGE/nvrtc-soname"

# The binaries start with no environment and none of LLVM's directories.
run env -i PATH=/usr/bin:/bin "$STAGE/bin/strata-run" --version
if [ ${#DIST[@]} -gt 0 ]; then
  # strata-launch: its usage (exit 2). strata-dist-nccl finds gloo and its
  # libraries in the bundle's lib/ (its DT_RPATH $ORIGIN/../lib reaches
  # theirs too) and, with no rank environment or NCCL, fails with
  # init_process_group's located error (exit 1).
  echo "+ env -i PATH=/usr/bin:/bin $STAGE/bin/strata-launch"
  out=$(env -i PATH=/usr/bin:/bin "$STAGE/bin/strata-launch" 2>&1 || true)
  echo "$out"
  if ! echo "$out" | grep -q "^usage: strata-launch"; then
    echo "make-bundle: strata-launch did not start (above)"
    exit 1
  fi
  echo "+ env -i PATH=/usr/bin:/bin $STAGE/bin/strata-dist-nccl"
  out=$(env -i PATH=/usr/bin:/bin STRATA_NCCL_LIBRARY=libstrata-none.so.2 \
    "$STAGE/bin/strata-dist-nccl" 2>&1 || true)
  echo "$out" | head -5
  if ! echo "$out" | grep -q "init_process_group"; then
    echo "make-bundle: strata-dist-nccl did not start (above)"
    exit 1
  fi
  for lib in "$STAGE"/lib/*; do
    lib=$(basename "$lib")
    path=$(env -i ldd "$STAGE/bin/strata-dist-nccl" |
      awk -v l="$lib" '$1 == l { print $3 }')
    if [ -z "$path" ] ||
       [ "$(readlink -f "$path")" != "$(readlink -f "$STAGE/lib/$lib")" ]; then
      echo "make-bundle: strata-dist-nccl does not load $lib from $STAGE/lib"
      exit 1
    fi
  done
fi

{
  echo "strata GPU bundle (tests/gpu/make-bundle.sh)"
  echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)$(
    git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(
    ldd --version | head -1)"
  echo "compiler: $(grep '^CMAKE_CXX_COMPILER:' "$BUILD/CMakeCache.txt" |
    cut -d= -f2)"
  echo "programs: ${PROGRAMS[*]} (links to bin/strata-gpu)"
  [ ${#DIST[@]} -eq 0 ] || echo "own binaries: ${DIST[*]} (strata_distributed" \
    "without libtorch: file:// rendezvous; the machine's libstdc++)"
  echo "NEEDED: $(echo $NEEDED)"
  for b in "${DIST[@]}"; do
    echo "NEEDED by $b: $(needed "$STAGE/bin/$b" | tr '\n' ' ')"
  done
  echo "bundled in lib/: $(ls "$STAGE/lib" | tr '\n' ' ')"
  echo "NVRTC from the GPU machine: $NVRTC"
  echo "size unpacked: $(du -sb "$STAGE" | cut -f1) bytes"
} > "$STAGE/MANIFEST"

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
TARBALL="$OUT/strata-gpu-bundle.tar.xz"
rm -f "$TARBALL"
echo "+ tar -C $STAGE -c . | xz -9 > $TARBALL"
tar -C "$STAGE" -c . | xz -9 -T "$JOBS" > "$TARBALL"
cp "$STAGE/MANIFEST" "$OUT/MANIFEST"
echo "tarball: $(stat -c %s "$TARBALL") bytes" >> "$OUT/MANIFEST"
if [ "$(stat -c %s "$TARBALL")" -gt $((40 * 1024 * 1024)) ]; then
  echo "make-bundle: the tarball is over 40 MiB: too big to carry"
  exit 1
fi
case "$OUT" in
  "$ROOT"/*)
    if ! git -C "$ROOT" check-ignore -q "$OUT"; then
      echo "make-bundle: warning: $OUT is not git-ignored; the device tool"
      echo "             carries only ignored paths named in carry"
    fi ;;
esac
echo
cat "$OUT/MANIFEST"
echo "unpacked: $(du -sh "$STAGE" | cut -f1); tarball: $(du -sh "$TARBALL" | cut -f1)"
