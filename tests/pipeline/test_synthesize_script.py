"""scripts/synthesize.sh with the built binaries (NSS_BIN_DIR, so setup.sh
is skipped) on a tiny model: the whole pipeline completes; SIGTERM, Ctrl-C
(SIGINT) and SIGUSR1 for the script reach the ranks as a stop (exit 7) or a
requeue request (exit 75), and the same command then continues the run."""
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from synthesize_support import (BIN, LONG_STEPS, SOURCE, assert_every_stage_completed, final_line, read, stages,
                                training_logged, write_inputs)

SCRIPT = os.path.join(SOURCE, "scripts", "synthesize.sh")
TIMEOUT = 240


class SynthesizeScriptTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="nss_synthesize_script_")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.table, cls.config = write_inputs(cls.tmp)

    def start(self, run_dir, *extra):
        """Starts the script in its own process group; its output goes to run_dir + '.out'."""
        env = dict(os.environ, NSS_BIN_DIR=BIN, NSS_RANKS="2")
        env.setdefault("OMP_NUM_THREADS", "1")
        args = [SCRIPT, self.table, "--config", self.config, "--set", "run.output_dir=" + run_dir] + list(extra)
        output = open(run_dir + ".out", "a")
        self.addCleanup(output.close)
        proc = subprocess.Popen(args, cwd=self.tmp, env=env, stdout=output, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.addCleanup(self.stop, proc)
        return proc

    @staticmethod
    def stop(proc):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def finish(self, proc, run_dir):
        """Waits for the script; returns (exit code, its output so far)."""
        try:
            code = proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.fail("scripts/synthesize.sh ran past %d s:\n%s" % (TIMEOUT, read(run_dir + ".out")))
        return code, read(run_dir + ".out")

    def wait_for_training(self, proc, run_dir):
        deadline = time.monotonic() + TIMEOUT
        while not training_logged(run_dir):
            if proc.poll() is not None or time.monotonic() > deadline:
                self.fail("the train stage did not start logging steps (exit %s):\n%s"
                          % (proc.poll(), read(run_dir + ".out")))
            time.sleep(0.1)

    def interrupt_training(self, name, sig):
        """Sends `sig` to the script once training logs steps; returns (run dir, exit code, output)."""
        run_dir = os.path.join(self.tmp, name)
        proc = self.start(run_dir, "--set", "training.max_steps=%d" % LONG_STEPS)
        self.wait_for_training(proc, run_dir)
        os.kill(proc.pid, sig)
        code, log = self.finish(proc, run_dir)
        return run_dir, code, log

    def test_the_pipeline_completes(self):
        run_dir = os.path.join(self.tmp, "complete")
        code, log = self.finish(self.start(run_dir), run_dir)
        self.assertEqual(code, 0, log)
        self.assertIn("running: mpirun -n 2", log)
        self.assertIn(final_line(run_dir), log)
        self.assertIn("nss_synthesize exited with code 0", log)
        assert_every_stage_completed(self, run_dir, log=log)
        self.assertTrue(os.path.exists(os.path.join(run_dir, "synthetic", "synthetic.csv")))
        self.assertTrue(os.path.exists(os.path.join(run_dir, "evaluation", "report.html")))

    def test_usage_and_a_bin_dir_without_the_program_are_exit_2(self):
        env = dict(os.environ, NSS_BIN_DIR=BIN)
        proc = subprocess.run([SCRIPT], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("usage: scripts/synthesize.sh TABLE.csv", proc.stdout)
        env["NSS_BIN_DIR"] = self.tmp
        proc = subprocess.run([SCRIPT, self.table], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("NSS_BIN_DIR=%s has no nss_synthesize" % self.tmp, proc.stdout)

    def test_sigterm_stops_with_7_and_the_rerun_continues(self):
        run_dir, code, log = self.interrupt_training("term", signal.SIGTERM)
        self.assertEqual(code, 7, log)
        self.assertIn("received SIGTERM: forwarding SIGUSR2 to mpirun", log)
        self.assertIn("nss_synthesize exited with code 7", log)
        ledger = stages(run_dir)
        self.assertEqual(ledger["train"]["status"], "interrupted", log)
        self.assertEqual(ledger["generate"]["status"], "pending", log)
        self.assertTrue(os.path.exists(os.path.join(run_dir, "train", "checkpoints", "latest")),
                        "no checkpoint saved on the stop:\n" + log)

        code, log = self.finish(self.start(run_dir, "--set", "training.max_steps=%d" % LONG_STEPS), run_dir)
        self.assertEqual(code, 0, log)
        self.assertIn(final_line(run_dir), log)
        assert_every_stage_completed(self, run_dir, {"train": 2}, log)  # no completed stage ran again

    def test_ctrl_c_stops_with_7(self):
        run_dir, code, log = self.interrupt_training("int", signal.SIGINT)
        self.assertEqual(code, 7, log)
        self.assertIn("received SIGINT: forwarding SIGUSR2 to mpirun", log)
        self.assertEqual(stages(run_dir)["train"]["status"], "interrupted", log)

    def test_sigusr1_stops_with_75(self):
        run_dir, code, log = self.interrupt_training("usr1", signal.SIGUSR1)
        self.assertEqual(code, 75, log)
        self.assertIn("received SIGUSR1: forwarding SIGUSR1 to mpirun", log)
        self.assertEqual(stages(run_dir)["train"]["status"], "interrupted", log)


if __name__ == "__main__":
    unittest.main()
