"""Helpers for end-to-end tests that drive the real binaries."""
import json
import os
import signal
import shutil
import subprocess
import tempfile
import time
import unittest

SOURCE = os.environ.get("NSS_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BIN = os.environ.get("NSS_BIN_DIR", os.path.join(SOURCE, "build", "bin"))
MPIEXEC = os.environ.get("NSS_MPIEXEC", "mpiexec")


def binary(name):
    return os.path.join(BIN, name)


def mpirun(ranks, args, timeout=300, env=None, cwd=None):
    """Runs `args` under mpiexec with `ranks` processes; returns CompletedProcess."""
    full_env = dict(os.environ)
    full_env.setdefault("OMP_NUM_THREADS", "1")
    if env:
        full_env.update(env)
    return subprocess.run([MPIEXEC, "-n", str(ranks), "--oversubscribe"] + list(args),
                          capture_output=True, text=True, timeout=timeout, env=full_env, cwd=cwd)


def train(ranks, run_dir, sets, expect=0, timeout=600):
    """nss_hpc on configs/run.yaml with run.output_dir=run_dir and each
    "key=value" of `sets` as --set; asserts its exit code (set up a test class
    or run inside one: a plain assert works in both); returns the output."""
    args = [binary("nss_hpc"), os.path.join(SOURCE, "configs", "run.yaml"),
            "--set", "run.output_dir=" + run_dir]
    for s in sets:
        args += ["--set", s]
    proc = mpirun(ranks, args, timeout=timeout)
    output = proc.stdout + proc.stderr
    assert proc.returncode == expect, "exit %d, expected %d:\n%s" % (proc.returncode, expect, output)
    return output


def preflight_checks(run_dir, data, ranks=2):
    """nss_hpc --preflight-only on configs/run.yaml with `data` as data.path
    (seq_len 64, batches of 4): the process and preflight.json's checks by id."""
    sets = ["run.output_dir=" + run_dir, "data.path=" + data, "eval.interval_steps=0", "data.seq_len=64",
            "training.global_batch_size=4", "training.micro_batch_size=2"]
    proc = mpirun(ranks, [binary("nss_hpc"), os.path.join(SOURCE, "configs", "run.yaml"), "--preflight-only"]
                  + [a for s in sets for a in ("--set", s)], timeout=300)
    with open(os.path.join(run_dir, "preflight.json")) as f:
        return proc, {c["id"]: c for c in json.load(f)["checks"]}


def scratch(tag):
    path = tempfile.mkdtemp(prefix="nss_e2e_%s_" % tag)
    return path


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def remove(path):
    shutil.rmtree(path, ignore_errors=True)


def step_losses(run_dir):
    """{step: loss} from a run's metrics.jsonl (its events left out)."""
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return {r["step"]: r["loss"] for r in records if "event" not in r}


def short_run_args(config, run_dir, data, steps, seq_len, global_batch, sets=()):
    """nss_hpc's command line for a short run of `config` on `data`: no
    validation, micro-batches of one, every step logged, a checkpoint every
    6 steps (ten kept); each "key=value" of `sets` added as --set."""
    args = [binary("nss_hpc"), config, "--set", "run.output_dir=" + run_dir,
            "--set", "data.path=" + data, "--set", "eval.interval_steps=0",
            "--set", "data.seq_len=%d" % seq_len,
            "--set", "training.global_batch_size=%d" % global_batch,
            "--set", "training.micro_batch_size=1", "--set", "training.max_steps=%d" % steps,
            "--set", "training.warmup_steps=2", "--set", "logging.interval_steps=1",
            "--set", "checkpoint.interval_steps=6", "--set", "checkpoint.keep_last=10"]
    for s in sets:
        args += ["--set", s]
    return args


class TextDataTest(unittest.TestCase):
    """A class of tests that share a scratch directory (cls.tmp) holding the
    text dataset (cls.data), and a dict for runs they reuse (cls.runs)."""
    SCRATCH_TAG = "text"

    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch(cls.SCRATCH_TAG)
        cls.data = prepare_text_dataset(cls.tmp)
        cls.runs = {}

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)


def write_token_dataset(path, tokens=16384, vocab_size=258):
    """Writes a small valid token dataset: contiguous uint16 /tokens and the
    file's tokenizer, vocab_size, max_token_id and documents attributes
    (docs/data.md)."""
    import h5py
    import numpy as np
    values = (np.arange(tokens, dtype=np.int64) * 7 % vocab_size).astype(np.uint16)
    with h5py.File(path, "w") as f:
        f.create_dataset("tokens", data=values)  # no chunks, no filters: contiguous
        f.attrs["tokenizer"] = "byte"
        f.attrs["vocab_size"] = np.int64(vocab_size)
        f.attrs["max_token_id"] = np.int64(values.max())
        f.attrs["documents"] = np.int64(1)
    return path


def prepare_text_dataset(directory, name="train.h5"):
    """A byte-level token dataset of natural text (the project's own
    documentation), made by the real nss_prepare_data."""
    import glob
    corpus = os.path.join(directory, "corpus.txt")
    with open(corpus, "w") as out:
        for path in sorted(glob.glob(os.path.join(SOURCE, "docs", "*.md"))) + [os.path.join(SOURCE, "README.md")]:
            with open(path) as f:
                out.write(f.read())
    data = os.path.join(directory, name)
    proc = subprocess.run([binary("nss_prepare_data"), "--input", corpus, "--output", data, "--format", "text"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return data


RECORD_COLUMNS = ["city", "temp", "rain"]


def prepare_records_dataset(directory, rows=200, name="records.h5"):
    """A byte-level records dataset (nss_prepare_data --format records) of a
    small weather table with RECORD_COLUMNS, PII handling off so that a
    model learns the table's own values."""
    import csv
    import random
    rng = random.Random(1)
    table = os.path.join(directory, "records.csv")
    with open(table, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(RECORD_COLUMNS)
        for _ in range(rows):
            writer.writerow([rng.choice(["Oslo", "Lima", "Pune", "Kyiv"]), rng.randrange(10, 30),
                             rng.choice(["yes", "no"])])
    data = os.path.join(directory, name)
    proc = subprocess.run([binary("nss_prepare_data"), "--format", "records", "--input", table, "--output", data,
                           "--prompt-template", "Row of {columns}:\n", "--pii", "off"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return data


def read_records_output(directory):
    """generation.json, invalid.jsonl's and synthetic.jsonl's records of an
    nss_generate --records --output directory."""
    def lines(name):
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(directory, "generation.json")) as f:
        summary = json.load(f)
    return summary, lines("invalid.jsonl"), lines("synthetic.jsonl")


def session_members(session):
    """PIDs of every process in a session (mpiexec and the ranks it started:
    Open MPI puts each rank in a process group of its own, so killpg on the
    launcher does not reach them)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:
            pids.append(int(entry))
    return pids


def kill_session(session, timeout=30):
    """SIGKILL to every process of the session, ranks first (a node dying);
    returns once none of them runs any more."""
    for pid in sorted(session_members(session), key=lambda p: p == session):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [p for p in session_members(session) if p != session and not _is_zombie(p)]
        if not alive:
            return
        time.sleep(0.05)
    raise AssertionError("processes of session %d survived SIGKILL: %s" % (session, alive))


def _is_zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


class ScratchDirTest(unittest.TestCase):
    """A test case with a fresh scratch directory per test (SCRATCH_TAG names it)."""

    SCRATCH_TAG = "test"

    def setUp(self):
        self.dir = scratch(self.SCRATCH_TAG)

    def tearDown(self):
        remove(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, content):
        """Writes bytes to a file in the scratch directory; returns its path."""
        with open(self.path(name), "wb") as f:
            f.write(content)
        return self.path(name)


VENV_PYTHON = os.environ.get("NSS_VENV_PYTHON", os.path.join(SOURCE, "build", "venv", "bin", "python"))


class VenvScratchDirTest(ScratchDirTest):
    """A scratch-directory test that runs Python helpers in the venv
    scripts/setup.sh creates (PyPI's tokenizers, transformers, peft)."""

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(VENV_PYTHON):
            raise AssertionError("no venv at %s: run scripts/setup.sh (it creates the venv)" % VENV_PYTHON)

    def venv(self, *args):
        return subprocess.run([VENV_PYTHON] + list(args), capture_output=True, timeout=240)
