#!/usr/bin/env bash
# training.activation_checkpointing full, selective and none on the CPU, side
# by side in one invocation (docs/performance.md, "Selective recompute"): the
# benchmark shape of throughput_common.sh at seq 512 (attention's share of the
# step grows with the sequence), 2 ranks, fp32. Each mode runs
# NSS_BENCH_REPEATS times, interleaved; reported: the median tokens/s, the
# step's peak of tensor memory per rank (metrics.jsonl peak_mem_bytes), the
# preflight's analytic prediction of it (a separate run with the preflight on:
# preflight.json, check memory.synthetic_step) and the final loss (the three
# modes train identically).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/throughput_common.sh
BENCH_ARGS=(--set data.seq_len=512 --set training.global_batch_size=8)

last_loss() {
  /usr/bin/python3 -c "import json,sys; rows=[json.loads(l) for l in open(sys.argv[1]) if '\"event\"' not in l]; print(repr(rows[-1]['loss']))" "$1"
}
peak_bytes() {
  /usr/bin/python3 -c "import json,sys; print(max(json.loads(l).get('peak_mem_bytes', 0) for l in open(sys.argv[1])))" "$1"
}
# The preflight's per-rank tensor peak for the mode (its synthetic step and
# model; the job itself stops after the verdict: max_steps 1).
predicted_bytes() {
  local dir="$work/predict_$1"
  bench_run 2 "predict_$1" --set training.activation_checkpointing="$1" \
    --set preflight.enabled=true --set training.max_steps=1 >/dev/null
  /usr/bin/python3 - "$dir/preflight.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
print(next(c["predicted"] for c in report["checks"] if c["id"] == "memory.synthetic_step"))
PY
}

declare -A tokens peak loss predicted
for r in $(seq "$REPEATS"); do
  for mode in full selective none; do
    metrics=$(bench_run 2 "${mode}_$r" --set training.activation_checkpointing="$mode")
    rate=$(median_tokens_per_s "$metrics")
    tokens[$mode]+="$rate "
    peak[$mode]=$(peak_bytes "$metrics")
    loss[$mode]=$(last_loss "$metrics")
    echo "repeat $r: $mode $rate tokens/s" >&2
  done
done
for mode in full selective none; do predicted[$mode]=$(predicted_bytes "$mode"); done

/usr/bin/python3 - <<PY
import statistics
rows = {
    "full": ("${tokens[full]}", ${peak[full]}, ${predicted[full]}, "${loss[full]}"),
    "selective": ("${tokens[selective]}", ${peak[selective]}, ${predicted[selective]}, "${loss[selective]}"),
    "none": ("${tokens[none]}", ${peak[none]}, ${predicted[none]}, "${loss[none]}"),
}
full = statistics.median(map(float, rows["full"][0].split()))
print("| activation_checkpointing | tokens/s (median) | vs full | peak MiB per rank | predicted MiB | predicted / peak | final loss |")
print("|---|---|---|---|---|---|---|")
for mode, (tokens, peak, predicted, loss) in rows.items():
    t = statistics.median(map(float, tokens.split()))
    print("| %s | %.0f | %.2fx | %.2f | %.2f | %+.1f%% | %s |" % (
        mode, t, t / full, peak / 2**20, predicted / 2**20, 100 * (predicted / peak - 1), loss))
PY
