"""What the nss_synthesize end-to-end tests share: the README's products table
as one CSV, a tiny byte-level configuration, and running the job."""
import csv
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "e2e"), os.path.join(HERE, "..", "model")]
from nss_e2e import SOURCE, binary, mpirun  # noqa: E402
from test_real_model_e2e import COLOURS, COLUMNS, ITEMS  # noqa: E402

STAGES = ["prepare", "preflight", "train", "generate", "evaluate"]

# A tiny Llama on byte-level tokens: every stage in seconds.
TINY_CONFIG = """\
run:
  name: tiny
model:
  preset: tiny
data:
  seq_len: 64
eval:
  interval_steps: 100
  batches: 1
training:
  global_batch_size: 4
  micro_batch_size: 2
  max_steps: {steps}
  lr: 3.0e-3
  warmup_steps: 2
checkpoint:
  interval_steps: 100
logging:
  interval_steps: 1
pipeline:
  records: {records}
  holdout: 0.2
  max_new_tokens: 128
"""


def write_products_table(path):
    """The 300 products of docs/model.md's walk-through, in one table."""
    rows = [(colour + " " + item, category, price) for item, category, price in ITEMS for colour in COLOURS]
    random.Random(7).shuffle(rows)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    return path


def synthesize_args(table, config, run_dir, sets=()):
    args = [table, "--config", config, "--set", "run.output_dir=" + run_dir]
    for s in sets:
        args += ["--set", s]
    return args


def synthesize(ranks, table, config, run_dir, sets=(), expect=0, program="nss_synthesize", before=(),
               timeout=600):
    """Runs the job (or a probe taking `before` arguments first); asserts its exit code."""
    proc = mpirun(ranks, [binary(program)] + list(before) + synthesize_args(table, config, run_dir, sets),
                  timeout=timeout)
    output = proc.stdout + proc.stderr
    assert proc.returncode == expect, "exit %d, expected %d:\n%s" % (proc.returncode, expect, output[-6000:])
    return output


def ledger(run_dir):
    with open(os.path.join(run_dir, "pipeline.json")) as f:
        return json.load(f)


def stages(run_dir):
    return {s["name"]: s for s in ledger(run_dir)["stages"]}


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def scores(run_dir):
    """evaluation.json without what differs between two runs of the same table: times, paths, and the
    SHA-256 of the PII report (which names its run's files and key)."""
    with open(os.path.join(run_dir, "evaluation", "evaluation.json")) as f:
        evaluation = json.load(f)

    varying = ("timing", "inputs", "evaluation_time_sec", "path", "sha256")

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in varying}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    return strip(evaluation)
