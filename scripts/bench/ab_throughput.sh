#!/usr/bin/env bash
# Two builds side by side (docs/performance.md, "Comparing two builds"):
# interleaved pairs of nss_hpc runs at the benchmark shape of
# throughput_common.sh, the base build first in odd pairs and second in even
# ones, so that drift of this shared machine falls on both. Prints each
# pair's tokens/s and, as the result, the medians and the median of the
# pairs' ratios (new / base), with the range of the ratios as the spread.
#
# usage: ab_throughput.sh BASE_BIN NEW_BIN [RANKS] [--set KEY=VALUE ...]
#   NSS_BENCH_PAIRS (5), NSS_BENCH_STEPS (12) as in throughput_common.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { sed -n 2,11p "$0" >&2; exit 2; }
base_bin=$(realpath "$1") new_bin=$(realpath "$2")
shift 2
ranks=1
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then ranks=$1; shift; fi
for bin in "$base_bin" "$new_bin"; do
  [ -x "$bin/nss_hpc" ] || { echo "ab_throughput: no nss_hpc in $bin (build it first)" >&2; exit 2; }
done
source scripts/bench/throughput_common.sh
BENCH_ARGS=("$@")
PAIRS=${NSS_BENCH_PAIRS:-5}

run_with() {  # BIN NAME: median tokens/s of one run
  local BIN=$1
  median_tokens_per_s "$(bench_run "$ranks" "$2" --set training.global_batch_size=$((4 * ranks)))"
}

base=() new=()
for p in $(seq "$PAIRS"); do
  if [ $((p % 2)) -eq 1 ]; then
    base+=("$(run_with "$base_bin" base_$p)"); new+=("$(run_with "$new_bin" new_$p)")
  else
    new+=("$(run_with "$new_bin" new_$p)"); base+=("$(run_with "$base_bin" base_$p)")
  fi
  echo "pair $p: base ${base[-1]} tok/s, new ${new[-1]} tok/s" >&2
done

/usr/bin/python3 - "${base[*]}" "${new[*]}" "$ranks" <<'PY'
import statistics, sys
base, new = ([float(v) for v in a.split()] for a in sys.argv[1:3])
ratios = [n / b for b, n in zip(base, new)]
print("| %s rank(s), %d pairs | tokens/s |" % (sys.argv[3], len(base)))
print("|---|---|")
print("| base (median) | %.0f |" % statistics.median(base))
print("| new (median) | %.0f |" % statistics.median(new))
print("| new / base (median of the pairs) | %.3f (range %.3f-%.3f) |"
      % (statistics.median(ratios), min(ratios), max(ratios)))
PY
