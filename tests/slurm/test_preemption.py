"""Time limits and preemption on a real one-node Slurm (run through
tests/slurm/local_cluster.sh), with the real nss_hpc and configs/test_slurm.yaml:

- SIGUSR1 for the batch script (what --signal=B:USR1@120 sends before the
  time limit) -> every rank saves a checkpoint and exits 75 -> the script
  requeues the job (Restarts=1) -> the second start resumes from
  checkpoints/latest (not step 0) -> the job completes at max_steps with the
  same final loss as an uninterrupted run.
- SIGTERM for the batch script -> every rank saves and exits 7 -> the job ends
  with exit code 7 and is not requeued.
- slurm/consolidate.sbatch turns a checkpoint into a Hugging Face directory.

Registered disabled until the trainer saves checkpoints on signals; enable
with cmake -DNSS_SLURM_TRAINING_TEST=ON (see tests/slurm/CMakeLists.txt)."""
import json
import os
import random
import re
import shutil
import struct
import subprocess
import tempfile
import unittest

from slurm_jobs import (CONSOLIDATE_SBATCH, SOURCE, TRAIN_SBATCH, binary, ended, exit_code, job_info, read,
                        require_cluster, sbatch, signal_job, wait_finished, wait_for)

NSS = binary("nss_hpc")
CONFIG = os.path.join(SOURCE, "configs", "test_slurm.yaml")
MAX_STEPS = int(re.search(r"max_steps:\s*(\d+)", read(CONFIG)).group(1))
RANKS = 2
MPIEXEC = os.environ.get("NSS_MPIEXEC", "mpiexec")


def write_corpus(path, words=40000):
    """Deterministic English-like text, enough bytes for every step's batch."""
    vocabulary = ("the a model learns tokens from text while every rank holds one shard of the "
                  "weights and gathers the rest just in time before each block runs forward and "
                  "backward then the gradients are reduced and scattered").split()
    rng = random.Random(7)
    with open(path, "w") as f:
        for i in range(words):
            f.write(rng.choice(vocabulary))
            f.write(".\n" if i % 17 == 16 else " ")


def training_steps(run_dir):
    """(step, loss) of every training entry of metrics.jsonl, in file order."""
    path = os.path.join(run_dir, "metrics.jsonl")
    if not os.path.exists(path):
        return []
    entries = [json.loads(line) for line in read(path).splitlines() if line.strip()]
    return [(e["step"], e["loss"]) for e in entries if "event" not in e and "loss" in e]


def latest_step(run_dir):
    """The step named by checkpoints/latest, or None before the first commit."""
    path = os.path.join(run_dir, "checkpoints", "latest")
    if not os.path.exists(path):
        return None
    return int(re.search(r"step_(\d+)", read(path)).group(1))


def step_dir(run_dir, step):
    return os.path.join(run_dir, "checkpoints", "step_%08d" % step)


class PreemptionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_cluster()
        cls.tmp = tempfile.mkdtemp(prefix="nss_preempt_")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)  # also when setUpClass fails
        corpus = os.path.join(cls.tmp, "corpus.txt")
        write_corpus(corpus)
        cls.data = os.path.join(cls.tmp, "train.h5")
        proc = subprocess.run([binary("nss_prepare_data"), "--input", corpus, "--output", cls.data,
                               "--format", "text"], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        # The uninterrupted run every interrupted one must reproduce.
        cls.reference = os.path.join(cls.tmp, "reference")
        proc = subprocess.run([MPIEXEC, "-n", str(RANKS), "--oversubscribe", NSS] + cls.train_args(cls.reference),
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        steps = training_steps(cls.reference)
        assert steps and steps[-1][0] == MAX_STEPS, steps[-3:]
        cls.reference_loss = steps[-1][1]

    @classmethod
    def train_args(cls, run_dir):
        # keep_last high: the signal's checkpoint must still exist when the test inspects it.
        return [CONFIG, "--set", "data.path=" + cls.data, "--set", "run.output_dir=" + run_dir,
                "--set", "checkpoint.keep_last=1000"]

    def submit(self, name, launcher):
        run_dir = os.path.join(self.tmp, name)
        output = os.path.join(self.tmp, name + ".out")
        job = sbatch(["-n", str(RANKS), TRAIN_SBATCH] + self.train_args(run_dir), output,
                     {"NSS_HPC": NSS, "NSS_LAUNCHER": launcher})
        return job, output, run_dir

    def wait_for_first_checkpoint(self, job, output, run_dir):
        wait_for(lambda: latest_step(run_dir) is not None or ended(job), 300, "the first checkpoint", job, output)
        first = latest_step(run_dir)
        self.assertIsNotNone(first, "the job ended before its first checkpoint:\n" + read(output))
        return first

    def assert_complete_checkpoint(self, run_dir, step):
        """Every rank's shard is there, listed in metadata.json, and verifies."""
        path = step_dir(run_dir, step)
        metadata = json.loads(read(os.path.join(path, "metadata.json")))
        self.assertEqual(metadata["step"], step)
        self.assertEqual(metadata["world_size"], RANKS)
        for rank in range(RANKS):
            shard = "rank_%05d.h5" % rank
            self.assertIn(shard, metadata["files"])
            self.assertTrue(os.path.exists(os.path.join(path, shard)), shard)
        proc = subprocess.run([binary("nss_ckpt"), "verify", path], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_usr1_saves_requeues_resumes_and_matches_the_uninterrupted_run(self):
        job, output, run_dir = self.submit("usr1", "srun")
        first = self.wait_for_first_checkpoint(job, output, run_dir)
        signal_job(job, "USR1")
        # nss_hpc has exited before the script requeues, so this is the first run's final state.
        wait_for(lambda: job_info(job)["Restarts"] == "1" or ended(job), 300, "the requeue", job, output)
        self.assertEqual(job_info(job)["Restarts"], "1", "the job ended without a requeue:\n" + read(output))
        saved = latest_step(run_dir)
        first_run = training_steps(run_dir)
        info = wait_finished(job, output, 600)
        log = read(output)

        self.assertEqual(info["JobState"], "COMPLETED", log)
        self.assertEqual(exit_code(info), (0, 0), log)
        self.assertEqual(info["Restarts"], "1", log)
        self.assertIn("received SIGUSR1: forwarding SIGUSR1 to srun", log)
        self.assertIn("tasks 0-1: Exited with exit code 75", log)  # srun: every rank exited 75
        self.assertIn("requeueing job %s" % job, log)
        self.assertIn("restart count 1", log)

        # The signal's checkpoint: after the first one, before the end, from every rank.
        self.assertGreater(saved, first, log)
        self.assertLess(saved, MAX_STEPS, "the run ended before the signal arrived: raise max_steps")
        self.assertEqual(first_run[-1][0], saved, "the first run trained past its last checkpoint")
        self.assert_complete_checkpoint(run_dir, saved)

        # The second start resumed at saved + 1: no step trained twice, none skipped.
        steps = training_steps(run_dir)
        self.assertEqual(steps[len(first_run)][0], saved + 1)
        numbers = [step for step, _ in steps]
        self.assertEqual(numbers, list(range(numbers[0], MAX_STEPS + 1)))
        self.assertAlmostEqual(steps[-1][1], self.reference_loss, delta=1e-6 * max(1.0, abs(self.reference_loss)))

        for rank in range(RANKS):
            rank_log = read(os.path.join(run_dir, "logs", "rank_%05d.log" % rank))
            self.assertEqual(rank_log.count("nss_hpc: run "), 2, "rank %d did not start twice" % rank)
            self.assertIn("usr1", rank_log.lower(), "rank %d's log does not name the signal" % rank)

    def test_term_saves_and_stops_without_requeue(self):
        job, output, run_dir = self.submit("term", "mpirun")
        first = self.wait_for_first_checkpoint(job, output, run_dir)
        signal_job(job, "TERM")
        info = wait_finished(job, output, 300)
        log = read(output)

        self.assertEqual(exit_code(info), (7, 0), log)
        self.assertEqual(info["Restarts"], "0", log)
        self.assertIn("received SIGTERM: forwarding SIGUSR2 to mpirun", log)
        self.assertIn("nss_hpc exited with code 7", log)
        self.assertNotIn("requeueing", log)

        saved = latest_step(run_dir)
        self.assertGreater(saved, first, log)
        self.assertLess(saved, MAX_STEPS, "the run ended before the signal arrived: raise max_steps")
        self.assert_complete_checkpoint(run_dir, saved)
        self.assertEqual(training_steps(run_dir)[-1][0], saved, "steps trained after the last save were lost")

    def test_consolidate_sbatch_writes_a_hugging_face_directory(self):
        hf_dir = os.path.join(self.tmp, "hf")
        output = os.path.join(self.tmp, "consolidate.out")
        job = sbatch([CONSOLIDATE_SBATCH, os.path.join(self.reference, "checkpoints"), hf_dir], output,
                     {"NSS_CONSOLIDATE": binary("nss_consolidate")})
        info = wait_finished(job, output, 300)
        log = read(output)
        self.assertEqual(exit_code(info), (0, 0), log)
        self.assertIn("step_%08d" % MAX_STEPS, log)  # `latest` was resolved to the final step
        config = json.loads(read(os.path.join(hf_dir, "config.json")))
        self.assertEqual(config["architectures"], ["LlamaForCausalLM"])
        with open(os.path.join(hf_dir, "model.safetensors"), "rb") as f:
            header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
        self.assertEqual(header["model.embed_tokens.weight"]["shape"],
                         [config["vocab_size"], config["hidden_size"]])


if __name__ == "__main__":
    unittest.main()
