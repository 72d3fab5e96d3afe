"""slurm/train.sbatch and slurm/consolidate.sbatch on a real one-node Slurm
(run through tests/slurm/local_cluster.sh): under srun (PMIx) and mpirun the
ranks form one MPI world with the right node-local ranks, nss_hpc's exit code
becomes the job's exit code, and a signal for the batch script reaches every
rank. Checkpoint, requeue and resume on a signal are test_preemption.py."""
import json
import os
import shutil
import tempfile
import unittest

from slurm_jobs import (CONSOLIDATE_SBATCH, TRAIN_SBATCH, binary, ended, exit_code, read, require_cluster,
                        sbatch, signal_job, small_dataset, wait_finished, wait_for)

NSS = binary("nss_hpc")
PROBE = binary("signal_probe")
RUN_YAML = os.path.join(os.environ.get("NSS_SOURCE_DIR", "."), "configs", "run.yaml")
RANKS = 2


class TrainSbatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_cluster()

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="nss_sbatch_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def submit(self, name, args, launcher=None, program=NSS):
        """Submits train.sbatch with `args`; returns (job id, output path)."""
        output = os.path.join(self.tmp, name + ".out")
        env = {"NSS_HPC": program}
        if launcher:
            env["NSS_LAUNCHER"] = launcher
        return sbatch(["-n", str(RANKS), TRAIN_SBATCH] + args, output, env), output

    def test_ranks_form_one_world_under_srun_and_mpirun(self):
        # No NSS_LAUNCHER: this Slurm has the PMIx plugin, so the script picks srun.
        data = small_dataset(self.tmp)
        for launcher, expected in ((None, "running: srun --mpi=pmix"), ("mpirun", "running: mpirun -n 2")):
            with self.subTest(launcher=launcher or "auto"):
                run_dir = os.path.join(self.tmp, "run_%s" % (launcher or "auto"))
                job, output = self.submit(
                    "world_%s" % (launcher or "auto"),
                    [RUN_YAML, "--preflight-only", "--set", "run.output_dir=" + run_dir,
                     "--set", "data.path=" + data, "--set", "eval.path=" + data], launcher)
                info = wait_finished(job, output)
                log = read(output)
                self.assertEqual(info["JobState"], "COMPLETED", log)
                self.assertEqual(exit_code(info), (0, 0), log)
                self.assertIn(expected, log)
                self.assertIn("restart count 0", log)
                self.assertIn("nss_hpc exited with code 0", log)
                env = json.loads(read(os.path.join(run_dir, "environment.json")))
                self.assertEqual(env["world_size"], RANKS)
                self.assertEqual([r["rank"] for r in env["ranks"]], [0, 1])
                # MPI_Comm_split_type found both ranks on this node.
                self.assertEqual(sorted(r["local_rank"] for r in env["ranks"]), [0, 1])
                self.assertEqual({r["local_size"] for r in env["ranks"]}, {RANKS})
                self.assertEqual(env["environment"]["SLURM_JOB_ID"], job)

    def test_nss_hpc_exit_code_becomes_the_job_exit_code(self):
        job, output = self.submit("usage", [RUN_YAML, "--set", "training.lerning_rate=0.1"])
        info = wait_finished(job, output)
        log = read(output)
        self.assertEqual(info["JobState"], "FAILED", log)
        self.assertEqual(exit_code(info), (2, 0), log)
        self.assertEqual(info["Restarts"], "0", log)
        self.assertIn("did you mean 'training.lr'", log)
        self.assertIn("nss_hpc exited with code 2", log)

    def test_missing_config_argument_is_a_usage_error(self):
        output = os.path.join(self.tmp, "noargs.out")
        job = sbatch(["-n", "1", TRAIN_SBATCH], output)
        info = wait_finished(job, output)
        self.assertEqual(exit_code(info), (2, 0), read(output))
        self.assertIn("usage: sbatch [sbatch options] slurm/train.sbatch CONFIG.yaml", read(output))

    def test_consolidate_sbatch_refuses_a_missing_checkpoint(self):
        output = os.path.join(self.tmp, "consolidate.out")
        missing = os.path.join(self.tmp, "no_such_run", "checkpoints")
        job = sbatch([CONSOLIDATE_SBATCH, missing, os.path.join(self.tmp, "hf")], output)
        info = wait_finished(job, output)
        self.assertEqual(exit_code(info), (2, 0), read(output))
        self.assertIn("no checkpoint at %s" % missing, read(output))

    def test_signals_for_the_script_reach_every_rank(self):
        # USR1 (time limit near) goes on as USR1; TERM (stop) goes on as USR2,
        # because both launchers turn a TERM into an immediate kill.
        for launcher in ("srun", "mpirun"):
            for sent, received in (("USR1", "SIGUSR1"), ("TERM", "SIGUSR2")):
                with self.subTest(launcher=launcher, signal=sent):
                    probe_dir = os.path.join(self.tmp, "probe_%s_%s" % (launcher, sent))
                    os.makedirs(probe_dir)
                    job, output = self.submit("probe_%s_%s" % (launcher, sent), [probe_dir], launcher, PROBE)
                    ready = [os.path.join(probe_dir, "rank_%d.ready" % r) for r in range(RANKS)]
                    wait_for(lambda: all(os.path.exists(p) for p in ready) or ended(job), 120,
                             "every rank to be ready", job, output)
                    self.assertFalse(ended(job), "the probe ended before the signal:\n" + read(output))
                    signal_job(job, sent)
                    info = wait_finished(job, output)
                    log = read(output)
                    for rank in range(RANKS):
                        self.assertEqual(read(os.path.join(probe_dir, "rank_%d.signal" % rank)).strip(),
                                         received, "rank %d\n%s" % (rank, log))
                    self.assertIn("received SIG%s: forwarding %s to %s" % (sent, received, launcher), log)
                    self.assertEqual(exit_code(info), (0, 0), log)
                    self.assertEqual(info["Restarts"], "0", log)


if __name__ == "__main__":
    unittest.main()
