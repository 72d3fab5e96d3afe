"""Scores a model and a PEFT adapter of it with transformers and PEFT, as the
real-model end-to-end test compares them with nss_eval. Runs under the venv
scripts/setup.sh creates:

    real_model_check.py MODEL_DIR --data TOKENS.h5 --seq-len N --windows W [--adapter DIR] [--prompt TEXT]

Prints one JSON line: "base" and, with --adapter, "adapted" — each
{"loss", "tokens"}: the mean next-token loss over the targets (/loss_mask,
else every label) of windows i = tokens[i*N, i*N + N + 1), i < W, as nss_eval
computes it — and with --prompt "generated": the adapted (else the base) model's
greedy continuation of TEXT up to its end-of-sequence token.
"""
import argparse
import json

import h5py
import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def windows(path, seq_len, count):
    with h5py.File(path, "r") as f:
        tokens = torch.from_numpy(f["tokens"][:count * seq_len + 1].astype(np.int64))
        mask = f["loss_mask"][:count * seq_len + 1] if "loss_mask" in f else np.ones(len(tokens), np.uint8)
    ids = torch.stack([tokens[i * seq_len:(i + 1) * seq_len + 1] for i in range(count)])
    targets = torch.stack([torch.from_numpy(mask[i * seq_len + 1:(i + 1) * seq_len + 1].astype(bool))
                           for i in range(count)])
    return ids, targets


def score(model, ids, targets):
    with torch.no_grad():
        # float64: torch's float32 cross-entropy is 1e-5 off on a large vocabulary.
        logits = model(input_ids=ids[:, :-1]).logits.double()
    losses = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1),
                                               reduction="none")
    chosen = losses[targets.reshape(-1)]
    return {"loss": chosen.double().mean().item(), "tokens": int(chosen.numel())}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--data", required=True)
    parser.add_argument("--seq-len", type=int, required=True)
    parser.add_argument("--windows", type=int, required=True)
    parser.add_argument("--adapter")
    parser.add_argument("--prompt")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.float32).eval()
    ids, targets = windows(args.data, args.seq_len, args.windows)
    result = {"base": score(model, ids, targets)}
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if args.adapter:
        from peft import PeftModel
        model = PeftModel.from_pretrained(model, args.adapter).eval()
        result["adapted"] = score(model, ids, targets)
        tokenizer = AutoTokenizer.from_pretrained(args.adapter)
    if args.prompt:
        prompt = tokenizer(tokenizer.bos_token + args.prompt, return_tensors="pt", return_token_type_ids=False)
        with torch.no_grad():
            # synced_gpus=None probes for FSDP, which Debian's torch 1.13 cannot.
            out = model.generate(**prompt, max_new_tokens=64, do_sample=False, synced_gpus=False,
                                 pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
        result["generated"] = tokenizer.decode(out[0, prompt["input_ids"].shape[1]:], skip_special_tokens=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
