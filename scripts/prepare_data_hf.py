#!/usr/bin/env python3
"""Text, JSONL or CSV -> token dataset (docs/data.md) with a local Hugging Face tokenizer.

The same conversion as nss_prepare_data, with the tokenizer of the model to be
fine-tuned instead of the built-in byte-level one:

    build/venv/bin/python scripts/prepare_data_hf.py --tokenizer DIR_OR_tokenizer.json \\
        --input PATH [--input PATH]... --output OUT.h5 [--format text|jsonl|csv] \\
        [--bos-token TOKEN|none] [--eos-token TOKEN]

Documents are exactly those nss_prepare_data makes (a text file; a JSONL
record's "text" string or the whole record; a CSV row as one JSON object keyed
by the header); each is stored as [BOS] tokens EOS. BOS/EOS come from the
flags, else tokenizer_config.json next to tokenizer.json, else well-known
special tokens. The tokenizer is never downloaded. Exit codes: 0 ok, 2 usage,
4 data error (unreadable/empty input, invalid JSON, ragged CSV).
"""
import argparse
import csv
import hashlib
import json
import os
import re
import sys

import h5py
import numpy as np

EXIT_USAGE = 2
EXIT_DATA = 4
JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
BOS_CANDIDATES = ["<|begin_of_text|>", "<s>", "<bos>", "<|startoftext|>"]
EOS_CANDIDATES = ["<|end_of_text|>", "<|endoftext|>", "</s>", "<eos>"]
BATCH_DOCUMENTS = 512


class DataError(Exception):
    """An input problem the user can fix (exit 4)."""


class UsageError(Exception):
    """A bad command line (exit 2)."""


def format_for(path, forced):
    if forced:
        return forced
    lower = path.lower()
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(".json"):
        raise UsageError("cannot tell how to read %s (a .json file); convert it to JSONL or pass --format text" % path)
    return "text"


def check_regular(path):
    if not os.path.exists(path):
        raise DataError("cannot read input %s: No such file or directory" % path)
    if not os.path.isfile(path):
        raise DataError("input %s is not a regular file" % path)


def json_string(text):
    return json.dumps(text, ensure_ascii=False)


def csv_row_to_json(header, row):
    cells = [json_string(k) + ":" + (v if JSON_NUMBER.match(v) else json_string(v)) for k, v in zip(header, row)]
    return "{" + ",".join(cells) + "}"


def text_documents(path):
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise DataError("input %s is empty" % path)
    # Hugging Face tokenizers take Unicode text: invalid UTF-8 becomes U+FFFD.
    yield data.decode("utf-8", errors="replace")


def jsonl_documents(path):
    records = 0
    with open(path, "r", encoding="utf-8-sig", errors="strict", newline="") as f:
        try:
            lines = list(f)
        except UnicodeDecodeError as e:
            raise DataError("%s: invalid UTF-8 (%s)" % (path, e))
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r\n")
        if not line.strip(" \t"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError("%s:%d: invalid JSON: %s" % (path, number, e))
        records += 1
        if isinstance(record, dict) and isinstance(record.get("text"), str):
            yield record["text"]
        else:
            yield json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    if records == 0:
        raise DataError("input %s holds no JSONL records" % path)


def csv_documents(path):
    with open(path, "r", encoding="utf-8-sig", errors="replace", newline="") as f:
        reader = csv.reader(f, strict=True)
        header, rows, line = None, 0, 1
        try:
            for row in reader:
                start, line = line, reader.line_num + 1
                if not row:
                    continue
                if header is None:
                    if len(set(row)) != len(row):
                        raise DataError("%s:%d: the CSV header names a column twice" % (path, start))
                    header = row
                    continue
                if len(row) != len(header):
                    raise DataError("%s:%d: CSV row has %d fields, the header has %d" % (path, start, len(row), len(header)))
                rows += 1
                yield csv_row_to_json(header, row)
        except csv.Error as e:
            raise DataError("%s:%d: %s" % (path, line, e))
    if header is None:
        raise DataError("input %s is empty (no CSV header)" % path)
    if rows == 0:
        raise DataError("input %s has a CSV header but no rows" % path)


READERS = {"text": text_documents, "jsonl": jsonl_documents, "csv": csv_documents}


def tokenizer_file(path):
    candidate = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
    if not os.path.isfile(candidate):
        raise UsageError("no tokenizer.json at %s: give a local directory or file (nothing is downloaded)" % path)
    return candidate


def configured_special(tokenizer_json, key):
    config = os.path.join(os.path.dirname(tokenizer_json), "tokenizer_config.json")
    if not os.path.isfile(config):
        return None
    with open(config, encoding="utf-8") as f:
        value = json.load(f).get(key)
    return value.get("content") if isinstance(value, dict) else value


def special_id(tokenizer, tokenizer_json, flag, key, candidates, required):
    if flag == "none" and not required:
        return None
    name = flag or configured_special(tokenizer_json, key)
    if name:
        token_id = tokenizer.token_to_id(name)
        if token_id is None:
            raise UsageError("%s %r is not in the tokenizer's vocabulary" % (key, name))
        return token_id
    for name in candidates:
        token_id = tokenizer.token_to_id(name)
        if token_id is not None:
            return token_id
    if required:
        raise UsageError("cannot tell the tokenizer's end-of-document token; pass --eos-token TOKEN")
    return None


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def prepare(args):
    from tokenizers import Tokenizer

    tokenizer_json = tokenizer_file(args.tokenizer)
    tokenizer = Tokenizer.from_file(tokenizer_json)
    vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
    bos = special_id(tokenizer, tokenizer_json, args.bos_token, "bos_token", BOS_CANDIDATES, False)
    eos = special_id(tokenizer, tokenizer_json, args.eos_token, "eos_token", EOS_CANDIDATES, True)
    dtype = np.uint16 if vocab_size <= 1 << 16 else np.uint32
    formats = [format_for(p, args.format) for p in args.input]
    for path in args.input:
        check_regular(path)
    if any(os.path.exists(p) and os.path.exists(args.output) and os.path.samefile(p, args.output) for p in args.input):
        raise UsageError("the output %s is also an input" % args.output)

    pieces, documents, pending = [], 0, []

    def flush():
        for encoding in tokenizer.encode_batch(pending, add_special_tokens=False):
            ids = ([bos] if bos is not None else []) + encoding.ids + [eos]
            pieces.append(np.asarray(ids, dtype=dtype))
        pending.clear()

    for path, fmt in zip(args.input, formats):
        for document in READERS[fmt](path):
            pending.append(document)
            documents += 1
            if len(pending) >= BATCH_DOCUMENTS:
                flush()
    flush()
    total = sum(len(p) for p in pieces)

    directory = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(directory, exist_ok=True)
    temporary = "%s.tmp.%d" % (args.output, os.getpid())
    try:
        with h5py.File(temporary, "w") as f:
            tokens = f.create_dataset("tokens", shape=(total,), dtype=dtype)  # contiguous, no filters
            offset, max_id = 0, -1
            for piece in pieces:
                tokens[offset:offset + len(piece)] = piece
                offset += len(piece)
                max_id = max(max_id, int(piece.max()))
            f.attrs["tokenizer"] = "hf:" + tokenizer_json
            f.attrs["tokenizer_sha256"] = sha256_of(tokenizer_json)
            f.attrs["vocab_size"] = np.int64(vocab_size)
            f.attrs["max_token_id"] = np.int64(max_id)
            f.attrs["documents"] = np.int64(documents)
            if bos is not None:
                f.attrs["bos_token_id"] = np.int64(bos)
            f.attrs["eos_token_id"] = np.int64(eos)
        with open(temporary, "rb") as f:
            os.fsync(f.fileno())
        os.replace(temporary, args.output)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    print("wrote %s: %d documents, %d tokens (%s, vocab_size %d)" % (args.output, documents, total, tokenizer_json, vocab_size))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", required=True, help="local tokenizer.json or a directory holding it")
    parser.add_argument("--input", action="append", required=True, help="input file (repeatable)")
    parser.add_argument("--output", required=True, help="token dataset to write (HDF5)")
    parser.add_argument("--format", choices=sorted(READERS), help="default: from each file's extension")
    parser.add_argument("--bos-token", help="beginning-of-document token, or 'none'")
    parser.add_argument("--eos-token", help="end-of-document token")
    args = parser.parse_args(argv)
    try:
        prepare(args)
    except UsageError as e:
        print("prepare_data_hf: error: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    except DataError as e:
        print("prepare_data_hf: error: [data] %s" % e, file=sys.stderr)
        return EXIT_DATA
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
