#!/usr/bin/env bash
# What a privacy budget costs on the real-model records example
# (docs/model.md, "Fine-tuning a real model"; docs/privacy.md, "Privacy
# against utility"): SmolLM2-135M-Instruct is LoRA-tuned on the 240-row
# product table for NSS_BENCH_STEPS steps (default 10, as the example) without
# privacy and with DP-SGD at epsilon 8, 4 and 1 (every run one record per row,
# data.packing none, so only the privacy differs), each trained model writes
# NSS_BENCH_RECORDS synthetic records (default 60) and nss_evaluate scores them
# against the training rows and the 60 held-out rows. Prints one row per
# budget: epsilon reached, held-out loss, valid share of the generated
# records, SQS, DPS and their components. A run whose generation stops early
# (too many invalid records) is evaluated on the records it wrote.
# NSS_BENCH_CONSTRAIN (schema, the default, or none) is nss_generate's
# --constrain. Needs scripts/setup.sh's build and models; about 5 minutes a
# row on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BUILD_DIR:-build}/bin
MODEL=${NSS_BENCH_MODEL:-build/models/smollm2-135m-instruct}
STEPS=${NSS_BENCH_STEPS:-10}
RECORDS=${NSS_BENCH_RECORDS:-60}
BUDGETS=${NSS_BENCH_BUDGETS:-"none 8 4 1"}
# nss_generate's --constrain: schema (its default: every record it finishes
# is valid) or none (the model's tokens alone, as before it existed).
CONSTRAIN=${NSS_BENCH_CONSTRAIN:-schema}
[ -f "$MODEL/config.json" ] || { echo "no model at $MODEL: run scripts/setup.sh" >&2; exit 2; }
work=$(mktemp -d /tmp/nss_privacy_utility.XXXXXX)
[ -n "${NSS_BENCH_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1
MPI=(mpirun --oversubscribe -n 2)
[ "$(id -u)" -eq 0 ] && MPI+=(--allow-run-as-root)

# The example's table: train.csv (240 rows) and heldout.csv (60 rows).
/usr/bin/python3 -c "import sys; sys.path[:0] = ['tests/model', 'tests/e2e']
import test_real_model_e2e as t; t.write_tables('$work')"
for part in train heldout; do
  build/venv/bin/python scripts/prepare_data_hf.py --tokenizer "$MODEL" --format records \
    --input "$work/$part.csv" --output "$work/$part.h5" >/dev/null
done

# run_budget NAME [--set ...]: trains, generates and evaluates into $work/NAME.
run_budget() {
  local name=$1 dir="$work/$1"
  shift
  mkdir -p "$dir"
  "${MPI[@]}" "$BIN/nss_hpc" configs/run.yaml --set model.from_pretrained="$MODEL" \
    --set data.path="$work/train.h5" --set data.packing=none --set eval.path="$work/heldout.h5" \
    --set eval.interval_steps="$STEPS" --set eval.batches=1 --set training.max_steps="$STEPS" \
    --set training.micro_batch_size=4 --set training.lr=2.0e-3 --set training.warmup_steps=2 \
    --set training.lora.enabled=true --set run.output_dir="$dir" "$@" >"$dir/train.log" 2>&1 ||
    { tail -20 "$dir/train.log"; exit 1; }
  local step
  step="$dir/checkpoints/$(printf 'step_%08d' "$STEPS")"
  # exit 4 is the early stop on too many invalid records: its records are written
  "${MPI[@]}" "$BIN/nss_generate" --model "$step" --records "$RECORDS" --output "$dir/synthetic" \
    --max-new-tokens 64 --batch-size 8 --constrain "$CONSTRAIN" >"$dir/generate.log" 2>&1 ||
    [ $? -eq 4 ] || { tail -20 "$dir/generate.log"; exit 1; }
  "$BIN/nss_evaluate" --train "$work/train.csv" --holdout "$work/heldout.csv" \
    --synthetic "$dir/synthetic/synthetic.csv" --output "$dir/evaluation" >"$dir/evaluate.log" 2>&1 ||
    echo "no evaluation: $(grep -m1 "error:" "$dir/evaluate.log" | sed "s/.*error: //; s|$work/||g")" >"$dir/evaluation.failed"
}

names=()
for budget in $BUDGETS; do
  start=$(date +%s)
  if [ "$budget" = none ]; then
    run_budget none
  else
    run_budget "eps_$budget" --set privacy.enabled=true --set privacy.target_epsilon="$budget"
  fi
  names+=("$([ "$budget" = none ] && echo none || echo "eps_$budget")")
  echo "budget $budget: $(($(date +%s) - start)) s" >&2
done

/usr/bin/python3 - "$work" "${names[@]}" <<'PY'
import json, os, sys
work, names = sys.argv[1], sys.argv[2:]
def score(summary, key):
    value = summary.get(key)
    return "-" if value is None else "%.1f" % value
print("| privacy | epsilon | held-out loss | valid records | SQS | distribution | correlation | structure "
      "| DPS | membership | attribute |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for name in names:
    d = os.path.join(work, name)
    rows = [json.loads(l) for l in open(os.path.join(d, "metrics.jsonl")) if l.strip()]
    steps = [r for r in rows if "event" not in r]
    evals = [r for r in rows if r.get("event") == "eval"]
    epsilon = steps[-1].get("epsilon")
    generation = json.load(open(os.path.join(d, "synthetic", "generation.json")))
    valid = "%d of %d (%.0f%%)%s" % (generation["valid_records"], generation["valid_records"] +
                                     generation["invalid_records"], 100 * generation["valid_fraction"],
                                     "" if generation["complete"] else ", stopped early")
    failed = os.path.join(d, "evaluation.failed")
    if os.path.exists(failed):
        summary = {}
        valid += "; " + open(failed).read().strip()
    else:
        summary = json.load(open(os.path.join(d, "evaluation", "evaluation.json")))["summary"]
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        "none" if name == "none" else "DP-SGD", "-" if epsilon is None else "%.2f" % epsilon,
        "%.3f" % evals[-1]["val_loss"] if evals else "-", valid,
        score(summary, "synthetic_data_quality_score"), score(summary, "column_distribution_stability_score"),
        score(summary, "column_correlation_stability_score"), score(summary, "deep_structure_stability_score"),
        score(summary, "data_privacy_score"), score(summary, "membership_inference_protection_score"),
        score(summary, "attribute_inference_protection_score")))
PY
