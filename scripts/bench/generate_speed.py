#!/usr/bin/env python3
"""Greedy generation speed, nss_generate against transformers' generate(),
side by side in one run: the same model (default: the converted
SmolLM2-135M-Instruct), the same prompt, the same number of new tokens, fp32
on the CPU with one thread, at batch 1 and batch 16 (16 copies of the prompt:
no padding on either side). Prints the median tokens/s of several runs and
the ratio. Run with the venv's Python (transformers):

    OMP_NUM_THREADS=1 build/venv/bin/python scripts/bench/generate_speed.py [--model DIR] [--new 64] [--repeats 3]
        [--bin DIR] [--device cpu|cuda] [--dtype fp32|bf16] [--batches 1,16] [--tokenizer F] [--random-1b]
        [--unequal [--jobs-per-row 2]]

nss_generate's figure is its own log line (decoding and prefill, without
loading the model); transformers' is the time of generate() alone.

--unequal: samples of unequal lengths, as records and chat answers are.
--jobs-per-row x batch chat prompts (16 questions in turn, which greedy
SmolLM2-135M-Instruct answers in 2 to 64+ tokens), greedy, ending at EOS or
--new tokens: nss_generate decodes them with continuous
batching (an ended row starts the next prompt), transformers' generate() in
batches of --batch prompts, left-padded, each batch running until its
longest answer ends. Tokens/s counts the tokens each answer keeps (up to its
EOS) on both sides; the table also gives how many answers agree token for
token.

On a GPU (scripts/bench/gpu_backlog.sh's generate part): --device cuda
--dtype bf16 --batches 1,16,64, and --random-1b DIR first writes a randomly
initialised model of the Llama-3.2-1B shape (SmolLM2's 49,152-token
vocabulary, so that --tokenizer's tokenizer.json decodes every id) to DIR
with transformers on the device; no model travels. Where transformers is
missing, its column says so.
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


def ours(args, batch):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write((json.dumps({"prompt": PROMPT}) + "\n") * batch)
    env = dict(os.environ, OMP_NUM_THREADS="1") if args.device == "cpu" else os.environ
    rates = []
    for _ in range(args.repeats):
        command = [os.path.join(args.bin, "nss_generate"), "--model", args.model, "--prompts", f.name,
                   "--temperature", "0", "--max-new-tokens", str(args.new), "--batch-size", str(batch),
                   "--dtype", args.dtype]
        if args.tokenizer:
            command += ["--tokenizer", args.tokenizer]
        proc = subprocess.run(command, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            sys.exit(proc.stderr)
        match = re.search(r"(\d+) new tokens in ([0-9.]+) s", proc.stderr)
        rates.append(int(match.group(1)) / float(match.group(2)))
    os.unlink(f.name)
    return statistics.median(rates)


def theirs(args, batch):
    import torch
    from transformers import AutoModelForCausalLM
    from tokenizers import Tokenizer
    if args.device == "cpu":
        torch.set_num_threads(1)
    tokenizer = Tokenizer.from_file(args.tokenizer or os.path.join(args.model, "tokenizer.json"))
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    network = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype).to(args.device).eval()
    ids = torch.tensor([tokenizer.encode(PROMPT).ids] * batch, device=args.device)
    rates, first = [], None
    for repeat in range(args.repeats + (args.device != "cpu")):  # a GPU's first call is a warm-up
        start = time.perf_counter()
        with torch.no_grad():
            # synced_gpus=None probes for FSDP, which Debian's torch 1.13 cannot.
            out = network.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=args.new,
                                   min_new_tokens=args.new, do_sample=False, synced_gpus=False,
                                   pad_token_id=0)
        if args.device != "cpu":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        rate = (out.shape[1] - ids.shape[1]) * batch / seconds
        if repeat >= (args.device != "cpu"):
            rates.append(rate)
        elif first is None:
            first = rate
    return statistics.median(rates), first


# Greedy SmolLM2-135M-Instruct answers these in 2 to 64+ tokens.
QUESTIONS = ["What is the capital of France?", "Say hello.", "What is 2 + 2?", "Name a primary color.",
             "Write a short poem about the sea.", "Explain how a bicycle works.",
             "What is the boiling point of water in Celsius?", "Give one word that rhymes with cat.",
             "Describe your ideal weekend.", "Translate 'thank you' into Spanish.", "Tell me a story about a dragon.",
             "What day comes after Monday?", "List three fruits.", "Why is the sky blue?",
             "Is the earth round? Answer yes or no.", "Write a haiku about autumn."]
CHAT = "<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n"


def question_prompts(count):
    return [CHAT % QUESTIONS[i % len(QUESTIONS)] for i in range(count)]


def ours_unequal(args, batch, prompts):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("".join(json.dumps({"prompt": p}) + "\n" for p in prompts))
    env = dict(os.environ, OMP_NUM_THREADS="1") if args.device == "cpu" else os.environ
    rates, answers = [], None
    for _ in range(args.repeats):
        proc = subprocess.run([os.path.join(args.bin, "nss_generate"), "--model", args.model, "--prompts", f.name,
                               "--temperature", "0", "--max-new-tokens", str(args.new), "--batch-size", str(batch),
                               "--dtype", args.dtype], capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            sys.exit(proc.stderr)
        match = re.search(r"(\d+) new tokens in ([0-9.]+) s", proc.stderr)
        rates.append(int(match.group(1)) / float(match.group(2)))
        answers = [json.loads(line)["tokens"] for line in proc.stdout.splitlines() if line.strip()]
    os.unlink(f.name)
    return statistics.median(rates), answers


def theirs_unequal(args, batch, prompts):
    import torch
    from transformers import AutoModelForCausalLM
    from tokenizers import Tokenizer
    if args.device == "cpu":
        torch.set_num_threads(1)
    tokenizer = Tokenizer.from_file(args.tokenizer or os.path.join(args.model, "tokenizer.json"))
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    network = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype).to(args.device).eval()
    end = network.config.eos_token_id
    encoded = [tokenizer.encode(p).ids for p in prompts]
    rates, answers = [], []
    for _ in range(args.repeats):
        kept, seconds, answers = 0, 0.0, []
        for first in range(0, len(encoded), batch):
            chunk = encoded[first:first + batch]
            longest = max(len(ids) for ids in chunk)
            ids = torch.tensor([[0] * (longest - len(x)) + x for x in chunk], device=args.device)
            mask = torch.tensor([[0] * (longest - len(x)) + [1] * len(x) for x in chunk], device=args.device)
            start = time.perf_counter()
            with torch.no_grad():
                out = network.generate(ids, attention_mask=mask, max_new_tokens=args.new, do_sample=False,
                                       synced_gpus=False, pad_token_id=0, eos_token_id=end)
            if args.device != "cpu":
                torch.cuda.synchronize()
            seconds += time.perf_counter() - start
            for row in out[:, longest:].tolist():
                answer = row[:row.index(end)] if end in row else row
                answers.append(answer)
                kept += len(answer)
        rates.append(kept / seconds)
    return statistics.median(rates), answers


def unequal_table(args):
    print("| batch | answers | mean / longest length | nss_generate tokens/s (continuous) | "
          "transformers tokens/s | ratio | answers equal |")
    print("|---|---|---|---|---|---|---|")
    for batch in (int(b) for b in args.batches.split(",")):
        prompts = question_prompts(batch * args.jobs_per_row)
        a, mine = ours_unequal(args, batch, prompts)
        try:
            b, reference = theirs_unequal(args, batch, prompts)
        except ImportError as e:
            print("| %d | %d | — | %.1f | — (%s) | — | — |" % (batch, len(prompts), a, e), flush=True)
            continue
        lengths = [len(x) for x in mine]
        same = sum(x == y for x, y in zip(mine, reference))
        print("| %d | %d | %.1f / %d | %.1f | %.1f | %.2fx | %d of %d |" % (
            batch, len(prompts), statistics.mean(lengths), max(lengths), a, b, a / b, same, len(prompts)),
            flush=True)


def write_random_1b(directory, tokenizer, layers):
    """The Llama-3.2-1B shape, random weights in bf16, written where nss_generate reads it."""
    import shutil
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    config = LlamaConfig(vocab_size=49152, hidden_size=2048, intermediate_size=8192, num_hidden_layers=layers,
                         num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=4096,
                         rope_theta=500000.0, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2)
    torch.manual_seed(0)
    # Initialised where it will run, in bf16 (torch 1.13 has neither default; it builds on the CPU).
    if hasattr(torch, "set_default_device"):
        torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")
    torch.set_default_dtype(torch.bfloat16)
    model = LlamaForCausalLM(config)
    torch.set_default_dtype(torch.float32)
    if hasattr(torch, "set_default_device"):
        torch.set_default_device("cpu")
    model.save_pretrained(directory, safe_serialization=True)
    shutil.copy(tokenizer, os.path.join(directory, "tokenizer.json"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.path.join(SOURCE, "build", "models", "smollm2-135m-instruct"))
    parser.add_argument("--new", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bin", default=os.path.join(SOURCE, "build", "bin"))
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--batches", default="1,16", help="comma-separated batch sizes")
    parser.add_argument("--tokenizer", help="tokenizer.json (default: the model directory's)")
    parser.add_argument("--random-1b", action="store_true",
                        help="first write a random Llama-3.2-1B-shaped model to --model (needs --tokenizer)")
    parser.add_argument("--layers", type=int, default=16, help="--random-1b's decoder blocks (a rehearsal: 1)")
    parser.add_argument("--unequal", action="store_true",
                        help="answers of unequal lengths, ending at EOS (continuous batching)")
    parser.add_argument("--jobs-per-row", type=int, default=4, help="--unequal: prompts per batch row")
    args = parser.parse_args()
    if args.random_1b:
        if not args.tokenizer:
            sys.exit("--random-1b needs --tokenizer")
        write_random_1b(args.model, args.tokenizer, args.layers)
    if args.unequal:
        return unequal_table(args)
    # nss_generate's figure is a fresh process's (its first CUDA calls
    # included); transformers' first call in its process is the like figure.
    print("| batch | nss_generate tokens/s | transformers tokens/s | ratio | transformers' first call | ratio |")
    print("|---|---|---|---|---|---|")
    for batch in (int(b) for b in args.batches.split(",")):
        a = ours(args, batch)
        try:
            b, first = theirs(args, batch)
        except ImportError as e:
            print("| %d | %.1f | — (%s) | — | — | — |" % (batch, a, e), flush=True)
            continue
        cold = "| %.1f | %.2fx |" % (first, a / first) if first else "| — | — |"
        print("| %d | %.1f | %.1f | %.2fx %s" % (batch, a, b, a / b, cold), flush=True)


if __name__ == "__main__":
    main()
