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
