"""nss_hpc trains for real: the loss falls at 2 ranks, metrics.jsonl has the
documented fields, the same configuration gives the same losses at 1, 2 and
4 ranks, two runs are bitwise identical, the recompute modes train the same
numbers at different peaks, plot_metrics.py draws the run, and
SIGUSR1/SIGTERM stop every rank at a step boundary with 75/7."""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import MPIEXEC, SOURCE, binary, mpirun, prepare_text_dataset, remove, scratch  # noqa: E402

NSS = binary("nss_hpc")
CONFIG = os.path.join(SOURCE, "configs", "run.yaml")


def training_records(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        records = [json.loads(line) for line in f if line.strip()]
    return [r for r in records if "event" not in r], records


class TrainingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("training")
        cls.data = prepare_text_dataset(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def run_nss(self, ranks, name, *sets, timeout=600):
        run_dir = os.path.join(self.tmp, name)
        args = [NSS, CONFIG, "--set", "run.output_dir=" + run_dir, "--set", "data.path=" + self.data,
                "--set", "eval.path=" + self.data, "--set", "data.seq_len=64"]
        for s in sets:
            args += ["--set", s]
        proc = mpirun(ranks, args, timeout=timeout)
        return proc, run_dir

    def test_loss_falls_and_metrics_follow_the_contract(self):
        proc, run_dir = self.run_nss(2, "falls", "training.max_steps=40", "training.lr=3e-3",
                                     "training.warmup_steps=5", "logging.interval_steps=1",
                                     "eval.interval_steps=20", "eval.batches=2")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        steps, records = training_records(run_dir)
        self.assertEqual([r["step"] for r in steps], list(range(1, 41)))
        first, last = sum(r["loss"] for r in steps[:5]) / 5, sum(r["loss"] for r in steps[-5:]) / 5
        self.assertLess(last, first - 1.0, "loss did not fall: %.3f -> %.3f" % (first, last))
        for record in steps:
            for key in ("step", "loss", "lr", "grad_norm", "tokens_per_s", "step_time_s", "mem_bytes",
                        "peak_mem_bytes", "comm_bytes"):
                self.assertIn(key, record)
            self.assertGreater(record["tokens_per_s"], 0)
            self.assertGreaterEqual(record["peak_mem_bytes"], record["mem_bytes"])
            self.assertGreater(record["comm_bytes"], 0)
        evals = [r for r in records if r.get("event") == "eval"]
        self.assertEqual([e["step"] for e in evals], [20, 40])
        self.assertLess(evals[-1]["val_loss"], steps[0]["loss"])
        memory = [r for r in records if r.get("event") == "memory"]
        self.assertEqual(len(memory), 1)
        self.assertGreater(memory[0]["model_state_bytes"], 0)
        plot = subprocess.run(["/usr/bin/python3", os.path.join(SOURCE, "scripts", "plot_metrics.py"),
                               os.path.join(run_dir, "metrics.jsonl")], capture_output=True, text=True)
        self.assertEqual(plot.returncode, 0, plot.stderr)
        self.assertGreater(os.path.getsize(os.path.join(run_dir, "metrics.png")), 10000)

    def test_same_losses_at_one_two_and_four_ranks(self):
        losses = {}
        for ranks in (1, 2, 4):
            proc, run_dir = self.run_nss(ranks, "equal_%d" % ranks, "training.max_steps=6",
                                         "training.micro_batch_size=%d" % (8 // ranks // 2 or 1),
                                         "logging.interval_steps=1", "eval.interval_steps=0")
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            losses[ranks] = [r["loss"] for r in training_records(run_dir)[0]]
        for ranks in (2, 4):
            for step, (a, b) in enumerate(zip(losses[1], losses[ranks]), 1):
                self.assertAlmostEqual(a, b, delta=1e-5 * abs(a), msg="step %d at %d ranks" % (step, ranks))

    def test_two_runs_are_bitwise_identical(self):
        runs = []
        for name in ("same_a", "same_b"):
            proc, run_dir = self.run_nss(2, name, "training.max_steps=5", "logging.interval_steps=1",
                                         "eval.interval_steps=0", "training.lora.enabled=true",
                                         "training.lora.dropout=0.1")
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            runs.append([(r["loss"], r["grad_norm"]) for r in training_records(run_dir)[0]])
        self.assertEqual(runs[0], runs[1])

    def test_recompute_modes_train_the_same_numbers(self):
        """activation_checkpointing full (also spelled true), selective and none:
        selective is full bit for bit, none the same losses; the peaks order
        full < selective < none; an unknown mode is exit 2 on every rank."""
        runs = {}
        for mode in ("full", "true", "selective", "none"):
            proc, run_dir = self.run_nss(2, "recompute_" + mode, "training.max_steps=4",
                                         "logging.interval_steps=1", "eval.interval_steps=0",
                                         "data.seq_len=128", "training.activation_checkpointing=" + mode)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            steps = training_records(run_dir)[0]
            runs[mode] = ([(r["loss"], r["grad_norm"]) for r in steps], max(r["peak_mem_bytes"] for r in steps))
        self.assertEqual(runs["selective"][0], runs["full"][0])
        self.assertEqual(runs["true"][0], runs["full"][0])
        for (a, _), (b, _) in zip(runs["full"][0], runs["none"][0]):
            self.assertAlmostEqual(a, b, delta=1e-5 * abs(a))
        self.assertLess(runs["full"][1], runs["selective"][1])
        self.assertLess(runs["selective"][1], runs["none"][1])
        proc, _ = self.run_nss(2, "recompute_bad", "training.activation_checkpointing=partial")
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("training.activation_checkpointing", proc.stderr)
        self.assertIn("full, selective, none", proc.stderr)

    def stop_with(self, sig, expected_code):
        run_dir = os.path.join(self.tmp, "signal_%d" % sig)
        args = [MPIEXEC, "-n", "2", "--oversubscribe", NSS, CONFIG, "--set", "run.output_dir=" + run_dir,
                "--set", "data.path=" + self.data, "--set", "eval.interval_steps=0",
                "--set", "training.max_steps=100000", "--set", "logging.interval_steps=1",
                "--set", "data.seq_len=64"]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        metrics = os.path.join(run_dir, "metrics.jsonl")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (os.path.exists(metrics) and
                                                   len(open(metrics).read().splitlines()) >= 3):
            time.sleep(0.2)
        proc.send_signal(sig)  # mpirun forwards SIGUSR1/SIGUSR2 to every rank
        output, _ = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, expected_code, output)
        self.assertIn("stopping after step", output)
        # The stop step was saved, completely, before any rank exited.
        steps = [r["step"] for r in training_records(run_dir)[0]]
        checkpoints = os.path.join(run_dir, "checkpoints")
        latest = open(os.path.join(checkpoints, "latest")).read().strip()
        self.assertEqual(latest, "step_%08d" % steps[-1])
        verify = subprocess.run([binary("nss_ckpt"), "verify", os.path.join(checkpoints, latest)],
                                capture_output=True, text=True)
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)
        return output

    def test_sigusr1_stops_every_rank_with_75(self):
        self.stop_with(signal.SIGUSR1, 75)

    def test_sigusr2_stops_every_rank_with_7(self):
        # How slurm/train.sbatch forwards a TERM (launchers kill ranks on TERM).
        self.stop_with(signal.SIGUSR2, 7)


if __name__ == "__main__":
    unittest.main()
