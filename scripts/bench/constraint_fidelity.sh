#!/usr/bin/env bash
# How far --constrain schema moves each column's distribution away from what
# the model writes unconstrained (docs/model.md, "Fine-tuning a real model"):
#
#   scripts/bench/constraint_fidelity.sh [STEP]
#
# Without STEP it runs the example in a scratch directory (the 240-row
# product table, SmolLM2-135M-Instruct, 10 LoRA steps on 2 ranks, the
# documented configuration); with STEP it uses that step and the example's
# table (NSS_BENCH_TRAIN: another training CSV). nss_generate then writes
# NSS_BENCH_RECORDS records (default 200) with --constrain schema and with
# --constrain none (same seed, --temperature NSS_BENCH_TEMPERATURE, default
# 0.9, nss_generate's own and the example's; --invalid-fraction-threshold
# NSS_BENCH_INVALID_THRESHOLD, default 0.95, so that the unconstrained run,
# mostly invalid after 10 steps, still reaches its records). Prints both runs'
# figures (valid share, valid records/s, invalid records cut off at
# --max-new-tokens) and per column the Jensen-Shannon distance nss_evaluate's
# column distribution stability uses (column_gap; where nss_evaluate leaves
# a column out, that of its value frequencies): constrained against
# unconstrained with a 95% bootstrap interval, and again between halves of
# each beside the noise floors: the distance between two random halves of
# the constrained rows and of the unconstrained ones (what sampling alone
# gives at that row count); then the training table against each. The gap
# is measured, not judged. BUILD_DIR/bin (default build) holds
# column_gap, NSS_BIN (default BUILD_DIR/bin) the nss_* tools, the model
# NSS_BENCH_MODEL (default NSS_BIN/../models/smollm2-135m-instruct). About 3
# minutes of training and 5 of generation on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BUILD_DIR:-build}/bin
NSS_BIN=${NSS_BIN:-$BIN}
# scripts/setup.sh converts the model into the build that holds the tools.
MODEL=${NSS_BENCH_MODEL:-$(dirname "$NSS_BIN")/models/smollm2-135m-instruct}
RECORDS=${NSS_BENCH_RECORDS:-200}
TEMPERATURE=${NSS_BENCH_TEMPERATURE:-0.9}
INVALID_THRESHOLD=${NSS_BENCH_INVALID_THRESHOLD:-0.95}
STEP=${1:-}
train_csv=${NSS_BENCH_TRAIN:-}
[ -x "$BIN/column_gap" ] || { echo "no $BIN/column_gap: build the target column_gap" >&2; exit 2; }
for tool in nss_prepare_data nss_hpc nss_generate; do
  [ -x "$NSS_BIN/$tool" ] || { echo "no $NSS_BIN/$tool: build the project first" >&2; exit 2; }
done
work=$(mktemp -d /tmp/nss_constraint_fidelity.XXXXXX)
[ -n "${NSS_BENCH_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1
MPI=(mpirun -n 2)
[ "$(id -u)" -eq 0 ] && MPI+=(--allow-run-as-root)

# The example's table: train.csv (240 rows) and heldout.csv (60 rows).
/usr/bin/python3 -c "import sys; sys.path[:0] = ['tests/model', 'tests/e2e']
import test_real_model_e2e as t; t.write_tables('$work')"

if [ -z "$STEP" ]; then
  [ -f "$MODEL/config.json" ] || { echo "no model at $MODEL: run scripts/setup.sh" >&2; exit 2; }
  start=$(date +%s)
  # nss_prepare_data writes the file prepare_data_hf.py does for this format
  # (docs/data.md), so no Python environment is needed.
  for part in train heldout; do
    "$NSS_BIN/nss_prepare_data" --tokenizer "$MODEL" --format records \
      --input "$work/$part.csv" --output "$work/$part.h5" >/dev/null
  done
  cat >"$work/records.yaml" <<YAML
model:
  from_pretrained: $MODEL
data:
  path: $work/train.h5
eval:
  path: $work/heldout.h5
  interval_steps: 2
  batches: 1
training:
  max_steps: 10
  micro_batch_size: 4
  lr: 2.0e-3
  warmup_steps: 2
  lora:
    enabled: true
run:
  output_dir: $work
YAML
  "${MPI[@]}" "$NSS_BIN/nss_hpc" "$work/records.yaml" >"$work/train.log" 2>&1 ||
    { tail -20 "$work/train.log"; exit 1; }
  STEP=$work/checkpoints/step_00000010
  # The rows as trained on (the same cells unless the PII pass changed some).
  [ -n "$train_csv" ] || train_csv=$work/train.training.csv
  echo "trained $STEP in $(($(date +%s) - start)) s" >&2
fi

for constrain in schema none; do
  start=$(date +%s)
  # exit 4 is the early stop on too many invalid records: its records are written
  "$NSS_BIN/nss_generate" --model "$STEP" --records "$RECORDS" --output "$work/$constrain" \
    --max-new-tokens 64 --temperature "$TEMPERATURE" --constrain "$constrain" \
    --invalid-fraction-threshold "$INVALID_THRESHOLD" \
    >"$work/generate_$constrain.log" 2>&1 || [ $? -eq 4 ] || { tail -20 "$work/generate_$constrain.log"; exit 1; }
  echo "generated --constrain $constrain in $(($(date +%s) - start)) s" >&2
done

[ -n "$train_csv" ] || train_csv=$work/train.csv
gap() { "$BIN/column_gap" "$1" "$2" --bootstrap "${NSS_BENCH_BOOTSTRAP:-1000}" --seed 1; }
gap "$work/schema/synthetic.csv" "$work/none/synthetic.csv" >"$work/gap_constrained_unconstrained.json"
gap "$train_csv" "$work/schema/synthetic.csv" >"$work/gap_train_constrained.json"
gap "$train_csv" "$work/none/synthetic.csv" >"$work/gap_train_unconstrained.json"

/usr/bin/python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
print("| --constrain | valid records | valid share | valid records/s | seconds | invalid | cut off at --max-new-tokens |")
print("|---|---|---|---|---|---|---|")
for constrain in ("schema", "none"):
    g = json.load(open(os.path.join(work, constrain, "generation.json")))
    with open(os.path.join(work, constrain, "invalid.jsonl")) as f:
        reasons = [json.loads(line)["reason"] for line in f if line.strip()]
    cut = sum("--max-new-tokens" in r for r in reasons)
    print("| %s | %d | %.1f%%%s | %.2f | %.1f | %d | %d |" % (
        constrain, g["valid_records"], 100 * g["valid_fraction"], "" if g["complete"] else " (stopped early)",
        g["valid_records_per_second"], g["seconds"], g["invalid_records"], cut))
load = lambda name: json.load(open(os.path.join(work, "gap_%s.json" % name)))
pair, vs_schema, vs_none = load("constrained_unconstrained"), load("train_constrained"), load("train_unconstrained")
print("\nrows compared: constrained vs unconstrained %d, train vs constrained %d, train vs unconstrained %d" % (
    pair["rows_compared"], vs_schema["rows_compared"], vs_none["rows_compared"]))
# * : nss_evaluate leaves the column out (a side typed other or text); the
# distance of its value frequencies instead.
fmt = lambda d, c: "-" if d is None else "%.3f%s" % (d, "*" if c["measure"] == "categories" else "")
print("| column | type (train/constrained/unconstrained) | JS constrained vs unconstrained [95%] "
      "| same, halves | noise floor: halves of constrained / of unconstrained "
      "| JS train vs constrained [95%] | JS train vs unconstrained [95%] |")
print("|---|---|---|---|---|---|---|")
interval = lambda c: "" if c["interval_95"] is None else " [%.3f, %.3f]" % tuple(c["interval_95"])
for c, s, n in zip(pair["columns"], vs_schema["columns"], vs_none["columns"]):
    print("| %s | %s/%s/%s | %s%s | %s | %s / %s | %s%s | %s%s |" % (
        c["name"], s["type"], c["type"], c["type_b"], fmt(c["measured"], c), interval(c),
        fmt(c["measured_half_rows"], c), fmt(c["noise_floor"], c), fmt(c["noise_floor_b"], c),
        fmt(s["measured"], s), interval(s), fmt(n["measured"], n), interval(n)))
print("* nss_evaluate leaves the column out (a side typed other or text): the distance of its value frequencies")
PY
