"""slurm/synthesize.sbatch on a real one-node Slurm (run through
tests/slurm/local_cluster.sh) with the real nss_synthesize on a tiny model:
the whole pipeline completes as one job; SIGUSR1 for the batch script (what
--signal=B:USR1@120 sends before the time limit) during the fine-tune stops
the job with 75, the script requeues it and the second start continues (the
fine-tune runs twice, every other stage once); SIGTERM stops it with exit 7
and no requeue."""
import os
import shutil
import sys
import tempfile
import unittest

from slurm_jobs import (SOURCE, SYNTHESIZE_SBATCH, binary, ended, exit_code, job_info, read, require_cluster,
                        sbatch, signal_job, wait_finished, wait_for)

sys.path.insert(0, os.path.join(SOURCE, "tests", "pipeline"))
from synthesize_support import (LONG_STEPS, assert_every_stage_completed, final_line, stages,  # noqa: E402
                                training_logged, write_inputs)

NSS_SYNTHESIZE = binary("nss_synthesize")
RANKS = 2


class SynthesizeSbatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_cluster()
        cls.tmp = tempfile.mkdtemp(prefix="nss_synthesize_sbatch_")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.table, cls.config = write_inputs(cls.tmp)

    def submit(self, name, extra=(), launcher=None, **kwargs):
        """Submits synthesize.sbatch for a run named `name`; returns (job id, output path, run dir)."""
        run_dir = os.path.join(self.tmp, name)
        output = os.path.join(self.tmp, name + ".out")
        env = {"NSS_SYNTHESIZE": NSS_SYNTHESIZE}
        if launcher:
            env["NSS_LAUNCHER"] = launcher
        args = ["-n", str(RANKS), SYNTHESIZE_SBATCH, self.table, "--config", self.config,
                "--set", "run.output_dir=" + run_dir] + list(extra)
        return sbatch(args, output, env, **kwargs), output, run_dir

    def start_training(self, name, launcher=None):
        """Submits a run with a long fine-tune and waits until it logs steps."""
        job, output, run_dir = self.submit(name, ["--set", "training.max_steps=%d" % LONG_STEPS], launcher)
        wait_for(lambda: training_logged(run_dir) or ended(job), 300, "the train stage to log steps", job, output)
        self.assertFalse(ended(job), "the job ended before the fine-tune ran:\n" + read(output))
        return job, output, run_dir

    def test_the_pipeline_completes(self):
        # Submitted from the repository root without NSS_SOURCE_DIR: the
        # script finds slurm/train.sbatch through SLURM_SUBMIT_DIR.
        job, output, run_dir = self.submit("complete", cwd=SOURCE, unset=["NSS_SOURCE_DIR"])
        info = wait_finished(job, output)
        log = read(output)
        self.assertEqual(info["JobState"], "COMPLETED", log)
        self.assertEqual(exit_code(info), (0, 0), log)
        self.assertEqual(info["Restarts"], "0", log)
        self.assertIn("[synthesize.sbatch ", log)
        self.assertIn("restart count 0", log)
        self.assertIn("running: srun --mpi=pmix", log)  # auto: this Slurm has the PMIx plugin
        self.assertIn("%s %s" % (NSS_SYNTHESIZE, self.table), log)
        self.assertIn(final_line(run_dir), log)
        self.assertIn("nss_synthesize exited with code 0", log)
        assert_every_stage_completed(self, run_dir, log=log)
        self.assertTrue(os.path.exists(os.path.join(run_dir, "synthetic", "synthetic.csv")), log)

    def test_usr1_during_the_fine_tune_requeues_and_the_job_continues(self):
        job, output, run_dir = self.start_training("usr1")
        signal_job(job, "USR1")
        wait_for(lambda: job_info(job)["Restarts"] == "1" or ended(job), 300, "the requeue", job, output)
        self.assertEqual(job_info(job)["Restarts"], "1", "the job ended without a requeue:\n" + read(output))
        info = wait_finished(job, output, 420)
        log = read(output)
        self.assertEqual(info["JobState"], "COMPLETED", log)
        self.assertEqual(exit_code(info), (0, 0), log)
        self.assertEqual(info["Restarts"], "1", log)
        self.assertIn("received SIGUSR1: forwarding SIGUSR1 to srun", log)
        self.assertIn("nss_synthesize exited with code 75", log)
        self.assertIn("requeueing job %s" % job, log)
        self.assertIn("restart count 1", log)
        self.assertIn(final_line(run_dir), log)
        assert_every_stage_completed(self, run_dir, {"train": 2}, log)

    def test_term_during_the_fine_tune_stops_with_7_without_requeue(self):
        # Under mpirun, which would abort the ranks on the TERM itself.
        job, output, run_dir = self.start_training("term", "mpirun")
        signal_job(job, "TERM")
        info = wait_finished(job, output)
        log = read(output)
        self.assertEqual(info["JobState"], "FAILED", log)
        self.assertEqual(exit_code(info), (7, 0), log)
        self.assertEqual(info["Restarts"], "0", log)
        self.assertIn("running: mpirun -n 2", log)
        self.assertIn("received SIGTERM: forwarding SIGUSR2 to mpirun", log)
        self.assertIn("nss_synthesize exited with code 7", log)
        self.assertNotIn("requeueing", log)
        ledger = stages(run_dir)
        self.assertEqual(ledger["train"]["status"], "interrupted", log)
        self.assertEqual(ledger["train"]["runs"], 1, log)
        self.assertEqual(ledger["generate"]["status"], "pending", log)

    def test_usage_and_a_missing_train_sbatch_are_exit_2(self):
        output = os.path.join(self.tmp, "noargs.out")
        job = sbatch(["-n", "1", SYNTHESIZE_SBATCH], output)
        info = wait_finished(job, output)
        self.assertEqual(exit_code(info), (2, 0), read(output))
        self.assertIn("usage: sbatch [sbatch options] slurm/synthesize.sbatch TABLE.csv [nss_synthesize arguments...]",
                      read(output))
        # Submitted from elsewhere without NSS_SOURCE_DIR: nothing to find train.sbatch with.
        output = os.path.join(self.tmp, "elsewhere.out")
        job = sbatch(["-n", "1", SYNTHESIZE_SBATCH, self.table], output, cwd=self.tmp, unset=["NSS_SOURCE_DIR"])
        info = wait_finished(job, output)
        self.assertEqual(exit_code(info), (2, 0), read(output))
        self.assertIn("no slurm/train.sbatch at %s/slurm/train.sbatch" % self.tmp, read(output))


if __name__ == "__main__":
    unittest.main()
