#!/usr/bin/env bash
# Incremental decoding (docs/model.md, "Incremental decoding"): greedy decode
# tokens/s with the KV cache against recomputing every sequence from its
# first token at each step, at batch 1 and 16, on the CPU in fp32 with one
# thread. The model is SmolLM2-135M-Instruct as scripts/setup.sh converts it
# (build/models/smollm2-135m-instruct), or random weights of its shape when
# that directory is absent. Prompts of NSS_BENCH_PROMPT random tokens
# (default 32), NSS_BENCH_NEW new tokens (default 16); prefill time excluded.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BUILD_DIR:-build}/bin
MODEL=${NSS_BENCH_MODEL:-${BUILD_DIR:-build}/models/smollm2-135m-instruct}
export OMP_NUM_THREADS=1
args=(--prompt "${NSS_BENCH_PROMPT:-32}" --new "${NSS_BENCH_NEW:-16}" --threads 1)
if [ -f "$MODEL/config.json" ]; then
  args+=(--model "$MODEL")
  echo "model: $MODEL"
else
  args+=(--preset smollm2-135m)
  echo "model: random weights, smollm2-135m shape"
fi
printf '%-6s %-10s %12s %12s\n' batch mode tokens/s prefill_s
for batch in 1 16; do
  for mode in cached recompute; do
    "$BIN/decode_bench" "${args[@]}" --batch "$batch" --mode "$mode" |
      /usr/bin/python3 -c "import json, sys; r = json.load(sys.stdin); print('%-6d %-10s %12.2f %12.3f' % (r['batch'], r['mode'], r['tokens_per_s'], r['prefill_s']))"
  done
done
