#!/usr/bin/env bash
# Fails when a C++ source under codegen/ dsl/ jit/ runtime/ tools/ is longer
# than 600 lines (ctest `line-budget`; issue 19, tinygrad's habit: a file
# holds one concept and stays readable). The files that were longer when the
# budget came in are listed in scripts/line-budget-allowlist.txt, each with
# its length then as its own ceiling: they may shrink, never grow. That list
# is debt: split a file and delete its line (a stale line fails too).
#   scripts/check-line-budget.sh [source root]
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
cd "$root"
budget=600
allowlist=scripts/line-budget-allowlist.txt
dirs=(codegen dsl jit runtime tools)
pattern='\.(cpp|cc|h|hpp|inc)$'

# Tracked and untracked (not ignored) files; find in a checkout without git.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard \
    -- "${dirs[@]}" | grep -E "$pattern" | sort -u)
else
  mapfile -t files < <(find "${dirs[@]}" -type f | grep -E "$pattern" | sort)
fi

declare -A ceiling=()
while read -r path lines _; do
  [[ -z "$path" || "$path" == \#* ]] && continue
  ceiling[$path]=$lines
done <"$allowlist"

failed=0
for f in "${files[@]}"; do
  [[ -f "$f" ]] || continue # deleted but not yet staged
  n=$(awk 'END { print NR }' "$f")
  if [[ -n "${ceiling[$f]:-}" ]]; then
    limit=${ceiling[$f]}
    if ((n > limit)); then
      echo "line-budget: $f has $n lines, more than its allowlisted $limit:" \
        "split it instead of growing it" >&2
      failed=1
    elif ((n <= budget)); then
      echo "line-budget: $f has $n lines, within the budget of $budget:" \
        "delete its line from $allowlist" >&2
      failed=1
    elif ((n < limit)); then
      echo "line-budget: note: $f shrank to $n lines; lower its ceiling" \
        "($limit) in $allowlist"
    fi
    unset "ceiling[$f]"
  elif ((n > budget)); then
    echo "line-budget: $f has $n lines, more than $budget: split it by" \
      "concept (docs/design.md \"Testing\")" >&2
    failed=1
  fi
done
for f in "${!ceiling[@]}"; do
  echo "line-budget: $allowlist lists $f, which does not exist:" \
    "delete its line" >&2
  failed=1
done
if ((failed)); then
  exit 1
fi
echo "line-budget: ${#files[@]} files checked, none over $budget lines" \
  "but the allowlisted debt ($(grep -cv -e '^#' -e '^$' "$allowlist") files)"
