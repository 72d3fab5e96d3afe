"""What the nss_synthesize end-to-end tests share (here, scripts/synthesize.sh's
and slurm/synthesize.sbatch's): the README's products table as one CSV, a
tiny byte-level configuration (the whole pipeline takes seconds at 2 ranks),
running the job and reading its ledger."""
import csv
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "e2e"), os.path.join(HERE, "..", "model")]
from nss_e2e import BIN, SOURCE, binary, mpirun  # noqa: E402,F401
from test_real_model_e2e import COLOURS, COLUMNS, ITEMS  # noqa: E402

STAGES = ["prepare", "preflight", "train", "generate", "evaluate"]
RECORDS = 16
# Long enough that a signal sent once training has logged steps finds it still running.
LONG_STEPS = 3000

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


def write_inputs(directory, steps=300, records=RECORDS):
    """The products table and tiny.yaml in `directory`; returns (table, config)."""
    table = write_products_table(os.path.join(directory, "products.csv"))
    config = os.path.join(directory, "tiny.yaml")
    with open(config, "w") as f:
        f.write(TINY_CONFIG.format(steps=steps, records=records))
    return table, config


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
    """pipeline.json's stages by name, or {} while it does not exist yet."""
    try:
        return {s["name"]: s for s in ledger(run_dir)["stages"]}
    except (OSError, ValueError):
        return {}


def assert_every_stage_completed(test, run_dir, runs=None, log=""):
    """Every stage of pipeline.json completed, in order, each run `runs[name]` times (default once)."""
    recorded = stages(run_dir)
    test.assertEqual(list(recorded), STAGES, log)
    for name in STAGES:
        test.assertEqual(recorded[name]["status"], "completed", "stage %s\n%s" % (name, log))
        test.assertEqual(recorded[name]["runs"], (runs or {}).get(name, 1), "stage %s\n%s" % (name, log))


def training_logged(run_dir):
    """True once the train stage runs and the fine-tune has logged a step."""
    if stages(run_dir).get("train", {}).get("status") != "running":
        return False
    metrics = os.path.join(run_dir, "train", "metrics.jsonl")
    return os.path.exists(metrics) and os.path.getsize(metrics) > 0


def final_line(run_dir, records=RECORDS):
    """The start of nss_synthesize's last stdout line for a completed run."""
    return "nss_synthesize: %d valid records in %s" % (records, os.path.join(run_dir, "synthetic", "synthetic.csv"))


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
