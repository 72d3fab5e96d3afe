#!/usr/bin/env bash
# nss_evaluate's speed (docs/evaluate.md, "Scale"; docs/performance.md):
#   1. side by side with NeMo Safe Synthesizer 0.1.16's own evaluator on the
#      same 5,000 rows (its limit: it samples 5,000 rows), interleaved and
#      repeated NSS_BENCH_REPEATS times (default 3): the reference in the venv
#      scripts/make_evaluation_fixtures.sh builds (NSS_EVAL_VENV, default
#      build-eval/eval-venv) times its own evaluation call
#      (scripts/evaluation_reference.py --time 5000 --write DIR, which also
#      writes the CSVs it evaluated); nss_evaluate is timed on those CSVs, the
#      whole process (reading them included). Medians and the median ratio.
#   2. nss_evaluate alone at 100,000 rows x 50 columns (30 numeric, 20
#      categorical, a 2,000-row holdout): median wall time and peak resident
#      memory of the repeats.
# Goals: >= 5x faster at 5,000 rows; under two minutes at 100,000.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BUILD_DIR:-build}/bin
VENV=${NSS_EVAL_VENV:-build-eval/eval-venv}
REPEATS=${NSS_BENCH_REPEATS:-3}
[ -x "$VENV/bin/python" ] || { echo "no reference venv at $VENV: run scripts/make_evaluation_fixtures.sh" >&2; exit 2; }
work=$(mktemp -d /tmp/nss_evaluate_speed.XXXXXX)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

# seconds and peak KiB of one nss_evaluate run: "SECONDS KIB"
timed_evaluate() {  # train holdout synthetic output
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$BIN/nss_evaluate" --train "$1" --holdout "$2" \
    --synthetic "$3" --output "$4" > /dev/null
  cat "$work/time.txt"
}

ref_times=() ours_times=() ratios=()
for repeat in $(seq "$REPEATS"); do
  data="$work/ref_$repeat"
  ref=$(PYTHONHASHSEED=0 "$VENV/bin/python" scripts/evaluation_reference.py --time 5000 --write "$data" |
        awk '/ seconds$/ {print $1}')
  ours=$(timed_evaluate "$data/train.csv" "$data/holdout.csv" "$data/synthetic.csv" "$work/out_$repeat" |
         awk '{print $1}')
  ref_times+=("$ref") ours_times+=("$ours")
  ratios+=("$(awk -v r="$ref" -v o="$ours" 'BEGIN {printf "%.1f", r / (o > 0.01 ? o : 0.01)}')")
  echo "repeat $repeat: reference ${ref} s, nss_evaluate ${ours} s" >&2
done

/usr/bin/python3 - "$work/big" <<'PY'
import os, random, sys
os.makedirs(sys.argv[1])
def table(path, rows, seed):
    r = random.Random(seed)
    with open(path, "w") as f:
        f.write(",".join(["n%d" % i for i in range(30)] + ["c%d" % i for i in range(20)]) + "\n")
        for _ in range(rows):
            f.write(",".join(["%.4f" % r.gauss(i, 1 + i % 3) for i in range(30)] +
                             ["k%d" % r.randrange(2 + i % 8) for i in range(20)]) + "\n")
table(os.path.join(sys.argv[1], "train.csv"), 100000, 1)
table(os.path.join(sys.argv[1], "synthetic.csv"), 100000, 2)
table(os.path.join(sys.argv[1], "holdout.csv"), 2000, 3)
PY
big_times=() big_kib=()
for repeat in $(seq "$REPEATS"); do
  read -r seconds kib < <(timed_evaluate "$work/big/train.csv" "$work/big/holdout.csv" \
                            "$work/big/synthetic.csv" "$work/big_out_$repeat")
  big_times+=("$seconds") big_kib+=("$kib")
done

echo "| measurement | median | runs |"
echo "|---|---|---|"
echo "| reference evaluator, 5,000 rows (s) | $(printf '%s\n' "${ref_times[@]}" | median) | ${ref_times[*]} |"
echo "| nss_evaluate, same 5,000 rows (s) | $(printf '%s\n' "${ours_times[@]}" | median) | ${ours_times[*]} |"
echo "| speed-up (per repeat) | $(printf '%s\n' "${ratios[@]}" | median)x | ${ratios[*]} |"
echo "| nss_evaluate, 100,000 rows x 50 columns (s) | $(printf '%s\n' "${big_times[@]}" | median) | ${big_times[*]} |"
echo "| nss_evaluate, 100,000 rows, peak resident (MiB) | $(printf '%s\n' "${big_kib[@]}" | median | awk '{printf "%.0f", $1 / 1024}') | ${big_kib[*]} KiB |"
