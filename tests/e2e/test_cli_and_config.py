"""nss_hpc's command line, configuration errors and run directory, through
the real binary under mpiexec: every bad input exits 2 on every rank with
one clear message."""
import fcntl
import json
import os
import unittest

from nss_e2e import SOURCE, binary, mpirun, scratch, write, remove, write_token_dataset

NSS = binary("nss_hpc")
RUN_YAML = os.path.join(SOURCE, "configs", "run.yaml")


class ConfigErrorsTest(unittest.TestCase):
    def expect_usage_error(self, args, *fragments, ranks=2):
        proc = mpirun(ranks, [NSS] + args)
        output = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 2, output)
        for fragment in fragments:
            self.assertIn(fragment, output)
        # One message (from rank 0), not one per rank.
        self.assertEqual(output.count("nss_hpc: error:"), 1, output)
        return output

    def test_unknown_override_names_key_and_suggestion(self):
        self.expect_usage_error([RUN_YAML, "--set", "training.lerning_rate=0.1"],
                                "training.lerning_rate", "did you mean 'training.lr'")

    def test_wrong_type(self):
        self.expect_usage_error([RUN_YAML, "--set", "training.max_steps=many"],
                                "training.max_steps", "expected an integer, got 'many'")

    def test_out_of_range(self):
        self.expect_usage_error([RUN_YAML, "--set", "training.lr=-0.1"], "training.lr: must be > 0")

    def test_missing_config_file(self):
        self.expect_usage_error(["/nonexistent/run.yaml"], "cannot read config file /nonexistent/run.yaml")

    def test_unparsable_yaml_gives_line_and_column(self):
        tmp = scratch("yaml")
        try:
            path = write(os.path.join(tmp, "bad.yaml"), "training:\n  lr: [0.1,\n  max_steps: 3\n")
            self.expect_usage_error([path], "bad.yaml, line", "cannot parse YAML")
        finally:
            remove(tmp)

    def test_batch_arithmetic_names_numbers(self):
        # Found by the preflight's first check, which needs a run directory and data.
        tmp = scratch("batch")
        try:
            data = write_token_dataset(os.path.join(tmp, "train.h5"))
            self.expect_usage_error(
                [RUN_YAML, "--set", "training.global_batch_size=6", "--set", "data.path=" + data, "--set", "eval.path=" + data,
                 "--set", "run.output_dir=" + os.path.join(tmp, "run")],
                "global_batch_size=6", "2 x 2 = 4", "set global_batch_size to 4 or 8", ranks=2)
        finally:
            remove(tmp)

    def test_unknown_flag(self):
        self.expect_usage_error([RUN_YAML, "--frobnicate"], "usage: nss_hpc CONFIG.yaml")

    def test_missing_config_argument(self):
        self.expect_usage_error([], "config is required")


class RunDirectoryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = scratch("rundir")
        self.run_dir = os.path.join(self.tmp, "run")
        self.data = write_token_dataset(os.path.join(self.tmp, "train.h5"))

    def tearDown(self):
        remove(self.tmp)

    def test_print_config_prints_resolved_yaml_once(self):
        proc = mpirun(2, [NSS, RUN_YAML, "--print-config", "--set", "run.output_dir=" + self.run_dir])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.count("global_batch_size:"), 1, proc.stdout)
        self.assertIn(self.run_dir, proc.stdout)
        self.assertFalse(os.path.exists(self.run_dir))

    def test_writes_resolved_config_environment_and_rank_logs(self):
        proc = mpirun(2, [NSS, RUN_YAML, "--preflight-only", "--set", "run.output_dir=" + self.run_dir,
                          "--set", "data.path=" + self.data, "--set", "eval.path=" + self.data])
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        resolved = open(os.path.join(self.run_dir, "config.resolved.yaml")).read()
        self.assertIn("output_dir: \"%s\"" % self.run_dir, resolved)
        env = json.load(open(os.path.join(self.run_dir, "environment.json")))
        self.assertEqual(env["world_size"], 2)
        self.assertEqual([r["rank"] for r in env["ranks"]], [0, 1])
        self.assertIn("mpi", env["libraries"])
        self.assertIn("git_revision", env["nss_hpc"])
        for rank in (0, 1):
            log = open(os.path.join(self.run_dir, "logs", "rank_%05d.log" % rank)).read()
            self.assertIn("[rank %d]" % rank, log)

    def test_live_job_holds_the_run_directory(self):
        os.makedirs(self.run_dir)
        with open(os.path.join(self.run_dir, ".nss_hpc.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            lock.write("host=elsewhere pid=4242 slurm_job=99 started=0\n")
            lock.flush()
            proc = mpirun(2, [NSS, RUN_YAML, "--set", "run.output_dir=" + self.run_dir])
        output = proc.stdout + proc.stderr
        self.assertEqual(proc.returncode, 2, output)
        self.assertIn("is in use by a live job (host=elsewhere pid=4242 slurm_job=99", output)
        # Once the owner is gone the directory is usable again.
        proc = mpirun(2, [NSS, RUN_YAML, "--preflight-only", "--set", "run.output_dir=" + self.run_dir,
                          "--set", "data.path=" + self.data, "--set", "eval.path=" + self.data])
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)


if __name__ == "__main__":
    unittest.main()
