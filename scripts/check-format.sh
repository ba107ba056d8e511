#!/usr/bin/env bash
# Fails when a C++ source of the tree is not formatted as .clang-format
# says (ctest `format`; issue 19). Fix with:
#   git ls-files '*.cpp' '*.h' | xargs clang-format -i
# A checkout without git (a source archive) checks the files find lists.
set -euo pipefail
cd "$(dirname "$0")/.."
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h')
else
  mapfile -t files < <(find benchmarks codegen dsl examples jit runtime \
    tests tools -name '*.cpp' -o -name '*.h')
fi
clang-format --dry-run --Werror "${files[@]}"
echo "clang-format: ${#files[@]} files clean"
