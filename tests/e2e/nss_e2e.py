"""Helpers for end-to-end tests that drive the real binaries."""
import os
import shutil
import subprocess
import tempfile

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


def scratch(tag):
    path = tempfile.mkdtemp(prefix="nss_e2e_%s_" % tag)
    return path


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def remove(path):
    shutil.rmtree(path, ignore_errors=True)


def write_token_dataset(path, tokens=16384, vocab_size=258):
    """Writes a small valid token dataset: contiguous uint16 /tokens with the
    tokenizer, vocab_size, max_token_id and documents attributes."""
    import h5py
    import numpy as np
    values = (np.arange(tokens, dtype=np.int64) * 7 % vocab_size).astype(np.uint16)
    with h5py.File(path, "w") as f:
        dataset = f.create_dataset("tokens", data=values)  # no chunks, no filters: contiguous
        dataset.attrs["tokenizer"] = "byte"
        dataset.attrs["vocab_size"] = vocab_size
        dataset.attrs["max_token_id"] = int(values.max())
        dataset.attrs["documents"] = 1
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
