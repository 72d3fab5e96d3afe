#!/usr/bin/env python3
"""Encode speed of the C++ tokenizer (lib/tokenizer, through tokenizer_probe
--bench) against Hugging Face `tokenizers` on the same ~1 MB of local text
(license texts and Python modules every Debian machine has, plus non-ASCII
lines), one thread each: the whole text as one encode() call, add_special_tokens
off. Prints tokens/s, the best of --repeat runs; the token counts must agree.
Run it with the venv's Python (build/venv/bin/python), where tokenizers lives.

  build/venv/bin/python scripts/bench/tokenizer_speed.py [--tokenizer FILE] [--build build]
      [--megabytes 1] [--repeat 5]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NON_ASCII = ("Café naïve résumé — 日本語のテキスト、中文字符。 Привет, мир! مرحبا بالعالم 😀👍🏽 "
             "1234567890 I'm you're it's\n")


def corpus(megabytes):
    parts, size = [], 0
    files = sorted(glob.glob("/usr/share/common-licenses/*")) + sorted(glob.glob("/usr/lib/python3.11/*.py"))
    for path in files:
        if size >= megabytes * 1e6 or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        parts += [text, NON_ASCII * 20]
        size += len(text.encode()) + len(NON_ASCII.encode()) * 20
    return "".join(parts)[: int(megabytes * 1e6)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", default=os.path.join(ROOT, "build/models/smollm2-135m-instruct/tokenizer.json"))
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--megabytes", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ["RAYON_NUM_THREADS"] = "1"  # before tokenizers starts its pool
    from tokenizers import Tokenizer

    text = corpus(args.megabytes)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        probe = subprocess.run([os.path.join(args.build, "bin", "tokenizer_probe"), args.tokenizer, "--bench",
                                f.name, str(args.repeat)], capture_output=True, text=True, check=True)
    cpp = json.loads(probe.stdout)

    start = time.perf_counter()
    tokenizer = Tokenizer.from_file(args.tokenizer)
    hf_load = time.perf_counter() - start
    hf_best, hf_tokens = float("inf"), 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        hf_tokens = len(tokenizer.encode(text, add_special_tokens=False).ids)
        hf_best = min(hf_best, time.perf_counter() - start)

    print("tokenizer %s, %.2f MB of text, best of %d" % (args.tokenizer, len(text.encode()) / 1e6, args.repeat))
    print("  C++ lib/tokenizer : %8d tokens in %.3f s = %10.0f tokens/s (load %.3f s)"
          % (cpp["tokens"], cpp["seconds"], cpp["tokens"] / cpp["seconds"], cpp["load_seconds"]))
    print("  HF tokenizers     : %8d tokens in %.3f s = %10.0f tokens/s (load %.3f s)"
          % (hf_tokens, hf_best, hf_tokens / hf_best, hf_load))
    print("  C++ / HF speed    : %.2fx" % (hf_best / cpp["seconds"]))
    if cpp["tokens"] != hf_tokens:
        sys.exit("token counts differ: C++ %d, tokenizers %d" % (cpp["tokens"], hf_tokens))


if __name__ == "__main__":
    main()
