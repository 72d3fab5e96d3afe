#!/usr/bin/env python3
"""Greedy generation speed, nss_generate against transformers' generate(),
side by side in one run: the same model (default: the converted
SmolLM2-135M-Instruct), the same prompt, the same number of new tokens, fp32
on the CPU with one thread, at batch 1 and batch 16 (16 copies of the prompt:
no padding on either side). Prints the median tokens/s of several runs and
the ratio. Run with the venv's Python (transformers):

    OMP_NUM_THREADS=1 build/venv/bin/python scripts/bench/generate_speed.py [--model DIR] [--new 64] [--repeats 3]

nss_generate's figure is its own log line (decoding and prefill, without
loading the model); transformers' is the time of generate() alone.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROMPT = "Once upon a time, in a small village near the sea, there lived"


def ours(model, batch, new, repeats):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write((json.dumps({"prompt": PROMPT}) + "\n") * batch)
    rates = []
    for _ in range(repeats):
        proc = subprocess.run([os.path.join(SOURCE, "build", "bin", "nss_generate"), "--model", model, "--prompts",
                               f.name, "--temperature", "0", "--max-new-tokens", str(new), "--batch-size",
                               str(batch)], capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
        if proc.returncode != 0:
            sys.exit(proc.stderr)
        match = re.search(r"(\d+) new tokens in ([0-9.]+) s", proc.stderr)
        rates.append(int(match.group(1)) / float(match.group(2)))
    os.unlink(f.name)
    return statistics.median(rates)


def theirs(model, batch, new, repeats):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(model)
    network = AutoModelForCausalLM.from_pretrained(model, torch_dtype=torch.float32).eval()
    inputs = tokenizer([PROMPT] * batch, return_tensors="pt", return_token_type_ids=False)
    ids = inputs["input_ids"]
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        with torch.no_grad():
            # synced_gpus=None probes for FSDP, which Debian's torch 1.13 cannot.
            out = network.generate(**inputs, max_new_tokens=new, do_sample=False, synced_gpus=False,
                                   pad_token_id=tokenizer.eos_token_id)
        seconds = time.perf_counter() - start
        rates.append((out.shape[1] - ids.shape[1]) * batch / seconds)
    return statistics.median(rates)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.path.join(SOURCE, "build", "models", "smollm2-135m-instruct"))
    parser.add_argument("--new", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("| batch | nss_generate tokens/s | transformers tokens/s | ratio |")
    print("|---|---|---|---|")
    for batch in (1, 16):
        a = ours(args.model, batch, args.new, args.repeats)
        b = theirs(args.model, batch, args.new, args.repeats)
        print("| %d | %.1f | %.1f | %.2fx |" % (batch, a, b, a / b), flush=True)


if __name__ == "__main__":
    main()
