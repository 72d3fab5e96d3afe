#!/usr/bin/python3
"""Preflight accuracy benchmark (docs/preflight.md, "Accuracy"): for each
configuration, one real nss_hpc job (preflight, then a few training steps)
gives rank 0's analytic prediction of the step's tensor peak and the measured
synthetic-step peak (preflight.json, check memory.synthetic_step), the real
peak over the first training steps (peak_mem_bytes of rank 0 in
metrics.jsonl) and the preflight's duration. Prints a Markdown table; exits 1
when a configuration misses the +-10% goals.

usage: preflight_accuracy.py [--bin build/bin] [--steps 3] [--only NAME]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from nss_e2e import write_token_dataset  # noqa: E402

# name: (ranks, micro_batch, seq_len, layers, dtype, lora, tied, extra --set pairs)
# Small widths (hidden 128, 4 heads / 2 KV heads, vocab 1024) so the whole
# table runs in minutes on two cores; the sizes span the shapes the preflight
# must predict (micro-batch 1-8, seq 64-1024, 2-8 layers, 1-4 ranks).
CONFIGS = [
    ("1r-fp32-mb1-s64-L2", 1, 1, 64, 2, "fp32", False, False, []),
    ("2r-bf16-mb2-s128-L2-tied", 2, 2, 128, 2, "bf16", False, True, []),
    ("4r-fp32-mb8-s256-L4-lora", 4, 8, 256, 4, "fp32", True, False, []),
    ("2r-bf16-mb4-s512-L2-lora-dropout-tied", 2, 4, 512, 2, "bf16", True, True,
     ["training.lora.dropout=0.1"]),
    ("1r-fp32-mb2-s1024-L2", 1, 2, 1024, 2, "fp32", False, False, []),
    ("4r-bf16-mb1-s64-L8", 4, 1, 64, 8, "bf16", False, False, []),
    ("2r-fp32-mb4-s256-L2-no-recompute", 2, 4, 256, 2, "fp32", False, False,
     ["training.activation_checkpointing=none"]),
    ("2r-fp32-mb2-s128-L2-async-ckpt", 2, 2, 128, 2, "fp32", False, True,
     ["checkpoint.async=true"]),
    ("2r-fp32-mb4-s512-L2-selective", 2, 4, 512, 2, "fp32", False, False,
     ["training.activation_checkpointing=selective"]),
    ("2r-bf16-mb2-s256-L4-lora-selective", 2, 2, 256, 4, "bf16", True, True,
     ["training.activation_checkpointing=selective"]),
    # Packed examples of 20..seq/3 tokens, a loss mask on their first half.
    ("2r-fp32-mb4-s512-L2-packed-documents", 2, 4, 512, 2, "fp32", False, False,
     ["data.packing=documents"]),
    ("2r-bf16-mb2-s1024-L2-lora-packed-documents", 2, 2, 1024, 2, "bf16", True, False,
     ["data.packing=documents", "data.long_documents=split"]),
    ("1r-fp32-mb4-s256-L2-packed-none-no-recompute", 1, 4, 256, 2, "fp32", False, True,
     ["data.packing=none", "training.activation_checkpointing=false"]),
    # Recompute with every unit's gathered parameters kept until its backward.
    ("2r-fp32-mb4-s256-L2-keep-params", 2, 4, 256, 2, "fp32", False, False,
     ["parallel.reshard_after_forward=false"]),
    ("4r-bf16-mb1-s64-L8-keep-params", 4, 1, 64, 8, "bf16", False, False,
     ["parallel.reshard_after_forward=false"]),
    ("2r-bf16-mb4-s512-L2-lora-dropout-tied-keep-params", 2, 4, 512, 2, "bf16", True, True,
     ["training.lora.dropout=0.1", "parallel.reshard_after_forward=false"]),
    # The chunked fused head (training.loss_chunk_tokens, default 512) with
    # chunks that do not divide the tokens, tied in bf16; and the unchunked head.
    ("2r-fp32-mb4-s512-L2-chunked-head-100", 2, 4, 512, 2, "fp32", False, False,
     ["training.loss_chunk_tokens=100"]),
    ("2r-bf16-mb2-s1024-L2-tied-chunked-head-300", 2, 2, 1024, 2, "bf16", False, True,
     ["training.loss_chunk_tokens=300"]),
    ("1r-fp32-mb2-s1024-L2-unchunked-head", 1, 2, 1024, 2, "fp32", False, False,
     ["training.loss_chunk_tokens=0"]),
    # One shape per model family beside Llama (docs/model.md): sliding windows
    # shorter than the sequence, SmolLM3's unrotated layer, Gemma 3's pattern.
    ("2r-fp32-mb2-s256-L2-family-qwen2", 2, 2, 256, 2, "fp32", False, True, ["model.family=qwen2"]),
    ("2r-bf16-mb2-s256-L2-lora-family-qwen3", 2, 2, 256, 2, "bf16", True, False, ["model.family=qwen3"]),
    ("2r-fp32-mb2-s512-L2-family-mistral-window-128", 2, 2, 512, 2, "fp32", False, False,
     ["model.family=mistral", "model.sliding_window=128",
      "model.layer_types=[sliding_attention,sliding_attention]"]),
    ("1r-fp32-mb2-s256-L2-family-smollm3", 1, 2, 256, 2, "fp32", False, True,
     ["model.family=smollm3", "model.layer_types=[full_attention,full_attention_no_rope]"]),
    ("2r-bf16-mb2-s512-L2-family-gemma3-window-128", 2, 2, 512, 2, "bf16", False, True,
     ["model.family=gemma3", "model.sliding_window=128", "model.layer_types=[sliding_attention,full_attention]",
      "model.rope_theta=1000000", "model.rope_local_theta=10000", "model.query_pre_attn_scalar=32"]),
    # Tensor parallelism on one shape: T = 1, 2, 4 at 4 ranks (the tensor rank's
    # heads, MLP features and vocabulary rows; sequence parallelism splits the
    # residual stream), without sequence parallelism, and with LoRA in bf16.
    ("4r-fp32-mb2-s512-L2-T1", 4, 2, 512, 2, "fp32", False, False, []),
    ("4r-fp32-mb2-s512-L2-T2", 4, 2, 512, 2, "fp32", False, False,
     ["parallel.tensor_parallel_size=2"]),
    ("4r-fp32-mb2-s512-L2-T4", 4, 2, 512, 2, "fp32", False, False,
     ["parallel.tensor_parallel_size=4"]),
    ("4r-fp32-mb2-s512-L2-T2-no-sequence-parallel", 4, 2, 512, 2, "fp32", False, False,
     ["parallel.tensor_parallel_size=2", "parallel.sequence_parallel=false"]),
    ("4r-bf16-mb2-s256-L4-lora-tied-T2", 4, 2, 256, 4, "bf16", True, True,
     ["parallel.tensor_parallel_size=2"]),
    ("4r-fp32-mb2-s256-L2-no-recompute-T4", 4, 2, 256, 2, "fp32", False, False,
     ["parallel.tensor_parallel_size=4", "training.activation_checkpointing=none"]),
]


def tensor_parallel_size(extra):
    for e in extra:
        if e.startswith("parallel.tensor_parallel_size="):
            return int(e.split("=", 1)[1])
    return 1


def write_examples_dataset(path, tokens, seq_len, vocab_size=1024):
    """Examples of 20..seq_len/3 tokens with /document_offsets and a loss mask
    on each example's second half: what data.packing documents/none packs."""
    import h5py
    import numpy as np
    rng = np.random.default_rng(1)
    lengths = []
    while sum(lengths) < tokens:
        lengths.append(int(rng.integers(20, max(21, seq_len // 3))))
    ids = rng.integers(0, vocab_size, sum(lengths)).astype(np.uint16)
    mask = np.concatenate([np.r_[np.zeros(n // 2), np.ones(n - n // 2)] for n in lengths]).astype(np.uint8)
    with h5py.File(path, "w") as f:
        f.create_dataset("tokens", data=ids)
        f.create_dataset("loss_mask", data=mask)
        f.create_dataset("document_offsets", data=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
        f.attrs["documents"] = len(lengths)
        f.attrs["vocab_size"] = vocab_size
    return path


def run_config(args, work, config):
    name, ranks, micro, seq, layers, dtype, lora, tied, extra = config
    run_dir = os.path.join(work, name)
    # Two micro-steps per optimizer step on each of world / T data-parallel ranks.
    global_batch = micro * (ranks // tensor_parallel_size(extra)) * 2
    windows = global_batch * (args.steps + 2)
    packed = any(e.startswith("data.packing=") for e in extra)
    data = (write_examples_dataset if packed else write_token_dataset)(
        os.path.join(work, name + ".h5"), windows * (seq + 1) * (4 if packed else 1) + 1,
        *([seq] if packed else []))
    sets = ["run.output_dir=" + run_dir, "data.path=" + data, "model.preset=tiny",
            "model.hidden_size=128", "model.intermediate_size=352", "model.num_attention_heads=4",
            "model.num_key_value_heads=2", "model.head_dim=32", "model.vocab_size=1024",
            "model.num_hidden_layers=%d" % layers, "model.tie_word_embeddings=%s" % str(tied).lower(),
            "data.seq_len=%d" % seq, "training.global_batch_size=%d" % global_batch,
            "training.micro_batch_size=%d" % micro, "training.dtype=" + dtype,
            "training.lora.enabled=%s" % str(lora).lower(), "training.max_steps=%d" % args.steps,
            "training.warmup_steps=1", "logging.interval_steps=1", "eval.interval_steps=0",
            "checkpoint.interval_steps=0", "data.num_workers=1"] + extra
    command = ["mpirun", "-n", str(ranks), "--oversubscribe"]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    command += [os.path.join(args.bin, "nss_hpc"), os.path.join(ROOT, "configs", "run.yaml")]
    for s in sets:
        command += ["--set", s]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s" % (name, proc.returncode, proc.stdout + proc.stderr))
    with open(os.path.join(run_dir, "preflight.json")) as f:
        report = json.load(f)
    synthetic = [c for c in report["checks"] if c["id"] == "memory.synthetic_step"][0]
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        steps = [json.loads(line) for line in f]
    real = max(s["peak_mem_bytes"] for s in steps if "peak_mem_bytes" in s)
    return {"name": name, "ranks": ranks, "micro": micro, "seq": seq, "layers": layers,
            "dtype": dtype, "lora": lora, "tied": tied, "predicted": synthetic["predicted"],
            "synthetic": synthetic["measured"], "real": real, "verdict_s": report["duration_s"],
            "phase": report["memory"]["peak_phase"]}


def mib(value):
    return "%.2f" % (value / 2**20)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--only", default=None, help="run only configurations containing this")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="nss_preflight_accuracy_")
    rows = []
    try:
        for config in CONFIGS:
            if args.only and args.only not in config[0]:
                continue
            rows.append(run_config(args, work, config))
            print("done: " + rows[-1]["name"], file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| configuration | ranks | micro | seq | layers | dtype | LoRA | tied | predicted MiB "
          "| synthetic MiB | real MiB | pred/synth | synth/real | verdict s | peak at |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    misses = 0
    for r in rows:
        ps = r["predicted"] / r["synthetic"] - 1
        sr = r["synthetic"] / r["real"] - 1
        misses += abs(ps) > 0.10 or abs(sr) > 0.10
        print("| %s | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %+.1f%% | %+.1f%% | %.2f | %s |"
              % (r["name"], r["ranks"], r["micro"], r["seq"], r["layers"], r["dtype"],
                 "on" if r["lora"] else "off", "yes" if r["tied"] else "no", mib(r["predicted"]),
                 mib(r["synthetic"]), mib(r["real"]), ps * 100, sr * 100, r["verdict_s"], r["phase"]))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
