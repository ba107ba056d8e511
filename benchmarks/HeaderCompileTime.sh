#!/usr/bin/env bash
# How heavy <strata/strata.h> is for users: compiles a small program that
# includes it with g++ -O2 (-c, no link) and reports wall time and peak
# memory (GNU time -v). Budget (issue 9): under 2 s and 300 MB.
#   ./benchmarks/HeaderCompileTime.sh [BUILD_DIR]
# Exit status 1 when over budget (STRATA_HEADER_BUDGET_WARN_ONLY=1: warn).
set -euo pipefail
build_dir="${1:-build}"
src="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/user.cpp" <<'CPP'
#include <strata/strata.h>
#include <iostream>
int main() {
  using namespace strata;
  Tensor a = arange(12, kFloat32).reshape({3, 4});
  Tensor b = (a.t() * 2 + 1).relu().sum({1});
  std::cout << b << "\n" << a.explain() << "\n";
  save(b, "b.npy");
  return load("b.npy").numel() == 4 ? 0 : 1;
}
CPP
if [[ ! -f "$build_dir/include/strata/Version.h" ]]; then
  echo "HeaderCompileTime: $build_dir/include/strata/Version.h missing;" \
       "configure the build first" >&2
  exit 1
fi
cmd=(g++ -std=c++20 -O2 -I"$src/dsl/include" -I"$build_dir/include"
     -c "$work/user.cpp" -o "$work/user.o")
/usr/bin/time -v "${cmd[@]}" 2> "$work/time.txt"
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time.txt")
kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
secs=$(awk -v w="$wall" 'BEGIN { n = split(w, p, ":"); s = 0;
  for (i = 1; i <= n; ++i) s = s * 60 + p[i]; printf "%.2f", s }')
mb=$((kb / 1024))
printf 'header compile time (g++ -O2, #include <strata/strata.h>): %s s, peak RSS %d MB (budget 2 s, 300 MB)\n' \
  "$secs" "$mb"
if awk -v s="$secs" -v m="$mb" 'BEGIN { exit !(s > 2.0 || m > 300) }'; then
  echo "HeaderCompileTime: OVER BUDGET" >&2
  [[ "${STRATA_HEADER_BUDGET_WARN_ONLY:-0}" == 1 ]] || exit 1
fi
