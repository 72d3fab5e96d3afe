# Sourced by the throughput benchmarks (from the repository root): one rank
# per core without thread oversubscription, a scratch directory $work removed
# at exit, the benchmark shape (hidden 256, intermediate 688, 4 layers, 8
# heads / 4 KV heads, seq 256, micro-batch 4, fp32, no preflight, evaluation
# or checkpoints), bench_run, and the median tokens/s of a run.
BIN=${BUILD_DIR:-build}/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
REPEATS=${NSS_BENCH_REPEATS:-3}
STEPS=${NSS_BENCH_STEPS:-12}
export OMP_NUM_THREADS=1
MPI=(mpirun --oversubscribe)
[ "$(id -u)" -eq 0 ] && MPI+=(--allow-run-as-root)
[ -f data/default/train.h5 ] || scripts/prepare_default_data.sh >/dev/null

SHAPE=(--set model.preset=tiny --set model.hidden_size=256 --set model.intermediate_size=688
       --set model.num_hidden_layers=4 --set model.num_attention_heads=8
       --set model.num_key_value_heads=4 --set model.head_dim=32 --set data.seq_len=256
       --set training.micro_batch_size=4 --set training.dtype=fp32
       --set training.max_steps="$STEPS" --set training.warmup_steps=2
       --set logging.interval_steps=1 --set eval.interval_steps=0 --set checkpoint.interval_steps=0
       --set preflight.enabled=false --set data.num_workers=1)

# Median tokens/s of a run's steps after the first two (start-up, warm caches).
median_tokens_per_s() {
  /usr/bin/python3 - "$1" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(statistics.median(r["tokens_per_s"] for r in rows if "event" not in r and r["step"] > 2))
PY
}

# bench_run RANKS NAME [--set ...]: nss_hpc on RANKS ranks with SHAPE, the
# caller's BENCH_ARGS and the extra overrides, into $work/NAME; prints the
# path of its metrics.jsonl (its log instead, and exits, when it fails).
BENCH_ARGS=()
bench_run() {
  local ranks=$1 dir="$work/$2"
  shift 2
  "${MPI[@]}" -n "$ranks" "$BIN/nss_hpc" configs/run.yaml "${SHAPE[@]}" "${BENCH_ARGS[@]}" "$@" \
    --set run.output_dir="$dir" >"$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
  echo "$dir/metrics.jsonl"
}
