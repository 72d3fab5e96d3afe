#!/usr/bin/env bash
# The GPU backlog (docs/gpu.md, "The GPU backlog") as one run on a bare GPU
# machine that has PyTorch and nothing else: the binaries, libraries and data
# come from the package scripts/bench/gpu_package.sh made. Parts run in the
# order of the decisions they make, each under its own time cap, and each
# appends its verdict line and figures to OUT/summary.md as it finishes, so a
# run cut short still says what it learned; OUT/logs.tar.gz holds every log.
# OUT gets those three files only (summary.md, plan.md, logs.tar.gz) when
# --work DIR takes the logs and run directories (the device tool returns at
# most 8 files); by default they are in OUT too.
#
#   scripts/bench/gpu_backlog.sh [--dry-run|--rehearse] [--package DIR] [--bin DIR] [--work DIR] OUT [PART...]
#   scripts/bench/gpu_backlog.sh --list-binaries
#   scripts/bench/gpu_backlog.sh --list-parts
#
# PART: smoke tests async throughput adapters generate (default: all, in this
# order; smoke always runs first, named or not, because every other part
# needs its answer), and tensor_parallel, which runs only when named (it
# needs a second build: the package's --base-bin or NSS_BACKLOG_BASE_BIN). --dry-run checks the arguments, prints each part's
# cap and commands to OUT/plan.md and writes the summary's lines without
# running anything: it needs no GPU, no build and no package. --rehearse runs
# the parts here on the CPU, at the tiny shape with the GPU checks left out,
# from the package or a build (--bin build/bin), so that a library missing
# from the package, a command line or a report that is wrong shows before a
# device minute is spent; its figures mean nothing.
# Environment: NSS_BACKLOG_BUDGET_S (570: the whole run, 9.5 minutes),
# NSS_BACKLOG_CAPS (part=seconds,...: other caps for a retry of a part),
# NSS_BACKLOG_1B_STEPS (8), NSS_GPU_PEAK_TFLOPS (989, H100 SXM dense bf16),
# NSS_BACKLOG_RECOMPUTE ("selective": the throughput part's rows, each with
# the fused kernels off and on; none and full were measured on 2026-11-27),
# NSS_BACKLOG_FUSED ("0 1": NSS_FUSED_KERNELS for each recompute row; "1"
# alone once the plain kernels need no new figure),
# NSS_BACKLOG_TORCH ("full": its PyTorch eager rows; none was measured),
# NSS_BACKLOG_BASE_BIN (a directory with the nss_hpc built before tensor
# parallelism, for tensor_parallel; default the package's nss_hpc_base),
# NSS_BACKLOG_PAIRS (3: tensor_parallel's interleaved pairs). A 1B
# run or eager row gets an equal share of its part's cap, one share kept
# spare (a 1B run needs about 45 s on an H100: 9 s of preflight, 25 s of
# initialisation, the pinned mirrors, the steps).
set -euo pipefail

NSS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
REPORT="$NSS_ROOT/scripts/bench/gpu_backlog_report.py"
ALL_PARTS=(smoke tests async throughput adapters generate)
# Parts that run only when named (after smoke): they need what a default
# package lacks, and the default parts fill the budget.
NAMED_PARTS=(tensor_parallel)
# Seconds per part; the default ones together the 570 s of the default budget
# (on an H100 on 2026-11-27 smoke took 22-26 s, tests 44 s, async 13 s, a 1B
# run about 45 s).
declare -A CAP=([smoke]=40 [tests]=60 [async]=30 [throughput]=230 [adapters]=150 [generate]=60
  [tensor_parallel]=180)
declare -A DECIDES=(
  [smoke]="whether anything else can run: the binaries start, CUDA and NCCL answer, one tiny step trains on the GPU"
  [tests]="which switches may go on: the NF4 CUDA dequantiser (nf4_cuda_test), the fused kernels (fused_kernels_test), variable-length attention (packed tests with NSS_VARLEN_ATTENTION=1), the private step and optimizer offload on CUDA, greedy decoding equal to the CPU's"
  [async]="whether checkpoint.async's in-place snapshot is right on a GPU: the async step verifies and resumes on the GPU and on the CPU to the same losses"
  [throughput]="the default recompute and NSS_FUSED_KERNELS by tokens/s and MFU against the goals (>= 45% without recompute, >= 35% with full), and the memory model's error per row"
  [adapters]="QLoRA and DP-SGD against LoRA at the 1B shape: step time (DP-SGD goal <= 2x LoRA) and peak against the preflight"
  [generate]="nss_generate's bf16 tokens/s on the GPU at batch 1, 16 and 64, against transformers' generate"
  [tensor_parallel]="whether the tensor-parallel code path costs anything at T = 1: this build's tokens/s against the build before tensor parallelism (bebecc3), in interleaved pairs at a 4-layer Llama-3.2-1B shape (vocabulary 32000), within the pairs' spread"
)
# What the parts run, and so what the package carries: one list.
TOOLS=(nss_hpc nss_ckpt nss_generate)
UNIT_TESTS=(cuda_memory_test memory_meter_test host_mirror_test synthetic_step_test optim_test
  sharded_unit_test nf4_cuda_test fused_kernels_test model_test offloaded_adamw_test decoder_test)
MPI_TESTS=(nccl_communicator_test device_selection_test compute_device_test sharded_training_test
  private_step_test offload_test quantized_shard_test)

usage() {
  sed -n 's/^#   \(scripts\/bench\/gpu_backlog.sh\)/usage: \1/p' "${BASH_SOURCE[0]}" >&2
  exit 2
}

dry_run=0 rehearse=0 package="" bin="" bin_given="" work=""
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) dry_run=1 ;;
    --rehearse) rehearse=1 ;;
    --package) package=${2:?--package needs a directory}; shift ;;
    --bin) bin=${2:?--bin needs a directory}; bin_given=1; shift ;;
    --work) work=${2:?--work needs a directory}; shift ;;
    --list-binaries) printf '%s\n' "${TOOLS[@]}" "${UNIT_TESTS[@]}" "${MPI_TESTS[@]}"; exit 0 ;;
    --list-parts) printf '%s\n' "${ALL_PARTS[@]}" "${NAMED_PARTS[@]}"; exit 0 ;;
    -h | --help) usage ;;
    -*) echo "gpu_backlog: unknown option $1 (use --dry-run, --rehearse, --package DIR, --bin DIR, --work DIR)" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
[ $# -ge 1 ] || usage
[ "$dry_run$rehearse" != 11 ] || { echo "gpu_backlog: --dry-run and --rehearse exclude each other" >&2; exit 2; }
where="the GPU"
[ "$rehearse" = 0 ] || where="the CPU (rehearsal)"
PYTHON=${NSS_BACKLOG_PYTHON:-python3}  # the image's python3 holds its PyTorch
out=$1
shift
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=("${ALL_PARTS[@]}")
for part in "${parts[@]}"; do
  [ -n "${CAP[$part]:-}" ] ||
    { echo "gpu_backlog: unknown part '$part' (use one of: ${ALL_PARTS[*]} ${NAMED_PARTS[*]})" >&2; exit 2; }
done
declare -A named=([smoke]=1)  # smoke first, always; a part named twice runs once
unique=(smoke)
for part in "${parts[@]}"; do [ -n "${named[$part]:-}" ] || { named[$part]=1; unique+=("$part"); }; done
parts=("${unique[@]}")
caps=${NSS_BACKLOG_CAPS:-}
for setting in ${caps//,/ }; do  # part=seconds,...: a retry's own caps
  name=${setting%%=*} seconds=${setting#*=}
  [ -n "${CAP[$name]:-}" ] && [[ $seconds =~ ^[1-9][0-9]*$ ]] ||
    { echo "gpu_backlog: NSS_BACKLOG_CAPS takes part=seconds,... with parts ${ALL_PARTS[*]} ${NAMED_PARTS[*]}, not '$setting'" >&2; exit 2; }
  CAP[$name]=$seconds
done
budget=${NSS_BACKLOG_BUDGET_S:-570}
steps_1b=${NSS_BACKLOG_1B_STEPS:-8}
pairs=${NSS_BACKLOG_PAIRS:-3}
fused_rows=${NSS_BACKLOG_FUSED-0 1}
case $fused_rows in 0 | 1 | "0 1") ;; *)
  echo "gpu_backlog: NSS_BACKLOG_FUSED takes \"0\", \"1\" or \"0 1\" (NSS_FUSED_KERNELS per throughput row), not '$fused_rows'" >&2; exit 2 ;;
esac
peak_tflops=${NSS_GPU_PEAK_TFLOPS:-989}
for value in "$budget" "$steps_1b" "$pairs"; do
  [[ $value =~ ^[1-9][0-9]*$ ]] ||
    { echo "gpu_backlog: NSS_BACKLOG_BUDGET_S, NSS_BACKLOG_1B_STEPS and NSS_BACKLOG_PAIRS take a positive whole number, not '$value'" >&2; exit 2; }
done
if [ -e "$out" ] && [ ! -d "$out" ]; then
  echo "gpu_backlog: OUT $out is not a directory: give a new or an existing directory" >&2
  exit 2
fi
mkdir -p "$out" "${work:=$out}/logs"
out=$(cd "$out" && pwd)
work=$(cd "$work" && pwd)
summary=$out/summary.md
plan=$out/plan.md
started=$(date +%s)

# --- running under a cap ------------------------------------------------------

remaining() { echo $((budget - ($(date +%s) - started))); }

# step LOG CAP COMMAND...: runs COMMAND with its output in logs/LOG, killed
# after CAP seconds (its own process group: mpirun's ranks go with it).
# The cap is cut to what is left of the part's own cap.
step() {
  local log=$1 cap=$2
  shift 2
  printf -- '- `%s` (cap %d s, log %s)\n' "$*" "$cap" "$log" >>"$plan"
  [ "$dry_run" = 0 ] || return 0
  local left=$((part_deadline - $(date +%s)))
  if [ "$left" -lt 3 ]; then
    echo "[gpu_backlog] not run: the part's cap of $part_cap s was reached" >"$work/logs/$log"
    return 124
  fi
  [ "$cap" -le "$left" ] || cap=$left
  # A session of its own, ended whole at the cap: Open MPI gives each rank a
  # process group of its own, so only the session reaches them all. bash -c:
  # COMMAND may be one of the functions below (exported).
  setsid bash -c '"$@"' step "$@" >"$work/logs/$log" 2>&1 &
  local session=$! tenths=0 rc=0
  while kill -0 "$session" 2>/dev/null && [ "$tenths" -lt $((cap * 10)) ]; do
    sleep 0.1
    tenths=$((tenths + 1))
  done
  if kill -0 "$session" 2>/dev/null; then
    pkill -TERM -s "$session" || true
    sleep 3
    pkill -KILL -s "$session" || true
    wait "$session" 2>/dev/null || true
    echo "[gpu_backlog] killed after its cap of $cap s" >>"$work/logs/$log"
    return 124
  fi
  wait "$session" || rc=$?
  return "$rc"
}

# The figure lines of a part go to the summary as they come.
say() { printf '%s\n' "$*" >>"$summary"; }
report() {
  [ "$dry_run" = 0 ] || return 0
  "$PYTHON" "$REPORT" "$@" | tee -a "$summary"
  return "${PIPESTATUS[0]}"
}
verdict() {  # PART PASS|FAIL|SKIPPED TEXT; returns 0 for PASS only
  local seconds=$(($(date +%s) - part_started)) result=$2 text=$3
  if [ "$dry_run" = 1 ] && [ "$result" = PASS ]; then
    result=DRY-RUN
    text="$(($(grep -c '^- `' "$plan") - plan_mark)) commands planned (OUT/plan.md), none run"
  fi
  say ""
  say "**$1: $result** ($seconds s of a $part_cap s cap) — $text"
  say ""
  [ "$dry_run" = 1 ] || tar -C "$work" -czf "$out/logs.tar.gz" logs 2>/dev/null || true
  [ "$result" = PASS ] || [ "$result" = DRY-RUN ]
}

mpirun_1() { mpirun -n 1 --bind-to none --allow-run-as-root "$@"; }
export -f mpirun_1

# --- the package --------------------------------------------------------------

# Unpacks the payload (once) and puts its libraries and Open MPI first; the
# machine's own torch provides libtorch and the CUDA libraries.
use_package() {
  local root=${package:-$NSS_ROOT/gpu-package}
  if [ -z "$bin" ]; then
    [ -f "$root/payload.tar.xz" ] || { echo "no package at $root: run scripts/bench/gpu_package.sh"; return 1; }
    local unpacked=${TMPDIR:-/tmp}/nss-gpu
    if [ ! -f "$unpacked/.complete" ] || [ "$root/payload.tar.xz" -nt "$unpacked/.complete" ]; then
      rm -rf "$unpacked" && mkdir -p "$unpacked"
      tar -C "$unpacked" --strip-components=1 -xJf "$root/payload.tar.xz" ||
        { echo "cannot unpack $root/payload.tar.xz"; return 1; }
      touch "$unpacked/.complete"
    fi
    # shellcheck source=/dev/null
    source "$unpacked/env.sh" || return 1
    bin=$unpacked/bin
    DATA_DIR=$unpacked/data
    TOKENIZER=$unpacked/models/tokenizer.json
  fi
  bin=$(cd "$bin" && pwd)
  # With --bin: NSS_BACKLOG_DATA or this checkout's default data, and the setup's converted SmolLM2.
  DATA_DIR=${DATA_DIR:-${NSS_BACKLOG_DATA:-$NSS_ROOT/data/default}}
  TOKENIZER=${TOKENIZER:-$NSS_ROOT/build/models/smollm2-135m-instruct/tokenizer.json}
  export bin DATA_DIR NSS_ROOT NSS_SOURCE_DIR=$NSS_ROOT OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
}

tiny_job() {  # RUN_DIR [--set ...]: the default tiny job, on the package's data
  local run=$1
  shift
  mpirun_1 "$bin/nss_hpc" "$NSS_ROOT/configs/run.yaml" --set run.output_dir="$run" \
    --set data.path="$DATA_DIR/train.h5" --set eval.path="$DATA_DIR/val.h5" "$@"
}
export -f tiny_job

# --- the parts ----------------------------------------------------------------

part_smoke() {
  if [ "$dry_run" = 0 ]; then
    local why
    if ! why=$(use_package 2>&1); then verdict smoke FAIL "$why"; return 1; fi
    use_package >/dev/null
    # What was built, which the checkout's revision in the heading need not be.
    local manifest=${package:-$NSS_ROOT/gpu-package}/MANIFEST
    [ -n "$bin_given" ] || [ ! -f "$manifest" ] || say "- package: $(head -1 "$manifest")"
    if [ "$rehearse" = 1 ]; then
      say "- rehearsal on $(hostname): the device checks are left out"
    else
      command -v nvidia-smi >/dev/null || { verdict smoke FAIL "nvidia-smi not found: this machine has no NVIDIA driver"; return 1; }
      say "- device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"
      say "- torch: $("$PYTHON" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1 | tail -1)"
    fi
    local missing programs=$bin
    [ -d "$bin/../libexec" ] && programs=$bin/../libexec  # the package's bin/ holds wrappers
    missing=$(for b in "$programs"/*; do
      LD_LIBRARY_PATH=${NSS_LIBRARY_PATH:-} ldd "$b" 2>&1 | sed -n "s|^\s*\(\S*\) => not found|$(basename "$b"): \1|p"
    done | sort -u)
    if [ -n "$missing" ]; then verdict smoke FAIL "libraries not found: $(echo "$missing" | tr '\n' ' ')"; return 1; fi
  fi
  if ! step smoke_tiny.log 45 tiny_job "$work/smoke" --set training.max_steps=2 --set checkpoint.interval_steps=0 \
    --set eval.interval_steps=0 --set logging.interval_steps=1; then
    verdict smoke FAIL "the tiny job did not finish: $(tail -3 "$work/logs/smoke_tiny.log" | tr '\n' ' ')"
    return 1
  fi
  if [ "$dry_run$rehearse" = 00 ] && ! grep -q "cuda" "$work/logs/smoke_tiny.log"; then
    verdict smoke FAIL "the tiny job ran, but not on a CUDA device (see logs/smoke_tiny.log)"
    return 1
  fi
  rm -rf "$work/smoke"
  verdict smoke PASS "binaries start, every library resolves, two tiny steps trained on $where"
}

part_tests() {
  local failed=0 name
  for name in "${UNIT_TESTS[@]}"; do
    case $name in
      model_test) step "$name.log" 40 env NSS_VARLEN_ATTENTION=1 "$bin/$name" --gtest_filter='*Cuda*' || true ;;
      fused_kernels_test) step "$name.log" 40 env NSS_FUSED_KERNELS=1 "$bin/$name" || true ;;
      # Its CPU cases against libtorch 2.11 are known to differ (docs/gpu.md).
      synthetic_step_test) step "$name.log" 40 "$bin/$name" --gtest_filter='*Cuda*' || true ;;
      *) step "$name.log" 40 "$bin/$name" || true ;;
    esac
    report gtest "$name" "$work/logs/$name.log" "$(must_run "$name")" --may-skip "$(may_skip "$name")" ||
      failed=$((failed + 1))
  done
  # Their CPU cases ran in CI; on the device only the CUDA ones.
  for name in "${MPI_TESTS[@]}"; do
    case $name in
      sharded_training_test | private_step_test | offload_test | quantized_shard_test)
        step "$name.log" 60 mpirun_1 "$bin/$name" --gtest_filter='*Cuda*' || true ;;
      *) step "$name.log" 60 mpirun_1 "$bin/$name" || true ;;
    esac
    report gtest "$name" "$work/logs/$name.log" "$(must_run "$name")" --may-skip "$(may_skip "$name")" ||
      failed=$((failed + 1))
  done
  step sharded_training_varlen.log 60 mpirun_1 -x NSS_VARLEN_ATTENTION=1 "$bin/sharded_training_test" \
    --gtest_filter='*CudaPacked*' || true
  report gtest "sharded_training_test (varlen)" "$work/logs/sharded_training_varlen.log" 1 || failed=$((failed + 1))
  local fixture step_name
  fixture=$(find "$NSS_ROOT/tests/fixtures" -maxdepth 1 -name 'formats_*' | sort | tail -1)
  for step_name in full qlora_private; do
    local step_dir
    step_dir=$(find "$fixture/runs/$step_name/checkpoints" -maxdepth 1 -name 'step_*' | sort | tail -1)
    step "greedy_$step_name.log" 30 mpirun_1 "$bin/nss_generate" --model "$step_dir" --prompt "Row of" \
      --max-new-tokens 12 --temperature 0 --dtype fp32 --output "$work/logs/greedy_$step_name.jsonl" || true
    report greedy "$work/logs/greedy_$step_name.jsonl" "$fixture/expected.json" "$step_name" --label "fp32 on the GPU" ||
      failed=$((failed + 1))
  done
  if [ "$failed" = 0 ]; then verdict tests PASS "every CUDA test passed on the device, none skipped"
  else verdict tests FAIL "$failed of them failed or skipped on the device: see the lines above and logs/"; fi
}

may_skip() {  # cases written for builds or machines without CUDA
  case $1 in
    cuda_memory_test) echo CudaMemory.WithoutCudaLibtorchSaysHowToGetOne ;;
    nccl_communicator_test) echo NcclCommunicator.WithoutADeviceEveryRankGetsAUsageError ;;
  esac
}

must_run() {  # tests whose device cases must not skip on a GPU
  case $1 in
    nf4_cuda_test | fused_kernels_test | cuda_memory_test | memory_meter_test | nccl_communicator_test | \
      sharded_training_test | model_test | private_step_test | offload_test | synthetic_step_test | \
      quantized_shard_test) echo 1 ;;
    *) echo 0 ;;
  esac
}

part_async() {
  local run=$work/async
  rm -rf "$run" "$run-cpu"
  local common=(--set checkpoint.interval_steps=20 --set eval.interval_steps=0 --set logging.interval_steps=1)
  local ok=1
  step async_train.log 20 tiny_job "$run" --set training.max_steps=40 --set checkpoint.async=true "${common[@]}" || ok=0
  step async_verify.log 8 "$bin/nss_ckpt" verify "$run/checkpoints" || ok=0
  [ "$dry_run" = 1 ] || cp -r "$run" "$run-cpu" 2>/dev/null || ok=0
  step async_resume_gpu.log 10 tiny_job "$run" --set training.max_steps=50 "${common[@]}" || ok=0
  step async_resume_cpu.log 10 tiny_job "$run-cpu" --set training.max_steps=50 --set parallel.backend=mpi \
    "${common[@]}" || ok=0
  report losses "$run" "$run-cpu" --after 40 --tolerance 1e-3 --label "resumed on the GPU vs on the CPU" || ok=0
  if [ "$ok" = 1 ]; then verdict async PASS "the in-place async snapshot verified and resumed on $where and on the CPU"
  else verdict async FAIL "see logs/async_*.log"; fi
  [ "$dry_run" = 1 ] || rm -rf "$run" "$run-cpu"
}

one_b() {  # NSS_HPC RUN LOG CAP FUSED(0|1) [--set ...]: the Llama-3.2-1B shape in bf16, seq 2048
  local hpc=$1 run=$2 log=$3 cap=$4 fused=$5
  shift 5
  local scratch=/dev/shm
  [ -d "$scratch" ] && [ -w "$scratch" ] || scratch=$work
  rm -rf "$run" "$scratch/nss_backlog_ckpt"
  local smi="" rc=0
  if [ "$dry_run" = 0 ]; then
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 >"$run.smi" &
    smi=$!
  fi
  # The final save (15 GB of fp32 state) goes to memory and is dropped.
  local shape=(--set model.preset=llama-3.2-1b --set data.seq_len=2048 --set training.dtype=bf16)
  [ "$rehearse" = 0 ] || shape=(--set model.preset=tiny --set data.seq_len=128)
  step "$log" "$cap" mpirun_1 -x NSS_FUSED_KERNELS="$fused" "$hpc" "$NSS_ROOT/configs/run.yaml" \
    "${shape[@]}" --set data.path="$DATA_DIR/train.h5" --set eval.interval_steps=0 \
    --set training.micro_batch_size=4 --set training.global_batch_size=8 \
    --set training.max_steps="$steps_1b" --set training.warmup_steps=2 --set logging.interval_steps=1 \
    --set checkpoint.interval_steps=0 --set checkpoint.dir="$scratch/nss_backlog_ckpt" \
    --set run.output_dir="$run" "$@" || rc=$?
  [ -z "$smi" ] || kill "$smi" 2>/dev/null || true
  rm -rf "$scratch/nss_backlog_ckpt"
  return "$rc"
}

part_throughput() {
  local recompute fused failed=0 rows=0
  local modes=(${NSS_BACKLOG_RECOMPUTE-selective}) eager=(${NSS_BACKLOG_TORCH-full}) fused_list=($fused_rows)
  [ "$rehearse" = 0 ] || eager=()
  local mode
  for mode in "${modes[@]}" "${eager[@]}"; do
    [[ $mode =~ ^(none|selective|full)$ ]] || { say "- recompute '$mode' is not none, selective or full"; verdict throughput FAIL "NSS_BACKLOG_RECOMPUTE/NSS_BACKLOG_TORCH name none, selective or full"; return; }
  done
  local row_cap=$((part_cap / (${#fused_list[@]} * ${#modes[@]} + ${#eager[@]} + 2)))
  [ "$dry_run" = 1 ] || "$PYTHON" "$REPORT" train-header >>"$summary"
  for recompute in "${modes[@]}"; do
    for fused in "${fused_list[@]}"; do
      local name=1b_${recompute}_fused$fused
      rows=$((rows + 1))
      # A row is its figures: one cut during its final save (to memory) still has them.
      one_b "$bin/nss_hpc" "$work/$name" "$name.log" "$row_cap" "$fused" --set training.activation_checkpointing=$recompute || true
      report train "$work/$name" --smi "$work/$name.smi" --peak-tflops "$peak_tflops" --steps "$steps_1b" \
        --label "recompute $recompute, fused kernels $([ "$fused" = 1 ] && echo on || echo off)" ||
        failed=$((failed + 1))
      [ "$dry_run" = 1 ] || rm -rf "${work:?}/$name"
    done
  done
  # The chunked head against the unchunked one (none and full ran 7-10% below
  # 2026-11-22's figures, before the head was chunked).
  rows=$((rows + 1))
  one_b "$bin/nss_hpc" "$work/1b_none_chunk0" 1b_none_chunk0.log "$row_cap" 1 --set training.activation_checkpointing=none \
    --set training.loss_chunk_tokens=0 || true
  report train "$work/1b_none_chunk0" --smi "$work/1b_none_chunk0.smi" --peak-tflops "$peak_tflops" \
    --steps "$steps_1b" --label "recompute none, fused kernels on, loss_chunk_tokens 0 (unchunked head)" ||
    failed=$((failed + 1))
  [ "$dry_run" = 1 ] || rm -rf "${work:?}/1b_none_chunk0"
  local torch_rows=""
  [ "$rehearse" = 0 ] || say "- the PyTorch reference needs CUDA: not rehearsed"
  for recompute in "${eager[@]}"; do
    local keep=()
    [ "$recompute" = full ] || keep=(--no-recompute)
    step "torch_1b_$recompute.log" "$row_cap" "$PYTHON" "$NSS_ROOT/scripts/bench/torch_llama_step.py" --device cuda --bf16 \
      --sdpa --tied --vocab 128256 --hidden 2048 --intermediate 8192 --layers 16 --heads 32 --kv-heads 8 \
      --seq 2048 --batch 4 --accum 2 --steps 6 --warmup 2 "${keep[@]}" || true
    [ "$dry_run" = 1 ] || torch_rows+="$recompute: $(tail -1 "$work/logs/torch_1b_$recompute.log") "
  done
  [ -z "$torch_rows" ] || say "- PyTorch $("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null) eager, same shape: $torch_rows"
  if [ "$failed" = 0 ]; then verdict throughput PASS "$rows rows measured; compare MFU with the goals and the fused rows with the plain ones"
  else verdict throughput FAIL "$failed of $rows rows did not finish: see logs/1b_*.log"; fi
}

part_adapters() {
  local lora=(--set training.lora.enabled=true --set training.lora.rank=16
    --set "training.lora.targets=[q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj]")
  local failed=0 name
  [ "$dry_run" = 1 ] || "$PYTHON" "$REPORT" train-header >>"$summary"
  for name in lora qlora dpsgd; do
    local extra=()
    case $name in
      qlora) extra=(--set training.lora.quantize_base=nf4) ;;
      dpsgd) extra=(--set privacy.enabled=true --set data.packing=none) ;;
    esac
    one_b "$bin/nss_hpc" "$work/1b_$name" "1b_$name.log" $((part_cap / 3)) 0 "${lora[@]}" "${extra[@]}" || true
    report train "$work/1b_$name" --smi "$work/1b_$name.smi" --peak-tflops 0 --steps "$steps_1b" \
      --label "$name, rank 16, all seven projections" || failed=$((failed + 1))
    [ "$dry_run" = 1 ] || rm -rf "$work/1b_$name"
  done
  if [ "$failed" = 0 ]; then verdict adapters PASS "LoRA, QLoRA and DP-SGD trained at the 1B shape: compare their step times and peaks"
  else verdict adapters FAIL "$failed of three runs did not finish: see logs/1b_{lora,qlora,dpsgd}.log"; fi
}

part_generate() {
  local rc=0
  local how=(--device cuda --dtype bf16 --batches "1,16,64" --new 32)
  [ "$rehearse" = 0 ] || how=(--device cpu --dtype fp32 --batches 1 --new 2 --layers 1)
  step generate_1b.log "$part_cap" "$PYTHON" "$NSS_ROOT/scripts/bench/generate_speed.py" --random-1b --model "$work/random_1b" \
    --tokenizer "$TOKENIZER" --bin "$bin" --repeats 1 "${how[@]}" || rc=$?
  [ "$dry_run" = 1 ] || grep '^|' "$work/logs/generate_1b.log" >>"$summary" || true
  [ "$dry_run" = 1 ] || rm -rf "$work/random_1b"
  if [ "$rc" = 0 ]; then verdict generate PASS "nss_generate in bf16 on the GPU at batch 1, 16 and 64, beside transformers"
  else verdict generate FAIL "exit $rc: $(tail -2 "$work/logs/generate_1b.log" 2>/dev/null | tr '\n' ' ')"; fi
}

# One run of tensor_parallel: WHICH (base|new) PAIR CAP BASE_HPC. The 1B
# shape cut to 4 layers and a 32000-token vocabulary (a final save of 5 GB
# of fp32 state to memory), no preflight: the steps are what is compared.
tp_run() {
  local hpc=$bin/nss_hpc
  [ "$1" = new ] || hpc=$4
  one_b "$hpc" "$work/tp_$1_$2" "tp_$1_$2.log" "$3" 0 --set model.num_hidden_layers=4 \
    --set model.vocab_size=32000 --set preflight.enabled=false
}

part_tensor_parallel() {
  local base_hpc=${NSS_BACKLOG_BASE_BIN:+$NSS_BACKLOG_BASE_BIN/nss_hpc}
  base_hpc=${base_hpc:-$bin/nss_hpc_base}
  if [ "$dry_run" = 0 ] && [ ! -x "$base_hpc" ]; then
    verdict tensor_parallel SKIPPED "no build before tensor parallelism at $base_hpc: package one (gpu_package.sh --base-bin DIR, docs/gpu.md) or set NSS_BACKLOG_BASE_BIN" || true
    return 1
  fi
  # The base build first in odd pairs, second in even ones: drift falls on both.
  local run_cap=$((part_cap / (2 * pairs + 1))) pair which runs=() order
  for pair in $(seq "$pairs"); do
    order=(base new)
    [ $((pair % 2)) = 1 ] || order=(new base)
    for which in "${order[@]}"; do tp_run "$which" "$pair" "$run_cap" "$base_hpc" || true; done
    runs+=("$work/tp_base_$pair" "$work/tp_new_$pair")
  done
  local rc=0
  report pairs "${runs[@]}" --label "T = 1, bebecc3 (base) and this build (new)" || rc=$?
  [ "$dry_run" = 1 ] || rm -rf "$work"/tp_base_* "$work"/tp_new_*
  if [ "$rc" = 0 ]; then verdict tensor_parallel PASS "this build's tokens/s at T = 1 equal the build before tensor parallelism's within the spread of $pairs interleaved pairs"
  else verdict tensor_parallel FAIL "a run without figures, or this build outside the pairs' spread at T = 1: see the table and logs/tp_*.log"; fi
}

# --- the run ------------------------------------------------------------------

{
  echo "# GPU backlog$([ "$dry_run" = 1 ] && echo " (dry run)")$([ "$rehearse" = 1 ] && echo " (CPU rehearsal: the figures mean nothing)")"
  echo ""
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), revision $(git -C "$NSS_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), budget $budget s, parts: ${parts[*]}"
  echo ""
} >"$summary"
echo "# Commands of the GPU backlog$([ "$dry_run" = 1 ] && echo " (dry run: none ran)")" >"$plan"
[ "$dry_run" = 0 ] || { bin=${bin:-'<package>/bin'}; DATA_DIR='<package>/data'; TOKENIZER='<package>/models/tokenizer.json'; }

status=0 smoke_failed=0
for part in "${parts[@]}"; do
  part_started=$(date +%s)
  plan_mark=$(grep -c '^- `' "$plan" || true)
  left=$(remaining)
  part_cap=$((CAP[$part] < left ? CAP[$part] : left))
  printf '\n## %s (cap %d s)\n\nDecides %s.\n\n' "$part" "$part_cap" "${DECIDES[$part]}" >>"$plan"
  say "### $part"
  say ""
  say "Decides ${DECIDES[$part]}."
  say ""
  if [ "$smoke_failed" = 1 ]; then
    verdict "$part" SKIPPED "the smoke part did not pass: nothing else can run" || true
    status=1
    continue
  fi
  if [ "$part_cap" -lt 20 ]; then
    verdict "$part" SKIPPED "only $left s of the $budget s budget left (NSS_BACKLOG_BUDGET_S)" || true
    status=1
    [ "$part" != smoke ] || smoke_failed=1
    continue
  fi
  # Every step of the part is cut to what is left of its cap (step above).
  part_deadline=$((part_started + part_cap))
  rc=0
  "part_$part" || rc=$?
  if [ "$rc" != 0 ]; then
    status=1
    [ "$part" = smoke ] && smoke_failed=1
  fi
done
say "Whole run: $(($(date +%s) - started)) s of a $budget s budget."
cat "$summary"
exit "$status"
