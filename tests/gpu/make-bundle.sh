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
# Writes OUT_DIR (default: gpu-bundle/ in the repo root, git-ignored):
#   strata-gpu-bundle.tar.xz  bin/strata-gpu (stripped) and a link per
#                             program, lib/, MANIFEST; run.sh --bundle
#                             unpacks it under its build directory
#   MANIFEST                  the commit, compiler, NEEDED libraries, sizes
# Exit status: 0 when the bundle was written and its binary starts here with
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
run cmake --build "$BUILD" -j "$JOBS" --target strata-gpu

STAGE="$BUILD/gpu-bundle"
rm -rf "$STAGE"
mkdir -p "$STAGE/bin" "$STAGE/lib"
run strip --strip-all -o "$STAGE/bin/strata-gpu" "$BUILD/bin/strata-gpu"
for p in "${PROGRAMS[@]}"; do
  ln -s strata-gpu "$STAGE/bin/$p"
done

# Every NEEDED library is glibc's, NVRTC (the GPU machine's) or copied.
NEEDED=$(readelf -d "$STAGE/bin/strata-gpu" |
  sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
NVRTC=""
for lib in $NEEDED; do
  case " $GLIBC " in *" $lib "*) continue ;; esac
  case "$lib" in
    libnvrtc.so.*)
      echo "make-bundle: strata-gpu links $lib; NVRTC must be dlopen'ed"
      exit 1 ;;
  esac
  path=$(ldd "$BUILD/bin/strata-gpu" | awk -v l="$lib" '$1 == l { print $3 }')
  if [ -z "$path" ] || [ ! -f "$path" ]; then
    echo "make-bundle: $lib (NEEDED by strata-gpu) not found"
    exit 1
  fi
  cp -L "$path" "$STAGE/lib/$lib"
  for dep in $(readelf -d "$STAGE/lib/$lib" |
    sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    case " $GLIBC " in *" $dep "*) ;; *)
      echo "make-bundle: $lib needs $dep, which is not glibc's"
      exit 1 ;;
    esac
  done
done
# NVRTC is loaded at run time by its soname (jit/CMakeLists.txt).
NVRTC=$(cat "$BUILD/nvrtc-soname" 2>/dev/null || true)
if [ -z "$NVRTC" ]; then
  echo "make-bundle: $BUILD/nvrtc-soname is missing (CUDA toolkit not found?)"
  exit 1
fi
echo "$NVRTC" > "$STAGE/nvrtc-soname"

# The binary starts with no environment and none of LLVM's directories.
run env -i PATH=/usr/bin:/bin "$STAGE/bin/strata-run" --version

{
  echo "strata GPU bundle (tests/gpu/make-bundle.sh)"
  echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)$(
    git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(
    ldd --version | head -1)"
  echo "compiler: $(grep '^CMAKE_CXX_COMPILER:' "$BUILD/CMakeCache.txt" |
    cut -d= -f2)"
  echo "programs: ${PROGRAMS[*]} (links to bin/strata-gpu)"
  echo "NEEDED: $(echo $NEEDED)"
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
