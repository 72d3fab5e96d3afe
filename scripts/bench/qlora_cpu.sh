#!/usr/bin/env bash
# LoRA against QLoRA on the CPU, side by side in one invocation
# (docs/performance.md, "QLoRA"): the benchmark shape of throughput_common.sh
# widened to hidden 512 / intermediate 1536 so the projections dominate,
# adapters of rank 16 on all seven projections, 2 ranks, fp32. Reports the
# median step time (the dequantisation's cost), the frozen base's bytes per
# rank (metrics.jsonl "memory" event) and the measured tensor peak
# (peak_mem_bytes), medians over NSS_BENCH_REPEATS interleaved runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/throughput_common.sh

BENCH_ARGS=(--set model.hidden_size=512 --set model.intermediate_size=1536
            --set training.lora.enabled=true --set training.lora.rank=16
            --set "training.lora.targets=[q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj]"
            --set training.global_batch_size=8)
files_lora=() files_qlora=() files_dq=()
for r in $(seq "$REPEATS"); do
  files_lora+=("$(bench_run 2 lora_$r)")
  files_qlora+=("$(bench_run 2 qlora_$r --set training.lora.quantize_base=nf4)")
  files_dq+=("$(bench_run 2 dq_$r --set training.lora.quantize_base=nf4 --set training.lora.double_quant=true)")
done
/usr/bin/python3 - "${files_lora[*]}" "${files_qlora[*]}" "${files_dq[*]}" <<'PY'
import json, statistics, sys
def summary(files):
    times, peaks, base = [], [], None
    for f in files.split():
        rows = [json.loads(l) for l in open(f) if l.strip()]
        memory = next(r for r in rows if r.get("event") == "memory")
        base = memory["frozen_bytes"] + memory.get("quantized_base_bytes", 0)
        steps = [r for r in rows if "event" not in r and r["step"] > 2]
        times.append(statistics.median(r["step_time_s"] for r in steps))
        peaks.append(max(r["peak_mem_bytes"] for r in steps))
    return statistics.median(times), base, statistics.median(peaks)
rows = [("LoRA (fp32 base)",) + summary(sys.argv[1]), ("QLoRA NF4",) + summary(sys.argv[2]),
        ("QLoRA NF4 + double quant",) + summary(sys.argv[3])]
base_time, base_bytes = rows[0][1], rows[0][2]
print("| run | step time | vs LoRA | frozen base per rank | vs LoRA | tensor peak |")
print("|---|---|---|---|---|---|")
for name, t, b, p in rows:
    print("| %s | %.3f s | %.2fx | %.2f MiB | %.3fx | %.1f MiB |" % (
        name, t, t / base_time, b / 2**20, b / base_bytes, p / 2**20))
PY
