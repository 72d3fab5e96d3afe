#!/usr/bin/env bash
# The GPU validation (docs/gpu.md), in one go on a machine with a CUDA GPU (one
# is enough): the CUDA unit and equivalence tests, the default tiny job
# trained on the GPU (saved, resumed on the GPU and on the CPU), and the
# Llama-3.2-1B bf16 throughput, MFU and preflight VRAM (predicted, measured,
# real). Needs a GPU build (docs/gpu.md) and python3 with numpy.
#
#   scripts/bench/gpu_validation.sh BIN_DIR OUT_DIR [PART...]
#
# OUT_DIR gets the logs and run directories (the 1B run's final checkpoint is
# about 15 GB: put OUT_DIR on a local disk).
# PART: tests, tiny, 1b, torch (default: all four; torch is the plain-PyTorch
# reference of the 1B step, scripts/bench/torch_llama_step.py, same shape;
# its --profile ROWS prints the step's top kernels). NSS_1B_MICRO (default 4),
# NSS_1B_GLOBAL (default 2 x micro), NSS_1B_STEPS (default 30) and
# NSS_1B_RECOMPUTE (full/selective/none, default full; the PyTorch reference
# recomputes per block unless none) shape the 1B run, NSS_FUSED_KERNELS=1 turns
# on the fused RMSNorm/RoPE/SwiGLU kernels; NSS_GPU_PEAK_TFLOPS (default 989,
# H100 SXM dense bf16) is the MFU denominator.
set -euo pipefail

bin=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
shift 2
parts=${*:-tests tiny 1b torch}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
mpirun_1() { mpirun -n 1 --bind-to none "$@"; }
log() { printf '\n=== %s\n' "$*"; }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

if [[ " $parts " == *" tests "* ]]; then
  log "unit and equivalence tests on CUDA"
  status=0
  for test in cuda_memory_test memory_meter_test host_mirror_test synthetic_step_test optim_test \
    sharded_unit_test; do
    "$bin/$test" >"$out/$test.log" 2>&1 || status=1
    printf '%-28s %s\n' "$test" "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$test.log" | tr '\n' ' ')"
  done
  for test in nccl_communicator_test device_selection_test compute_device_test sharded_training_test; do
    mpirun_1 "$bin/$test" >"$out/$test.log" 2>&1 || status=1
    printf '%-28s %s\n' "$test" "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$test.log" | tr '\n' ' ')"
  done
  grep -h '^\[equivalence\]\|^\[cuda synthetic step\]' "$out"/*.log || true
  grep -h -B2 -A8 'Failure' "$out"/*.log | head -60 || true
  [ "$status" = 0 ] || echo "SOME TESTS FAILED (logs in $out)"
fi

if [[ " $parts " == *" tiny "* ]]; then
  log "default tiny job on the GPU: 200 steps, saves at 50/100/150/200"
  run=$out/tiny
  rm -rf "$run"
  mpirun_1 "$bin/nss_hpc" configs/run.yaml --set run.output_dir="$run" >"$out/tiny.log" 2>&1 &&
    echo "exit 0" || echo "exit $?"
  grep -E 'device|verdict|step +(10|100|200)\b' "$out/tiny.log" | head -12
  log "resume on the GPU to step 250, and the same checkpoint on the CPU (parallel.backend mpi)"
  cp -r "$run" "$run-cpu"
  mpirun_1 "$bin/nss_hpc" configs/run.yaml --set run.output_dir="$run" --set training.max_steps=250 \
    >"$out/tiny-resume-gpu.log" 2>&1 && echo "gpu resume exit 0" || echo "gpu resume exit $?"
  mpirun_1 "$bin/nss_hpc" configs/run.yaml --set run.output_dir="$run-cpu" \
    --set training.max_steps=250 --set parallel.backend=mpi \
    >"$out/tiny-resume-cpu.log" 2>&1 && echo "cpu resume exit 0" || echo "cpu resume exit $?"
  python3 - "$run" "$run-cpu" <<'EOF' || true
import json, sys
def losses(run):
    rows = [json.loads(l) for l in open(run + "/metrics.jsonl")]
    return {r["step"]: r["loss"] for r in rows if "loss" in r and "step" in r}
gpu, cpu = losses(sys.argv[1]), losses(sys.argv[2])
first = min(gpu)
print("loss step %d %.4f, step 200 %.4f, step 250 gpu %.4f / cpu %.4f" % (
    first, gpu[first], gpu[200], gpu.get(250, float("nan")), cpu.get(250, float("nan"))))
both = [s for s in gpu if s > 200 and s in cpu]
if both:
    print("resumed steps %s: max relative loss difference gpu vs cpu %.2e" % (
        both, max(abs(gpu[s] / cpu[s] - 1) for s in both)))
EOF
  log "asynchronous saves on the GPU (the pinned host copies written in place): verify, resume on the CPU"
  rm -rf "$run-async"
  mpirun_1 "$bin/nss_hpc" configs/run.yaml --set run.output_dir="$run-async" \
    --set checkpoint.async=true >"$out/tiny-async.log" 2>&1 && echo "async exit 0" || echo "async exit $?"
  "$bin/nss_ckpt" verify "$run-async/checkpoints" | tail -4
  mpirun_1 "$bin/nss_hpc" configs/run.yaml --set run.output_dir="$run-async" \
    --set training.max_steps=250 --set parallel.backend=mpi \
    >"$out/tiny-async-resume-cpu.log" 2>&1 && echo "cpu resume exit 0" || echo "cpu resume exit $?"
  python3 - "$run-cpu" "$run-async" <<'EOF' || true
import json, sys
def losses(run):
    rows = [json.loads(l) for l in open(run + "/metrics.jsonl")]
    return {r["step"]: r["loss"] for r in rows if "loss" in r and "step" in r}
sync, asynchronous = losses(sys.argv[1]), losses(sys.argv[2])
both = [s for s in sync if s > 200 and s in asynchronous]
if both:
    print("from the sync and the async step 200, CPU steps %s: max relative loss difference %.2e" % (
        both, max(abs(sync[s] / asynchronous[s] - 1) for s in both)))
EOF
fi

if [[ " $parts " == *" 1b "* ]]; then
  micro=${NSS_1B_MICRO:-4}
  global=${NSS_1B_GLOBAL:-$((2 * micro))}
  steps=${NSS_1B_STEPS:-30}
  recompute=${NSS_1B_RECOMPUTE:-full}
  run=$out/1b_mb${micro}_ac${recompute}${NSS_FUSED_KERNELS:+_fused}
  log "Llama-3.2-1B, bf16, seq 2048, micro-batch $micro, global batch $global, recompute $recompute"
  rm -rf "$run"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 >"$run.smi" &
  smi=$!
  mpirun_1 "$bin/nss_hpc" configs/run.yaml --set model.preset=llama-3.2-1b --set data.seq_len=2048 \
    --set training.dtype=bf16 --set training.micro_batch_size="$micro" \
    --set training.global_batch_size="$global" --set training.max_steps="$steps" \
    --set training.warmup_steps=5 --set training.activation_checkpointing="$recompute" \
    --set eval.interval_steps=0 --set checkpoint.interval_steps=0 \
    --set logging.interval_steps=1 --set run.output_dir="$run" >"$run.log" 2>&1 &&
    echo "exit 0" || echo "exit $?"
  kill "$smi" 2>/dev/null || true
  grep -E '\[preflight\]|step +[0-9]+' "$run.log" | tail -8
  python3 - "$run" "$run.smi" "${NSS_GPU_PEAK_TFLOPS:-989}" <<'EOF' || true
import json, statistics, sys
run, smi, peak = sys.argv[1], sys.argv[2], float(sys.argv[3]) * 1e12
pre = json.load(open(run + "/preflight.json"))
rows = [json.loads(l) for l in open(run + "/metrics.jsonl")]
steps = [r for r in rows if "tokens_per_s" in r]
tail = [r["tokens_per_s"] for r in steps if r["step"] >= 10] or [r["tokens_per_s"] for r in steps]
tps = statistics.median(tail)
n, layers, hidden, seq = 1235814400, 16, 2048, 2048
flops_per_token = 6 * n + 12 * layers * hidden * seq
mem = pre["memory"]
gib = lambda b: b / 2**30
print("tokens/s median (steps >= 10): %.0f over %d steps; loss %.3f -> %.3f" % (
    tps, len(tail), steps[0]["loss"], steps[-1]["loss"]))
print("MFU: %.1f%% (model FLOPs %.3g per token, peak %.0f TFLOP/s)" % (
    100 * tps * flops_per_token / peak, flops_per_token, peak / 1e12))
extras = mem["components"]  # name -> bytes
print("preflight verdict %s in %.1f s; components (GiB): %s" % (pre["verdict"], pre["duration_s"],
      ", ".join("%s %.3f" % (k, gib(v)) for k, v in extras.items())))
print("preflight predicted %.3f GiB, measured %.3f GiB, budget %.2f GiB" % (
    gib(mem["predicted_peak_bytes"]), gib(mem["measured_peak_bytes"]), gib(mem["budget_bytes"])))
real = max(r["peak_mem_bytes"] for r in steps)
context = extras.get("fixed_overhead", 0)
smi_peak = max(int(l) for l in open(smi) if l.strip().isdigit()) * 2**20
print("real: allocator peak %.3f GiB + context %.3f = %.3f GiB; nvidia-smi peak used %.3f GiB" % (
    gib(real), gib(context), gib(real + context), gib(smi_peak)))
for what, value in (("predicted", mem["predicted_peak_bytes"]), ("measured", mem["measured_peak_bytes"])):
    print("%s vs real (allocator + context): %+.2f%%; vs nvidia-smi: %+.2f%%" % (
        what, 100 * (value / (real + context) - 1), 100 * (value / smi_peak - 1)))
EOF
fi

if [[ " $parts " == *" torch "* ]]; then
  micro=${NSS_1B_MICRO:-4}
  global=${NSS_1B_GLOBAL:-$((2 * micro))}
  recompute=${NSS_1B_RECOMPUTE:-full}
  log "PyTorch $(python3 -c 'import torch; print(torch.__version__)') eager reference: same shape, bf16 autocast, SDPA, recompute $recompute"
  python3 scripts/bench/torch_llama_step.py --device cuda --bf16 --sdpa --tied --vocab 128256 \
    $(case "$recompute" in none | false) echo --no-recompute ;; esac) \
    --hidden 2048 --intermediate 8192 --layers 16 --heads 32 --kv-heads 8 --seq 2048 \
    --batch "$micro" --accum $((global / micro)) --steps 10 --warmup 3 | tee "$out/torch_1b.json"
fi
