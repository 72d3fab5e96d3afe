#!/usr/bin/env python3
"""Text, JSONL or CSV documents, or sft/records/chat examples -> token dataset (docs/data.md) with a local Hugging Face tokenizer.

The same conversion as nss_prepare_data, with the tokenizer of the model to be
fine-tuned instead of the built-in byte-level one:

    build/venv/bin/python scripts/prepare_data_hf.py --tokenizer DIR_OR_tokenizer.json \\
        --input PATH [--input PATH]... --output OUT.h5 \\
        [--format text|jsonl|csv|sft|records|chat] [--max-tokens N] \\
        [--prompt-template TEXT] [--group-by COLUMN [--order-by COLUMN]] \\
        [--pii off|detect|replace|hash|redact [--pii-entities LIST] ...] \\
        [--bos-token TOKEN|none] [--eos-token TOKEN]

Documents are exactly those nss_prepare_data makes (a text file; a JSONL
record's "text" string or the whole record; a CSV row as one JSON object keyed
by the header); each is stored as [BOS] tokens EOS. Examples (sft, records)
are [BOS] prompt completion EOS, prompt and completion tokenised apart, and
/loss_mask marks the completion and EOS as the targets; chat examples are the
tokenizer's own chat_template rendering, with the assistant turns as targets.
BOS/EOS come from the flags, else tokenizer_config.json next to
tokenizer.json, else well-known special tokens. The tokenizer is never
downloaded. Exit codes: 0 ok, 2 usage, 4 data error (unreadable/empty input,
invalid JSON, ragged CSV, a chat record whose turns do not tokenise as a
prefix of the conversation).

PII handling (--pii; on by default for records) is nss_prepare_data's own
pass: with it, this script runs nss_prepare_data --tokenizer with the same
options (its output is this script's, file for file), found as
$NSS_PREPARE_DATA, build/bin/nss_prepare_data beside this checkout, or on PATH.
"""
import argparse
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys

import h5py
import numpy as np

from data_inputs import (EXAMPLE_FORMATS, DataError, UsageError, chat_examples, chat_renderer, chat_template_of,
                         csv_row_to_json, csv_rows, jsonl_records, record_examples, records_table, sft_examples)
from records_holdout import DEFAULT_MAX_HOLDOUT, csv_line, group_keys, holdout_paths, holdout_target, split_holdout

EXIT_USAGE = 2
EXIT_DATA = 4
BOS_CANDIDATES = ["<|begin_of_text|>", "<s>", "<bos>", "<|startoftext|>"]
EOS_CANDIDATES = ["<|end_of_text|>", "<|endoftext|>", "</s>", "<eos>"]
BATCH_DOCUMENTS = 512


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


def text_documents(path):
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise DataError("input %s is empty" % path)
    # Hugging Face tokenizers take Unicode text: invalid UTF-8 becomes U+FFFD.
    yield data.decode("utf-8", errors="replace")


def jsonl_documents(path):
    records = 0
    for _, record in jsonl_records(path):
        records += 1
        if isinstance(record, dict) and isinstance(record.get("text"), str):
            yield record["text"]
        else:
            yield json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    if records == 0:
        raise DataError("input %s holds no JSONL records" % path)


def csv_documents(path):
    for header, row in csv_rows(path):
        yield csv_row_to_json(header, row)


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


PII_MODES = ["off", "detect", "replace", "hash", "redact"]


def pii_mode(args):
    """The PII mode asked for: records default to replace, everything else to off."""
    return args.pii or ("replace" if args.format == "records" else "off")


def nss_prepare_data():
    """The nss_prepare_data binary that does the PII pass."""
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.environ.get("NSS_PREPARE_DATA"), os.path.join(here, "..", "build", "bin", "nss_prepare_data"),
                      shutil.which("nss_prepare_data")):
        if candidate and os.access(candidate, os.X_OK) and os.path.isfile(candidate):
            return candidate
    raise UsageError("PII handling (--pii, on by default for records) is nss_prepare_data's: build it "
                     "(scripts/build.sh) or set NSS_PREPARE_DATA to it, or pass --pii off")


def forwarded_arguments(args):
    """The options of this run as nss_prepare_data takes them."""
    command = ["--tokenizer", args.tokenizer, "--output", args.output, "--pii", pii_mode(args)]
    for path in args.input:
        command += ["--input", path]
    flags = [("--format", args.format), ("--max-tokens", args.max_tokens), ("--prompt-template", args.prompt_template),
             ("--group-by", args.group_by), ("--order-by", args.order_by), ("--holdout", args.holdout),
             ("--bos-token", args.bos_token), ("--eos-token", args.eos_token), ("--pii-entities", args.pii_entities),
             ("--pii-key", args.pii_key), ("--pii-report", args.pii_report),
             ("--pii-ner-model", args.pii_ner_model)]
    if args.holdout:
        flags += [("--max-holdout", args.max_holdout), ("--holdout-seed", args.holdout_seed)]
    command += [part for flag, value in flags if value is not None for part in (flag, str(value))]
    command += [part for column in args.pii_column for part in ("--pii-column", column)]
    command += [part for column in args.pii_keep for part in ("--pii-keep", column)]
    return command + (["--holdout-eval"] if args.holdout_eval else [])


def check_arguments(args):
    examples = args.format in EXAMPLE_FORMATS
    if args.max_tokens is not None and not examples:
        raise UsageError("--max-tokens applies to examples (--format sft, records or chat); documents are cut to "
                         "data.seq_len when training")
    if args.max_tokens is not None and args.max_tokens < 1:
        raise UsageError("--max-tokens is %d; give a positive number of tokens per example" % args.max_tokens)
    if args.format == "records" and len(args.input) != 1:
        raise UsageError("--format records takes one CSV table, got %d inputs; combine the tables into one CSV"
                         % len(args.input))
    if (args.prompt_template or args.group_by or args.order_by) and args.format != "records":
        raise UsageError("--prompt-template, --group-by and --order-by apply to --format records")
    if args.holdout and args.format != "records":
        raise UsageError("--holdout applies to --format records; add --format records, or drop --holdout")
    pii_options = (args.pii_entities or args.pii_column or args.pii_keep or args.pii_key or args.pii_report
                   or args.pii_ner_model)
    if pii_mode(args) != "off" and args.format not in (None, "csv", "records"):
        raise UsageError("--pii works on tables (--format records or csv); text, JSONL and instruction documents "
                         "are not scanned; drop --pii")
    if pii_mode(args) == "off" and pii_options:
        raise UsageError("--pii-entities, --pii-column, --pii-keep, --pii-key, --pii-report and --pii-ner-model "
                         "need PII handling, and it is off; give --pii detect|replace|hash|redact, or drop them")
    if args.holdout_eval and not args.holdout:
        raise UsageError("--holdout-eval writes the holdout as a token file; add --holdout FRACTION|COUNT, or drop "
                         "--holdout-eval")
    if not 0 <= args.holdout_seed < 1 << 63:
        raise UsageError("--holdout-seed %d: give a seed in [0, 2^63)" % args.holdout_seed)
    if args.holdout:
        holdout_target(args.holdout, args.max_holdout, 0)
        for written in holdout_paths(args.output):
            if os.path.exists(written) and os.path.samefile(args.input[0], written):
                raise UsageError("the holdout %s would replace the input; write the dataset under another name "
                                 "(--output)" % written)


def document_pieces(args, tokenizer, bos, eos, dtype):
    """([BOS] tokens EOS per document, None, preparation attributes)."""
    formats = [format_for(p, args.format) for p in args.input]
    pieces, pending = [], []

    def flush():
        for encoding in tokenizer.encode_batch(pending, add_special_tokens=False):
            ids = ([bos] if bos is not None else []) + encoding.ids + [eos]
            pieces.append(np.asarray(ids, dtype=dtype))
        pending.clear()

    for path, fmt in zip(args.input, formats):
        for document in READERS[fmt](path):
            pending.append(document)
            if len(pending) >= BATCH_DOCUMENTS:
                flush()
    flush()
    names = set(formats)
    return pieces, None, {"format": names.pop() if len(names) == 1 else "mixed"}


def example_pieces(args, tokenizer, tokenizer_json, bos, eos, dtype):
    """(tokens and loss mask per kept example, dropped count, preparation attributes)."""
    def encode(text):
        return tokenizer.encode(text, add_special_tokens=False).ids

    if args.format == "chat":
        config = os.path.join(os.path.dirname(tokenizer_json), "tokenizer_config.json")
        template, specials = chat_template_of(config)
        render = chat_renderer(template, specials)
        encoded = [ex for path in args.input for ex in chat_examples(path, render, encode)]
        preparation = {"format": "chat"}
    else:
        if args.format == "records":
            preparation, examples = record_examples(args.input[0], args.prompt_template, args.group_by, args.order_by,
                                                    args.training_table)
            if args.schema is not None:  # the holdout's examples: the training rows' schema
                preparation = dict(preparation, records_schema=args.schema)
        else:
            preparation = {"format": "sft"}
            examples = [ex for path in args.input for ex in sft_examples(path)]
        encoded = []
        for prompt, completion in examples:
            head = ([bos] if bos is not None else []) + encode(prompt)
            tail = encode(completion) + [eos]
            encoded.append((head + tail, [0] * len(head) + [1] * len(tail)))
    pieces, masks, dropped = [], [], 0
    for ids, mask in encoded:
        if args.max_tokens is not None:
            ids, mask = ids[:args.max_tokens], mask[:args.max_tokens]
        if not any(mask):
            dropped += 1
            continue
        pieces.append(np.asarray(ids, dtype=dtype))
        masks.append(np.asarray(mask, dtype=np.uint8))
    if not pieces:
        raise DataError("no example keeps a target token (%d dropped): the answers lie beyond --max-tokens, or no "
                        "conversation has an assistant turn" % dropped)
    return pieces, masks, dict(preparation, dropped_examples=np.int64(dropped))


FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
              (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def check_output_path(output):
    """nss_prepare_data's output rules (docs/operations.md, "Where tools write"):
    a new path or a regular file, which is replaced; nothing else."""
    try:
        mode = os.stat(output).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in FILE_KINDS if test(mode)), "not a regular file")
    raise UsageError("[data] --output %s is %s: an output is written only to a new path or over a regular file\n"
                     "  hint: choose a new file path for --output" % (output, kind))


def write_dataset(output, pieces, masks, attributes, dtype):
    total = sum(len(p) for p in pieces)
    temporary = "%s.tmp.%d" % (output, os.getpid())
    try:
        # Never a directory: the output's must exist, as for nss_prepare_data.
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except OSError as e:
        raise UsageError("[data] cannot create %s: %s\n  hint: write to an existing, writable directory with room "
                         "for the output, or choose another --output" % (temporary, e.strerror))
    try:
        with h5py.File(temporary, "w") as f:
            tokens = f.create_dataset("tokens", shape=(total,), dtype=dtype)  # contiguous, no filters
            mask = f.create_dataset("loss_mask", shape=(total,), dtype=np.uint8) if masks is not None else None
            offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
            offset, max_id = 0, -1
            for i, piece in enumerate(pieces):
                tokens[offset:offset + len(piece)] = piece
                if mask is not None:
                    mask[offset:offset + len(piece)] = masks[i]
                offset += len(piece)
                offsets[i + 1] = offset
                max_id = max(max_id, int(piece.max()))
            f.create_dataset("document_offsets", data=offsets)
            attributes = dict(attributes, max_token_id=np.int64(max_id), documents=np.int64(len(pieces)))
            for key, value in attributes.items():
                if value is not None and value != "":
                    f.attrs[key] = value
        with open(temporary, "rb") as f:
            os.fsync(f.fileno())
        os.replace(temporary, output)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    return total


def prepare(args):
    from tokenizers import Tokenizer

    tokenizer_json = tokenizer_file(args.tokenizer)
    tokenizer = Tokenizer.from_file(tokenizer_json)
    vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
    bos = special_id(tokenizer, tokenizer_json, args.bos_token, "bos_token", BOS_CANDIDATES, False)
    eos = special_id(tokenizer, tokenizer_json, args.eos_token, "eos_token", EOS_CANDIDATES, True)
    dtype = np.uint16 if vocab_size <= 1 << 16 else np.uint32
    for path in args.input:
        format_for(path, args.format)
        check_regular(path)
    if any(os.path.exists(p) and os.path.exists(args.output) and os.path.samefile(p, args.output) for p in args.input):
        raise UsageError("the output %s is also an input" % args.output)
    check_output_path(args.output)

    holdout = split_records(args) if args.format == "records" else None
    if args.format in EXAMPLE_FORMATS:
        pieces, masks, preparation = example_pieces(args, tokenizer, tokenizer_json, bos, eos, dtype)
    else:
        pieces, masks, preparation = document_pieces(args, tokenizer, bos, eos, dtype)
    attributes = dict(preparation, tokenizer="hf:" + tokenizer_json, tokenizer_sha256=sha256_of(tokenizer_json),
                      vocab_size=np.int64(vocab_size), eos_token_id=np.int64(eos),
                      bos_token_id=np.int64(bos) if bos is not None else None)
    if args.format == "records":
        attributes.update(source_table=os.path.abspath(args.input[0]), source_sha256=sha256_of(args.input[0]))
    if holdout and holdout["rows"]:
        attributes.update(write_holdout(args, holdout, tokenizer, tokenizer_json, bos, eos, dtype, attributes,
                                        preparation["records_schema"]))
    total = write_dataset(args.output, pieces, masks, attributes, dtype)
    summary = "wrote %s: %d documents, %d tokens (%s, vocab_size %d)" % (args.output, len(pieces), total,
                                                                       tokenizer_json, vocab_size)
    if masks is not None:
        summary += "; %d target tokens; %d examples dropped (no answer token within --max-tokens)" % (
            sum(int(m.sum()) for m in masks), int(preparation["dropped_examples"]))
    print(summary)
    if holdout and holdout["warning"]:
        print("prepare_data_hf: warning: %s" % holdout["warning"], file=sys.stderr)
    if holdout and holdout["rows"]:
        print("held out %d rows (%d groups; aimed at %d) in %s (owner-only: private data)" % (
            len(holdout["rows"]), holdout["groups"], holdout["target"], holdout["csv"]))
        if args.holdout_eval:
            print("wrote the holdout as %s (use it as eval.path)" % holdout["tokens"])


def split_records(args):
    """Sets args.training_table to the rows to train on and returns the holdout: its rows, the
    target, the groups taken, the warning and its paths (nss_prepare_data's split)."""
    header, rows = records_table(args.input[0])
    held, target, groups, warning = split_holdout(group_keys(header, rows, args.group_by, args.input[0]),
                                                  args.holdout, args.max_holdout, args.holdout_seed)
    held = held or [False] * len(rows)
    args.training_table = (header, [row for row, h in zip(rows, held) if not h])
    csv_path, tokens_path = holdout_paths(args.output)
    return {"header": header, "rows": [row for row, h in zip(rows, held) if h], "target": target, "groups": groups,
            "warning": warning, "csv": os.path.abspath(csv_path), "tokens": tokens_path}


def write_holdout(args, holdout, tokenizer, tokenizer_json, bos, eos, dtype, attributes, schema):
    """Writes the holdout CSV (mode 0600) and, with --holdout-eval, its token file; returns the
    attributes the training file records of the split."""
    text = csv_line(holdout["header"]) + "".join(csv_line(row) for row in holdout["rows"])
    data = text.encode("utf-8")
    temporary = "%s.tmp.%d" % (holdout["csv"], os.getpid())
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, holdout["csv"])
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    record = {"split": "training", "source_table": os.path.abspath(args.input[0]),
              "source_sha256": sha256_of(args.input[0]), "holdout_table": holdout["csv"],
              "holdout_sha256": hashlib.sha256(data).hexdigest(), "holdout_rows": np.int64(len(holdout["rows"])),
              "training_rows": np.int64(len(args.training_table[1])), "holdout_seed": np.int64(args.holdout_seed)}
    if args.holdout_eval:
        training_table, args.training_table = args.training_table, (holdout["header"], holdout["rows"])
        args.schema = schema
        pieces, masks, preparation = example_pieces(args, tokenizer, tokenizer_json, bos, eos, dtype)
        args.training_table, args.schema = training_table, None
        held_attributes = dict(attributes, **preparation)
        held_attributes.update(record, split="holdout")
        write_dataset(holdout["tokens"], pieces, masks, held_attributes, dtype)
    return record


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", required=True, help="local tokenizer.json or a directory holding it")
    parser.add_argument("--input", action="append", required=True, help="input file (repeatable)")
    parser.add_argument("--output", required=True, help="token dataset to write (HDF5)")
    parser.add_argument("--format", choices=sorted(READERS) + list(EXAMPLE_FORMATS),
                        help="default: from each file's extension; sft, records and chat train on the answers only")
    parser.add_argument("--max-tokens", type=int, help="examples: keep the first N tokens of each")
    parser.add_argument("--prompt-template", help="records: the instruction before each row ({columns}, {group_by}, "
                        "{order_by})")
    parser.add_argument("--group-by", help="records: one example per value of this column")
    parser.add_argument("--order-by", help="records: order of the rows inside a group")
    parser.add_argument("--holdout", help="records: rows set aside for nss_evaluate, a fraction below 1 or a count "
                        "(docs/data.md, \"Holdout\")")
    parser.add_argument("--max-holdout", type=int, default=DEFAULT_MAX_HOLDOUT, help="records: at most this many "
                        "holdout rows")
    parser.add_argument("--holdout-seed", type=int, default=0, help="records: the seed that chooses the holdout rows")
    parser.add_argument("--holdout-eval", action="store_true", help="records: also write the holdout as "
                        "OUT.holdout.h5")
    parser.add_argument("--pii", choices=PII_MODES, help="records and csv: what to do with personal data (default: "
                        "replace for records, off otherwise); runs nss_prepare_data's pass (docs/data.md)")
    parser.add_argument("--pii-entities", help="the entities to look for, comma-separated, or 'all'")
    parser.add_argument("--pii-column", action="append", default=[], help="COLUMN=ENTITY (or COLUMN=none)")
    parser.add_argument("--pii-keep", action="append", default=[], help="a column left as it is")
    parser.add_argument("--pii-key", help="the secret key of replace and hash (default OUT.pii.key)")
    parser.add_argument("--pii-report", help="the report (default OUT.pii.json)")
    parser.add_argument("--pii-ner-model", help="a local BERT or DistilBERT named-entity tagger directory")
    parser.add_argument("--bos-token", help="beginning-of-document token, or 'none'")
    parser.add_argument("--eos-token", help="end-of-document token")
    args = parser.parse_args(argv)
    args.training_table, args.schema = None, None
    try:
        check_arguments(args)
        if pii_mode(args) != "off":
            return subprocess.run([nss_prepare_data()] + forwarded_arguments(args)).returncode
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
