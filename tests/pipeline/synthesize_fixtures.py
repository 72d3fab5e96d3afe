"""Inputs and ledger helpers for the tests that run nss_synthesize through
scripts/synthesize.sh and slurm/synthesize.sbatch: a tiny random model with
byte-level tokens (the whole pipeline takes seconds at 2 ranks) and the
products table of tests/model/test_real_model_e2e.py."""
import json
import os
import sys

SOURCE = os.environ.get("NSS_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BIN = os.environ.get("NSS_BIN_DIR", os.path.join(SOURCE, "build", "bin"))
STAGES = ["prepare", "preflight", "train", "generate", "evaluate"]
RECORDS = 16
# Long enough that a signal sent once training has logged steps finds it still running.
LONG_STEPS = 3000

TINY_CONFIG = """run: {name: tiny}
model: {preset: tiny}
data: {seq_len: 64}
eval: {interval_steps: 100, batches: 1}
training: {global_batch_size: 4, micro_batch_size: 2, max_steps: 300, lr: 3.0e-3, warmup_steps: 2}
checkpoint: {interval_steps: 100}
logging: {interval_steps: 1}
pipeline: {records: %d, holdout: 0.2, max_new_tokens: 128}
""" % RECORDS


def write_inputs(directory):
    """Writes tiny.yaml and the products table; returns (table, config)."""
    sys.path[:0] = [os.path.join(SOURCE, "tests", "model"), os.path.join(SOURCE, "tests", "e2e")]
    try:
        import test_real_model_e2e
    finally:
        del sys.path[:2]
    test_real_model_e2e.write_tables(directory)
    config = os.path.join(directory, "tiny.yaml")
    with open(config, "w") as f:
        f.write(TINY_CONFIG)
    return os.path.join(directory, "train.csv"), config


def read_text(path):
    with open(path) as f:
        return f.read()


def stages(run_dir):
    """pipeline.json's stages by name, or {} while it does not exist or is being replaced."""
    try:
        ledger = json.loads(read_text(os.path.join(run_dir, "pipeline.json")))
    except (OSError, ValueError):
        return {}
    return {stage["name"]: stage for stage in ledger.get("stages", [])}


def training_logged(run_dir):
    """True once the train stage runs and the fine-tune has logged a step."""
    if stages(run_dir).get("train", {}).get("status") != "running":
        return False
    metrics = os.path.join(run_dir, "train", "metrics.jsonl")
    return os.path.exists(metrics) and os.path.getsize(metrics) > 0


def final_line(run_dir):
    """The start of nss_synthesize's last stdout line for a completed run."""
    return "nss_synthesize: %d valid records in %s" % (RECORDS, os.path.join(run_dir, "synthetic", "synthetic.csv"))
