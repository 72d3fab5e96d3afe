"""nss_synthesize stopped and started again (docs/pipeline.md, "Stopping and
restarting"): stopped at every stage boundary (a signal raised on rank 0 just
after the stage, pipeline_stop_probe) and inside the fine-tune and the
sampling (SIGUSR1 and SIGUSR2 sent to mpirun, as slurm/synthesize.sbatch
forwards the time limit's warning and a cancel), the job exits 7 or 75 with
what it finished recorded; the next start runs only what is left (each
stage's run count says so) and writes the files an uninterrupted run writes.
A tiny byte-level Llama on the README's products table, 2 ranks."""
import os
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from synthesize_support import (STAGES, assert_every_stage_completed, binary, ledger, read, scores,  # noqa: E402
                                stages, synthesize, synthesize_args, write_inputs)
from nss_e2e import MPIEXEC, remove, scratch  # noqa: E402

OUTPUTS = ["data/records.holdout.csv", "data/records.training.csv", "synthetic/synthetic.csv",
           "synthetic/invalid.jsonl"]


class RestartTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("synthesize_restart")
        cls.table, cls.config = write_inputs(cls.tmp, steps=300, records=800)
        cls.reference = os.path.join(cls.tmp, "reference")
        synthesize(2, cls.table, cls.config, cls.reference)

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def assert_same_outputs(self, run_dir):
        for name in OUTPUTS:
            self.assertEqual(read(os.path.join(run_dir, name), "rb"), read(os.path.join(self.reference, name), "rb"),
                             name)
        self.assertEqual(self.tokens(run_dir), self.tokens(self.reference))  # attributes name the run's files
        self.assertEqual(self.losses(run_dir), self.losses(self.reference))
        self.assertEqual(scores(run_dir), scores(self.reference))

    @staticmethod
    def tokens(run_dir):
        import h5py
        with h5py.File(os.path.join(run_dir, "data", "records.h5"), "r") as f:
            return {name: f[name][()].tobytes() for name in f}

    @staticmethod
    def losses(run_dir):
        import json
        lines = read(os.path.join(run_dir, "train", "metrics.jsonl")).splitlines()
        by_step = {}
        for line in lines:
            record = json.loads(line)
            if "loss" in record:
                by_step[record["step"]] = record["loss"]
        return by_step

    def test_stopped_at_each_stage_boundary(self):
        for stage, signal_name, code in (("prepare", "TERM", 7), ("preflight", "USR1", 75), ("train", "TERM", 7),
                                         ("generate", "USR1", 75)):
            with self.subTest(stage=stage):
                run_dir = os.path.join(self.tmp, "boundary_" + stage)
                output = synthesize(2, self.table, self.config, run_dir, expect=code,
                                    program="pipeline_stop_probe", before=[stage, signal_name])
                self.assertIn("stopping after %s" % stage, output)
                recorded = stages(run_dir)
                done = STAGES[:STAGES.index(stage) + 1]
                for name in STAGES:
                    self.assertEqual(recorded[name]["status"], "completed" if name in done else "pending", name)
                self.assertEqual(ledger(run_dir)["summary"]["stopped"]["after"], stage)
                output = synthesize(2, self.table, self.config, run_dir)
                for name in done:
                    self.assertIn("[pipeline] %s: completed" % name, output)
                assert_every_stage_completed(self, run_dir)
                self.assertNotIn("stopped", ledger(run_dir)["summary"])
                self.assert_same_outputs(run_dir)

    def test_a_signal_after_the_last_stage_changes_nothing(self):
        run_dir = os.path.join(self.tmp, "boundary_evaluate")
        synthesize(2, self.table, self.config, run_dir, program="pipeline_stop_probe", before=["evaluate", "TERM"])
        assert_every_stage_completed(self, run_dir)
        self.assert_same_outputs(run_dir)

    def signal_inside(self, run_dir, stage, sig, ready):
        """Starts the job, sends `sig` to mpirun once `ready(run_dir)` holds
        while `stage` runs; returns the exit code and the output."""
        env = dict(os.environ, OMP_NUM_THREADS="1")
        proc = subprocess.Popen([MPIEXEC, "-n", "2", "--oversubscribe", binary("nss_synthesize")]
                                + synthesize_args(self.table, self.config, run_dir),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        deadline = time.time() + 120
        sent = False
        while proc.poll() is None and time.time() < deadline:
            try:
                running = stages(run_dir)[stage]["status"] == "running"
            except (OSError, ValueError, KeyError):
                running = False
            if running and ready(run_dir):
                proc.send_signal(sig)
                sent = True
                break
            time.sleep(0.02)
        output, _ = proc.communicate(timeout=120)
        self.assertTrue(sent, "the job ended before %s was seen running:\n%s" % (stage, output[-4000:]))
        return proc.returncode, output

    def test_stopped_inside_the_fine_tune(self):
        run_dir = os.path.join(self.tmp, "inside_train")

        def trained_a_few_steps(run_dir):
            try:
                return len(read(os.path.join(run_dir, "train", "metrics.jsonl")).splitlines()) >= 5
            except OSError:
                return False
        code, output = self.signal_inside(run_dir, "train", signal.SIGUSR1, trained_a_few_steps)
        self.assertEqual(code, 75, output[-4000:])
        recorded = stages(run_dir)
        self.assertEqual(recorded["train"]["status"], "interrupted")
        self.assertEqual(recorded["train"]["exit_code"], 75)
        self.assertEqual(recorded["generate"]["status"], "pending")
        latest = read(os.path.join(run_dir, "train", "checkpoints", "latest")).strip()
        self.assertNotEqual(latest, "step_00000300")  # stopped before the end, its step saved
        output = synthesize(2, self.table, self.config, run_dir)
        self.assertIn("resum", output.lower())
        assert_every_stage_completed(self, run_dir, {"train": 2})
        self.assert_same_outputs(run_dir)

    def test_stopped_inside_the_sampling(self):
        run_dir = os.path.join(self.tmp, "inside_generate")
        code, output = self.signal_inside(run_dir, "generate", signal.SIGUSR2, lambda run_dir: True)
        self.assertEqual(code, 7, output[-4000:])
        recorded = stages(run_dir)
        self.assertEqual(recorded["generate"]["status"], "interrupted")
        self.assertEqual(recorded["evaluate"]["status"], "pending")
        output = synthesize(2, self.table, self.config, run_dir)
        assert_every_stage_completed(self, run_dir, {"generate": 2})
        self.assert_same_outputs(run_dir)

    def test_a_rerun_of_a_finished_job_does_nothing(self):
        before = ledger(self.reference)
        output = synthesize(2, self.table, self.config, self.reference)
        for name in STAGES:
            self.assertIn("[pipeline] %s: completed" % name, output)
        after = ledger(self.reference)
        self.assertEqual([s["runs"] for s in after["stages"]], [s["runs"] for s in before["stages"]])
        self.assertIn("800 valid records in %s" % os.path.join(self.reference, "synthetic", "synthetic.csv"),
                      output)


if __name__ == "__main__":
    unittest.main()
