#!/usr/bin/env bash
# Training throughput, side by side in one invocation (docs/performance.md):
#   nss_hpc at 1 rank, the same model in plain PyTorch (per-block activation
#   checkpointing, same thread count), nss_hpc at 2 ranks (weak scaling: the
#   global batch grows with the ranks), and per-rank model-state memory at 1
#   and 4 ranks. Each measurement is repeated (NSS_BENCH_REPEATS, default 3),
#   interleaved, and the medians are reported.
# Shape: hidden 256, intermediate 688, 4 layers, 8 heads / 4 KV heads, seq 256,
# micro-batch 4, fp32, OMP_NUM_THREADS=1.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/throughput_common.sh

model_state_bytes() {
  /usr/bin/python3 -c "import json,sys; print(next(json.loads(l)['model_state_bytes'] for l in open(sys.argv[1]) if '\"memory\"' in l))" "$1"
}

nss_run() {  # ranks global_batch name
  bench_run "$1" "$3" --set training.global_batch_size="$2"
}

one=() torch=() two=()
for r in $(seq "$REPEATS"); do
  one+=("$(median_tokens_per_s "$(nss_run 1 4 one_$r)")")
  torch+=("$(/usr/bin/python3 scripts/bench/torch_llama_step.py --steps $((STEPS - 2)) --warmup 2 \
            --threads 1 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens_per_s"])')")
  two+=("$(median_tokens_per_s "$(nss_run 2 8 two_$r)")")
  echo "repeat $r: nss_hpc 1 rank ${one[-1]} tok/s, PyTorch ${torch[-1]} tok/s, nss_hpc 2 ranks ${two[-1]} tok/s" >&2
done
state_one=$(model_state_bytes "$(nss_run 1 4 mem_1)")
state_four=$(model_state_bytes "$(nss_run 4 16 mem_4)")

/usr/bin/python3 - "$state_one" "$state_four" "${one[*]}" "${torch[*]}" "${two[*]}" <<'PY'
import statistics, sys
state_one, state_four = int(sys.argv[1]), int(sys.argv[2])
one, torch, two = (statistics.median(map(float, a.split())) for a in sys.argv[3:6])
print("| measurement | value | goal |")
print("|---|---|---|")
print("| nss_hpc, 1 rank | %.0f tokens/s | |" % one)
print("| plain PyTorch, 1 process | %.0f tokens/s | |" % torch)
print("| nss_hpc / PyTorch | %.2fx | >= 1.0x |" % (one / torch))
print("| nss_hpc, 2 ranks (global batch x2) | %.0f tokens/s | |" % two)
print("| weak-scaling efficiency 1 -> 2 ranks | %.2f | >= 0.85 |" % (two / (2 * one)))
print("| model state per rank, 1 rank | %.2f MiB | |" % (state_one / 2**20))
print("| model state per rank, 4 ranks | %.2f MiB | |" % (state_four / 2**20))
print("| 4 ranks / 1 rank | %.2fx | <= 0.3x |" % (state_four / state_one))
PY
