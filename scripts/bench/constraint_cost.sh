#!/usr/bin/env bash
# What --constrain schema costs (docs/performance.md, "Constrained
# decoding"): for each tokenizer.json scripts/setup.sh provides (SmolLM2,
# 49,152 tokens; Qwen2.5, 151,936; Gemma 3, 262,144), build/bin/constraint_bench
# times reading each token's bytes and building the automaton with its token
# trie (and the memory they add), then walks NSS_BENCH_RECORDS records
# (default 200) of a product table token by token, timing every mask; and
# build/bin/decode_bench times one cached decode step of SmolLM2 at batch 16
# (fp32, one thread) to put 16 masks beside it. Goal: masks <= 10% of the
# decode step; compile < 2 s and < 100 MB for a 128k vocabulary.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BUILD_DIR:-build}/bin
MODELS=${BUILD_DIR:-build}/models
RECORDS=${NSS_BENCH_RECORDS:-200}
export OMP_NUM_THREADS=1
for tool in constraint_bench decode_bench; do
  [ -x "$BIN/$tool" ] || { echo "no $BIN/$tool: build the project first" >&2; exit 2; }
done
printf '%-28s %8s %9s %9s %9s %12s %12s\n' tokenizer vocab bytes_s build_s rss_MiB cached_mask first_visit
masks=()
for model in smollm2-135m-instruct qwen2.5-coder-0.5b-instruct gemma-3-270m; do
  json="$MODELS/$model/tokenizer.json"
  [ -f "$json" ] || { echo "$model: no $json (scripts/setup.sh converts it)"; continue; }
  out=$("$BIN/constraint_bench" "$json" "$RECORDS")
  line=$(echo "$out" | /usr/bin/python3 -c "import json, sys; r = json.load(sys.stdin); print('%-28s %8d %9.3f %9.3f %9.1f %10.1fus %10.2fms %s' % ('$model', r['vocab'], r['token_bytes_seconds'], r['build_seconds'], r['rss_after_masks_mib'], 1e6 * r['cached_median_seconds'], 1e3 * r['first_visit_median_seconds'], r['mask_total_seconds'] / r['tokens']))")
  echo "${line% *}"
  masks+=("$model=${line##* }")
done
step=$("$BIN/decode_bench" --model "$MODELS/smollm2-135m-instruct" --prompt 32 --new 16 --threads 1 \
         --batch 16 --mode cached | /usr/bin/python3 -c "import json, sys; r = json.load(sys.stdin); print(16 / r['tokens_per_s'])")
for entry in "${masks[@]}"; do
  /usr/bin/python3 -c "
mask, step = float('${entry#*=}'), float('$step')
print('%-28s 16 masks (mean per token %.1f us) = %.2f%% of a SmolLM2 decode step at batch 16 (%.1f ms)' % ('${entry%%=*}', 1e6 * mask, 100 * 16 * mask / step, 1e3 * step))"
done
