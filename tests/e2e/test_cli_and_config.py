"""nss_hpc's command line, configuration errors and run directory, through
the real binary under mpiexec: every bad input exits 2 on every rank with
one clear message."""
import fcntl
import json
import os
import subprocess
import time
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
        self.expect_usage_error([RUN_YAML, "--set", "training.lr=-0.1"],
                                "training.lr: must be in (0, 10], got -0.1 (--set training.lr=-0.1)")

    def test_bad_layer_plan_is_named_before_any_work(self):
        # The layer plan is checked where the configuration is resolved, not
        # at the first forward (or under the preflight's checkpoint section).
        self.expect_usage_error([RUN_YAML, "--print-config", "--set", "model.layer_types=[full_attention, bogus]"],
                                "model.layer_types[1] is 'bogus'", "sliding_attention")
        self.expect_usage_error([RUN_YAML, "--print-config", "--set", "model.layer_types=[full_attention]"],
                                "model.layer_types lists 1")

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


class ConfigLimitsTest(unittest.TestCase):
    """Values beyond a key's range, products beyond 64 bits or any rank's
    memory, and configuration files that are not one: exit 2 on every rank
    before any work, never a crash, a hang or a wrapped number."""

    def setUp(self):
        self.tmp = scratch("limits")
        self.run_dir = os.path.join(self.tmp, "run")
        self.data = write_token_dataset(os.path.join(self.tmp, "train.h5"))

    def tearDown(self):
        remove(self.tmp)

    def run_nss(self, config, *sets, preflight_only=False, env=None):
        args = [NSS, config, "--set", "run.output_dir=" + self.run_dir, "--set", "data.path=" + self.data,
                "--set", "eval.path=" + self.data]
        for item in sets:
            args += ["--set", item]
        if preflight_only:
            args.append("--preflight-only")
        start = time.monotonic()
        proc = mpirun(2, args, env=env)
        return proc, time.monotonic() - start, proc.stdout + proc.stderr

    def expect_nothing_trained(self, output):
        # The preflight may create (and lock) the checkpoint directory; no step is saved there.
        checkpoints = os.path.join(self.run_dir, "checkpoints")
        steps = [name for name in os.listdir(checkpoints) if name.startswith("step_")] \
            if os.path.isdir(checkpoints) else []
        self.assertEqual(steps, [], output)
        self.assertFalse(os.path.exists(os.path.join(self.run_dir, "metrics.jsonl")), output)

    def expect_usage_error(self, proc, output, *fragments):
        self.assertEqual(proc.returncode, 2, output)
        for fragment in fragments:
            self.assertIn(fragment, output)
        self.assertEqual(output.count("nss_hpc: error:"), 1, output)
        self.expect_nothing_trained(output)

    def test_value_beyond_its_range_is_exit_2_before_any_work(self):
        # 100000 dataloader threads per rank used to abort in thread creation.
        proc, _, output = self.run_nss(RUN_YAML, "data.num_workers=100000")
        self.expect_usage_error(proc, output, "data.num_workers: must be in [0, 256], got 100000")
        self.assertFalse(os.path.exists(self.run_dir), output)

    def test_huge_shapes_answer_within_seconds(self):
        # Each is a usage error naming its key(s), found before any rank works.
        cases = [
            (["model.hidden_size=1048576"], "model.hidden_size: must be in [1, 65536], got 1048576"),
            (["model.num_hidden_layers=100000"], "model.num_hidden_layers: must be in [1, 1024]"),
            (["model.vocab_size=1073741824"], "model.vocab_size: must be in [1, 16777216]"),
            (["training.max_steps=1000000000001"], "training.max_steps: must be in [1, 1000000000000]"),
            (["training.global_batch_size=1000000000"], "training.global_batch_size: must be in [1, 16777216]"),
            (["parallel.collective_timeout_s=1e300"], "parallel.collective_timeout_s: must be in (0, 604800]"),
            (["training.max_steps=1000000000000", "training.global_batch_size=16777216",
              "training.micro_batch_size=16"],
             "training.max_steps x training.global_batch_size x data.seq_len: 1000000000000 x 16777216 x 128 "
             "= more than 9223372036854775807 tokens to train on"),
            (["data.seq_len=1048576", "model.max_position_embeddings=1048576",
              "model.num_attention_heads=32", "model.num_key_value_heads=32"],
             "= 70368744177664 elements of attention scores in one micro-batch, above 2^44"),
            (["model.hidden_size=65536", "model.intermediate_size=262144", "model.num_hidden_layers=1024",
              "model.head_dim=64"],
             "model: the shape has 52828265840640 parameters, above 2^44"),
        ]
        for sets, fragment in cases:
            with self.subTest(sets=sets):
                proc, seconds, output = self.run_nss(RUN_YAML, *sets, preflight_only=True)
                self.expect_usage_error(proc, output, fragment)
                self.assertLess(seconds, 30, output)

    def test_shape_within_the_ranges_beyond_memory_is_a_quick_no_go(self):
        # Every key in range, the model far beyond a 1 GiB node: the preflight
        # refuses it (exit 3) from its predicted state, without building it.
        proc, seconds, output = self.run_nss(RUN_YAML, "model.vocab_size=16777216", preflight_only=True,
                                             env={"SLURM_MEM_PER_NODE": "1024"})
        self.assertEqual(proc.returncode, 3, output)
        self.assertIn("the model and optimizer state alone", output)
        self.assertLess(seconds, 30, output)
        self.expect_nothing_trained(output)

    def test_a_valid_but_endless_run_passes_the_preflight_quickly(self):
        # 10^12 steps are within range and within 64 bits: nothing wraps.
        proc, seconds, output = self.run_nss(RUN_YAML, "training.max_steps=1000000000000", preflight_only=True)
        self.assertEqual(proc.returncode, 0, output)
        self.assertLess(seconds, 30, output)
        self.expect_nothing_trained(output)

    def test_duplicate_key_names_file_line_and_key(self):
        config = write(os.path.join(self.tmp, "dup.yaml"),
                       "training:\n  lr: 1.0e-3\n  max_steps: 3\n  lr: 1.0e-2\ndata:\n  seq_len: 64\n")
        proc, _, output = self.run_nss(config)
        self.expect_usage_error(proc, output, "training.lr: duplicate key: also given at line 2, column 3 "
                                              "(%s, line 4, column 3)" % config)

    def test_directory_as_config_is_exit_2(self):
        proc, _, output = self.run_nss(self.tmp)
        self.expect_usage_error(proc, output, "config file %s is a directory, not a regular file" % self.tmp)

    def test_device_as_config_is_exit_2(self):
        proc, _, output = self.run_nss("/dev/null")
        self.expect_usage_error(proc, output, "config file /dev/null is a character device, not a regular file")

    def test_empty_config_is_exit_2_and_an_empty_mapping_the_defaults(self):
        empty = write(os.path.join(self.tmp, "empty.yaml"), "# nothing here\n")
        proc, _, output = self.run_nss(empty)
        self.expect_usage_error(proc, output, "config file %s has no keys (it is empty or only comments)" % empty,
                                "a file holding just {} runs on the defaults")
        defaults = write(os.path.join(self.tmp, "defaults.yaml"), "{}\n")
        proc = mpirun(2, [NSS, defaults, "--print-config"])
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn('name: "default"', proc.stdout)

    def test_eval_tool_flags_have_ranges(self):
        proc = subprocess.run([binary("nss_eval"), "--model", self.tmp, "--data", self.data,
                               "--seq-len", "2000000"], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("--seq-len", proc.stderr)
        self.assertIn("not in range 1 to 1048576", proc.stderr)


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
