"""The named-entity tagger's speed (docs/performance.md, "PII detection"):
lib/ner (through build/bin/ner_probe) against transformers' own
token-classification pipeline on the same cells, the same model and the same
threads, side by side in one run. Runs in the venv scripts/setup.sh makes:

  build/venv/bin/python scripts/bench/ner_speed.py [--size base|tiny] [--cells N] [--repeats R] [--threads T]

The model is a BertForTokenClassification with bert-base-cased's shape
(hidden 768, 12 layers, 12 heads, 3072; CoNLL's nine labels) and random
weights, built from its config (nothing downloaded); `tiny` is the committed
test tagger's shape. The cells are notes of tests/fixtures/ner/ner_notes.py.
Prints each run and the medians: cells per second and tokens per second."""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from transformers import BertConfig, BertForTokenClassification, pipeline

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "ner"))
sys.path.insert(0, os.path.join(ROOT, "tests", "ner"))
import ner_notes  # noqa: E402
import ner_reference  # noqa: E402

LABELS = ner_reference.CONLL
SHAPES = {"base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
          "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)}


def build(directory, size, texts):
    tok = ner_reference.tokenizer(os.path.join(directory, "vocab"), texts, False, max_length=512)
    config = BertConfig(vocab_size=tok.vocab_size, max_position_embeddings=512, **SHAPES[size],
                        id2label=dict(enumerate(LABELS)), label2id={l: i for i, l in enumerate(LABELS)})
    model = BertForTokenClassification(config).eval()
    model_dir = os.path.join(directory, "tagger")
    model.save_pretrained(model_dir, safe_serialization=True)
    tok.save_pretrained(model_dir)
    return model_dir, model, tok


def run_ours(model_dir, texts_path, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    with open(texts_path, "rb") as f:
        out = subprocess.run([os.path.join(ROOT, "build", "bin", "ner_probe"), model_dir], stdin=f,
                             capture_output=True, env=env, check=True)
    return json.loads(out.stderr.decode().strip().splitlines()[-1])["seconds"]


def run_transformers(model, tok, texts):
    nlp = pipeline("token-classification", model=model, tokenizer=tok, aggregation_strategy="first", device=-1)
    start = time.perf_counter()
    nlp(texts, batch_size=32)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=SHAPES, default="base")
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    texts = [" ".join(words) for words, _ in ner_notes.notes(random.Random(3), args.cells)]
    with tempfile.TemporaryDirectory() as scratch:
        model_dir, model, tok = build(scratch, args.size, texts)
        tokens = sum(len(tok(t)["input_ids"]) for t in texts)
        texts_path = os.path.join(scratch, "texts.jsonl")
        with open(texts_path, "w", encoding="utf-8") as f:
            f.write("".join(json.dumps({"text": t}) + "\n" for t in texts))
        ours, theirs = [], []
        for repeat in range(args.repeats):
            ours.append(run_ours(model_dir, texts_path, args.threads))
            theirs.append(run_transformers(model, tok, texts))
            print(f"run {repeat}: lib/ner {len(texts) / ours[-1]:.1f} cells/s, "
                  f"transformers {len(texts) / theirs[-1]:.1f} cells/s")
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"median ({args.size}, {len(texts)} cells, {tokens} tokens, {args.threads} threads): "
              f"lib/ner {len(texts) / a:.1f} cells/s ({tokens / a:.0f} tokens/s), "
              f"transformers {len(texts) / b:.1f} cells/s ({tokens / b:.0f} tokens/s), ratio {b / a:.2f}")


if __name__ == "__main__":
    main()
