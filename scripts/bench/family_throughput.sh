#!/usr/bin/env bash
# Training throughput per model family against PyTorch eager (docs/performance.md):
#   for each family of NSS_BENCH_FAMILIES (default all six; spaces or commas),
#   nss_hpc at 1 rank and scripts/bench/torch_llama_step.py --family at the same
#   shape and semantics, interleaved and repeated NSS_BENCH_REPEATS times
#   (default 3, which of the two goes first alternating), then a markdown table
#   with the median tokens/s of each and the median of the per-repeat ratios.
# Shape: train_throughput.sh's (hidden 256, intermediate 688, 4 layers, 8 heads /
# 4 KV heads, head_dim 32, seq 256, micro-batch 4, fp32, OMP_NUM_THREADS=1), and
# per family: Mistral slides in a window of 128 on every layer; Gemma 3 on the
# first three of four (their own RoPE base 1e4, the global one 1e6, query scale
# 32^-1/2); SmolLM3's fourth layer has no RoPE. Both sides' parameter counts are
# printed and must be equal (nss_hpc's from its final checkpoint's tensors).
# PyTorch is the test venv's ($BUILD_DIR/venv, over Debian's python3-torch;
# NSS_BENCH_PYTHON for another).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/throughput_common.sh

PYTHON=${NSS_BENCH_PYTHON:-${BUILD_DIR:-build}/venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=/usr/bin/python3
ALL="llama qwen2 mistral qwen3 smollm3 gemma3"
families=${NSS_BENCH_FAMILIES:-$ALL}
read -r -a FAMILIES <<<"${families//,/ }"
WINDOW=128

# family_args FAMILY: sets NSS (nss_hpc --set overrides) and TORCH (torch_llama_step.py flags).
family_args() {
  NSS=(--set model.family="$1") TORCH=(--family "$1" --head-dim 32)
  case $1 in
    llama | qwen2 | qwen3) ;;
    mistral)
      NSS+=(--set model.sliding_window=$WINDOW
            --set "model.layer_types=[sliding_attention,sliding_attention,sliding_attention,sliding_attention]")
      TORCH+=(--window $WINDOW
              --layer-types sliding_attention,sliding_attention,sliding_attention,sliding_attention) ;;
    smollm3)
      NSS+=(--set "model.layer_types=[full_attention,full_attention,full_attention,full_attention_no_rope]")
      TORCH+=(--layer-types full_attention,full_attention,full_attention,full_attention_no_rope) ;;
    gemma3)
      NSS+=(--set model.sliding_window=$WINDOW
            --set "model.layer_types=[sliding_attention,sliding_attention,sliding_attention,full_attention]"
            --set model.rope_theta=1000000 --set model.rope_local_theta=10000
            --set model.query_pre_attn_scalar=32)
      TORCH+=(--window $WINDOW --layer-types sliding_attention,sliding_attention,sliding_attention,full_attention
              --rope-theta 1000000 --rope-local-theta 10000 --query-pre-attn-scalar 32) ;;
    *) echo "NSS_BENCH_FAMILIES: unknown family '$1' (use some of: $ALL)" >&2; exit 2 ;;
  esac
}

# The parameters of the model a run saved last (model.* and lm_head.*, each once).
checkpoint_parameters() {
  /usr/bin/python3 - "$1" <<'PY'
import json, math, pathlib, sys
step = sorted(pathlib.Path(sys.argv[1], "checkpoints").glob("step_*"))[-1]
tensors = json.load(open(step / "metadata.json"))["tensors"]
print(sum(math.prod(t["shape"]) for name, t in tensors.items() if name.startswith(("model.", "lm_head."))))
PY
}

json_field() { /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.readlines()[-1])[sys.argv[1]])' "$1"; }

nss_side() {  # family repeat
  local metrics
  metrics=$(bench_run 1 "$1_$2" --set training.global_batch_size=4 "${NSS[@]}") ||
    { echo "$metrics" >&2; exit 1; }
  nss_tps=$(median_tokens_per_s "$metrics")
  nss_params=$(checkpoint_parameters "$work/$1_$2")
  rm -rf "${work:?}/$1_$2/checkpoints"
}

torch_side() {
  local out
  out=$("$PYTHON" scripts/bench/torch_llama_step.py --steps $((STEPS - 2)) --warmup 2 --threads 1 "${TORCH[@]}")
  torch_tps=$(json_field tokens_per_s <<<"$out")
  torch_params=$(json_field parameters <<<"$out")
}

rows=()
for fam in "${FAMILIES[@]}"; do family_args "$fam"; done  # reject unknown names before any run
for r in $(seq "$REPEATS"); do
  for fam in "${FAMILIES[@]}"; do
    family_args "$fam"
    if [ $((r % 2)) = 1 ]; then nss_side "$fam" "$r"; torch_side; else torch_side; nss_side "$fam" "$r"; fi
    echo "repeat $r $fam: nss_hpc $nss_tps tok/s, PyTorch $torch_tps tok/s; parameters nss_hpc $nss_params, PyTorch $torch_params" >&2
    if [ "$nss_params" != "$torch_params" ]; then
      echo "$fam: nss_hpc has $nss_params parameters, the PyTorch model $torch_params: not the same model" >&2
      exit 1
    fi
    rows+=("$fam $nss_tps $torch_tps $nss_params")
  done
done

echo "PyTorch $("$PYTHON" -c 'import torch; print(torch.__version__)') eager ($PYTHON), $REPEATS repeat(s), $STEPS steps each"
/usr/bin/python3 - "${FAMILIES[*]}" "${rows[@]}" <<'PY'
import statistics, sys
families, rows = sys.argv[1].split(), [r.split() for r in sys.argv[2:]]
print("| family | parameters (both) | nss_hpc tokens/s | PyTorch tokens/s | nss_hpc / PyTorch (median, min-max) | goal |")
print("|---|---|---|---|---|---|")
for family in families:
    mine = [r for r in rows if r[0] == family]
    nss, torch = ([float(r[i]) for r in mine] for i in (1, 2))
    ratios = [a / b for a, b in zip(nss, torch)]
    print("| %s | %s | %.0f | %.0f | %.2fx (%.2f-%.2f) | >= 1.0x |" % (
        family, mine[0][3], statistics.median(nss), statistics.median(torch),
        statistics.median(ratios), min(ratios), max(ratios)))
PY
