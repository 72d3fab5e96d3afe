"""Helpers for tests that submit slurm/*.sbatch to the one-node cluster of
tests/slurm/local_cluster.sh (which exports SLURM_CONF for this cluster)."""
import os
import re
import subprocess
import time

SOURCE = os.environ.get("NSS_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BIN = os.environ.get("NSS_BIN_DIR", os.path.join(SOURCE, "build", "bin"))
TRAIN_SBATCH = os.path.join(SOURCE, "slurm", "train.sbatch")
CONSOLIDATE_SBATCH = os.path.join(SOURCE, "slurm", "consolidate.sbatch")
SYNTHESIZE_SBATCH = os.path.join(SOURCE, "slurm", "synthesize.sbatch")

# Job states after which a job never runs again (a requeued job is PENDING).
FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                "BOOT_FAIL", "DEADLINE", "PREEMPTED"}


def require_cluster():
    """Fails clearly when the test was started without local_cluster.sh."""
    if not os.environ.get("SLURM_CONF"):
        raise RuntimeError("SLURM_CONF is not set: run this test through tests/slurm/local_cluster.sh")


def binary(name):
    return os.path.join(BIN, name)


def small_dataset(directory):
    """A byte-level token dataset made by the real nss_prepare_data, big
    enough for configs/run.yaml's batches and validation."""
    corpus = os.path.join(directory, "corpus.txt")
    with open(corpus, "w") as f:
        for i in range(2000):
            f.write("line %d of the sbatch test corpus: the quick brown fox jumps over the lazy dog\n" % i)
    data = os.path.join(directory, "train.h5")
    proc = subprocess.run([binary("nss_prepare_data"), "--input", corpus, "--output", data, "--format", "text"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return data


def sbatch(args, output, env=None, cwd=None, unset=()):
    """Submits `args` (sbatch options, script, script arguments) from `cwd`
    (the job's SLURM_SUBMIT_DIR), with `env` added to and `unset` removed
    from this environment; the job's stdout and stderr go to `output`.
    Returns the job id."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    for name in unset:
        full_env.pop(name, None)
    proc = subprocess.run(["sbatch", "--parsable", "--output", output] + list(args),
                          capture_output=True, text=True, env=full_env, cwd=cwd, timeout=60)
    if proc.returncode != 0:
        raise AssertionError("sbatch failed (%d): %s%s" % (proc.returncode, proc.stdout, proc.stderr))
    return proc.stdout.strip().split(";")[0]


def job_info(job_id):
    """`scontrol show job` as a dict of its Key=Value fields."""
    proc = subprocess.run(["scontrol", "--oneliner", "show", "job", job_id],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise AssertionError("scontrol show job %s failed: %s" % (job_id, proc.stderr))
    return dict(re.findall(r"(?:^|\s)([A-Za-z:/]+)=(\S*)", proc.stdout))


def ended(job_id):
    """True once the job will not run again."""
    return job_info(job_id)["JobState"] in FINAL_STATES


def exit_code(info):
    """The job's exit code from ExitCode=CODE:SIGNAL."""
    code, signal = info["ExitCode"].split(":")
    return int(code), int(signal)


def signal_job(job_id, name):
    """Sends signal `name` to the batch script only (what --signal=B:... does)."""
    subprocess.run(["scancel", "--batch", "--signal=" + name, job_id], check=True, timeout=60)


def read(path):
    with open(path) as f:
        return f.read()


def wait_for(condition, timeout, what, job_id=None, output=None):
    """Polls `condition()` until it returns something true; fails after
    `timeout` seconds with the job's state and output."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    details = ""
    if job_id:
        details += "\njob %s: %s" % (job_id, job_info(job_id))
    if output and os.path.exists(output):
        details += "\njob output:\n" + read(output)
    raise AssertionError("timed out after %d s waiting for %s%s" % (timeout, what, details))


def wait_finished(job_id, output, timeout=300):
    """Waits until the job has ended for good; returns its scontrol fields."""
    def finished():
        info = job_info(job_id)
        return info if info["JobState"] in FINAL_STATES else None

    return wait_for(finished, timeout, "job %s to finish" % job_id, job_id, output)
