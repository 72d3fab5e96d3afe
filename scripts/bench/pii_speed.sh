#!/usr/bin/env bash
# PII detection's speed on one core (docs/performance.md, "PII detection"): the
# mixed labelled table of tests/pii/labelled_table.h (24 entity columns, 12
# decoy columns, free text) at NSS_BENCH_ROWS rows per column (default
# 4000: 156,000 cells), classified and scanned NSS_BENCH_REPEATS times
# (default 5) by build/bin/pii_speed_bench; prints each run and the medians.
# Goal: >= 1 million cells per second per core.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BUILD_DIR:-build}/bin
ROWS=${NSS_BENCH_ROWS:-4000}
REPEATS=${NSS_BENCH_REPEATS:-5}
[ -x "$BIN/pii_speed_bench" ] || { echo "no $BIN/pii_speed_bench: build the project first" >&2; exit 2; }
out=$(taskset -c 0 "$BIN/pii_speed_bench" "$ROWS" "$REPEATS" 2>/dev/null || "$BIN/pii_speed_bench" "$ROWS" "$REPEATS")
echo "$out"
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
echo "median: detection $(echo "$out" | awk '{print $2}' | median) cells/s," \
     "scanner $(echo "$out" | sed 's/.*scanner \([0-9]*\) .*/\1/' | median) cells/s"
