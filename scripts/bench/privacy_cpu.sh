#!/usr/bin/env bash
# DP-SGD against plain LoRA on the CPU, side by side in one invocation
# (docs/performance.md, "Private training"): the benchmark shape of
# throughput_common.sh with adapters of rank 16 on all seven projections, one
# document per row (data.packing none) of the default data, 2 ranks, fp32.
# Private runs: fixed-size batches (privacy.sampling shuffle, the same rows as
# the LoRA run: the per-example clipping's and the noise's cost alone) and
# Poisson batches (the default: the variable batch's cost too). Reports the
# median and mean step time, the measured tensor peak (peak_mem_bytes) and the
# epsilon after the run, medians over NSS_BENCH_REPEATS interleaved runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/throughput_common.sh

BENCH_ARGS=(--set training.lora.enabled=true --set training.lora.rank=16 --set data.packing=none
            --set "training.lora.targets=[q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj]"
            --set training.global_batch_size=8)
files_lora=() files_shuffle=() files_poisson=()
for r in $(seq "$REPEATS"); do
  files_lora+=("$(bench_run 2 lora_$r)")
  files_shuffle+=("$(bench_run 2 shuffle_$r --set privacy.enabled=true --set privacy.sampling=shuffle)")
  files_poisson+=("$(bench_run 2 poisson_$r --set privacy.enabled=true)")
done
/usr/bin/python3 - "${files_lora[*]}" "${files_shuffle[*]}" "${files_poisson[*]}" <<'PY'
import json, statistics, sys
# A Poisson step's batch (and micro-steps) varies: the mean step time is the
# cost per step; the median is that of the typical step.
def summary(files):
    medians, means, peaks, epsilon = [], [], [], None
    for f in files.split():
        rows = [json.loads(l) for l in open(f) if l.strip()]
        steps = [r for r in rows if "event" not in r and r["step"] > 2]
        medians.append(statistics.median(r["step_time_s"] for r in steps))
        means.append(statistics.mean(r["step_time_s"] for r in steps))
        peaks.append(max(r["peak_mem_bytes"] for r in steps))
        epsilon = steps[-1].get("epsilon")
    return (statistics.median(medians), statistics.median(means), statistics.median(peaks),
            epsilon)
rows = [("LoRA", ) + summary(sys.argv[1]),
        ("DP-SGD, fixed batches (shuffle)", ) + summary(sys.argv[2]),
        ("DP-SGD, Poisson batches", ) + summary(sys.argv[3])]
base_median, base_mean, base_peak = rows[0][1], rows[0][2], rows[0][3]
print("| run | median step | vs LoRA | mean step | vs LoRA | tensor peak | vs LoRA | epsilon |")
print("|---|---|---|---|---|---|---|---|")
for name, median, mean, peak, e in rows:
    print("| %s | %.3f s | %.2fx | %.3f s | %.2fx | %.1f MiB | %.2fx | %s |" % (
        name, median, median / base_median, mean, mean / base_mean, peak / 2**20,
        peak / base_peak, "-" if e is None else "%.3f" % e))
PY
