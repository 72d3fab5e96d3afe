"""Loads an nss_consolidate export with the Hugging Face libraries themselves
and prints what the end-to-end test compares, as one JSON line. Runs under
the venv scripts/setup.sh creates (transformers, peft, tokenizers):

    hf_load_check.py model HF_DIR ARGS     AutoModelForCausalLM.from_pretrained(HF_DIR)
    hf_load_check.py peft ADAPTER_DIR ARGS PeftModel.from_pretrained(AutoModelForCausalLM
                                           .from_pretrained(base_model_name_or_path), ADAPTER_DIR)
    ARGS: --tokenizer-source DIR --text TEXT --data TOKENS.h5 --seq-len N --windows W

Output: "ids" (TEXT encoded by AutoTokenizer from the export) and "source_ids"
(by the tokenizer of DIR), "loading" (transformers' or PEFT's missing and
unexpected keys), "differing" (tensors of the export's safetensors that are not
bit for bit the loaded model's), "logits" of the first window's tokens, and
"loss": the mean next-token loss over windows i = tokens[i*N, i*N + N + 1),
i < W, as nss_eval computes it."""
import argparse
import glob
import json
import os

import h5py
import numpy as np
import torch
from peft import PeftModel
from peft.utils import get_peft_model_state_dict
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, AutoTokenizer


def safetensors_in(directory, pattern):
    tensors = {}
    for path in sorted(glob.glob(os.path.join(directory, pattern))):
        tensors.update(load_file(path))
    return tensors


def differing(loaded, stored):
    return sorted(name for name, value in stored.items()
                  if name not in loaded or not torch.equal(loaded[name], value))


def load_model(directory):
    model, info = AutoModelForCausalLM.from_pretrained(directory, output_loading_info=True)
    loading = {"missing": info["missing_keys"], "unexpected": info["unexpected_keys"],
               "mismatched": [str(m) for m in info["mismatched_keys"]]}
    return model, loading


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["model", "peft"])
    parser.add_argument("path")
    parser.add_argument("--tokenizer-source", required=True)
    parser.add_argument("--text", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--seq-len", type=int, required=True)
    parser.add_argument("--windows", type=int, required=True)
    args = parser.parse_args()

    if args.kind == "model":
        model, loading = load_model(args.path)
        stored = safetensors_in(args.path, "model*.safetensors")
        loaded = model.state_dict()
    else:
        with open(os.path.join(args.path, "adapter_config.json")) as f:
            base = json.load(f)["base_model_name_or_path"]
        base_model, loading = load_model(base)
        model = PeftModel.from_pretrained(base_model, args.path)
        stored = safetensors_in(args.path, "adapter_model.safetensors")
        loaded = get_peft_model_state_dict(model)  # the names PEFT saves under
    model.eval()

    with h5py.File(args.data, "r") as f:
        tokens = torch.from_numpy(f["tokens"][:].astype(np.int64))
    n = args.seq_len
    windows = torch.stack([tokens[i * n:i * n + n + 1] for i in range(args.windows)])
    with torch.no_grad():
        logits = model(input_ids=windows[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 windows[:, 1:].reshape(-1))

    tokenizer = AutoTokenizer.from_pretrained(args.path)
    source = AutoTokenizer.from_pretrained(args.tokenizer_source)
    print(json.dumps({"ids": tokenizer(args.text)["input_ids"],
                      "source_ids": source(args.text)["input_ids"],
                      "loading": loading, "differing": differing(loaded, stored),
                      "logits": logits[0].tolist(), "loss": loss.item()}))


if __name__ == "__main__":
    main()
