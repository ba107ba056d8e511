#!/usr/bin/env bash
# make demo: the seed tour's views as strata IR, before and after the
# compiler folds them, and their values as the reference evaluator sees them.
set -euo pipefail
BUILD=${1:-build}
BIN="$BUILD/bin"
EX="$(dirname "$0")"

banner() { printf '\n=== %s ===\n' "$1"; }

banner "1. Recorded: a chain of views over one 12-element storage (layouts in the types)"
"$BIN/strata-opt" "$EX/seed_views.mlir"

banner "2. strata-opt --strata-fold-views: every chain is one strided_view of the storage"
"$BIN/strata-opt" --strata-fold-views "$EX/seed_views.mlir"

banner "3. strata-opt --strata-pipeline=remarks=true: the one copy left, with its reason and user line"
"$BIN/strata-opt" --strata-pipeline=remarks=true "$EX/seed_views.mlir" 2>&1

banner "4. strata-run: values over arange storage (each value is its storage index)"
"$BIN/strata-run" "$EX/seed_views.mlir"

banner "5. strata-run --engine=jit: the same program through the LLVM JIT"
"$BIN/strata-run" --engine=jit "$EX/seed_views.mlir"

banner "6. The tour in C++ (examples/tour.cpp over strata/strata.h): storage, data pointers, strides, memory, channel shuffle"
"$BIN/strata-tour"

banner "7. Pictures: the recorded trace (strata::save_dot) and the IR (strata-opt --view-op-graph) as Graphviz"
PICS="$BUILD/pictures"
mkdir -p "$PICS"
"$BIN/strata-tour" "$PICS" | grep -E '^ *wrote '
"$BIN/strata-opt" --strata-fold-views --view-op-graph "$EX/seed_views.mlir" \
  -o /dev/null 2> "$PICS/seed_views.dot"
echo "wrote $PICS/seed_views.dot (strata-opt --view-op-graph)"
if command -v dot >/dev/null; then
  for f in "$PICS"/*.dot; do
    dot -Tsvg "$f" -o "${f%.dot}.svg"
    echo "rendered ${f%.dot}.svg"
  done
else
  echo "Graphviz 'dot' not found: install graphviz to render the .dot files"
fi
